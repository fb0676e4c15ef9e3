/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_job.c - the job money verbs (doc/design.md §3): hold, settle, release, plus job and failure
 * records.
 *
 * A job run is keyed by (cluster, job_id, run); its row in `jobs` is written by the first
 * hold or settle, and every later call on the same run is a replay that returns the stored
 * outcome and writes nothing.  That row is the idempotency record: hold/settle/release need
 * no idempotency key in the ledger.
 * Hot path: a hold is the job lookup, the payer query, one conditional balance UPDATE (the
 * atomic check-and-hold), the ledger INSERT and the job INSERT; a settle is the job lookup
 * (with its allocation and balance), the balance UPDATE, two ledger INSERTs and the job
 * UPDATE.  Prepared statements, no heap allocation, no SQL text built at run time.
 * These verbs are the one implementation of every case on both backends.  On PostgreSQL
 * allotd's writer first offers its holds and settles to store_job_batch (one statement for
 * a batch's common cases, store_job_batch.c) and runs here only what that left.
 * A settle releases the run's whole hold and debits the charge against the allocation that
 * holds the hold, so a run straddling two periods pays from the one it started in.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "libcore/denial.h"
#include "libcore/money.h"
#include "libstore/store_int.h"
#include "libutil/text.h"

#define JOB_COLS STORE_JOB_COLS
static const char SQL_JOB_GET[] =
    "SELECT " JOB_COLS " FROM jobs WHERE cluster = $1 AND job_id = $2 AND run = $3";
/* A settle's lookup: the run and, in the same statement, the allocation that holds its hold,
 * that allocation's balance and whether a policy governs it, which the settle answers with.
 * Read before the settle's own balance move rather than after it: within the write
 * transaction nothing else moves that balance (one writer on SQLite, the bank's write lock
 * on PostgreSQL), so the balance after is this one plus that move, and a second statement
 * per settle is saved (bench/results/bank.md, 2026-11-27, d4f1b01). */
#define JOB_COLS_J STORE_JOB_COLS_OF("j.")
static const char SQL_JOB_GET_PAYER[] =
    "SELECT " JOB_COLS_J ", " STORE_ALLOC_COLS ", " STORE_BALANCE_COLS ", "
    "EXISTS (SELECT 1 FROM policies p WHERE p.alloc_id = al.id) FROM jobs j "
    "LEFT JOIN allocations al ON al.id = j.alloc_id "
    "LEFT JOIN accounts ac ON ac.id = al.account_id "
    "LEFT JOIN alloc_balance b ON b.alloc_id = al.id "
    "WHERE j.cluster = $1 AND j.job_id = $2 AND j.run = $3";
/* The highest Slurm job id of a cluster (submit tokens, >= 2^32, are not job ids). */
static const char SQL_JOB_MAX_ID[] =
    "SELECT MAX(job_id) FROM jobs WHERE cluster = $1 AND job_id < 4294967296";
static const char SQL_JOB_INSERT[] =
    "INSERT INTO jobs (" JOB_COLS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)";
static const char SQL_JOB_SETTLE[] =
    "UPDATE jobs SET start_s = $1, end_s = $2, elapsed_s = $3, slurm_state = $4, "
    "billing_micro = $5, alloc_tres = $6, status = $7, charge_sumin = $8, settle_source = $9, "
    "updated_s = $10 WHERE cluster = $11 AND job_id = $12 AND run = $13";
static const char SQL_JOB_RELEASE[] =
    "UPDATE jobs SET status = 'released', settle_source = $1, updated_s = $2 "
    "WHERE cluster = $3 AND job_id = $4 AND run = $5";
/* A listing of one job's runs (cluster and job id given, as `allot job show` asks) reads them
 * by the primary key; the "$n = '' OR" form alone reads every job in updated_s order. */
#define JOB_LIST(drive)                                                                            \
    "SELECT " JOB_COLS " FROM jobs WHERE ($1 = '' OR cluster = $1) "                               \
    "AND (CAST($2 AS BIGINT) = 0 OR job_id = $2) "                                                 \
    "AND ($3 = '' OR account = $3) AND ($4 = '' OR user_name = $4) "                               \
    "AND ($5 = '' OR status = $5) AND updated_s >= $6" drive                                       \
    " ORDER BY updated_s DESC, cluster, job_id DESC, run DESC LIMIT $7"
static const char SQL_JOB_LIST[] = JOB_LIST("");
static const char SQL_JOB_LIST_KEY[] = JOB_LIST(" AND cluster = $1 AND job_id = $2");
#define FAILURE_COLS                                                                               \
    "id, cluster, job_id, run, user_name, account, partition_name, alloc_id, stage, time_s, "      \
    "needed_sumin, available_sumin, held_sumin, message, observed"
static const char SQL_FAILURE_INSERT[] =
    "INSERT INTO failures (cluster, job_id, run, user_name, account, partition_name, alloc_id, "
    "stage, time_s, needed_sumin, available_sumin, held_sumin, message, observed) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id";
static const char SQL_FAILURE_OF_JOB[] =
    "SELECT " FAILURE_COLS " FROM failures WHERE cluster = $1 AND job_id = $2 AND run = $3 "
    "AND stage = 'hold' ORDER BY id DESC LIMIT 1";
/* As the ledger's listings (store_alloc.c): one statement per filter that can drive an
 * index -- failures_job, failures_account, failures_user, failures_time (upper bound: a
 * bounded range for the planner; "+id": not the id order instead) -- else newest first by
 * id. */
#define FAILURE_LIST(drive, id)                                                                    \
    "SELECT " FAILURE_COLS " FROM failures WHERE ($1 = '' OR account = $1) "                       \
    "AND ($2 = '' OR user_name = $2) AND time_s >= $3 AND ($4 = '' OR cluster = $4) "              \
    "AND (CAST($5 AS BIGINT) = 0 OR job_id = $5)" drive " ORDER BY " id " DESC LIMIT $6"
