/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_step.c - monitored step records (allot-step, doc/design.md §7.3, schema 0005-steps).
 *
 * A step record is keyed (cluster, job_id, step_name, attempt) and written once.  The
 * record text is opaque here (allotd canonicalises the JSON before it gets here), so
 * "same content" is plain text equality: a replayed add with the same text is a replay,
 * with another text ECONFLICT, and nothing is ever updated in place.
 * Statement ids: a small block below store_usage.c's, above STMT_MAX.
 */
#include <string.h>

#include "libstore/store_int.h"

enum {
    STMT_STEP_INSERT = DB_STMT_MAX - 12,
    STMT_STEP_GET,
    STMT_STEP_LIST,
    STMT_STEP_LIST_JOB,
    STMT_STEP_LIST_USER,
    STMT_STEP_LIST_CLUSTER,
};
_Static_assert(STMT_MAX <= DB_STMT_MAX - 12, "store_step.c's statement ids collide");
_Static_assert(STMT_STEP_LIST_CLUSTER < DB_STMT_MAX - 6,
               "store_step.c's ids reach store_usage.c's");

static const char SQL_STEP_INSERT[] =
    "INSERT INTO steps (cluster, job_id, step_name, attempt, user_name, status, return_code, "
    "exec_ms, record, actor, created_s) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
    "ON CONFLICT (cluster, job_id, step_name, attempt) DO NOTHING";
#define STEP_COLS                                                                                  \
    "cluster, job_id, step_name, attempt, user_name, status, return_code, exec_ms, record, "       \
    "actor, created_s"
static const char SQL_STEP_GET[] = "SELECT " STEP_COLS " FROM steps WHERE cluster = $1 AND "
                                   "job_id = $2 AND step_name = $3 AND attempt = $4";
/* One job's steps by the primary key, a user's by steps_user, a cluster's by the primary
 * key's first column (the "$n = '' OR" form alone reads every step: store_ledger_list's
 * reason, store_alloc.c). */
#define STEP_LIST(drive)                                                                           \
    "SELECT " STEP_COLS " FROM steps WHERE ($1 = '' OR cluster = $1) "                             \
    "AND (CAST($2 AS BIGINT) = 0 OR job_id = $2) AND ($3 = '' OR user_name = $3)" drive            \
    " ORDER BY cluster, job_id, created_s, step_name, attempt LIMIT $4"
static const char SQL_STEP_LIST[] = STEP_LIST("");
static const char SQL_STEP_LIST_JOB[] = STEP_LIST(" AND cluster = $1 AND job_id = $2");
static const char SQL_STEP_LIST_USER[] = STEP_LIST(" AND user_name = $3");
static const char SQL_STEP_LIST_CLUSTER[] = STEP_LIST(" AND cluster = $1");

/* Fill s from the current row; s->record borrows the column text (valid until reset). */
static void read_step(db_stmt_t *s, struct step_record *r)
{
    memset(r, 0, sizeof *r);
    db_column_copy(s, 0, r->cluster, sizeof r->cluster);
    r->job_id = db_column_int64(s, 1);
    db_column_copy(s, 2, r->step_name, sizeof r->step_name);
    r->attempt = db_column_int64(s, 3);
    db_column_copy(s, 4, r->user, sizeof r->user);
    db_column_copy(s, 5, r->status, sizeof r->status);
    r->return_code = db_column_int64(s, 6);
    r->exec_ms = db_column_int64(s, 7);
    r->record = db_column_text(s, 8);
    db_column_copy(s, 9, r->actor, sizeof r->actor);
    r->created_s = db_column_int64(s, 10);
}

