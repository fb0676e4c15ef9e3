/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db.c - driver-independent part of db.h: the per-connection statement cache and the
 * sticky bind-error rule.  Everything else forwards to the driver's ops table. */
#include "libstore/db.h"
#include "libstore/store.h"

#include <string.h>

void db_close(db_t *db)
{
    if (!db)
        return;
    for (int i = 0; i < DB_STMT_MAX; i++) {
        if (db->cache[i]) {
            db->ops->finalize(db->cache[i]);
            db->cache[i] = NULL;
        }
    }
    db->ops->close(db);
}

int db_exec(db_t *db, const char *sql, struct allot_error *err)
{
    return db->ops->exec(db, sql, err);
}

int db_begin(db_t *db, struct allot_error *err)
{
    return db->ops->begin(db, err);
}

int db_table_exists(db_t *db, const char *table, int *exists, struct allot_error *err)
{
    return db->ops->table_exists(db, table, exists, err);
}

db_stmt_t *db_stmt(db_t *db, int id, const char *sql, struct allot_error *err)
{
    if (id < 0 || id >= DB_STMT_MAX) {
        allot_errorf(err, ALLOT_EINTERNAL, "db: statement id %d out of range", id);
        return NULL;
    }
    db_stmt_t *s = db->cache[id];
    if (!s) {
        s = db->ops->prepare(db, sql, err);
        if (!s)
            return NULL;
        s->db = db;
        db->cache[id] = s;
    } else {
        db->ops->reset(s);
    }
    s->bind_failed = 0;
    return s;
}

void db_reset(db_stmt_t *s)
{
    if (!s)
        return;
    s->db->ops->reset(s);
    s->bind_failed = 0;
}

void db_bind_int64(db_stmt_t *s, int idx, int64_t v)
{
    if (s->db->ops->bind_int64(s, idx, v) < 0 && !s->bind_failed)
        s->bind_failed = idx;
}

void db_bind_text(db_stmt_t *s, int idx, const char *v)
{
    int rc = v ? s->db->ops->bind_text(s, idx, v) : s->db->ops->bind_null(s, idx);
    if (rc < 0 && !s->bind_failed)
        s->bind_failed = idx;
}

void db_bind_null(db_stmt_t *s, int idx)
{
    if (s->db->ops->bind_null(s, idx) < 0 && !s->bind_failed)
        s->bind_failed = idx;
}

/* A failed bind is reported by the statement's next step (db.h). */
static int bind_check(db_stmt_t *s, struct allot_error *err)
{
    if (s->bind_failed)
        return allot_errorf(err, ALLOT_EINTERNAL, "db: binding parameter $%d failed",
                            s->bind_failed);
    return 0;
}

#ifdef ALLOT_TEST
/* Test builds: rows this thread's statements returned (store_rows_read), so a test can show
 * what a request reads by counting, not timing.  Per thread: each HTTP worker its own. */
static _Thread_local int64_t rows_read;

int64_t store_rows_read(void)
{
    return rows_read;
}
#endif

int db_step(db_stmt_t *s, struct allot_error *err)
{
    if (bind_check(s, err) < 0)
        return -1;
    int rc = s->db->ops->step(s, err);
#ifdef ALLOT_TEST
    if (rc == 1)
        rows_read++;
#endif
    return rc;
}

int db_step_tx(db_stmt_t *s, struct allot_error *err)
{
    if (!s->db->ops->step_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "db: %s runs no statement as a transaction",
                            s->db->ops->name);
    if (bind_check(s, err) < 0)
        return -1;
    return s->db->ops->step_tx(s, err);
}

int db_run(db_stmt_t *s, struct allot_error *err)
{
    int rc;
    while ((rc = db_step(s, err)) == 1)
        ;
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

int db_run_deferred(db_stmt_t *s, struct allot_error *err)
{
    if (s->bind_failed || !s->db->ops->defer)
        return db_run(s, err);
    return s->db->ops->defer(s, err);
}

int db_split_sync(db_t *db, int *fd, struct allot_error *err)
{
    *fd = -1;
    if (!db->ops->split_sync)
        return 0;
    return db->ops->split_sync(db, fd, err);
}

int db_listen(db_t *db, const char *channel, struct allot_error *err)
{
    if (!db->ops->listen)
        return allot_errorf(err, ALLOT_EINTERNAL, "db: %s sends no change notifications",
                            db->ops->name);
    return db->ops->listen(db, channel, err);
}

int db_wait_notify(db_t *db, int wake_fd, int timeout_ms, struct allot_error *err)
{
    if (!db->ops->wait_notify)
        return allot_errorf(err, ALLOT_EINTERNAL, "db: %s sends no change notifications",
                            db->ops->name);
    return db->ops->wait_notify(db, wake_fd, timeout_ms, err);
}

int64_t db_column_int64(db_stmt_t *s, int col)
{
    return s->db->ops->column_int64(s, col);
}

const char *db_column_text(db_stmt_t *s, int col)
{
    const char *t = s->db->ops->column_text(s, col);
    return t ? t : "";
}

int db_column_is_null(db_stmt_t *s, int col)
{
    return s->db->ops->column_is_null(s, col);
}

void db_column_copy(db_stmt_t *s, int col, char *dst, size_t size)
{
    const char *t = db_column_text(s, col);
    size_t n = strlen(t);
    if (n >= size)
        n = size - 1;
    memcpy(dst, t, n);
    dst[n] = '\0';
}

int64_t db_changes(db_stmt_t *s)
{
    return s->db->ops->changes(s);
}