static const char SQL_FAILURE_LIST[] = FAILURE_LIST("", "id");
static const char SQL_FAILURE_LIST_JOB[] =
    FAILURE_LIST(" AND cluster = $4 AND job_id = $5 AND job_id <> 0", "id");
static const char SQL_FAILURE_LIST_ACCOUNT[] = FAILURE_LIST(" AND account = $1", "id");
static const char SQL_FAILURE_LIST_USER[] = FAILURE_LIST(" AND user_name = $2", "id");
static const char SQL_FAILURE_LIST_SINCE[] =
    FAILURE_LIST(" AND time_s <= 9223372036854775807", "+id");

/* ---- rows ---- */

void store_read_job(db_stmt_t *s, int col, struct job *j)
{
    memset(j, 0, sizeof *j);
    db_column_copy(s, col, j->cluster, sizeof j->cluster);
    j->job_id = db_column_int64(s, col + 1);
    j->run = (int32_t)db_column_int64(s, col + 2);
    db_column_copy(s, col + 3, j->user, sizeof j->user);
    db_column_copy(s, col + 4, j->account, sizeof j->account);
    db_column_copy(s, col + 5, j->partition, sizeof j->partition);
    db_column_copy(s, col + 6, j->qos, sizeof j->qos);
    j->submit_s = db_column_int64(s, col + 7);
    j->start_s = db_column_int64(s, col + 8);
    j->end_s = db_column_int64(s, col + 9);
    db_column_copy(s, col + 10, j->req_tres, sizeof j->req_tres);
    db_column_copy(s, col + 11, j->alloc_tres, sizeof j->alloc_tres);
    j->billing_micro = db_column_int64(s, col + 12);
    j->time_limit_s = db_column_int64(s, col + 13);
    j->elapsed_s = db_column_int64(s, col + 14);
    db_column_copy(s, col + 15, j->slurm_state, sizeof j->slurm_state);
    if (model_job_status_parse(db_column_text(s, col + 16), &j->status) < 0)
        j->status = JOB_STATUS_MAX; /* unknown text: flagged by store_check */
    j->hold_sumin = db_column_int64(s, col + 17);
    j->charge_sumin = db_column_int64(s, col + 18);
    j->alloc_id = db_column_int64(s, col + 19);
    db_column_copy(s, col + 20, j->payer_account, sizeof j->payer_account);
    db_column_copy(s, col + 21, j->settle_source, sizeof j->settle_source);
    j->updated_s = db_column_int64(s, col + 22);
}

static void read_failure(db_stmt_t *s, struct failure *f)
{
    memset(f, 0, sizeof *f);
    f->id = db_column_int64(s, 0);
    db_column_copy(s, 1, f->cluster, sizeof f->cluster);
    f->job_id = db_column_int64(s, 2);
    f->run = (int32_t)db_column_int64(s, 3);
    db_column_copy(s, 4, f->user, sizeof f->user);
    db_column_copy(s, 5, f->account, sizeof f->account);
    db_column_copy(s, 6, f->partition, sizeof f->partition);
    f->alloc_id = db_column_int64(s, 7);
    db_column_copy(s, 8, f->stage, sizeof f->stage);
    f->time_s = db_column_int64(s, 9);
    f->needed_sumin = db_column_int64(s, 10);
    f->available_sumin = db_column_int64(s, 11);
    f->held_sumin = db_column_int64(s, 12);
    db_column_copy(s, 13, f->message, sizeof f->message);
    f->observed = db_column_int64(s, 14) != 0;
}

/* The allocation a run's lookup may bring along (SQL_JOB_GET_PAYER). */
struct run_payer {
    struct allocation alloc; /* zeroed when the run has none (alloc_id 0, or a row gone) */
    struct balance bal;
    int policy; /* a policy governs alloc */
};

/* 1 found (into *j, and *p when not NULL), 0 none, -1 error. */
static int job_lookup(store_t *st, const char *cluster, int64_t job_id, int32_t run, struct job *j,
                      struct run_payer *p, struct allot_error *err)
{
    db_stmt_t *s = p ? store_stmt(st, STMT_JOB_GET_PAYER, SQL_JOB_GET_PAYER, err)
                     : store_stmt(st, STMT_JOB_GET, SQL_JOB_GET, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_int64(s, 2, job_id);
    db_bind_int64(s, 3, run);
    int rc = db_step(s, err);
    if (p)
        memset(p, 0, sizeof *p);
    if (rc == 1)
        store_read_job(s, 0, j);
    if (rc == 1 && p && !db_column_is_null(s, STORE_JOB_NCOLS)) {
        int col = STORE_JOB_NCOLS;
        store_read_alloc(s, col, &p->alloc);
        store_read_balance(s, col + STORE_ALLOC_NCOLS, p->alloc.id, &p->bal);
        p->policy = db_column_int64(s, col + STORE_ALLOC_NCOLS + STORE_BALANCE_NCOLS) != 0;
    }
    db_reset(s);
    return rc;
}

const char *store_job_payer_sql(void)
{
    return SQL_JOB_GET_PAYER;
}

int store_job_insert(store_t *st, const struct job *j, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_JOB_INSERT, SQL_JOB_INSERT, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, j->cluster);
    db_bind_int64(s, 2, j->job_id);
    db_bind_int64(s, 3, j->run);
    db_bind_text(s, 4, j->user);
    db_bind_text(s, 5, j->account);
    db_bind_text(s, 6, j->partition);
    db_bind_text(s, 7, j->qos);
    db_bind_int64(s, 8, j->submit_s);
    db_bind_int64(s, 9, j->start_s);
    db_bind_int64(s, 10, j->end_s);
    db_bind_text(s, 11, j->req_tres);
    db_bind_text(s, 12, j->alloc_tres);
    db_bind_int64(s, 13, j->billing_micro);
    db_bind_int64(s, 14, j->time_limit_s);
    db_bind_int64(s, 15, j->elapsed_s);
    db_bind_text(s, 16, j->slurm_state);
    db_bind_text(s, 17, model_job_status_name(j->status));
    db_bind_int64(s, 18, j->hold_sumin);
    db_bind_int64(s, 19, j->charge_sumin);
    db_bind_int64(s, 20, j->alloc_id);
    db_bind_text(s, 21, j->payer_account);
    db_bind_text(s, 22, j->settle_source);
    db_bind_int64(s, 23, j->updated_s);
    return db_run(s, err);
}

