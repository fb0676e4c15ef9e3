/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_check.c - store_check: recompute what the cached tables claim from the append-only
 * ledger and report every difference (doc/design.md §2.7, store.h "Integrity").
 *
 * Balances: the ledger is replayed per allocation in entry order (two cursors merged by
 * allocation id), which gives the exact sums and also proves that no hold ever took the
 * available balance below zero at the moment it was taken (later debits of post-paid usage
 * may; holds may not).  Jobs: per run, the hold/release/debit entries must match its status,
 * hold and charge.  Ledger job entries must belong to a known run, except entries older than
 * the newest scrub horizon (job_scrubs.before_s): a scrub deletes the job rows of runs last
 * updated before it and keeps their entries, which were all written no later than that
 * update.  On SQLite the ledger's allocation index (ledger_alloc_index, schema 0016) must
 * hold exactly the entries up to its mark.  Read-only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libstore/store_int.h"

static const char SQL_CHECK_BALANCES[] =
    "SELECT al.id, CASE WHEN b.alloc_id IS NULL THEN 1 ELSE 0 END, "
    "COALESCE(b.granted_sumin, 0), COALESCE(b.used_sumin, 0), COALESCE(b.held_sumin, 0) "
    "FROM allocations al LEFT JOIN alloc_balance b ON b.alloc_id = al.id ORDER BY al.id";
static const char SQL_CHECK_LEDGER[] =
    "SELECT id, alloc_id, kind, amount_sumin FROM ledger ORDER BY alloc_id, id";
/* SQLite has no index of the ledger by allocation (schema 0016): ledger_alloc_index in its
 * (alloc_id, id) order, merged with the sorted tail above the mark, instead of a sort of the
 * whole ledger.  check_index proves that the two read every entry once. */
static const char SQL_CHECK_LEDGER_SQLITE[] =
    "SELECT x.id, x.alloc_id, l.kind, l.amount_sumin FROM ledger_alloc_index x "
    "JOIN ledger l ON l.id = x.id AND l.alloc_id = x.alloc_id "
    "WHERE x.id <= (SELECT upto FROM ledger_alloc_mark) "
    "UNION ALL SELECT id, alloc_id, kind, amount_sumin FROM ledger "
    "WHERE id > (SELECT upto FROM ledger_alloc_mark) ORDER BY 2, 1";
/* SQLite: every entry up to the mark has its (alloc_id, id) pair in ledger_alloc_index, and
 * the index has no other pair (schema 0016). */
static const char SQL_CHECK_INDEX_SQLITE[] =
    "SELECT l.id, l.alloc_id, 0 FROM ledger l WHERE l.id <= (SELECT upto FROM ledger_alloc_mark) "
    "AND NOT EXISTS (SELECT 1 FROM ledger_alloc_index x WHERE x.alloc_id = l.alloc_id "
    "AND x.id = l.id) "
    "UNION ALL SELECT x.id, x.alloc_id, 1 FROM ledger_alloc_index x "
    "WHERE x.id > (SELECT upto FROM ledger_alloc_mark) OR NOT EXISTS (SELECT 1 FROM ledger l "
    "WHERE l.id = x.id AND l.alloc_id = x.alloc_id) ORDER BY 1";
static const char SQL_CHECK_JOBS[] =
    /* an imported run without an allocation (usage only, store_import.c) owes no debit */
    "SELECT j.cluster, j.job_id, j.run, j.status, j.hold_sumin, "
    "CASE WHEN j.settle_source = 'import' AND j.alloc_id = 0 THEN 0 ELSE j.charge_sumin END, "
    "j.alloc_id, "
    "COALESCE(SUM(CASE WHEN l.kind = 'hold' THEN 1 ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN l.kind = 'hold' THEN l.amount_sumin ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN l.kind = 'release' THEN 1 ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN l.kind = 'release' THEN l.amount_sumin ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN l.kind = 'debit' THEN 1 ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN l.kind = 'debit' THEN l.amount_sumin ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN l.kind IN ('hold', 'release', 'debit') AND l.alloc_id <> j.alloc_id "
    "THEN 1 ELSE 0 END), 0) "
    "FROM jobs j LEFT JOIN ledger l ON l.cluster = j.cluster AND l.job_id = j.job_id "
    "AND l.run = j.run "
    "GROUP BY j.cluster, j.job_id, j.run, j.status, j.hold_sumin, j.charge_sumin, j.alloc_id "
    "ORDER BY j.cluster, j.job_id, j.run";
static const char SQL_CHECK_ORPHANS[] =
    "SELECT l.id, l.cluster, l.job_id, l.run FROM ledger l WHERE l.job_id <> 0 "
    "AND l.kind IN ('hold', 'release', 'debit') AND NOT EXISTS (SELECT 1 FROM jobs j "
    "WHERE j.cluster = l.cluster AND j.job_id = l.job_id AND j.run = l.run) "
    /* a scrub deletes jobs last updated before its horizon; their entries are older still */
    "AND l.time_s >= COALESCE((SELECT MAX(before_s) FROM job_scrubs), 0) ORDER BY l.id";

