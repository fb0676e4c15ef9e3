/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db_pg.c - the PostgreSQL (libpq) driver of db.h.
 *
 * One PGconn per db_t, used by one thread at a time.  Statements are prepared on the server
 * by name ("a<n>") once per connection; values travel as text parameters (never formatted
 * into SQL) and results come back in text format, read whole with PQexecPrepared.
 *
 * Write lock.  db_begin promises what SQLite's BEGIN IMMEDIATE gives: once it returns, this
 * connection is the only writer until COMMIT/ROLLBACK.  Here it is
 *   BEGIN (READ COMMITTED); SELECT pg_advisory_xact_lock(DB_PG_WRITE_LOCK)
 * in one round trip.  Every write transaction of every process sharing the database takes
 * that one lock first, so (a) the store's read-check-write verbs (overlap checks,
 * idempotency lookups, the check-and-hold) see every earlier commit (READ COMMITTED takes a
 * fresh snapshot per statement, and each statement after the lock runs after the previous
 * holder committed), and (b) no two writers ever wait for each other's row locks, so there
 * is no deadlock between allotd instances whatever order a batch touches rows in.  The lock
 * is taken once per transaction: the daemon's group commit amortises it (and the commit's
 * fsync) over a whole batch.  Waiting for it is bounded by lock_timeout (= busy timeout),
 * reported as EUNAVAIL.  The store's conditional balance UPDATE keeps "no overdraft" true
 * even without the lock; the lock is what keeps the other verbs simple and deadlock-free.
 *
 * Connection loss.  A failed call on a broken connection is EUNAVAIL ("retry").  The next
 * db_begin, or statement outside a transaction, reconnects once (bounded by connect_timeout,
 * default 3 s; after a failed attempt the next waits 50 ms, doubling up to 2 s, and calls in
 * between fail at once) and bumps a generation counter; each statement re-prepares itself lazily
 * when its generation is older, so cached db_stmt_t handles stay valid across reconnects.  A
 * transaction that was open when the connection broke is lost as a whole, never replayed.
 *
 * Deferred statements (db_run_deferred).  Inside a transaction, a parameter-less statement
 * whose result nobody reads (the writer's per-request SAVEPOINT and RELEASE) is queued and
 * sent in pipeline mode with the next statement, as "deferred..., Sync, next, Sync": one
 * round trip instead of three.  The two sync points keep the server's behaviour that of
 * running them one by one: a failed deferred statement aborts the transaction, its error is
 * returned by the next statement's step (naming the deferred statement), and the next
 * statement then fails (25P02) or, for ROLLBACK TO / ROLLBACK, runs as it would have.  A bare
 * ROLLBACK drops the queue (it undoes those statements anyway); exec and table_exists send
 * the queue alone first.  A lost connection drops the queue with the transaction.
 *
 * One-round-trip transactions (db_step_tx).  A statement that is a whole write transaction
 * by itself (store_job_batch) is sent as "BEGIN, lock, statement, Sync, COMMIT, Sync": the
 * lock is taken, the statement runs and commits without a round trip in between.  If BEGIN,
 * the lock or the statement fails, COMMIT ends the failed transaction (the server answers
 * ROLLBACK) and the first error is returned; nothing is retried.
 *
 * Lost COMMIT answers.  When the connection breaks after COMMIT was sent (the server went
 * away, or killed this backend: 57P01/57P02, class 08), the transaction may or may not have
 * committed: a server commits before it answers.  COMMIT (and db_step_tx, which sends one)
 * then fails with EINDOUBT instead of EUNAVAIL, so the caller finds out what stands before
 * it answers anyone (writer.c); every other failure of COMMIT is a rollback.
 *
 * Error mapping (db.h): connection failure (class 08, 57P01-57P03) and lock_not_available
 * 55P03, serialization_failure 40001, deadlock_detected 40P01 -> EUNAVAIL; unique_violation
 * 23505 -> EEXIST; other integrity violations (23xxx) -> ECONFLICT; out of memory 53200 ->
 * ENOMEM; the rest EIO.
 */
#include "libstore/db.h"

#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#ifdef ALLOT_TEST
#include "libstore/store_fault.h"
#endif

/* pg_advisory_xact_lock key of the bank's write lock: "allot" in ASCII. */
#define DB_PG_WRITE_LOCK "418430168948"
#define DB_PG_PARAMS_MAX 40 /* the job batch (store_job_batch.c) has 35 */
#define DB_PG_DEFER_MAX 8   /* deferred statements queued before a forced flush */

struct db_pg {
    struct db base; /* first: a db_t * is a struct db_pg * */
    PGconn *conn;
    unsigned gen;       /* bumped on every (re)connect */
    unsigned next_name; /* statement names a1, a2, ... */
    int busy_timeout_ms;
    int durable;
    int tx_open;         /* a transaction was begun and not yet seen to end */
    int64_t retry_at_ms; /* no reconnect attempt before this (CLOCK_MONOTONIC) */
    int backoff_ms;      /* next wait after a failed reconnect: 50 ms doubling to 2 s */
    /* db_run_deferred: parameter-less statements (SAVEPOINT, RELEASE) waiting to be sent in
     * the pipeline of the next statement; only ever inside an open transaction. */
    struct db_pg_stmt *deferred[DB_PG_DEFER_MAX];
    int ndeferred;
};

struct db_pg_stmt {
    struct db_stmt base; /* first */
    char *sql;
    char name[16];
    unsigned gen; /* connection generation it was prepared in; 0 = not prepared */
    int nparams;
    const char *vals[DB_PG_PARAMS_MAX]; /* borrowed text or ibuf[i]; NULL = SQL NULL */
    char ibuf[DB_PG_PARAMS_MAX][24];
    PGresult *res;
    int row, nrows;
    int64_t changes;
};

static int pipe_flush_alone(struct db_pg *d, struct allot_error *err);

static struct db_pg *pg_of(db_t *db)
{
    return (struct db_pg *)db;
}

static enum allot_errnum map_sqlstate(const char *st)
{
    if (!st || strlen(st) != 5)
        return ALLOT_EIO;
    if (strncmp(st, "08", 2) == 0 || strcmp(st, "57P01") == 0 || strcmp(st, "57P02") == 0 ||
        strcmp(st, "57P03") == 0 || strcmp(st, "55P03") == 0 || strcmp(st, "40001") == 0 ||
        strcmp(st, "40P01") == 0)
        return ALLOT_EUNAVAIL;
    if (strcmp(st, "23505") == 0)
        return ALLOT_EEXIST;
    if (strncmp(st, "23", 2) == 0)
        return ALLOT_ECONFLICT;
    if (strcmp(st, "53200") == 0)
        return ALLOT_ENOMEM;
    return ALLOT_EIO;
}

/* Fill err from a failed result (res may be NULL when libpq itself failed). */
static int fail_res(struct db_pg *d, const PGresult *res, const char *what, struct allot_error *err)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    enum allot_errnum code = map_sqlstate(state);
    if (PQstatus(d->conn) != CONNECTION_OK)
        code = ALLOT_EUNAVAIL;
    const char *msg = res ? PQresultErrorMessage(res) : "";
    if (!msg || !*msg)
        msg = PQerrorMessage(d->conn);
    /* libpq messages end with a newline; keep the reply on one line. */
    int len = (int)strcspn(msg, "\n");
    return allot_errorf(err, code, "pg: %s: %.*s%s%s%s", what, len, msg, state ? " (" : "",
                        state ? state : "", state ? ")" : "");
}