static int failure_insert(store_t *st, struct failure *f, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_FAILURE_INSERT, SQL_FAILURE_INSERT, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, f->cluster);
    db_bind_int64(s, 2, f->job_id);
    db_bind_int64(s, 3, f->run);
    db_bind_text(s, 4, f->user);
    db_bind_text(s, 5, f->account);
    db_bind_text(s, 6, f->partition);
    db_bind_int64(s, 7, f->alloc_id);
    db_bind_text(s, 8, f->stage);
    db_bind_int64(s, 9, f->time_s);
    db_bind_int64(s, 10, f->needed_sumin);
    db_bind_int64(s, 11, f->available_sumin);
    db_bind_int64(s, 12, f->held_sumin);
    db_bind_text(s, 13, f->message);
    db_bind_int64(s, 14, f->observed ? 1 : 0);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "failure add: no id returned");
    f->id = db_column_int64(s, 0);
    db_reset(s);
    return 0;
}

/* Fill a result's payer and balance from job->alloc_id (zeroed when none). */
static int fill_payer(store_t *st, const struct job *j, struct allocation *a, struct balance *b,
                      struct allot_error *err)
{
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    if (j->alloc_id == 0)
        return 0;
    return store_alloc_read(st, j->alloc_id, a, b, err);
}

int64_t store_now_or(int64_t t)
{
    return t > 0 ? t : (int64_t)time(NULL);
}

int64_t store_hold_at(const struct hold_req *r, int64_t now)
{
    return r->start_s > 0 ? r->start_s : now;
}

int64_t store_settle_elapsed(const struct settle_req *r)
{
    if (r->elapsed_s == 0 && r->end_s > 0 && r->start_s > 0)
        return r->end_s - r->start_s;
    return r->elapsed_s;
}

static int check_job_key(const char *cluster, int64_t job_id, int32_t run, struct allot_error *err)
{
    if (model_check_name("cluster", cluster, 0, err) < 0)
        return -1;
    if (job_id <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "job_id: must be positive");
    if (run < 0)
        return allot_errorf(err, ALLOT_EINVAL, "run: must not be negative");
    return 0;
}

/* A bounded, NUL-terminated text field of a request struct. */
static int check_field(const char *field, const char *v, size_t size, struct allot_error *err)
{
    if (memchr(v, '\0', size) == NULL)
        return allot_errorf(err, ALLOT_EINVAL, "%s: longer than %zu characters", field, size - 1);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return allot_errorf(err, ALLOT_EINVAL, "%s: contains a control character", field);
    return 0;
}

/* ---- hold ---- */

int store_hold_validate(const struct hold_req *r, struct allot_error *err)
{
    if (check_job_key(r->cluster, r->job_id, r->run, err) < 0 ||
        model_check_name("user", r->user, 0, err) < 0 ||
        model_check_name("account", r->account, 0, err) < 0 ||
        model_check_name("partition", r->partition, 1, err) < 0 ||
        model_check_name("qos", r->qos, 1, err) < 0 ||
        model_check_name("resource", r->resource, 0, err) < 0 ||
        model_check_name("actor", r->actor, 1, err) < 0 ||
        check_field("req_tres", r->req_tres, sizeof r->req_tres, err) < 0 ||
        check_field("alloc_tres", r->alloc_tres, sizeof r->alloc_tres, err) < 0 ||
        store_check_amount("amount_sumin", r->amount_sumin, 0, err) < 0)
        return -1;
    if (r->billing_micro < 0)
        return allot_errorf(err, ALLOT_EINVAL, "billing: must not be negative");
    if (r->time_limit_s < 0)
        return allot_errorf(err, ALLOT_EINVAL, "time_limit_s: must not be negative");
    if (r->start_s < 0 || r->submit_s < 0)
        return allot_errorf(err, ALLOT_EINVAL, "start: must not be before 1970");
    return 0;
}

void store_hold_job(const struct hold_req *req, int64_t now, int refused,
                    const struct allocation *payer, struct job *j)
{
    memset(j, 0, sizeof *j);
    memcpy(j->cluster, req->cluster, sizeof j->cluster);
    j->job_id = req->job_id;
    j->run = req->run;
    memcpy(j->user, req->user, sizeof j->user);
    memcpy(j->account, req->account, sizeof j->account);
    memcpy(j->partition, req->partition, sizeof j->partition);
    memcpy(j->qos, req->qos, sizeof j->qos);
    j->submit_s = req->submit_s;
    j->start_s = req->start_s;
    memcpy(j->req_tres, req->req_tres, sizeof j->req_tres);
    memcpy(j->alloc_tres, req->alloc_tres, sizeof j->alloc_tres);
    j->billing_micro = req->billing_micro;
    j->time_limit_s = req->time_limit_s;
    j->status = refused ? JOB_REFUSED : JOB_HELD;
    j->hold_sumin = refused ? 0 : req->amount_sumin;
    if (payer) {
        j->alloc_id = payer->id;
        memcpy(j->payer_account, payer->account, sizeof j->payer_account);
    }
    j->updated_s = now;
}