struct report {
    store_problem_f cb;
    void *arg;
    int n;
};

static void problem(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(struct report *r, const char *fmt, ...)
{
    char msg[ALLOT_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->n++;
    if (r->cb)
        r->cb(msg, r->arg);
}

struct sums {
    int64_t granted, used, held;
};

/* Apply one ledger row to running sums; reports unknown kinds and overdrawing holds. */
static void replay_entry(struct report *r, struct sums *s, int64_t id, int64_t alloc_id,
                         const char *kind_text, int64_t amount)
{
    enum ledger_kind kind;
    if (model_ledger_kind_parse(kind_text, &kind) < 0) {
        problem(r, "ledger entry %lld has unknown kind '%s'", (long long)id, kind_text);
        return;
    }
    switch (kind) {
    case LEDGER_CREDIT:
    case LEDGER_CARRYOVER:
    case LEDGER_ADJUSTMENT:
        s->granted += amount;
        break;
    case LEDGER_EXPIRY:
        s->granted -= amount;
        break;
    case LEDGER_DEBIT:
        s->used += amount;
        break;
    case LEDGER_REFUND:
        s->used -= amount;
        break;
    case LEDGER_HOLD:
        s->held += amount;
        if (s->granted - s->used - s->held < 0)
            problem(r, "allocation %lld: hold entry %lld of %lld took available below zero (%lld)",
                    (long long)alloc_id, (long long)id, (long long)amount,
                    (long long)(s->granted - s->used - s->held));
        break;
    case LEDGER_RELEASE:
        s->held -= amount;
        break;
    default:
        break;
    }
    if (s->held < 0)
        problem(r, "allocation %lld: entry %lld makes held negative (%lld)", (long long)alloc_id,
                (long long)id, (long long)s->held);
}

static int check_balances(store_t *st, struct report *r, struct allot_error *err)
{
    db_stmt_t *b = store_stmt(st, STMT_CHECK_BALANCES, SQL_CHECK_BALANCES, err);
    if (!b)
        return -1;
    db_stmt_t *l = store_stmt(st, STMT_CHECK_LEDGER,
                              st->sqlite ? SQL_CHECK_LEDGER_SQLITE : SQL_CHECK_LEDGER, err);
    if (!l)
        return -1;
    int lrc = db_step(l, err);
    int brc = 0;
    while (lrc >= 0 && (brc = db_step(b, err)) == 1) {
        int64_t id = db_column_int64(b, 0);
        struct sums s = {0, 0, 0};
        /* Ledger rows of allocations that do not exist come before this id. */
        while (lrc == 1 && db_column_int64(l, 1) < id) {
            problem(r, "ledger entry %lld refers to missing allocation %lld",
                    (long long)db_column_int64(l, 0), (long long)db_column_int64(l, 1));
            lrc = db_step(l, err);
        }
        while (lrc == 1 && db_column_int64(l, 1) == id) {
            replay_entry(r, &s, db_column_int64(l, 0), id, db_column_text(l, 2),
                         db_column_int64(l, 3));
            lrc = db_step(l, err);
        }
        if (db_column_int64(b, 1)) {
            problem(r, "allocation %lld has no balance row", (long long)id);
            continue;
        }
        int64_t g = db_column_int64(b, 2), u = db_column_int64(b, 3), h = db_column_int64(b, 4);
        if (g != s.granted || u != s.used || h != s.held)
            problem(r,
                    "allocation %lld: cached balance granted=%lld used=%lld held=%lld, ledger "
                    "says granted=%lld used=%lld held=%lld",
                    (long long)id, (long long)g, (long long)u, (long long)h, (long long)s.granted,
                    (long long)s.used, (long long)s.held);
        if (h < 0)
            problem(r, "allocation %lld: held is negative (%lld)", (long long)id, (long long)h);
    }
    int failed = lrc < 0 || brc < 0;
    while (!failed && lrc == 1) {
        problem(r, "ledger entry %lld refers to missing allocation %lld",
                (long long)db_column_int64(l, 0), (long long)db_column_int64(l, 1));
        lrc = db_step(l, err);
        failed = lrc < 0;
    }
    db_reset(b);
    db_reset(l);
    return failed ? -1 : 0;
}

static int check_jobs(store_t *st, struct report *r, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_CHECK_JOBS, SQL_CHECK_JOBS, err);
    if (!s)
        return -1;
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        char cluster[ALLOT_NAME_MAX];
        db_column_copy(s, 0, cluster, sizeof cluster);
        long long job = (long long)db_column_int64(s, 1);
        int run = (int)db_column_int64(s, 2);
        const char *status_text = db_column_text(s, 3);
        int64_t hold = db_column_int64(s, 4), charge = db_column_int64(s, 5);
        int64_t nhold = db_column_int64(s, 7), ahold = db_column_int64(s, 8);
        int64_t nrel = db_column_int64(s, 9), arel = db_column_int64(s, 10);
        int64_t ndeb = db_column_int64(s, 11), adeb = db_column_int64(s, 12);
        int64_t elsewhere = db_column_int64(s, 13);
        enum job_status status;
        if (model_job_status_parse(status_text, &status) < 0) {
            problem(r, "job %s/%lld run %d has unknown status '%s'", cluster, job, run,
                    status_text);
            continue;
        }
        if (elsewhere)
            problem(r,
                    "job %s/%lld run %d has %lld entries on another allocation than its "
                    "payer",
                    cluster, job, run, (long long)elsewhere);
        switch (status) {
        /* A run's hold is its first hold entry plus any re-pricing (store_hold_adjust): more
         * holds, or partial releases before its end.  What it holds is their net. */
        case JOB_HELD:
            if (nhold < 1 || ahold - arel != hold || ndeb != 0)
                problem(r,
                        "job %s/%lld run %d is held (%lld) but the ledger has %lld holds "
                        "(%lld), %lld releases, %lld debits",
                        cluster, job, run, (long long)hold, (long long)nhold, (long long)ahold,
                        (long long)nrel, (long long)ndeb);
            break;
        case JOB_SETTLED:
        case JOB_RELEASED:
            if (ahold != arel || (nhold == 0) != (nrel == 0))
                problem(r,
                        "job %s/%lld run %d is %s but the ledger has %lld holds (%lld) and "
                        "%lld releases (%lld), hold recorded %lld",
                        cluster, job, run, status_text, (long long)nhold, (long long)ahold,
                        (long long)nrel, (long long)arel, (long long)hold);
            if (ndeb != (charge > 0 ? 1 : 0) || adeb != charge ||
                (status == JOB_RELEASED && charge != 0))
                problem(r,
                        "job %s/%lld run %d charged %lld but the ledger has %lld debits "
                        "(%lld)",
                        cluster, job, run, (long long)charge, (long long)ndeb, (long long)adeb);
            break;
        case JOB_REFUSED:
            if (nhold || nrel || ndeb)
                problem(r, "job %s/%lld run %d was refused but has ledger entries", cluster, job,
                        run);
            break;
        default:
            break;
        }
    }
    db_reset(s);
    if (rc < 0)
        return -1;

    s = store_stmt(st, STMT_CHECK_ORPHANS, SQL_CHECK_ORPHANS, err);
    if (!s)
        return -1;
    while ((rc = db_step(s, err)) == 1)
        problem(r, "ledger entry %lld refers to unknown job %s/%lld run %lld",
                (long long)db_column_int64(s, 0), db_column_text(s, 1),
                (long long)db_column_int64(s, 2), (long long)db_column_int64(s, 3));
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

/* SQLite's allocation index against the ledger (schema 0016); nothing to do elsewhere. */
static int check_index(store_t *st, struct report *r, struct allot_error *err)
{
    if (!st->sqlite)
        return 0;
    db_stmt_t *s = store_stmt(st, STMT_CHECK_INDEX, SQL_CHECK_INDEX_SQLITE, err);
    if (!s)
        return -1;
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        long long id = (long long)db_column_int64(s, 0), alloc = (long long)db_column_int64(s, 1);
        if (db_column_int64(s, 2) == 0)
            problem(r, "ledger entry %lld of allocation %lld is missing from ledger_alloc_index",
                    id, alloc);
        else
            problem(r,
                    "ledger_alloc_index has entry %lld under allocation %lld, which the "
                    "ledger does not have (or not yet indexed)",
                    id, alloc);
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

/* The checks compare what separate statements read (a balance with its ledger sums), so
 * they must all see one state of the bank: a commit between two of them would look like a
 * broken invariant.  A read-only transaction gives one snapshot without blocking writers:
 * SQLite's deferred BEGIN keeps the snapshot of the first read (WAL), PostgreSQL's
 * REPEATABLE READ one snapshot for every statement.  Not BEGIN IMMEDIATE (store_begin): an
 * HTTP worker's read connection may not take the write lock. */
static int check_snapshot_begin(store_t *st, struct allot_error *err)
{
    return db_exec(st->db, st->sqlite ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                   err);
}

int store_check(store_t *st, store_problem_f cb, void *arg, struct allot_error *err)
{
    struct report r = {cb, arg, 0};
    if (store_ready(st, "check", err) < 0)
        return -1;
    int own_tx = !st->in_tx;
    if (own_tx && check_snapshot_begin(st, err) < 0)
        return -1;
    int rc = check_index(st, &r, err) < 0 || check_balances(st, &r, err) < 0 ||
                     check_jobs(st, &r, err) < 0
                 ? -1
                 : r.n;
    if (own_tx) {
        struct allot_error ignored;
        (void)db_exec(st->db, "ROLLBACK", &ignored); /* nothing was written */
    }
    return rc;
}