/* Why a connection attempt failed, on one line in buf.  libpq writes a line per host it
 * tried (a multi-host string gives "...port 5432 failed: Connection refused" then "...port
 * 5433 failed: session is read-only") with indented hints under them: the hosts' lines are
 * kept, joined by "; ", so the reply says why each server was passed over. */
static const char *conn_failure(PGconn *c, char *buf, size_t n)
{
    const char *p = PQerrorMessage(c);
    size_t o = 0;
    buf[0] = '\0';
    while (*p) {
        size_t len = strcspn(p, "\n");
        if (len > 0 && p[0] != '\t' && p[0] != ' ') {
            int w = snprintf(buf + o, n - o, "%s%.*s", o ? "; " : "", (int)len, p);
            if (w < 0 || (size_t)w >= n - o)
                break; /* truncated: buf holds what fitted */
            o += (size_t)w;
        }
        p += len + (p[len] == '\n');
    }
    return buf;
}

/* Whether a COMMIT that failed with res (NULL: no result) may have committed all the same:
 * the connection is gone, or the server ended it (admin or crash shutdown, class 08). */
static int answer_lost(const struct db_pg *d, const PGresult *res)
{
    const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return PQstatus(d->conn) != CONNECTION_OK ||
           (st &&
            (strncmp(st, "08", 2) == 0 || strcmp(st, "57P01") == 0 || strcmp(st, "57P02") == 0));
}

/* err (set by the failure) becomes EINDOUBT when the answer to a sent COMMIT was lost. */
static void commit_in_doubt(const struct db_pg *d, const PGresult *res, struct allot_error *err)
{
    if (!err || !answer_lost(d, res))
        return;
    err->code = ALLOT_EINDOUBT;
    allot_error_prefix(err, "COMMIT sent, its answer lost; it may have committed");
}

#ifdef ALLOT_TEST
/* Test builds (store_fault.h, lost COMMIT answers): after a COMMIT that committed, cut the
 * connection when the fault is due and return what libpq then reports instead of res. */