/* A hold or settle for a run already recorded is a replay only when it is the same job: its
 * user, account and partition cannot change once it runs, nor its submit time (each compared
 * when the call gives it).  A different job under the same key means slurmctld's job ids
 * started over (its state was lost); answering with the old job's outcome would let the new
 * one run on no hold and never pay, so it is a conflict instead. */
static int same_job(store_t *st, const struct job *j, const char *verb, const char *user,
                    const char *account, const char *partition, int64_t submit_s,
                    struct allot_error *err)
{
#define DIFFERS(a, b) ((b)[0] && strcmp((a), (b)) != 0)
    const char *what = DIFFERS(j->user, user)             ? "user"
                       : DIFFERS(j->account, account)     ? "account"
                       : DIFFERS(j->partition, partition) ? "partition"
                       /* a provisional hold's submit time is its admit's clock, and a
                        * replayed admit reads the clock again: a token is its own proof */
                       : (j->submit_s && submit_s && j->submit_s != submit_s &&
                          !store_submit_token_valid(j->job_id))
                           ? "submit"
                           : NULL;
#undef DIFFERS
    if (!what)
        return 0;
    long long max_id = 0;
    db_stmt_t *s = store_stmt(st, STMT_JOB_MAX_ID, SQL_JOB_MAX_ID, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, j->cluster);
    int rc = db_step(s, err);
    if (rc == 1)
        max_id = (long long)db_column_int64(s, 0);
    db_reset(s);
    if (rc < 0)
        return -1;
    char was[32], now[32];
    store_format_utc(j->submit_s, was, sizeof was);
    store_format_utc(submit_s, now, sizeof now);
    return allot_errorf(err, ALLOT_ECONFLICT,
                        "%s: job %lld run %d on cluster '%s' is already recorded for user '%s', "
                        "account '%s', partition '%s', submitted %s; this %s is for user '%s', "
                        "account '%s', partition '%s', submitted %s, so it is another job with "
                        "the same id.  If slurmctld's job ids started over, set FirstJobId in "
                        "slurm.conf above %lld, the highest job id allot has for this cluster.",
                        what, (long long)j->job_id, (int)j->run, j->cluster, j->user, j->account,
                        j->partition, was, verb, user[0] ? user : "?", account[0] ? account : "?",
                        partition[0] ? partition : "?", now, max_id);
}

/* An observed refusal of this run already recorded (store_hold with req->observe): 1 with
 * res filled as the first answer, 0 when none, -1 with err. */
static int observed_replay(store_t *st, const struct hold_req *req, struct hold_result *res,
                           struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_FAILURE_OF_JOB, SQL_FAILURE_OF_JOB, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, req->cluster);
    db_bind_int64(s, 2, req->job_id);
    db_bind_int64(s, 3, req->run);
    int rc = db_step(s, err);
    if (rc == 1)
        read_failure(s, &res->failure);
    db_reset(s);
    if (rc <= 0 || !res->failure.observed) {
        memset(&res->failure, 0, sizeof res->failure);
        return rc < 0 ? -1 : 0;
    }
    res->replay = res->refused = res->observed = 1;
    store_hold_job(req, res->failure.time_s, 1, NULL, &res->job);
    if (res->failure.alloc_id &&
        store_alloc_get(st, res->failure.alloc_id, &res->alloc, &res->bal, err) < 0)
        return -1;
    return 1;
}

int store_hold(store_t *st, const struct hold_req *req, struct hold_result *res,
               struct allot_error *err)
{
    struct job j;
    struct allocation payer;
    struct balance bal;
    if (store_ready_write(st, "hold", err) < 0 || store_hold_validate(req, err) < 0)
        return -1;
    memset(res, 0, sizeof *res);

