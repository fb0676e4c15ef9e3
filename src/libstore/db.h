/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db.h - the tiny SQL driver interface under libstore (internal to libstore).
 *
 * store_*.c implement every verb once, over this interface; a backend is one driver
 * (db_sqlite.c, later db_pg.c) plus its schema files.  SQL text is portable: placeholders
 * are written $1, $2, ... in order of first appearance (SQLite numbers a named "$N"
 * parameter by first appearance, so the same text binds the same way on both), BIGINT and
 * TEXT values only, INSERT ... RETURNING, ON CONFLICT DO NOTHING.
 *
 * Statements are prepared once per connection and cached by a small integer id
 * (db_stmt()); a cached statement is reset and its bindings cleared each time it is handed
 * out, so a caller never sees a previous caller's state.  Binding never fails by itself: a
 * failed bind is remembered in the statement and reported by the next db_step(), so each
 * statement has one error check.  Text bound is borrowed, not copied: it must stay valid
 * until db_reset() or the next db_stmt() of that id (no malloc on the hot path).
 *
 * Errors are allot codes: lock timeouts (SQLITE_BUSY/LOCKED) are EUNAVAIL, unique-key
 * violations EEXIST, other constraint failures ECONFLICT, out of memory ENOMEM, anything
 * else EIO; the message carries the driver's text.  A COMMIT whose answer was lost with the
 * connection is EINDOUBT (db_pg.c; SQLite commits in-process and always knows).
 * Threads: a db_t and its statements belong to one thread at a time.
 */
#ifndef ALLOT_LIBSTORE_DB_H
#define ALLOT_LIBSTORE_DB_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

#define DB_STMT_MAX 240 /* statement ids are 0 .. DB_STMT_MAX-1 */

typedef struct db db_t;
typedef struct db_stmt db_stmt_t;

/* One backend.  Drivers fill every member. */
struct db_ops {
    const char *name; /* "sqlite", "pg" */
    void (*close)(db_t *db);
    int (*exec)(db_t *db, const char *sql, struct allot_error *err); /* no params, many stmts */
    int (*begin)(db_t *db, struct allot_error *err);                 /* take the write lock */
    int (*table_exists)(db_t *db, const char *table, int *exists, struct allot_error *err);
    db_stmt_t *(*prepare)(db_t *db, const char *sql, struct allot_error *err);
    void (*finalize)(db_stmt_t *s);
    void (*reset)(db_stmt_t *s);
    int (*bind_int64)(db_stmt_t *s, int idx, int64_t v);
    int (*bind_text)(db_stmt_t *s, int idx, const char *v);
    int (*bind_null)(db_stmt_t *s, int idx);
    int (*step)(db_stmt_t *s, struct allot_error *err);
    int64_t (*column_int64)(db_stmt_t *s, int col);
    const char *(*column_text)(db_stmt_t *s, int col);
    int (*column_is_null)(db_stmt_t *s, int col);
    int64_t (*changes)(db_stmt_t *s);
    /* Optional (NULL: db_run_deferred runs at once): queue a parameter-less statement
     * inside a transaction to travel with the next statement sent (db_pg.c). */
    int (*defer)(db_stmt_t *s, struct allot_error *err);
    /* Optional (NULL: db_step_tx fails with EINTERNAL): db_step_tx. */
    int (*step_tx)(db_stmt_t *s, struct allot_error *err);
    /* Optional (NULL: commits stay durable by themselves): db_split_sync. */
    int (*split_sync)(db_t *db, int *fd, struct allot_error *err);
    /* Optional (NULL: db_listen and db_wait_notify fail with EINTERNAL). */
    int (*listen)(db_t *db, const char *channel, struct allot_error *err);
    int (*wait_notify)(db_t *db, int wake_fd, int timeout_ms, struct allot_error *err);
};

/* Base of every driver's connection and statement (drivers embed these first). */
struct db {
    const struct db_ops *ops;
    db_stmt_t *cache[DB_STMT_MAX];
};
struct db_stmt {
    db_t *db;
    int bind_failed; /* index of the first failed bind, 0 = none */
};

/* Open the SQLite file `path` (created when missing) in WAL mode, foreign keys on,
 * synchronous FULL when durable else NORMAL, waiting busy_timeout_ms for locks.
 * Returns NULL with err (EUNAVAIL: cannot open; ENOMEM; EIO). */
db_t *db_sqlite_open(const char *path, int busy_timeout_ms, int durable, struct allot_error *err);

/* Connect to PostgreSQL with the libpq connection string `conninfo` (connect_timeout 3 s
 * unless it says otherwise); synchronous_commit on when durable; lock waits bounded by
 * busy_timeout_ms.  db_begin takes the bank's advisory write lock (db_pg.c).
 * Returns NULL with err (EUNAVAIL: cannot connect; ENOMEM; EIO). */