static PGresult *test_lose_answer(struct db_pg *d, PGresult *res, int step_tx)
{
    if (PQresultStatus(res) != PGRES_COMMAND_OK || strcmp(PQcmdStatus(res), "COMMIT") != 0 ||
        !store_fault_commit_lost_due(step_tx))
        return res;
    PQclear(res);
    (void)shutdown(PQsocket(d->conn), SHUT_RDWR);
    res = PQexec(d->conn, "SELECT 1"); /* fails: libpq finds the connection gone */
    store_fault_commit_lost_wait();
    return res;
}
#endif

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* libraries never log; notices ("already exists, skipping") are noise */
}

/* Per-session settings, run after every (re)connect. */
static int session_setup(struct db_pg *d, struct allot_error *err)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SET synchronous_commit = %s; SET lock_timeout = %d; "
             "SET default_transaction_isolation = 'read committed'; SET TIME ZONE 'UTC'",
             d->durable ? "on" : "off", d->busy_timeout_ms);
    PGresult *res = PQexec(d->conn, sql);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok)
        fail_res(d, res, "session setup", err);
    PQclear(res);
    return ok ? 0 : -1;
}

/* Make sure the connection is usable: reconnect once when no transaction is open.  Inside a
 * transaction a lost connection is an error: running the rest of it on a new connection
 * would commit half a transaction statement by statement. */
static int ensure_conn(struct db_pg *d, struct allot_error *err)
{
    if (PQstatus(d->conn) == CONNECTION_OK)
        return 0;
    if (d->tx_open)
        return allot_errorf(err, ALLOT_EUNAVAIL,
                            "pg: connection lost inside a transaction (retry)");
    /* Bounded backoff: while the server is down every caller fails at once (the daemon
     * answers 503) instead of each one paying a connection attempt. */
    int64_t now = now_ms();
    if (now < d->retry_at_ms)
        return allot_errorf(err, ALLOT_EUNAVAIL,
                            "pg: database unreachable, next reconnect attempt in %lld ms",
                            (long long)(d->retry_at_ms - now));
    d->ndeferred = 0; /* they belonged to the transaction the connection took with it */
    PQreset(d->conn);
    if (PQstatus(d->conn) != CONNECTION_OK) {
        d->retry_at_ms = now_ms() + d->backoff_ms;
        d->backoff_ms = d->backoff_ms < 1000 ? d->backoff_ms * 2 : 2000;
        char why[ALLOT_ERRMSG_MAX];
        return allot_errorf(err, ALLOT_EUNAVAIL, "pg: database unreachable (retry): %s",
                            conn_failure(d->conn, why, sizeof why));
    }
    d->backoff_ms = 50;
    d->retry_at_ms = 0;
    if (PQpipelineStatus(d->conn) != PQ_PIPELINE_OFF)
        (void)PQexitPipelineMode(d->conn); /* a flush the old connection died in */
    PQsetNoticeProcessor(d->conn, ignore_notice, NULL);
    d->gen++;
    return session_setup(d, err);
}

/* The connection broke while no transaction was open (a one-shot retry is safe). */
static int stale_conn(struct db_pg *d)
{
    return PQstatus(d->conn) != CONNECTION_OK && !d->tx_open;
}

static void drv_close(db_t *db)
{
    struct db_pg *d = pg_of(db);
    PQfinish(d->conn); /* the server rolls back an open transaction */
    free(d);
}

static int drv_exec(db_t *db, const char *sql, struct allot_error *err)
{
    struct db_pg *d = pg_of(db);
    if (pipe_flush_alone(d, err) < 0 || ensure_conn(d, err) < 0)
        return -1;
    PGresult *res = PQexec(d->conn, sql);
    ExecStatusType s = PQresultStatus(res);
    int ok = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || s == PGRES_EMPTY_QUERY;
    if (!ok)
        fail_res(d, res, "exec", err);
    PQclear(res);
    return ok ? 0 : -1;
}

static int drv_begin(db_t *db, struct allot_error *err)
{
    struct db_pg *d = pg_of(db);
    d->tx_open = 0; /* the store begins only outside a transaction */
    d->ndeferred = 0;
    if (ensure_conn(d, err) < 0)
        return -1;
    static const char sql[] = "BEGIN ISOLATION LEVEL READ COMMITTED; "
                              "SELECT pg_advisory_xact_lock(" DB_PG_WRITE_LOCK ")";
    PGresult *res = PQexec(d->conn, sql);
    int ok = PQresultStatus(res) == PGRES_TUPLES_OK;
    if (!ok && stale_conn(d)) {
        PQclear(res); /* server restarted since the last use: reconnect, begin again */
        if (ensure_conn(d, err) < 0)
            return -1;
        res = PQexec(d->conn, sql);
        ok = PQresultStatus(res) == PGRES_TUPLES_OK;
    }
    if (!ok) {
        fail_res(d, res, "begin (write lock)", err);
        PQclear(res);
        if (PQstatus(d->conn) == CONNECTION_OK && PQtransactionStatus(d->conn) != PQTRANS_IDLE) {
            res = PQexec(d->conn, "ROLLBACK");
            PQclear(res);
        }
        return -1;
    }
    PQclear(res);
    d->tx_open = 1;
    return 0;
}