    int rc = job_lookup(st, req->cluster, req->job_id, req->run, &j, NULL, err);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        if (same_job(st, &j, "hold", req->user, req->account, req->partition, req->submit_s, err) <
            0)
            return -1;
        /* A replay returns the first outcome (store.h), even if the run was settled since. */
        res->replay = 1;
        res->job = j;
        if (fill_payer(st, &j, &res->alloc, &res->bal, err) < 0)
            return -1;
        if (j.status == JOB_REFUSED) {
            res->refused = 1;
            db_stmt_t *s = store_stmt(st, STMT_FAILURE_OF_JOB, SQL_FAILURE_OF_JOB, err);
            if (!s)
                return -1;
            db_bind_text(s, 1, j.cluster);
            db_bind_int64(s, 2, j.job_id);
            db_bind_int64(s, 3, j.run);
            rc = db_step(s, err);
            if (rc == 1)
                read_failure(s, &res->failure);
            db_reset(s);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    if (req->observe) {
        rc = observed_replay(st, req, res, err);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }

    int64_t now = store_now_or(req->now_s);
    int64_t at = store_hold_at(req, now);
    struct allot_error nopayer = {0}; /* "no payer" is an outcome (a refusal), not an error */
    rc = store_payer(st, req->account, req->resource, req->cluster, at, &payer, &bal, &nopayer);
    if (rc < 0) {
        if (err)
            *err = nopayer;
        return -1;
    }
    int have_payer = rc == 0;
    int refused = !have_payer;
    if (have_payer) {
        struct ledger_entry e;
        memset(&e, 0, sizeof e);
        e.alloc_id = payer.id;
        e.kind = LEDGER_HOLD;
        e.amount_sumin = req->amount_sumin;
        memcpy(e.actor, req->actor, sizeof e.actor);
        e.time_s = now;
        memcpy(e.cluster, req->cluster, sizeof e.cluster);
        e.job_id = req->job_id;
        e.run = req->run;
        rc = store_ledger_apply_noid(st, &e, 1, err); /* the atomic check-and-hold */
        if (rc < 0)
            return -1;
        refused = rc == 1;
    }

    store_hold_job(req, now, refused, have_payer ? &payer : NULL, &j);
    if (!(refused && req->observe) && store_job_insert(st, &j, err) < 0)
        return -1;
    res->job = j;
    if (have_payer) {
        /* The balance after: read by store_payer in this transaction, which only this hold
         * has moved since (one writer), so no second read. */
        res->alloc = payer;
        res->bal = bal;
        if (!refused) {
            res->bal.held_sumin += req->amount_sumin;
            res->bal.available_sumin -= req->amount_sumin;
        }
    }
    if (!refused)
        return 0;

    /* Refused: an outcome, recorded with the numbers that refused it (doc/design.md §2.9). */
    struct failure *f = &res->failure;
    memcpy(f->cluster, req->cluster, sizeof f->cluster);
    f->job_id = req->job_id;
    f->run = req->run;
    memcpy(f->user, req->user, sizeof f->user);
    memcpy(f->account, req->account, sizeof f->account);
    memcpy(f->partition, req->partition, sizeof f->partition);
    memcpy(f->stage, "hold", 5);
    f->time_s = now;
    f->needed_sumin = req->amount_sumin;
    if (have_payer) {
        f->alloc_id = payer.id;
        f->available_sumin = res->bal.available_sumin;
        f->held_sumin = res->bal.held_sumin;
        if (store_alloc_held_at_submit(st, payer.id, &res->held_pending_sumin, err) < 0)
            return -1;
    }
    res->refused = 1;
    if (req->observe && store_submit_token_valid(req->job_id)) {
        /* A provisional hold is the admission's: what the user would have read at sbatch. */
        f->job_id = 0;
        memcpy(f->stage, "admit", 6);
        store_hold_denial(req, res, 0, f->message, sizeof f->message);
    } else {
        store_hold_denial(req, res, 1, f->message, sizeof f->message);
    }
    res->observed = f->observed = req->observe != 0;
    return failure_insert(st, f, err);
}

void store_hold_denial(const struct hold_req *req, const struct hold_result *res, int with_job,
                       char *buf, size_t size)
{
    const struct failure *f = &res->failure;
    struct denial d = {.job_id = with_job ? req->job_id : 0,
                       .run = req->run,
                       .account = req->account,
                       .resource = req->resource,
                       .cluster = req->cluster,
                       .at_s = store_hold_at(req, f->time_s),
                       .cost_sumin =
                           req->tasks > 1 ? req->amount_sumin / req->tasks : req->amount_sumin,
                       .tasks = req->tasks,
                       .billing_micro = req->billing_micro,
                       .time_limit_s = req->time_limit_s,
                       .alloc_id = f->alloc_id,
                       .payer_account = res->alloc.account,
                       .available_sumin = f->available_sumin,
                       .held_sumin = f->held_sumin,
                       .held_pending_sumin = res->held_pending_sumin};
    denial_format(buf, size, &d);
}

/* ---- settle and release ---- */

int store_is_node_fail(const char *state)
{
    return money_state_free(state);
}

int store_settle_validate(const struct settle_req *r, struct allot_error *err)
{
    if (check_job_key(r->cluster, r->job_id, r->run, err) < 0 ||
        model_check_name("actor", r->actor, 1, err) < 0 ||
        model_check_name("settle_source", r->settle_source, 1, err) < 0 ||
        check_field("state", r->slurm_state, sizeof r->slurm_state, err) < 0 ||
        check_field("alloc_tres", r->alloc_tres, sizeof r->alloc_tres, err) < 0)
        return -1;
    if (r->start_s < 0 || r->end_s < 0)
        return allot_errorf(err, ALLOT_EINVAL, "start: must not be before 1970");
    if (r->end_s > 0 && r->start_s > r->end_s)
        return allot_errorf(err, ALLOT_EINVAL, "end: before start");
    if (r->elapsed_s < 0)
        return allot_errorf(err, ALLOT_EINVAL, "elapsed_s: must not be negative");
    if (r->billing_micro < 0)
        return allot_errorf(err, ALLOT_EINVAL, "billing: must not be negative");
    if (r->charge_sumin < -1 || r->charge_sumin > STORE_AMOUNT_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "charge_sumin: must be -1 (compute) or 0..%lld",
                            (long long)STORE_AMOUNT_MAX);
    return 0;
}

/* doc/design.md §3.3: NODE_FAIL costs 0; otherwise the explicit charge or ceil(billing x
 * elapsed/60), and a held run at most its hold (cap >= 0): the hold is the job's maximum cost,
 * taken when the balance covered it, so time past the limit (OverTimeLimit, a limit raised while
 * allotd could not re-price the hold) can never overdraw the allocation; *uncapped is then
 * what the run used (else 0), for the record.  cap < 0: a run never held, post-paid. */
static int settle_charge(const struct settle_req *r, int64_t billing_micro, int64_t elapsed_s,
                         int64_t cap, int64_t *charge, int64_t *uncapped, struct allot_error *err)
{
    *uncapped = 0;
    if (store_is_node_fail(r->slurm_state)) {
        *charge = 0;
        return 0;
    }
    if (r->charge_sumin >= 0) {
        *charge = r->charge_sumin;
    } else {
        if (money_charge_sumin(billing_micro, elapsed_s, charge, err) < 0)
            return allot_error_prefix(err, "charge");
        if (*charge > STORE_AMOUNT_MAX)
            return allot_errorf(err, ALLOT_EINVAL, "charge: larger than %lld SU-minutes",
                                (long long)STORE_AMOUNT_MAX);
    }
    if (cap >= 0 && *charge > cap) {
        *uncapped = *charge; /* recorded with the debit: the run used more than it held */
        *charge = cap;
    }
    return 0;
}

/* The end of a settled run: as given, else start + elapsed, else the settle's time.  A run
 * cannot have ended after it was settled: a start + elapsed past the settle (a start taken
 * from the hold, clocks apart) ends at the settle, so usage by end time never holds a run
 * that ends in the future. */
static int64_t settle_end(const struct settle_req *r, int64_t start_s, int64_t elapsed_s,
                          int64_t now)
{
    if (r->end_s > 0)
        return r->end_s;
    if (start_s <= 0 || start_s > now - elapsed_s)
        return now;
    return start_s + elapsed_s;
}

static void job_entry(struct ledger_entry *e, enum ledger_kind kind, int64_t alloc_id,
                      int64_t amount, const char *cluster, int64_t job_id, int32_t run,
                      const char *actor, const char *comment, int64_t now)
{
    memset(e, 0, sizeof *e);
    e->alloc_id = alloc_id;
    e->kind = kind;
    e->amount_sumin = amount;
    text_copy(e->actor, sizeof e->actor, actor);
    e->time_s = now;
    text_copy(e->comment, sizeof e->comment, comment);
    text_copy(e->cluster, sizeof e->cluster, cluster);
    e->job_id = job_id;
    e->run = run;
}

static int job_ledger(store_t *st, enum ledger_kind kind, int64_t alloc_id, int64_t amount,
                      const char *cluster, int64_t job_id, int32_t run, const char *actor,
                      const char *comment, int64_t now, struct allot_error *err)
{
    struct ledger_entry e;
    job_entry(&e, kind, alloc_id, amount, cluster, job_id, run, actor, comment, now);
    /* Unchecked: a release only lowers held, a debit records usage that happened. */
    return store_ledger_apply_noid(st, &e, 0, err);
}

static int job_settle_update(store_t *st, const struct job *j, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_JOB_SETTLE, SQL_JOB_SETTLE, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, j->start_s);
    db_bind_int64(s, 2, j->end_s);
    db_bind_int64(s, 3, j->elapsed_s);
    db_bind_text(s, 4, j->slurm_state);
    db_bind_int64(s, 5, j->billing_micro);
    db_bind_text(s, 6, j->alloc_tres);
    db_bind_text(s, 7, model_job_status_name(j->status));
    db_bind_int64(s, 8, j->charge_sumin);
    db_bind_text(s, 9, j->settle_source);
    db_bind_int64(s, 10, j->updated_s);
    db_bind_text(s, 11, j->cluster);
    db_bind_int64(s, 12, j->job_id);
    db_bind_int64(s, 13, j->run);
    return db_run(s, err);
}

