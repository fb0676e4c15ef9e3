/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db_sqlite.c - the SQLite driver of db.h.
 *
 * One sqlite3 connection per db_t, opened without SQLite's own mutexes (a db_t belongs to
 * one thread at a time).  WAL journal so readers never block the writer; synchronous=FULL
 * when durable so a commit is on disk before it returns; foreign keys on; a busy timeout so
 * that a lock held by another process is waited for, then reported as EUNAVAIL.
 * At prepare time every parameter is checked to be named "$N" at index N: that is the rule
 * which keeps the SQL text identical for PostgreSQL, and a statement breaking it would bind
 * values to the wrong columns silently.
 */
#include "libstore/db.h"
#include "libstore/db_sqlite_ckpt.h"
#include "libstore/db_sqlite_mem.h"
#include "libstore/db_sqlite_wal.h"
#include "libutil/text.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct db_sqlite {
    struct db base; /* first: a db_t * is a struct db_sqlite * */
    sqlite3 *conn;
    struct db_sqlite_ckpt *ckpt; /* split sync: checkpoints run on a thread (db_sqlite_ckpt.c) */
};

struct db_sqlite_stmt {
    struct db_stmt base; /* first */
    sqlite3_stmt *stmt;
    int64_t changes;
};

static sqlite3 *conn_of(db_t *db)
{
    return ((struct db_sqlite *)db)->conn;
}

static sqlite3_stmt *stmt_of(db_stmt_t *s)
{
    return ((struct db_sqlite_stmt *)s)->stmt;
}

static enum allot_errnum map_code(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return ALLOT_EUNAVAIL;
    case SQLITE_NOMEM:
        return ALLOT_ENOMEM;
    case SQLITE_CONSTRAINT:
        if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
            return ALLOT_EEXIST;
        return ALLOT_ECONFLICT;
    case SQLITE_CANTOPEN:
    /* Storage that cannot take a write now (disk full, made read-only, an I/O error of the
     * device) is unavailable storage: 503, retry later, as doc/api.md says; nothing was
     * changed, and the next transaction works once the storage does again. */
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_IOERR:
        return ALLOT_EUNAVAIL;
    default:
        return ALLOT_EIO;
    }
}

static int fail(sqlite3 *conn, int rc, const char *what, struct allot_error *err)
{
    return allot_errorf(err, map_code(rc), "sqlite: %s: %s", what,
                        conn ? sqlite3_errmsg(conn) : sqlite3_errstr(rc));
}

static void drv_close(db_t *db)
{
    struct db_sqlite *d = (struct db_sqlite *)db;
    db_sqlite_ckpt_stop(d->ckpt);
    /* sqlite3_close_v2 rolls back an open transaction. */
    sqlite3_close_v2(d->conn);
    free(d);
}

static int drv_exec(db_t *db, const char *sql, struct allot_error *err)
{
    int rc = sqlite3_exec(conn_of(db), sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return fail(conn_of(db), sqlite3_extended_errcode(conn_of(db)), "exec", err);
    return 0;
}

static int drv_begin(db_t *db, struct allot_error *err)
{
    return drv_exec(db, "BEGIN IMMEDIATE", err);
}

static int drv_table_exists(db_t *db, const char *table, int *exists, struct allot_error *err)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(conn_of(db),
                                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                                -1, &stmt, NULL);
    if (rc != SQLITE_OK)
        return fail(conn_of(db), rc, "prepare", err);
    sqlite3_bind_text(stmt, 1, table, -1, SQLITE_STATIC);
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fail(conn_of(db), rc, "step", err);
    *exists = rc == SQLITE_ROW;
    return 0;
}

static db_stmt_t *drv_prepare(db_t *db, const char *sql, struct allot_error *err)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v3(conn_of(db), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
    if (rc != SQLITE_OK) {
        fail(conn_of(db), rc, "prepare", err);
        allot_error_prefix(err, "%.60s", sql);
        return NULL;
    }
    int n = sqlite3_bind_parameter_count(stmt);
    for (int i = 1; i <= n; i++) {
        char want[16];
        snprintf(want, sizeof want, "$%d", i);
        const char *got = sqlite3_bind_parameter_name(stmt, i);
        if (!got || strcmp(got, want) != 0) {
            /* Format before finalizing: the parameter name belongs to the statement. */
            allot_errorf(err, ALLOT_EINTERNAL,
                         "db: parameter %d is %s, not %s (placeholders must be $1, $2, ... in "
                         "order of first appearance): %.60s",
                         i, got ? got : "?", want, sql);
            sqlite3_finalize(stmt);
            return NULL;
        }
    }
    struct db_sqlite_stmt *s = calloc(1, sizeof *s);
    if (!s) {
        sqlite3_finalize(stmt);
        allot_errorf(err, ALLOT_ENOMEM, "db: out of memory");
        return NULL;
    }
    s->stmt = stmt;
    return &s->base;
}