static int drv_table_exists(db_t *db, const char *table, int *exists, struct allot_error *err)
{
    struct db_pg *d = pg_of(db);
    if (pipe_flush_alone(d, err) < 0 || ensure_conn(d, err) < 0)
        return -1;
    const char *vals[1] = {table};
    /* to_regclass follows search_path, as unqualified table names in the store's SQL do. */
    PGresult *res = PQexecParams(d->conn, "SELECT to_regclass($1::text) IS NOT NULL", 1, NULL, vals,
                                 NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
        fail_res(d, res, "table_exists", err);
        PQclear(res);
        return -1;
    }
    *exists = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return 0;
}

/* Highest $N in sql outside quotes and comments (the statement's parameter count). */
static int count_params(const char *sql)
{
    int max = 0;
    for (const char *p = sql; *p; p++) {
        if (*p == '\'' || *p == '"') {
            char q = *p;
            for (p++; *p && *p != q; p++)
                ;
            if (!*p)
                break;
        } else if (p[0] == '-' && p[1] == '-') {
            while (*p && *p != '\n')
                p++;
            if (!*p)
                break;
        } else if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
            int n = 0;
            for (p++; *p >= '0' && *p <= '9'; p++)
                n = n < 1000 ? n * 10 + (*p - '0') : n;
            if (n > max)
                max = n;
            p--;
        }
    }
    return max;
}

static int server_prepare(struct db_pg_stmt *q, struct allot_error *err)
{
    struct db_pg *d = pg_of(q->base.db);
    PGresult *res = PQprepare(d->conn, q->name, q->sql, q->nparams, NULL);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok && stale_conn(d)) {
        PQclear(res); /* dead connection found on first use: reconnect, prepare again */
        if (ensure_conn(d, err) < 0)
            return -1;
        res = PQprepare(d->conn, q->name, q->sql, q->nparams, NULL);
        ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    }
    if (!ok) {
        fail_res(d, res, "prepare", err);
        allot_error_prefix(err, "%.60s", q->sql);
    } else {
        q->gen = d->gen;
    }
    PQclear(res);
    return ok ? 0 : -1;
}

static void drv_reset_res(struct db_pg_stmt *q)
{
    PQclear(q->res);
    q->res = NULL;
    q->row = q->nrows = 0;
}

/* The result of the next query of a pipeline (NULL when the connection gave none); the
 * NULL that ends the query is consumed.  Bounded: a query yields one result here. */
static PGresult *pipe_take(PGconn *c)
{
    PGresult *r = PQgetResult(c);
    if (!r || PQresultStatus(r) == PGRES_PIPELINE_SYNC)
        return r;
    for (int i = 0; i < 4; i++) {
        PGresult *x = PQgetResult(c);
        if (!x)
            break;
        PQclear(x);
    }
    return r;
}

/* Consume a pipeline's sync point (bounded; PIPELINE_ABORTED results before it too). */
static void pipe_sync(PGconn *c)
{
    for (int i = 0; i < 2 * DB_PG_DEFER_MAX + 4; i++) {
        PGresult *r = PQgetResult(c);
        if (!r) {
            if (PQstatus(c) != CONNECTION_OK)
                return;
            continue;
        }
        ExecStatusType st = PQresultStatus(r);
        PQclear(r);
        if (st == PGRES_PIPELINE_SYNC)
            return;
    }
}

/* Send the deferred statements, then (when cur) cur, in one round trip: pipeline mode,
 *   deferred..., Sync, cur, Sync
 * Two sync points, so the server runs cur exactly as it would have after the deferred
 * statements ran one by one (a failed deferred statement fails the transaction, and cur
 * then fails with 25P02 or, for ROLLBACK, ends it).  *cur_res gets cur's result (owned by
 * the caller; NULL when none came back).  Returns -1 with err when a deferred statement
 * failed (its error, naming it), else 0. */