int store_settle(store_t *st, const struct settle_req *req, struct settle_result *res,
                 struct allot_error *err)
{
    struct job j;
    struct run_payer p; /* the run's allocation and balance as found */
    if (store_ready_write(st, "settle", err) < 0 || store_settle_validate(req, err) < 0)
        return -1;
    memset(res, 0, sizeof *res);
    int64_t now = store_now_or(req->now_s);
    int64_t start = req->start_s;
    int64_t elapsed = store_settle_elapsed(req);
    int found = job_lookup(st, req->cluster, req->job_id, req->run, &j, &p, err);
    if (found < 0)
        return -1;
    if (found && same_job(st, &j, "settle", req->user, req->account, req->partition, 0, err) < 0)
        return -1;
    if (found && j.alloc_id != 0 && p.alloc.id != j.alloc_id) /* as fill_payer would find it */
        return allot_errorf(err, ALLOT_ENOENT, "allocation %lld does not exist",
                            (long long)j.alloc_id);
    if (found && (j.status == JOB_SETTLED || j.status == JOB_RELEASED)) {
        res->replay = 1;
        res->job = j;
        res->alloc = p.alloc;
        res->bal = p.bal;
        return 0;
    }
    int64_t charge;

    if (found) {
        if (j.status != JOB_HELD && j.status != JOB_REFUSED)
            return allot_errorf(err, ALLOT_EINTERNAL, "job %lld run %d has an unknown status",
                                (long long)j.job_id, (int)j.run);
        /* A held run pays at the billing its hold was priced at (store.h); a refused one
         * records the settle's, as a run never held. */
        int64_t billing =
            j.status == JOB_HELD || req->billing_micro <= 0 ? j.billing_micro : req->billing_micro;
        int64_t run_start = start > 0 ? start : j.start_s;
        if (req->end_s > 0 && run_start > req->end_s)
            return allot_errorf(err, ALLOT_EINVAL, "end: before the run's start (%lld)",
                                (long long)run_start);
        if (j.status == JOB_REFUSED) {
            charge = 0; /* store.h: a refused run never ran on credit: nothing to release */
        } else {
            if (settle_charge(req, billing, elapsed, j.hold_sumin, &charge, &res->capped_from_sumin,
                              err) < 0)
                return -1;
            char what[ALLOT_TEXT_MAX];
            if (res->capped_from_sumin)
                snprintf(what, sizeof what,
                         "%.64s; capped at the hold: used %lld SU-min, held %lld", req->slurm_state,
                         (long long)res->capped_from_sumin, (long long)j.hold_sumin);
            else
                text_copy(what, sizeof what, req->slurm_state);
            /* Release and debit: two ledger entries, one balance UPDATE (unchecked, as
             * job_ledger: a release only lowers held, a debit records usage). */
            struct ledger_entry rel, deb;
            job_entry(&rel, LEDGER_RELEASE, j.alloc_id, j.hold_sumin, j.cluster, j.job_id, j.run,
                      req->actor, "settle", now);
            job_entry(&deb, LEDGER_DEBIT, j.alloc_id, charge, j.cluster, j.job_id, j.run,
                      req->actor, what, now);
            if (store_ledger_apply_pair(st, &rel, charge > 0 ? &deb : NULL, err) < 0)
                return -1;
            p.bal.held_sumin -= j.hold_sumin; /* the pair's move, as SQL_BALANCE_APPLY made it */
            p.bal.used_sumin += charge;
            p.bal.available_sumin = p.bal.granted_sumin - p.bal.used_sumin - p.bal.held_sumin;
        }
        j.start_s = run_start;
        j.end_s = settle_end(req, run_start, elapsed, now);
        j.elapsed_s = elapsed;
        memcpy(j.slurm_state, req->slurm_state, sizeof j.slurm_state);
        j.billing_micro = billing;
        if (req->alloc_tres[0])
            memcpy(j.alloc_tres, req->alloc_tres, sizeof j.alloc_tres);
        j.status = JOB_SETTLED;
        j.charge_sumin = charge;
        memcpy(j.settle_source, req->settle_source, sizeof j.settle_source);
        j.updated_s = now;
        if (job_settle_update(st, &j, err) < 0 ||
            store_usage_charge(st, j.cluster, j.account, j.user, j.qos, j.end_s, j.elapsed_s,
                               j.charge_sumin, j.billing_micro, now, err) < 0)
            return -1;
    } else {
        /* Never held (post-paid, reconciled from sacct): debit the payer at start. */
        struct allocation payer;
        if (model_check_name("user", req->user, 0, err) < 0 ||
            model_check_name("account", req->account, 0, err) < 0 ||
            model_check_name("partition", req->partition, 1, err) < 0 ||
            model_check_name("qos", req->qos, 1, err) < 0 ||
            model_check_name("resource", req->resource, 0, err) < 0)
            return -1;
        if (req->time_limit_s < 0)
            return allot_errorf(err, ALLOT_EINVAL, "time_limit_s: must not be negative");
        int64_t uncapped;
        if (settle_charge(req, req->billing_micro, elapsed, -1, &charge, &uncapped, err) < 0)
            return -1;
        int rc = store_payer(st, req->account, req->resource, req->cluster, start > 0 ? start : now,
                             &payer, NULL, err);
        if (rc != 0)
            return -1; /* rc 1: err holds the ENOENT naming account, resource, cluster, date */
        if (charge > 0 && job_ledger(st, LEDGER_DEBIT, payer.id, charge, req->cluster, req->job_id,
                                     req->run, req->actor, req->slurm_state, now, err) < 0)
            return -1;
        memset(&j, 0, sizeof j);
        memcpy(j.cluster, req->cluster, sizeof j.cluster);
        j.job_id = req->job_id;
        j.run = req->run;
        memcpy(j.user, req->user, sizeof j.user);
        memcpy(j.account, req->account, sizeof j.account);
        memcpy(j.partition, req->partition, sizeof j.partition);
        memcpy(j.qos, req->qos, sizeof j.qos);
        j.start_s = start;
        j.end_s = settle_end(req, start, elapsed, now);
        memcpy(j.alloc_tres, req->alloc_tres, sizeof j.alloc_tres);
        j.billing_micro = req->billing_micro;
        j.time_limit_s = req->time_limit_s;
        j.elapsed_s = elapsed;
        memcpy(j.slurm_state, req->slurm_state, sizeof j.slurm_state);
        j.status = JOB_SETTLED;
        j.charge_sumin = charge;
        j.alloc_id = payer.id;
        memcpy(j.payer_account, payer.account, sizeof j.payer_account);
        memcpy(j.settle_source, req->settle_source, sizeof j.settle_source);
        j.updated_s = now;
        if (store_job_insert(st, &j, err) < 0 ||
            store_usage_charge(st, j.cluster, j.account, j.user, j.qos, j.end_s, j.elapsed_s,
                               j.charge_sumin, j.billing_micro, now, err) < 0)
            return -1;
    }
    res->job = j;
    if (j.alloc_id == 0) { /* refused, never held: no payer, nothing to evaluate */
        res->no_policy = 1;
        return 0;
    }
    if (found) { /* read with the run */
        res->alloc = p.alloc;
        res->bal = p.bal;
    } else if (store_alloc_read_policy(st, j.alloc_id, &res->alloc, &res->bal, &p.policy, err) <
               0) {
        return -1;
    }
    res->no_policy = !p.policy;
    return 0;
}