db_t *db_pg_open(const char *conninfo, int busy_timeout_ms, int durable, struct allot_error *err);

/* Finalize every cached statement and close; NULL is a no-op. */
void db_close(db_t *db);
/* Run parameter-less SQL (may hold several statements). */
int db_exec(db_t *db, const char *sql, struct allot_error *err);
/* Begin a transaction holding the write lock (BEGIN IMMEDIATE on SQLite). */
int db_begin(db_t *db, struct allot_error *err);
/* *exists = 1 when the table exists (used to tell an empty database from an old one). */
int db_table_exists(db_t *db, const char *table, int *exists, struct allot_error *err);
/* The cached statement `id` for `sql`, prepared on first use; reset, bindings cleared.
 * The same id must always be given the same sql.  Borrowed; NULL with err on failure. */
db_stmt_t *db_stmt(db_t *db, int id, const char *sql, struct allot_error *err);
/* Reset a statement (releases read locks and borrowed text); NULL is a no-op. */
void db_reset(db_stmt_t *s);

/* Bind parameter $idx (1-based).  Failures are reported by the next db_step. */
void db_bind_int64(db_stmt_t *s, int idx, int64_t v);
void db_bind_text(db_stmt_t *s, int idx, const char *v); /* NULL binds SQL NULL */
void db_bind_null(db_stmt_t *s, int idx);

/* Advance: 1 = a row is available, 0 = done, -1 = error (err set). */
int db_step(db_stmt_t *s, struct allot_error *err);
/* Run s as a write transaction of its own, outside any: take the write lock, run s,
 * commit, in one round trip (PostgreSQL pipelines the four; SQLite has no such call and
 * fails with EINTERNAL: its statements cost no round trip, and it cannot commit while a
 * statement's rows are being read).  1/0 as db_step, and the rows are read the same way,
 * but what s did is committed (durable when the connection is).  -1 with err: nothing of
 * s stands, no transaction is open; except EINDOUBT: the connection was lost after COMMIT
 * was sent, and whether it committed is unknown (as for a COMMIT run by db_step). */
int db_step_tx(db_stmt_t *s, struct allot_error *err);
/* Step a statement whose rows (if any) are ignored to its end, then reset it;
 * db_changes() stays valid.
 * Returns 0 or -1. */
int db_run(db_stmt_t *s, struct allot_error *err);
/* Run a parameter-less statement whose result nobody reads (SAVEPOINT, RELEASE) inside a
 * transaction.  A driver may send it later, in the same round trip as the next statement
 * of the connection (PostgreSQL pipelines them); its failure is then reported by that next
 * statement's db_step/db_run (the transaction is failed either way, so the caller unwinds
 * as for any failed statement).  Without that capability it is db_run.  Returns 0 or -1. */
int db_run_deferred(db_stmt_t *s, struct allot_error *err);
/* Commit without waiting for the disk, and make commits durable separately, so a group
 * commit can run the next batch while the last one is flushed.  On 1, *fd is a new
 * descriptor (the caller closes it) whose fdatasync() makes every transaction committed
 * on this connection so far durable, and a COMMIT no longer syncs by itself (SQLite: the
 * WAL file, synchronous=NORMAL, under which checkpoints still sync before the WAL is
 * reused).  0: the backend has no such split (PostgreSQL) or is not in WAL mode; nothing
 * changed, *fd = -1.  -1 with err; nothing changed. */
int db_split_sync(db_t *db, int *fd, struct allot_error *err);
/* Change notification (PostgreSQL LISTEN/NOTIFY; SQLite has none: EINTERNAL).  db_listen
 * subscribes this connection to `channel` (an SQL identifier written by the caller).
 * db_wait_notify returns 1 when one or more notifications have arrived (all are consumed),
 * 0 when timeout_ms passed or wake_fd (-1: none) became readable first, -1 with err
 * (EUNAVAIL) when the connection is lost.  It never reconnects: a new connection would not
 * be listening, and what was sent meanwhile is lost, so the caller must know. */
int db_listen(db_t *db, const char *channel, struct allot_error *err);
int db_wait_notify(db_t *db, int wake_fd, int timeout_ms, struct allot_error *err);
/* Columns of the current row (0-based).  NULL text reads as "". */
int64_t db_column_int64(db_stmt_t *s, int col);
const char *db_column_text(db_stmt_t *s, int col);
int db_column_is_null(db_stmt_t *s, int col);
/* Copy a text column into dst[size], truncating (stored values were validated on write). */
void db_column_copy(db_stmt_t *s, int col, char *dst, size_t size);
/* Rows changed by the last completed INSERT/UPDATE/DELETE of this statement. */
int64_t db_changes(db_stmt_t *s);

#endif
