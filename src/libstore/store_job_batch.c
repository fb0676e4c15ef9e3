/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_job_batch.c - a group commit's holds and settles in one statement (PostgreSQL).
 *
 * Why: on PostgreSQL each statement is a round trip and an executor start on the server,
 * and with one writer connection under the bank's write lock those, not the work, bound
 * the bank (bench/results/postgresql.md).  Here a whole batch of the common case is one
 * statement with data-modifying CTEs over array parameters: one balance UPDATE per
 * allocation, one ledger INSERT, one jobs UPDATE, one jobs INSERT; and it runs as a
 * transaction of its own, pipelined with BEGIN, the write lock and COMMIT (db_step_tx),
 * so a batch of holds and settles costs one round trip.
 *
 * The statement takes exactly what the one-by-one verbs would do without a branch:
 *   a settle of a run that is held, named once in the batch, whose charge is in range and
 *   whose end (if given) is not before its start;
 *   a hold of a run not seen before, named once in the batch, paid by its own account's
 *   allocation (no walk up the tree), while that allocation's available (after the
 *   batch's settles) covers it and every earlier taken hold on it (a prefix in array
 *   order: amounts are positive).
 * It reads the state as of the statement start (after the write lock: every earlier
 * commit) and returns one row per op taken, with the balance right after that op in
 * the order "settles, then holds".  Each allocation's balance moves once, by one UPDATE
 * with the predicate of the one-by-one verbs (used and held stay >= 0; available stays
 * >= 0 where holds were taken), so no overdraft depends on the write lock.  When a row
 * does not match (the books were inconsistent, or something wrote without the lock) the
 * statement fails by itself (allot_batch_guard, schema 0013, which also checks that every
 * settled run's row was updated: the COMMIT behind it then ends the transaction as a
 * rollback), and the writer runs the ops one by one, which report the problem where it
 * is.
 * The rows and columns it writes are the ones store_hold/store_settle write (store_job.c);
 * tests run the same ops both ways and compare.  A batch of one op takes this path too:
 * it is the one fast path of the hot verbs on PostgreSQL (schema 0012 dropped the
 * per-verb server functions it replaced).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libstore/store_int.h"

