/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db_sqlite_ckpt.h - WAL checkpoints of a split-sync SQLite connection on a thread of their
 * own (db_sqlite_ckpt.c).  Internal to libstore. */
#ifndef ALLOT_LIBSTORE_DB_SQLITE_CKPT_H
#define ALLOT_LIBSTORE_DB_SQLITE_CKPT_H

#include <sqlite3.h>

#include "allot/error.h"

struct db_sqlite_ckpt;

/* New WAL frames (pages) after which the thread runs a pass: SQLite's default autocheckpoint.
 * WAL length from which the writer ends a cycle (db_sqlite_ckpt.c): 8000 frames, ~32 MiB. */
#define DB_SQLITE_CKPT_FRAMES 1000
#define DB_SQLITE_CKPT_RESTART 8000

/* Take over checkpointing of writer's database file "main" (path, opened with VFS vfs, NULL:
 * the default): writer's autocheckpoint is replaced by a commit hook, and a thread with a
 * connection of its own copies the WAL into the database file.  Returns the checkpointer,
 * or NULL with err (nothing changed). */
struct db_sqlite_ckpt *db_sqlite_ckpt_start(sqlite3 *writer, const char *path, const char *vfs,
                                            struct allot_error *err);
/* Stop the thread and close its connection; writer gets SQLite's autocheckpoint back.  Call
 * from writer's thread, outside a transaction.  NULL is a no-op. */
void db_sqlite_ckpt_stop(struct db_sqlite_ckpt *c);

#endif