static int pipe_flush(struct db_pg *d, struct db_pg_stmt *cur, PGresult **cur_res,
                      struct allot_error *err)
{
    int n = d->ndeferred;
    d->ndeferred = 0;
    if (cur_res)
        *cur_res = NULL;
    for (int i = 0; i < n; i++)
        if (d->deferred[i]->gen != d->gen && server_prepare(d->deferred[i], err) < 0)
            return -1;
    if (cur && cur->gen != d->gen && server_prepare(cur, err) < 0)
        return -1;
    if (!PQenterPipelineMode(d->conn))
        return fail_res(d, NULL, "pipeline", err);
    int sent = 1;
    for (int i = 0; sent && i < n; i++)
        sent = PQsendQueryPrepared(d->conn, d->deferred[i]->name, 0, NULL, NULL, NULL, 0);
    sent = sent && PQpipelineSync(d->conn);
    if (sent && cur)
        sent = PQsendQueryPrepared(d->conn, cur->name, cur->nparams, cur->vals, NULL, NULL, 0) &&
               PQpipelineSync(d->conn);
    int rc = 0;
    if (!sent) {
        rc = fail_res(d, NULL, "pipeline send", err);
    } else {
        for (int i = 0; i < n; i++) {
            PGresult *r = pipe_take(d->conn);
            if (rc == 0 && PQresultStatus(r) != PGRES_COMMAND_OK) {
                rc = fail_res(d, r, "deferred statement", err);
                allot_error_prefix(err, "%.40s", d->deferred[i]->sql);
            }
            PQclear(r);
        }
        pipe_sync(d->conn);
        if (cur) {
            PGresult *r = pipe_take(d->conn);
            if (cur_res)
                *cur_res = r;
            else
                PQclear(r);
            pipe_sync(d->conn);
        }
    }
    /* Fails only with results still unread, i.e. on a broken connection, which the next
     * ensure_conn replaces (PQreset starts the new one out of pipeline mode). */
    (void)PQexitPipelineMode(d->conn);
    if (PQstatus(d->conn) == CONNECTION_OK)
        d->tx_open = PQtransactionStatus(d->conn) != PQTRANS_IDLE;
    return rc;
}

/* Send what was deferred, alone (before a statement that does not go through drv_step). */
static int pipe_flush_alone(struct db_pg *d, struct allot_error *err)
{
    if (d->ndeferred == 0)
        return 0;
    if (PQstatus(d->conn) != CONNECTION_OK) {
        d->ndeferred = 0;
        return allot_errorf(err, ALLOT_EUNAVAIL,
                            "pg: connection lost inside a transaction (retry)");
    }
    return pipe_flush(d, NULL, NULL, err);
}

static int drv_defer(db_stmt_t *s, struct allot_error *err)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    struct db_pg *d = pg_of(s->db);
    /* Outside a transaction, or with parameters (borrowed values), run at once. */
    if (!d->tx_open || q->nparams > 0 || PQstatus(d->conn) != CONNECTION_OK) {
        int rc;
        while ((rc = s->db->ops->step(s, err)) == 1)
            ;
        drv_reset_res(q);
        return rc < 0 ? -1 : 0;
    }
    if (d->ndeferred == DB_PG_DEFER_MAX && pipe_flush_alone(d, err) < 0)
        return -1;
    d->deferred[d->ndeferred++] = q;
    return 0;
}

static db_stmt_t *drv_prepare(db_t *db, const char *sql, struct allot_error *err)
{
    struct db_pg *d = pg_of(db);
    int n = count_params(sql);
    if (n > DB_PG_PARAMS_MAX) {
        allot_errorf(err, ALLOT_EINTERNAL, "db: %d parameters, more than %d: %.60s", n,
                     DB_PG_PARAMS_MAX, sql);
        return NULL;
    }
    struct db_pg_stmt *q = calloc(1, sizeof *q);
    if (!q || !(q->sql = strdup(sql))) {
        free(q);
        allot_errorf(err, ALLOT_ENOMEM, "db: out of memory");
        return NULL;
    }
    q->base.db = db;
    q->nparams = n;
    snprintf(q->name, sizeof q->name, "a%u", ++d->next_name);
    /* Prepare now so a bad statement fails where SQLite's would; after a lost connection
     * this happens again lazily in step. */
    if (ensure_conn(d, err) < 0 || server_prepare(q, err) < 0) {
        free(q->sql);
        free(q);
        return NULL;
    }
    return &q->base;
}

static void drv_reset(db_stmt_t *s)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    PQclear(q->res);
    q->res = NULL;
    q->row = q->nrows = 0;
    for (int i = 0; i < q->nparams; i++)
        q->vals[i] = NULL;
}

static void drv_finalize(db_stmt_t *s)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    struct db_pg *d = pg_of(s->db);
    d->ndeferred = 0; /* only at close: a pending statement may be this one */
    drv_reset(s);
    /* Free the server-side statement too when the connection is idle and healthy; a
     * connection about to close frees it anyway. */
    if (q->gen == d->gen && PQstatus(d->conn) == CONNECTION_OK &&
        PQtransactionStatus(d->conn) == PQTRANS_IDLE) {
        char sql[40];
        snprintf(sql, sizeof sql, "DEALLOCATE %s", q->name);
        PQclear(PQexec(d->conn, sql));
    }
    free(q->sql);
    free(q);
}