/* Holds: $1..$18, settles: $19..$35, as arrays in PostgreSQL's text form. */
static const char SQL_JOB_BATCH[] =
    "WITH sin AS ("
    " SELECT t.*, count(*) OVER (PARTITION BY t.cluster, t.job_id, t.run) AS n"
    " FROM unnest($19::text[], $20::bigint[], $21::bigint[], $22::bigint[], $23::bigint[],"
    "  $24::bigint[], $25::text[], $26::bigint[], $27::text[], $28::bigint[], $29::bigint[],"
    "  $30::text[], $31::text[], $32::bigint[], $33::text[], $34::text[], $35::text[])"
    " WITH ORDINALITY AS t(cluster, job_id, run, start_s, end_s, elapsed_s, state, billing,"
    "  alloc_tres, node_fail, charge, source, actor, now_s, s_user, s_account, s_partition,"
    "  i)),"
    /* A settle is taken when its run is held and named once, the user, account and
     * partition it names (if any) are the run's (else the verb reports the other job), and
     * its end (if given) is not before its start; its charge as store_settle: at the held
     * billing, at most the hold. */
    "s0 AS ("
    " SELECT sin.*, j.ctid AS j_ctid, j.alloc_id AS j_alloc, j.hold_sumin AS j_hold,"
    "  j.billing_micro AS bill,"
    "  CASE WHEN sin.start_s > 0 THEN sin.start_s ELSE j.start_s END AS run_start"
    /* Every lookup of jobs is a probe per op whatever the statistics say: the plan is
     * cached on the first executions, when a new bank's jobs table is nearly empty, and as
     * a join it then stayed a scan of the whole table per batch (bench/results/
     * postgresql.md, 2026-11-22, b3fd5fd).  LATERAL ... OFFSET 0 (not pulled up): one primary-key
     * lookup per settle; its row's ctid is what the UPDATE below finds it by. */
    " FROM sin CROSS JOIN LATERAL (SELECT j1.ctid, j1.* FROM jobs j1 WHERE j1.cluster = sin.cluster"
    "  AND j1.job_id = sin.job_id AND j1.run = sin.run OFFSET 0) j"
    " WHERE sin.n = 1 AND j.status = 'held' AND j.hold_sumin > 0 AND j.alloc_id > 0"
    "  AND sin.s_user IN ('', j.user_name) AND sin.s_account IN ('', j.account)"
    "  AND sin.s_partition IN ('', j.partition_name)"
    "  AND (sin.end_s <= 0 OR CASE WHEN sin.start_s > 0 THEN sin.start_s ELSE j.start_s END"
    "   <= sin.end_s)),"
    "s1 AS ("
    " SELECT s0.*, CASE WHEN s0.node_fail <> 0 THEN 0::numeric"
    "  WHEN s0.charge >= 0 THEN s0.charge::numeric"
    "  WHEN s0.bill >= 0 AND s0.elapsed_s >= 0"
    "   THEN div(s0.bill::numeric * s0.elapsed_s + 59999999, 60000000) END AS chg"
    " FROM s0),"
    "s AS ("
    " SELECT s1.*, CASE WHEN s1.chg <= 1000000000000000"
    "  THEN LEAST(s1.chg, s1.j_hold::numeric)::bigint END AS chg_sumin"
    " FROM s1 WHERE s1.chg IS NOT NULL AND s1.chg <= 1000000000000000"
    /* A charge above the hold is left to store_settle, which caps it and records both. */
    "  AND s1.chg <= s1.j_hold),"
    "sr AS ("
    " SELECT s.*, sum(s.chg_sumin) OVER w AS cum_du, sum(s.j_hold) OVER w AS cum_dh FROM s"
    " WINDOW w AS (PARTITION BY s.j_alloc ORDER BY s.i)),"
    "sd AS (SELECT s.j_alloc AS alloc_id, sum(s.chg_sumin) AS du, sum(s.j_hold) AS dh"
    " FROM s GROUP BY s.j_alloc),"
    "hin AS ("
    " SELECT t.*, count(*) OVER (PARTITION BY t.cluster, t.job_id, t.run) AS n"
    " FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[],"
    "  $7::text[], $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::bigint[],"
    "  $13::bigint[], $14::text[], $15::bigint[], $16::bigint[], $17::text[], $18::bigint[])"
    " WITH ORDINALITY AS t(cluster, job_id, run, user_name, account, partition_name, qos,"
    "  submit_s, start_s, req_tres, alloc_tres, billing, time_limit_s, resource, at_s, amount,"
    "  actor, now_s, i)),"
    /* A hold is taken when its run is new and named once, and its own account pays. */
    "h0 AS ("
    " SELECT DISTINCT ON (hin.i) hin.*, al.id AS alloc_id"
    " FROM hin JOIN accounts ac ON ac.name = hin.account"
    " JOIN allocations al ON al.account_id = ac.id AND al.resource = hin.resource"
    "  AND (al.cluster = hin.cluster OR al.cluster = '')"
    "  AND al.start_s <= hin.at_s AND hin.at_s < al.end_s"
    /* OFFSET 0: a primary-key probe per hold, never an anti-join over all jobs. */
    " WHERE hin.n = 1 AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.cluster = hin.cluster"
    "  AND j.job_id = hin.job_id AND j.run = hin.run OFFSET 0)"
    " ORDER BY hin.i, al.start_s DESC),"
    "h1 AS ("
    " SELECT h0.*, b.granted_sumin - (b.used_sumin + COALESCE(sd.du, 0))"
    "  - (b.held_sumin - COALESCE(sd.dh, 0)) AS avail,"
    "  sum(h0.amount) OVER (PARTITION BY h0.alloc_id ORDER BY h0.i) AS cum"
    " FROM h0 JOIN alloc_balance b ON b.alloc_id = h0.alloc_id"
    " LEFT JOIN sd ON sd.alloc_id = h0.alloc_id),"
    "h AS (SELECT h1.* FROM h1 WHERE h1.avail - h1.cum >= 0),"
    "hd AS (SELECT h.alloc_id, sum(h.amount) AS dh FROM h GROUP BY h.alloc_id),"
    "d AS ("
    " SELECT x.alloc_id, sum(x.du) AS du, sum(x.dh) AS dh, bool_or(x.hold) AS hold FROM ("
    "  SELECT sd.alloc_id, sd.du, -sd.dh AS dh, false AS hold FROM sd"
    "  UNION ALL SELECT hd.alloc_id, 0, hd.dh, true FROM hd) x GROUP BY x.alloc_id),"
    "b0 AS (SELECT b.* FROM alloc_balance b WHERE b.alloc_id IN (SELECT d.alloc_id FROM d)),"
    /* The predicate of store_alloc.c's SQL_BALANCE_APPLY (checked when holds are taken):
     * a row it does not match is not updated, which the caller sees in the counts. */
    "bal AS ("
    " UPDATE alloc_balance b SET used_sumin = b.used_sumin + d.du::bigint,"
    "  held_sumin = b.held_sumin + d.dh::bigint"
    " FROM d WHERE b.alloc_id = d.alloc_id AND b.used_sumin + d.du >= 0"
    "  AND b.held_sumin + d.dh >= 0 AND b.used_sumin + d.du <= " STORE_BALANCE_MAX_SQL
    "  AND b.held_sumin + d.dh <= " STORE_BALANCE_MAX_SQL " AND (NOT d.hold"
    "   OR b.granted_sumin - (b.used_sumin + d.du) - (b.held_sumin + d.dh) >= 0)"
    " RETURNING b.alloc_id),"
    "led AS ("
    " INSERT INTO ledger (alloc_id, kind, amount_sumin, actor, time_s, comment, cluster,"
    "  job_id, run, idem_key)"
    " SELECT e.alloc_id, e.kind, e.amount, e.actor, e.now_s, e.comment, e.cluster, e.job_id,"
    "  e.run, '' FROM ("
    "  SELECT 0 AS ph, s.i, 0 AS sub, s.j_alloc AS alloc_id, 'release' AS kind,"
    "   s.j_hold AS amount, s.actor, s.now_s, 'settle' AS comment, s.cluster, s.job_id, s.run"
    "  FROM s"
    "  UNION ALL SELECT 0, s.i, 1, s.j_alloc, 'debit', s.chg_sumin, s.actor, s.now_s, s.state,"
    "   s.cluster, s.job_id, s.run FROM s WHERE s.chg_sumin > 0"
    "  UNION ALL SELECT 1, h.i, 0, h.alloc_id, 'hold', h.amount, h.actor, h.now_s, '',"
    "   h.cluster, h.job_id, h.run FROM h) e"
    " ORDER BY e.ph, e.i, e.sub),"
    "ju AS ("
    " UPDATE jobs j SET start_s = s.run_start,"
    "  end_s = CASE WHEN s.end_s > 0 THEN s.end_s WHEN s.run_start > 0"
    "   AND s.run_start <= s.now_s - s.elapsed_s"
    "   THEN s.run_start + s.elapsed_s ELSE s.now_s END, elapsed_s = s.elapsed_s, slurm_state = "
    "s.state, billing_micro = s.bill,"
    "  alloc_tres = CASE WHEN s.alloc_tres <> '' THEN s.alloc_tres ELSE j.alloc_tres END,"
    "  status = 'settled', charge_sumin = s.chg_sumin, settle_source = s.source,"
    "  updated_s = s.now_s"
    /* By the ctid s0 read under the write lock (a TID fetch per settle); the key too. */
    " FROM s WHERE j.ctid = s.j_ctid AND j.cluster = s.cluster AND j.job_id = s.job_id"
    "  AND j.run = s.run"
    " RETURNING j.cluster, j.job_id, j.run, j.user_name, j.account, j.partition_name, j.qos,"
    "  j.submit_s, j.start_s, j.end_s, j.req_tres, j.alloc_tres, j.billing_micro,"
    "  j.time_limit_s, j.elapsed_s, j.slurm_state, j.status, j.hold_sumin, j.charge_sumin,"
    "  j.alloc_id, j.payer_account, j.settle_source, j.updated_s, s.i),"
    /* Usage for fair-share: libcore's decay cannot run here, so each settled run is left in
     * usage_pending, in this transaction, for readers and the next fold (store_usage_acc.c);
     * only once the accumulators are kept (usage_params). */
    "up AS ("
    " INSERT INTO usage_pending (cluster, account, user_name, qos, end_s, elapsed_s,"
    "  charge_sumin, billing_micro)"
    " SELECT ju.cluster, ju.account, ju.user_name, ju.qos, ju.end_s, ju.elapsed_s,"
    "  ju.charge_sumin, ju.billing_micro FROM ju WHERE EXISTS (SELECT 1 FROM usage_params)"
    " ORDER BY ju.i),"
    "ji AS ("
    " INSERT INTO jobs (" STORE_JOB_COLS ")"
    " SELECT h.cluster, h.job_id, h.run, h.user_name, h.account, h.partition_name, h.qos,"
    "  h.submit_s, h.start_s, 0, h.req_tres, h.alloc_tres, h.billing, h.time_limit_s, 0, '',"
    "  'held', h.amount, 0, h.alloc_id, h.account, '', h.now_s FROM h ORDER BY h.i),"
    /* Fails the statement when a balance row refused, or a settled run's row was not
     * updated (0013): the COMMIT behind it then rolls back.  The answer is read per row of
     * n (LATERAL), so n -- the guards -- runs even when no op was taken. */
    "n AS (SELECT allot_batch_guard('balance', (SELECT count(*) FROM d),"
    "  (SELECT count(*) FROM bal)) + allot_batch_guard('job', (SELECT count(*) FROM s),"
    "  (SELECT count(*) FROM ju)) AS moved)"
    /* One row per op taken: kind, index, job (settles), payer, balance after the op, its
     * policy (settles), and n's count (the reference that makes the union lateral). */
    "SELECT x.* FROM n CROSS JOIN LATERAL ("
    "SELECT 's', sr.i, ju.cluster, ju.job_id, ju.run, ju.user_name, ju.account,"
    " ju.partition_name, ju.qos, ju.submit_s, ju.start_s, ju.end_s, ju.req_tres, ju.alloc_tres,"
    " ju.billing_micro, ju.time_limit_s, ju.elapsed_s, ju.slurm_state, ju.status, ju.hold_sumin,"
    " ju.charge_sumin, ju.alloc_id, ju.payer_account, ju.settle_source, "
    "ju.updated_s, " STORE_ALLOC_COLS ","
    " b0.granted_sumin, (b0.used_sumin + sr.cum_du)::bigint,"
    " (b0.held_sumin - sr.cum_dh)::bigint, COALESCE(p.id, 0), n.moved"
    " FROM sr JOIN ju ON ju.i = sr.i JOIN allocations al ON al.id = sr.j_alloc"
    " JOIN accounts ac ON ac.id = al.account_id JOIN b0 ON b0.alloc_id = sr.j_alloc"
    " LEFT JOIN policies p ON p.alloc_id = sr.j_alloc"
    " UNION ALL "
    "SELECT 'h', h.i, NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text,"
    " NULL::text, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text,"
    " NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint,"
    " NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint, " STORE_ALLOC_COLS ","
    " b0.granted_sumin, (b0.used_sumin + COALESCE(sd.du, 0))::bigint,"
    " (b0.held_sumin - COALESCE(sd.dh, 0) + h.cum)::bigint, 0, n.moved"
    " FROM h JOIN allocations al ON al.id = h.alloc_id JOIN accounts ac ON ac.id = al.account_id"
    " JOIN b0 ON b0.alloc_id = h.alloc_id"
    " LEFT JOIN sd ON sd.alloc_id = h.alloc_id) x";