static int check_step(const struct step_record *r, struct allot_error *err)
{
    if (model_check_name("cluster", r->cluster, 0, err) < 0 ||
        model_check_name("step_name", r->step_name, 0, err) < 0 ||
        model_check_name("user", r->user, 1, err) < 0 ||
        model_check_name("actor", r->actor, 0, err) < 0)
        return -1;
    if (r->job_id <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "job_id: must be positive");
    if (r->attempt < 1 || r->attempt > INT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "attempt: must be 1 .. %d", INT32_MAX);
    if (strcmp(r->status, "completed") && strcmp(r->status, "failed") && strcmp(r->status, "oom") &&
        strcmp(r->status, "timeout"))
        return allot_errorf(err, ALLOT_EINVAL,
                            "status: must be completed, failed, oom or timeout, not '%s'",
                            r->status);
    if (r->exec_ms < 0)
        return allot_errorf(err, ALLOT_EINVAL, "exec_ms: must not be negative");
    if (!r->record || !r->record[0])
        return allot_errorf(err, ALLOT_EINVAL, "record: missing");
    if (strlen(r->record) > STORE_STEP_RECORD_MAX)
        return allot_errorf(err, ALLOT_ETOOBIG, "record: longer than %d bytes",
                            STORE_STEP_RECORD_MAX);
    return 0;
}

int store_step_add(store_t *st, struct step_record *r, int *replay, struct allot_error *err)
{
    if (store_ready_write(st, "step add", err) < 0 || check_step(r, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_STEP_INSERT, SQL_STEP_INSERT, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, r->cluster);
    db_bind_int64(s, 2, r->job_id);
    db_bind_text(s, 3, r->step_name);
    db_bind_int64(s, 4, r->attempt);
    db_bind_text(s, 5, r->user);
    db_bind_text(s, 6, r->status);
    db_bind_int64(s, 7, r->return_code);
    db_bind_int64(s, 8, r->exec_ms);
    db_bind_text(s, 9, r->record);
    db_bind_text(s, 10, r->actor);
    db_bind_int64(s, 11, r->created_s);
    if (db_run(s, err) < 0)
        return -1;
    if (db_changes(s) == 1) {
        if (replay)
            *replay = 0;
        return 0;
    }
    /* The key exists: the same record is a replay (the first writer's row stands). */
    s = store_stmt(st, STMT_STEP_GET, SQL_STEP_GET, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, r->cluster);
    db_bind_int64(s, 2, r->job_id);
    db_bind_text(s, 3, r->step_name);
    db_bind_int64(s, 4, r->attempt);
    int rc = db_step(s, err);
    if (rc <= 0) {
        db_reset(s);
        return rc < 0 ? -1
                      : allot_errorf(err, ALLOT_EINTERNAL, "step add: row vanished after conflict");
    }
    if (strcmp(db_column_text(s, 8), r->record) != 0) {
        db_reset(s);
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "step %s/%lld %s attempt %lld: already recorded with a different "
                            "record (use another attempt number)",
                            r->cluster, (long long)r->job_id, r->step_name, (long long)r->attempt);
    }
    const char *mine = r->record;
    read_step(s, r);
    r->record = mine; /* equal text; the caller's copy outlives the statement */
    db_reset(s);
    if (replay)
        *replay = 1;
    return 0;
}

int store_step_list_sql(const struct step_filter *f, const char **sql)
{
    if (f && f->job_id && f->cluster && f->cluster[0]) {
        *sql = SQL_STEP_LIST_JOB;
        return STMT_STEP_LIST_JOB;
    }
    if (f && f->user && f->user[0]) {
        *sql = SQL_STEP_LIST_USER;
        return STMT_STEP_LIST_USER;
    }
    if (f && f->cluster && f->cluster[0]) {
        *sql = SQL_STEP_LIST_CLUSTER;
        return STMT_STEP_LIST_CLUSTER;
    }
    *sql = SQL_STEP_LIST;
    return STMT_STEP_LIST;
}

STORE_ROWS(step, struct step_record, store_step_f, read_step(s, &row))

int store_step_list(store_t *st, const struct step_filter *f, store_step_f cb, void *arg,
                    struct allot_error *err)
{
    if (store_ready(st, "step list", err) < 0)
        return -1;
    const char *sql;
    int id = store_step_list_sql(f, &sql);
    db_stmt_t *s = store_stmt(st, id, sql, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, f && f->cluster ? f->cluster : "");
    db_bind_int64(s, 2, f ? f->job_id : 0);
    db_bind_text(s, 3, f && f->user ? f->user : "");
    db_bind_int64(s, 4, f && f->limit > 0 ? f->limit : INT64_MAX);
    return store_walk(s, step_row, &(struct step_walk){cb, arg}, err);
}