static int drv_bind_int64(db_stmt_t *s, int idx, int64_t v)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    if (idx < 1 || idx > q->nparams)
        return -1;
    snprintf(q->ibuf[idx - 1], sizeof q->ibuf[idx - 1], "%lld", (long long)v);
    q->vals[idx - 1] = q->ibuf[idx - 1];
    return 0;
}

static int drv_bind_text(db_stmt_t *s, int idx, const char *v)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    if (idx < 1 || idx > q->nparams)
        return -1;
    q->vals[idx - 1] = v; /* borrowed until reset (db.h) */
    return 0;
}

static int drv_bind_null(db_stmt_t *s, int idx)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    if (idx < 1 || idx > q->nparams)
        return -1;
    q->vals[idx - 1] = NULL;
    return 0;
}

/* A statement's successful result becomes its rows, read by db_step/db_column_*: 1 when
 * it has a row, else 0. */
static int keep_result(struct db_pg_stmt *q, PGresult *res)
{
    const char *ct = PQcmdTuples(res);
    q->changes = ct && *ct ? strtoll(ct, NULL, 10) : 0;
    q->res = res;
    q->nrows = PQresultStatus(res) == PGRES_TUPLES_OK ? PQntuples(res) : 0;
    q->row = 0;
    return q->nrows > 0 ? 1 : 0;
}

static int drv_step(db_stmt_t *s, struct allot_error *err)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    struct db_pg *d = pg_of(s->db);
    if (q->res) {
        if (++q->row < q->nrows)
            return 1;
        return 0;
    }
    if (PQstatus(d->conn) != CONNECTION_OK && d->tx_open && strcmp(q->sql, "ROLLBACK") == 0) {
        d->tx_open = 0; /* the server discarded the transaction with the connection */
        return 0;
    }
    if (d->ndeferred > 0 && strcmp(q->sql, "ROLLBACK") == 0)
        d->ndeferred = 0; /* the rollback undoes them anyway */
    int commit = strcmp(q->sql, "COMMIT") == 0;
    PGresult *res;
    if (d->ndeferred > 0) {
        /* Inside a transaction: the deferred statements travel with this one. */
        if (PQstatus(d->conn) != CONNECTION_OK) {
            d->ndeferred = 0;
            return allot_errorf(err, ALLOT_EUNAVAIL,
                                "pg: connection lost inside a transaction (retry)");
        }
        if (pipe_flush(d, q, &res, err) < 0) {
            if (commit)
                commit_in_doubt(d, res, err);
            PQclear(res);
            return -1;
        }
    } else {
        if (ensure_conn(d, err) < 0)
            return -1;
        if (q->gen != d->gen && server_prepare(q, err) < 0)
            return -1;
        res = PQexecPrepared(d->conn, q->name, q->nparams, q->vals, NULL, NULL, 0);
    }
#ifdef ALLOT_TEST
    if (commit)
        res = test_lose_answer(d, res, 0);
#endif
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && !commit && stale_conn(d)) {
        /* libpq learns of a server restart only on use: outside a transaction nothing
         * was applied, so reconnect and run the statement once more.  Never a COMMIT: on
         * a new connection it would commit nothing and report success. */
        PQclear(res);
        if (ensure_conn(d, err) < 0 || server_prepare(q, err) < 0)
            return -1;
        res = PQexecPrepared(d->conn, q->name, q->nparams, q->vals, NULL, NULL, 0);
        st = PQresultStatus(res);
    }
    if (PQstatus(d->conn) == CONNECTION_OK)
        d->tx_open = PQtransactionStatus(d->conn) != PQTRANS_IDLE;
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        fail_res(d, res, "step", err);
        if (commit)
            commit_in_doubt(d, res, err);
        PQclear(res);
        return -1;
    }
    return keep_result(q, res);
}

/* db_step_tx: BEGIN, the write lock and s, Sync, COMMIT, Sync -- one round trip.  The sync
 * point before COMMIT makes COMMIT run whatever happened before it: it commits when every
 * statement before it succeeded, and ends the failed transaction (as ROLLBACK) when one
 * did not, whose error is the one returned.  No retry on a broken connection: whether
 * its COMMIT ran is then unknown, and the caller's fallback (db_begin) reconnects. */