enum {
    COL_KIND,
    COL_I,
    COL_JOB,
    COL_ALLOC = COL_JOB + STORE_JOB_NCOLS,
    COL_BAL = COL_ALLOC + STORE_ALLOC_NCOLS,
    COL_POLICY = COL_BAL + STORE_BALANCE_NCOLS
};

#define NPARAMS 35

/* Per-op scratch, kept in the store between batches (no allocation per batch). */
struct op_scratch {
    int64_t now; /* the op's time, or 0 when it is not offered (its verb reports why) */
    int hidx;    /* the i-th offered hold is op hidx (i from 0), likewise settles */
    int sidx;
    int taken;
};

/* The parameter text: NPARAMS array literals, each NUL-terminated, in st->batch_buf. */
struct params {
    store_t *st;
    size_t len;
    size_t start[NPARAMS];
    int nomem;
};

static void put(struct params *p, const char *s, size_t n)
{
    if (p->nomem)
        return;
    if (p->len + n > p->st->batch_cap) {
        size_t cap = p->st->batch_cap ? p->st->batch_cap : 16384;
        while (cap < p->len + n)
            cap *= 2;
        char *b = realloc(p->st->batch_buf, cap);
        if (!b) {
            p->nomem = 1;
            return;
        }
        p->st->batch_buf = b;
        p->st->batch_cap = cap;
    }
    memcpy(p->st->batch_buf + p->len, s, n);
    p->len += n;
}