int store_release(store_t *st, const char *cluster, int64_t job_id, int32_t run, const char *actor,
                  const char *comment, int64_t now_s, struct settle_result *res,
                  struct allot_error *err)
{
    struct job j;
    char text[ALLOT_TEXT_MAX];
    if (store_ready_write(st, "release", err) < 0 || check_job_key(cluster, job_id, run, err) < 0 ||
        model_check_name("actor", actor ? actor : "", 1, err) < 0 ||
        model_copy_text(text, sizeof text, "comment", comment ? comment : "", err) < 0)
        return -1;
    memset(res, 0, sizeof *res);
    int rc = job_lookup(st, cluster, job_id, run, &j, NULL, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_ENOENT, "job %lld run %d on cluster '%s' is not known",
                            (long long)job_id, (int)run, cluster);
    if (j.status != JOB_HELD) {
        /* Settled, released or refused: nothing is held, nothing to write. */
        res->replay = 1;
        res->job = j;
        return fill_payer(st, &j, &res->alloc, &res->bal, err);
    }
    int64_t now = store_now_or(now_s);
    if (job_ledger(st, LEDGER_RELEASE, j.alloc_id, j.hold_sumin, j.cluster, j.job_id, j.run,
                   actor ? actor : "", text[0] ? text : "release", now, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_JOB_RELEASE, SQL_JOB_RELEASE, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, "release");
    db_bind_int64(s, 2, now);
    db_bind_text(s, 3, cluster);
    db_bind_int64(s, 4, job_id);
    db_bind_int64(s, 5, run);
    if (db_run(s, err) < 0)
        return -1;
    j.status = JOB_RELEASED;
    memcpy(j.settle_source, "release", 8);
    j.updated_s = now;
    res->job = j;
    return fill_payer(st, &j, &res->alloc, &res->bal, err);
}

/* ---- reads ---- */

int store_job_get(store_t *st, const char *cluster, int64_t job_id, int32_t run, struct job *out,
                  struct allot_error *err)
{
    if (store_ready(st, "job get", err) < 0 || check_job_key(cluster, job_id, run, err) < 0)
        return -1;
    int rc = job_lookup(st, cluster, job_id, run, out, NULL, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_ENOENT, "job %lld run %d on cluster '%s' is not known",
                            (long long)job_id, (int)run, cluster);
    return 0;
}

int store_job_list_sql(const struct job_filter *f, const char **sql)
{
    if (f && f->job_id && f->cluster && f->cluster[0]) {
        *sql = SQL_JOB_LIST_KEY;
        return STMT_JOB_LIST_KEY;
    }
    *sql = SQL_JOB_LIST;
    return STMT_JOB_LIST;
}

STORE_ROWS(job, struct job, store_job_f, store_read_job(s, 0, &row))

int store_job_list(store_t *st, const struct job_filter *f, store_job_f cb, void *arg,
                   struct allot_error *err)
{
    if (store_ready(st, "job list", err) < 0)
        return -1;
    int status = f ? f->status : -1;
    if (status < -1 || status >= JOB_STATUS_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "status: unknown job status %d", status);
    const char *sql;
    int id = store_job_list_sql(f, &sql);
    db_stmt_t *s = store_stmt(st, id, sql, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, f && f->cluster ? f->cluster : "");
    db_bind_int64(s, 2, f ? f->job_id : 0);
    db_bind_text(s, 3, f && f->account ? f->account : "");
    db_bind_text(s, 4, f && f->user ? f->user : "");
    db_bind_text(s, 5, status < 0 ? "" : model_job_status_name((enum job_status)status));
    db_bind_int64(s, 6, f ? f->since_s : 0);
    db_bind_int64(s, 7, f && f->limit > 0 ? f->limit : INT64_MAX);
    return store_walk(s, job_row, &(struct job_walk){cb, arg}, err);
}

int store_failure_add(store_t *st, struct failure *f, struct allot_error *err)
{
    char tmp[ALLOT_MSG_MAX];
    if (store_ready_write(st, "failure add", err) < 0 ||
        model_check_name("cluster", f->cluster, 1, err) < 0 ||
        model_check_name("user", f->user, 1, err) < 0 ||
        model_check_name("account", f->account, 1, err) < 0 ||
        model_check_name("partition", f->partition, 1, err) < 0 ||
        check_field("stage", f->stage, sizeof f->stage, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "message", f->message, err) < 0)
        return -1;
    if (strcmp(f->stage, "admit") != 0 && strcmp(f->stage, "hold") != 0)
        return allot_errorf(err, ALLOT_EINVAL, "stage: must be 'admit' or 'hold'");
    if (f->observed != 0 && f->observed != 1)
        return allot_errorf(err, ALLOT_EINVAL, "observed: must be 0 or 1");
    if (f->job_id < 0 || f->run < 0 || f->alloc_id < 0)
        return allot_errorf(err, ALLOT_EINVAL, "job_id: must not be negative");
    f->time_s = store_now_or(f->time_s);
    return failure_insert(st, f, err);
}

int store_failure_list_sql(const struct failure_filter *f, const char **sql)
{
    if (f && f->cluster && f->cluster[0] && f->job_id) {
        *sql = SQL_FAILURE_LIST_JOB;
        return STMT_FAILURE_LIST_JOB;
    }
    if (f && f->account && f->account[0]) {
        *sql = SQL_FAILURE_LIST_ACCOUNT;
        return STMT_FAILURE_LIST_ACCOUNT;
    }
    if (f && f->user && f->user[0]) {
        *sql = SQL_FAILURE_LIST_USER;
        return STMT_FAILURE_LIST_USER;
    }
    if (f && f->since_s > 0) {
        *sql = SQL_FAILURE_LIST_SINCE;
        return STMT_FAILURE_LIST_SINCE;
    }
    *sql = SQL_FAILURE_LIST;
    return STMT_FAILURE_LIST;
}

STORE_ROWS(failure, struct failure, store_failure_f, read_failure(s, &row))

int store_failure_list(store_t *st, const struct failure_filter *f, store_failure_f cb, void *arg,
                       struct allot_error *err)
{
    if (store_ready(st, "failure list", err) < 0)
        return -1;
    const char *sql;
    int id = store_failure_list_sql(f, &sql);
    db_stmt_t *s = store_stmt(st, id, sql, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, f && f->account ? f->account : "");
    db_bind_text(s, 2, f && f->user ? f->user : "");
    db_bind_int64(s, 3, f ? f->since_s : 0);
    db_bind_text(s, 4, f && f->cluster ? f->cluster : "");
    db_bind_int64(s, 5, f ? f->job_id : 0);
    db_bind_int64(s, 6, f && f->limit > 0 ? f->limit : INT64_MAX);
    return store_walk(s, failure_row, &(struct failure_walk){cb, arg}, err);
}