static int drv_step_tx(db_stmt_t *s, struct allot_error *err)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    struct db_pg *d = pg_of(s->db);
    if (d->tx_open || d->ndeferred > 0 || q->res)
        return allot_errorf(err, ALLOT_EINTERNAL, "db: step_tx inside a transaction");
    if (ensure_conn(d, err) < 0)
        return -1;
    if (q->gen != d->gen && server_prepare(q, err) < 0)
        return -1;
    if (!PQenterPipelineMode(d->conn))
        return fail_res(d, NULL, "pipeline", err);
    static const char *const head[] = {"BEGIN",
                                       "SELECT pg_advisory_xact_lock(" DB_PG_WRITE_LOCK ")"};
    int sent = 1;
    for (int i = 0; sent && i < 2; i++)
        sent = PQsendQueryParams(d->conn, head[i], 0, NULL, NULL, NULL, NULL, 0);
    sent = sent && PQsendQueryPrepared(d->conn, q->name, q->nparams, q->vals, NULL, NULL, 0) &&
           PQpipelineSync(d->conn);
    int commit_sent = sent && PQsendQueryParams(d->conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0);
    sent = commit_sent && PQpipelineSync(d->conn);
    if (!sent) {
        int rc = fail_res(d, NULL, "pipeline send", err);
        if (commit_sent) /* queued: part of it may have reached the server */
            commit_in_doubt(d, NULL, err);
        (void)PQexitPipelineMode(d->conn);
        return rc;
    }
    PGresult *r[3];
    for (int i = 0; i < 3; i++)
        r[i] = pipe_take(d->conn);
    pipe_sync(d->conn);
    PGresult *commit = pipe_take(d->conn);
    pipe_sync(d->conn);
    (void)PQexitPipelineMode(d->conn); /* fails only on a broken connection (pipe_flush) */
#ifdef ALLOT_TEST
    commit = test_lose_answer(d, commit, 1);
#endif
    static const char *const what[] = {"begin", "begin (write lock)", "step"};
    static const ExecStatusType want[] = {PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_TUPLES_OK};
    int rc = 0;
    int refused = 0; /* the server itself failed a statement before COMMIT: it ran no COMMIT */
    for (int i = 0; i < 3 && rc == 0; i++) {
        ExecStatusType st = PQresultStatus(r[i]);
        if (st != want[i] && !(i == 2 && st == PGRES_COMMAND_OK)) {
            rc = fail_res(d, r[i], what[i], err);
            refused = r[i] && PQresultErrorField(r[i], PG_DIAG_SQLSTATE) != NULL;
        }
    }
    if (rc == 0 && PQresultStatus(commit) != PGRES_COMMAND_OK)
        rc = fail_res(d, commit, "commit", err);
    else if (rc == 0 && strcmp(PQcmdStatus(commit), "COMMIT") != 0)
        rc = allot_errorf(err, ALLOT_EIO, "pg: commit: the transaction was rolled back");
    /* COMMIT was sent: a lost connection leaves its outcome unknown, unless the server
     * answered an earlier statement with an error (a backend told to exit says so before it
     * reads the next statement; a server processes a pipeline in order). */
    if (rc < 0 && !refused)
        commit_in_doubt(d, commit, err);
    PQclear(r[0]);
    PQclear(r[1]);
    PQclear(commit);
    if (PQstatus(d->conn) == CONNECTION_OK &&
        PQtransactionStatus(d->conn) != PQTRANS_IDLE) /* not expected: COMMIT always ran */
        PQclear(PQexec(d->conn, "ROLLBACK"));
    d->tx_open = 0;
    if (rc < 0) {
        PQclear(r[2]);
        return -1;
    }
    return keep_result(q, r[2]);
}

static int64_t drv_column_int64(db_stmt_t *s, int col)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    if (!q->res || q->row >= q->nrows || col < 0 || col >= PQnfields(q->res) ||
        PQgetisnull(q->res, q->row, col))
        return 0;
    const char *v = PQgetvalue(q->res, q->row, col);
    /* Booleans read as SQLite's 0/1, so the same SQL reads the same on both. */
    if (v[0] == 't' && !v[1])
        return 1;
    if (v[0] == 'f' && !v[1])
        return 0;
    return strtoll(v, NULL, 10);
}

static const char *drv_column_text(db_stmt_t *s, int col)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    if (!q->res || q->row >= q->nrows || col < 0 || col >= PQnfields(q->res) ||
        PQgetisnull(q->res, q->row, col))
        return NULL;
    return PQgetvalue(q->res, q->row, col);
}

static int drv_column_is_null(db_stmt_t *s, int col)
{
    struct db_pg_stmt *q = (struct db_pg_stmt *)s;
    if (!q->res || q->row >= q->nrows || col < 0 || col >= PQnfields(q->res))
        return 1;
    return PQgetisnull(q->res, q->row, col);
}

static int64_t drv_changes(db_stmt_t *s)
{
    return ((struct db_pg_stmt *)s)->changes;
}