/* One element of an array literal: ',' before all but the first. */
static void put_int(struct params *p, int first, int64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%s%" PRId64, first ? "" : ",", v);
    put(p, b, (size_t)n);
}

static void put_text(struct params *p, int first, const char *v)
{
    if (!first)
        put(p, ",", 1);
    put(p, "\"", 1);
    for (const char *c = v; *c; c++) {
        if (*c == '"' || *c == '\\')
            put(p, "\\", 1);
        put(p, c, 1);
    }
    put(p, "\"", 1);
}

int store_batches_jobs(const store_t *st)
{
    return strcmp(st->backend, "pg") == 0;
}

/* The holds' 18 arrays, then the settles' 17; ops not offered (now 0) are left out. */
static void build(struct params *p, struct store_job_op *ops, int n, const struct op_scratch *o)
{
    for (int a = 0; a < NPARAMS; a++) {
        p->start[a] = p->len;
        put(p, "{", 1);
        int first = 1;
        for (int k = 0; k < n; k++) {
            const struct hold_req *h = ops[k].hold;
            const struct settle_req *s = ops[k].settle;
            int64_t now = o[k].now;
            if (now == 0 || (a < 18 && !h) || (a >= 18 && !s))
                continue;
            if (a < 18) {
                switch (a) {
                case 0:
                    put_text(p, first, h->cluster);
                    break;
                case 1:
                    put_int(p, first, h->job_id);
                    break;
                case 2:
                    put_int(p, first, h->run);
                    break;
                case 3:
                    put_text(p, first, h->user);
                    break;
                case 4:
                    put_text(p, first, h->account);
                    break;
                case 5:
                    put_text(p, first, h->partition);
                    break;
                case 6:
                    put_text(p, first, h->qos);
                    break;
                case 7:
                    put_int(p, first, h->submit_s);
                    break;
                case 8:
                    put_int(p, first, h->start_s);
                    break;
                case 9:
                    put_text(p, first, h->req_tres);
                    break;
                case 10:
                    put_text(p, first, h->alloc_tres);
                    break;
                case 11:
                    put_int(p, first, h->billing_micro);
                    break;
                case 12:
                    put_int(p, first, h->time_limit_s);
                    break;
                case 13:
                    put_text(p, first, h->resource);
                    break;
                case 14:
                    put_int(p, first, store_hold_at(h, now));
                    break;
                case 15:
                    put_int(p, first, h->amount_sumin);
                    break;
                case 16:
                    put_text(p, first, h->actor);
                    break;
                default:
                    put_int(p, first, now);
                    break;
                }
            } else {
                switch (a - 18) {
                case 0:
                    put_text(p, first, s->cluster);
                    break;
                case 1:
                    put_int(p, first, s->job_id);
                    break;
                case 2:
                    put_int(p, first, s->run);
                    break;
                case 3:
                    put_int(p, first, s->start_s);
                    break;
                case 4:
                    put_int(p, first, s->end_s);
                    break;
                case 5:
                    put_int(p, first, store_settle_elapsed(s));
                    break;
                case 6:
                    put_text(p, first, s->slurm_state);
                    break;
                case 7:
                    put_int(p, first, s->billing_micro);
                    break;
                case 8:
                    put_text(p, first, s->alloc_tres);
                    break;
                case 9:
                    put_int(p, first, store_is_node_fail(s->slurm_state));
                    break;
                case 10:
                    put_int(p, first, s->charge_sumin);
                    break;
                case 11:
                    put_text(p, first, s->settle_source);
                    break;
                case 12:
                    put_text(p, first, s->actor);
                    break;
                case 13:
                    put_int(p, first, now);
                    break;
                case 14:
                    put_text(p, first, s->user);
                    break;
                case 15:
                    put_text(p, first, s->account);
                    break;
                default:
                    put_text(p, first, s->partition);
                    break;
                }
            }
            first = 0;
        }
        put(p, "}", 2); /* with the NUL */
    }
}