static void drv_finalize(db_stmt_t *s)
{
    sqlite3_finalize(stmt_of(s));
    free(s);
}

static void drv_reset(db_stmt_t *s)
{
    sqlite3_reset(stmt_of(s));
    sqlite3_clear_bindings(stmt_of(s));
}

static int drv_bind_int64(db_stmt_t *s, int idx, int64_t v)
{
    return sqlite3_bind_int64(stmt_of(s), idx, v) == SQLITE_OK ? 0 : -1;
}

static int drv_bind_text(db_stmt_t *s, int idx, const char *v)
{
    /* SQLITE_STATIC: text is borrowed until reset (db.h), so nothing is copied. */
    return sqlite3_bind_text(stmt_of(s), idx, v, -1, SQLITE_STATIC) == SQLITE_OK ? 0 : -1;
}

static int drv_bind_null(db_stmt_t *s, int idx)
{
    return sqlite3_bind_null(stmt_of(s), idx) == SQLITE_OK ? 0 : -1;
}

static int drv_step(db_stmt_t *s, struct allot_error *err)
{
    struct db_sqlite_stmt *q = (struct db_sqlite_stmt *)s;
    int rc = sqlite3_step(q->stmt);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE) {
        q->changes = sqlite3_changes64(sqlite3_db_handle(q->stmt));
        return 0;
    }
    sqlite3 *conn = sqlite3_db_handle(q->stmt);
    fail(conn, sqlite3_extended_errcode(conn), "step", err);
    sqlite3_reset(q->stmt);
    return -1;
}

static int64_t drv_column_int64(db_stmt_t *s, int col)
{
    return sqlite3_column_int64(stmt_of(s), col);
}

static const char *drv_column_text(db_stmt_t *s, int col)
{
    return (const char *)sqlite3_column_text(stmt_of(s), col);
}

static int drv_column_is_null(db_stmt_t *s, int col)
{
    return sqlite3_column_type(stmt_of(s), col) == SQLITE_NULL;
}

static int64_t drv_changes(db_stmt_t *s)
{
    return ((struct db_sqlite_stmt *)s)->changes;
}

/* The "allot" VFS writes a commit's WAL frames with one call (db_sqlite_wal.c). */
static const char *vfs_name(void)
{
    return db_sqlite_vfs_register() == SQLITE_OK ? DB_SQLITE_VFS : NULL;
}

/* fsync the directory holding path, so the file's own entry is durable. */
static int sync_dir_of(const char *path, struct allot_error *err)
{
    char buf[4096];
    if (text_copy(buf, sizeof buf, path))
        return allot_errorf(err, ALLOT_EINVAL, "sqlite: path too long: %s", path);
    const char *dir = dirname(buf);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return allot_errorf(err, ALLOT_EIO, "sqlite: cannot open %s: %s", dir, strerror(errno));
    int rc = fsync(dfd);
    int e = errno;
    close(dfd);
    if (rc < 0)
        return allot_errorf(err, ALLOT_EIO, "sqlite: cannot sync %s: %s", dir, strerror(e));
    return 0;
}