/* No reconnect here or in drv_wait_notify (db.h): a new connection would not be listening. */
static int drv_listen(db_t *db, const char *channel, struct allot_error *err)
{
    struct db_pg *d = pg_of(db);
    if (d->tx_open)
        return allot_errorf(err, ALLOT_EINTERNAL, "pg: LISTEN inside a transaction");
    if (PQstatus(d->conn) != CONNECTION_OK)
        return allot_errorf(err, ALLOT_EUNAVAIL, "pg: connection lost");
    char *id = PQescapeIdentifier(d->conn, channel, strlen(channel));
    if (!id)
        return fail_res(d, NULL, "LISTEN", err);
    char sql[128];
    int n = snprintf(sql, sizeof sql, "LISTEN %s", id);
    PQfreemem(id);
    if (n < 0 || (size_t)n >= sizeof sql)
        return allot_errorf(err, ALLOT_EINVAL, "pg: LISTEN: channel name too long");
    PGresult *res = PQexec(d->conn, sql);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok)
        fail_res(d, res, "LISTEN", err);
    PQclear(res);
    return ok ? 0 : -1;
}

static int drv_wait_notify(db_t *db, int wake_fd, int timeout_ms, struct allot_error *err)
{
    struct db_pg *d = pg_of(db);
    for (int polled = 0;; polled = 1) {
        /* Read what the socket holds (notifications, or the server's goodbye and EOF). */
        if (PQstatus(d->conn) != CONNECTION_OK || !PQconsumeInput(d->conn) ||
            PQstatus(d->conn) != CONNECTION_OK) {
            int len = (int)strcspn(PQerrorMessage(d->conn), "\n");
            return allot_errorf(err, ALLOT_EUNAVAIL, "pg: connection lost: %.*s", len,
                                PQerrorMessage(d->conn));
        }
        int got = 0;
        for (PGnotify *m; (m = PQnotifies(d->conn)) != NULL; got = 1)
            PQfreemem(m);
        if (got)
            return 1;
        if (polled)
            return 0;
        struct pollfd p[2] = {{.fd = PQsocket(d->conn), .events = POLLIN},
                              {.fd = wake_fd, .events = POLLIN}};
        int r = poll(p, wake_fd >= 0 ? 2 : 1, timeout_ms);
        if (r < 0 && errno != EINTR)
            return allot_errorf(err, ALLOT_EIO, "pg: poll: %s", strerror(errno));
        if (r <= 0 || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            return 0; /* timeout, a signal, or woken */
    }
}

static const struct db_ops pg_ops = {
    .name = "pg",
    .close = drv_close,
    .exec = drv_exec,
    .begin = drv_begin,
    .table_exists = drv_table_exists,
    .prepare = drv_prepare,
    .finalize = drv_finalize,
    .reset = drv_reset,
    .bind_int64 = drv_bind_int64,
    .bind_text = drv_bind_text,
    .bind_null = drv_bind_null,
    .step = drv_step,
    .column_int64 = drv_column_int64,
    .column_text = drv_column_text,
    .column_is_null = drv_column_is_null,
    .changes = drv_changes,
    .defer = drv_defer,
    .step_tx = drv_step_tx,
    .listen = drv_listen,
    .wait_notify = drv_wait_notify,
};

db_t *db_pg_open(const char *conninfo, int busy_timeout_ms, int durable, struct allot_error *err)
{
    if (!conninfo || !*conninfo) {
        allot_errorf(err, ALLOT_EINVAL, "target: missing PostgreSQL connection string");
        return NULL;
    }
    struct db_pg *d = calloc(1, sizeof *d);
    if (!d) {
        allot_errorf(err, ALLOT_ENOMEM, "db: out of memory");
        return NULL;
    }
    d->base.ops = &pg_ops;
    d->busy_timeout_ms = busy_timeout_ms > 0 ? busy_timeout_ms : 5000;
    d->durable = durable;
    d->backoff_ms = 50;
    /* Defaults first: keywords in the expanded connection string override them, so a site
     * may set its own connect_timeout or application_name. */
    const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *vals[] = {"3", "allot", conninfo, NULL};
    d->conn = PQconnectdbParams(keys, vals, 1);
    if (!d->conn) {
        allot_errorf(err, ALLOT_ENOMEM, "pg: out of memory");
        free(d);
        return NULL;
    }
    if (PQstatus(d->conn) != CONNECTION_OK) {
        char why[ALLOT_ERRMSG_MAX];
        allot_errorf(err, ALLOT_EUNAVAIL, "pg: cannot connect: %s",
                     conn_failure(d->conn, why, sizeof why));
        PQfinish(d->conn);
        free(d);
        return NULL;
    }
    PQsetNoticeProcessor(d->conn, ignore_notice, NULL);
    d->gen = 1;
    if (session_setup(d, err) < 0) {
        drv_close(&d->base);
        return NULL;
    }
    return &d->base;
}