int store_job_batch(store_t *st, struct store_job_op *ops, int n, struct allot_error *err)
{
    for (int k = 0; k < n; k++)
        ops[k].done = 0;
    if (store_ready(st, "job batch", err) < 0)
        return -1;
    if (st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "job batch: inside a transaction");
    if (!store_batches_jobs(st) || n < 1)
        return 0;
    if ((size_t)n > st->batch_ops_cap) {
        struct op_scratch *o = realloc(st->batch_ops, (size_t)n * sizeof *o);
        if (!o)
            return allot_errorf(err, ALLOT_ENOMEM, "job batch: out of memory for %d ops", n);
        st->batch_ops = o;
        st->batch_ops_cap = (size_t)n;
    }
    struct op_scratch *o = st->batch_ops;
    int nh = 0, ns = 0;
    struct allot_error verr;
    for (int k = 0; k < n; k++) {
        o[k].now = 0;
        o[k].taken = 0;
        if (ops[k].hold && !ops[k].settle && ops[k].hold_res &&
            store_hold_validate(ops[k].hold, &verr) == 0) {
            o[k].now = store_now_or(ops[k].hold->now_s);
            o[nh++].hidx = k;
        } else if (ops[k].settle && !ops[k].hold && ops[k].settle_res &&
                   store_settle_validate(ops[k].settle, &verr) == 0) {
            o[k].now = store_now_or(ops[k].settle->now_s);
            o[ns++].sidx = k;
        }
    }
    if (nh + ns == 0)
        return 0;
    struct params p = {.st = st};
    build(&p, ops, n, o);
    if (p.nomem)
        return allot_errorf(err, ALLOT_ENOMEM, "job batch: out of memory for %d ops", n);
    db_stmt_t *s = store_stmt(st, STMT_JOB_BATCH, SQL_JOB_BATCH, err);
    if (!s)
        return -1;
    for (int a = 0; a < NPARAMS; a++)
        db_bind_text(s, a + 1, st->batch_buf + p.start[a]);
    int rc = db_step_tx(s, err);
    for (; rc == 1; rc = db_step(s, err)) {
        const char *kind = db_column_text(s, COL_KIND);
        int64_t i = db_column_int64(s, COL_I);
        int hold = kind[0] == 'h';
        if (i < 1 || i > (hold ? nh : ns)) {
            rc = allot_errorf(err, ALLOT_EINTERNAL, "job batch: op index %" PRId64 " out of range",
                              i);
            break;
        }
        int k = hold ? o[i - 1].hidx : o[i - 1].sidx;
        if (hold) {
            struct hold_result *r = ops[k].hold_res;
            memset(r, 0, sizeof *r);
            store_read_alloc(s, COL_ALLOC, &r->alloc);
            store_read_balance(s, COL_BAL, r->alloc.id, &r->bal);
            store_hold_job(ops[k].hold, o[k].now, 0, &r->alloc, &r->job);
        } else {
            struct settle_result *r = ops[k].settle_res;
            memset(r, 0, sizeof *r);
            store_read_job(s, COL_JOB, &r->job);
            store_read_alloc(s, COL_ALLOC, &r->alloc);
            store_read_balance(s, COL_BAL, r->alloc.id, &r->bal);
            r->no_policy = db_column_int64(s, COL_POLICY) == 0;
        }
        o[k].taken = 1;
    }
    db_reset(s);
    if (rc < 0)
        return -1;
    for (int k = 0; k < n; k++)
        ops[k].done = o[k].taken;
    return 0;
}