static int drv_split_sync(db_t *db, int *fd, struct allot_error *err)
{
    sqlite3 *conn = conn_of(db);
    const char *file = sqlite3_db_filename(conn, "main");
    char wal[4096];
    sqlite3_stmt *q = NULL;
    int is_wal = 0;

    if (sqlite3_prepare_v2(conn, "PRAGMA journal_mode", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
        const unsigned char *mode = sqlite3_column_text(q, 0);
        is_wal = mode && strcmp((const char *)mode, "wal") == 0;
    }
    sqlite3_finalize(q);
    if (!is_wal || !file || !*file)
        return 0; /* e.g. a file system without shared memory: commits keep syncing */
    if (snprintf(wal, sizeof wal, "%s-wal", file) >= (int)sizeof wal)
        return allot_errorf(err, ALLOT_EINVAL, "sqlite: path too long: %s", file);
    /* The WAL exists while any connection is open (this one is, and has written). */
    int w = open(wal, O_RDWR | O_CLOEXEC);
    if (w < 0)
        return allot_errorf(err, ALLOT_EIO, "sqlite: cannot open %s: %s", wal, strerror(errno));
    if (sync_dir_of(wal, err) < 0)
        goto fail;
    if (fdatasync(w) < 0) {
        allot_errorf(err, ALLOT_EIO, "sqlite: cannot sync %s: %s", wal, strerror(errno));
        goto fail;
    }
    /* Checkpoints leave the writer's COMMIT for a thread of their own (db_sqlite_ckpt.c). */
    struct db_sqlite *d = (struct db_sqlite *)db;
    if (!d->ckpt && !(d->ckpt = db_sqlite_ckpt_start(conn, file, vfs_name(), err)))
        goto fail;
    if (drv_exec(db, "PRAGMA synchronous=NORMAL", err) < 0) {
        db_sqlite_ckpt_stop(d->ckpt);
        d->ckpt = NULL;
        goto fail;
    }
    *fd = w;
    return 1;
fail:
    close(w);
    return -1;
}

static const struct db_ops sqlite_ops = {
    .name = "sqlite",
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
    .split_sync = drv_split_sync,
};

/* Process-wide settings, before SQLite initializes.  MEMSTATUS off: with it on (the default)
 * every sqlite3_malloc and sqlite3_free takes one global mutex to keep allocation
 * statistics nobody here reads, so the writer and every reader connection contend on it
 * (~7% of the writer thread's time in bench/bank_bench.sh, 2026-11-24, 03ea179).  SQLITE_MISUSE
 * when SQLite was already initialized in this process (by a test's fault VFS, say): the
 * defaults then stay, slower but correct. */
static pthread_once_t configure_once = PTHREAD_ONCE_INIT;

static void configure(void)
{
    (void)db_sqlite_mem_install(); /* SQLite's allocator: free lists per thread */
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

db_t *db_sqlite_open(const char *path, int busy_timeout_ms, int durable, struct allot_error *err)
{
    (void)pthread_once(&configure_once, configure);
    if (!path || !*path) {
        allot_errorf(err, ALLOT_EINVAL, "target: missing SQLite file path");
        return NULL;
    }
    struct db_sqlite *d = calloc(1, sizeof *d);
    if (!d) {
        allot_errorf(err, ALLOT_ENOMEM, "db: out of memory");
        return NULL;
    }
    d->base.ops = &sqlite_ops;
    int rc = sqlite3_open_v2(path, &d->conn,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             vfs_name());
    if (rc != SQLITE_OK) {
        allot_errorf(err, ALLOT_EUNAVAIL, "sqlite: cannot open %s: %s", path,
                     d->conn ? sqlite3_errmsg(d->conn) : sqlite3_errstr(rc));
        sqlite3_close_v2(d->conn);
        free(d);
        return NULL;
    }
    sqlite3_extended_result_codes(d->conn, 1);
    sqlite3_busy_timeout(d->conn, busy_timeout_ms > 0 ? busy_timeout_ms : 5000);
    /* temp_store=MEMORY: the recursive payer query and ORDER BY use ephemeral tables, which
     * otherwise cost a temporary file (open/unlink) per execution: ~3x on the hot path. */
    const char *pragmas = durable ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
                                    "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;"
                                  : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                                    "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;";
    if (drv_exec(&d->base, pragmas, err) < 0) {
        allot_error_prefix(err, "%s", path);
        drv_close(&d->base);
        return NULL;
    }
    /* SQLite opens a file it may not write read-only without a word, and every write then
     * fails until the process starts again: a bank must be writable, so say so now. */
    if (sqlite3_db_readonly(d->conn, "main") == 1) {
        allot_errorf(err, ALLOT_EUNAVAIL,
                     "sqlite: %s cannot be written by this process (a read-only or immutable "
                     "file, or a read-only file system): the bank needs write access",
                     path);
        drv_close(&d->base);
        return NULL;
    }
    return &d->base;
}
