/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_fault.h - storage fault injection for tests (STYLE §4 "Storage faults"); ALLOT_TEST
 * builds only, like SQLite's test_vfs.c / SimulateIOError.
 *
 * Two layers, used by tests/fault/ loops that run a workload with N = 1, 2, ... until no fault
 * is hit, checking that each operation happened wholly or not at all:
 *
 *  - The db layer (any backend): store_fault_arm() swaps the connection's driver ops for a
 *    wrapper that fails the Nth driver call (begin, exec, prepare, step, table_exists) with
 *    the given allot code before the driver sees it, once or from then on.  ROLLBACK
 *    statements are never failed: a rollback only discards in-memory state (WAL, PostgreSQL)
 *    and a failed one would leave the connection inside a transaction, which is not a fault
 *    a real backend produces.
 *  - The SQLite file layer: store_fault_vfs_install() registers a shim VFS as the default,
 *    wrapping the real one; store_fault_vfs_arm() makes the Nth write or sync to the main
 *    database, its WAL or journal fail with an SQLite I/O code (SQLITE_IOERR_WRITE,
 *    SQLITE_FULL, SQLITE_IOERR_FSYNC), once or from then on.  This exercises SQLite's and
 *    libstore's real error paths, including failures inside COMMIT.
 *
 *  - Lost COMMIT answers (PostgreSQL): store_fault_commit_lost_arm() names a trigger file;
 *    a COMMIT (or db_step_tx) that ends while the file exists commits for real, and then the
 *    driver cuts its connection and reports the answer lost, as when the network or the
 *    server fails between the commit and its reply.  The daemon arms it from
 *    $ALLOT_TEST_COMMIT_LOST (TestMode=local only).
 *
 * State is process-wide (STYLE §2 allows test-build fault counters as globals): one armed
 * connection and one VFS plan at a time.  Not thread-safe: arm, run and read counters from
 * one thread while no other thread uses the store.
 */
#ifndef ALLOT_LIBSTORE_STORE_FAULT_H
#define ALLOT_LIBSTORE_STORE_FAULT_H

#ifdef ALLOT_TEST

#include "allot/error.h"
#include "libstore/store.h"

/* Fail st's nth driver call from now (nth >= 1) with `code` and a message naming the call;
 * persistent: every call from the nth on fails.  Arm right after store_open, before any
 * ROLLBACK statement was prepared, so those are recognised.  Re-arming resets the counters.
 * Returns 0, or -1 with err (EINVAL: another store is armed, or nth < 1). */
int store_fault_arm(store_t *st, long nth, int persistent, enum allot_errnum code,
                    struct allot_error *err);
/* Restore st's driver ops; st may be closed afterwards.  No-op when st is not armed. */
void store_fault_disarm(store_t *st);
/* While suspended (on = 1), calls are neither counted nor failed (test bookkeeping reads). */
void store_fault_suspend(int on);
/* Faults injected since the last arm. */
long store_fault_hits(void);

/* Arm the lost-COMMIT fault with the trigger file `path` (copied; NULL or "" disarms).
 * Call before any thread uses a store. */
void store_fault_commit_lost_arm(const char *path);
/* For the driver, after a COMMIT succeeded (step_tx 1: db_step_tx's, 0: a COMMIT
 * statement's): 1 when this answer is to be lost, else 0.  It is when the trigger file exists
 * and does not name the other kind ("batch": db_step_tx only, "commit": statements only);
 * the file is then removed (one fault per file). */
int store_fault_commit_lost_due(int step_tx);
/* For the driver, after it cut the connection of a lost answer: when the trigger file said
 * "wait", create <path>.lost and wait (at most 60 s) for <path>.go, then remove both, so a
 * test can take the database away before the daemon looks into the lost answer. */
void store_fault_commit_lost_wait(void);

enum store_fault_io {
    STORE_FAULT_WRITE, /* xWrite */
    STORE_FAULT_SYNC,  /* xSync */
};

/* Register the shim VFS ("allot-fault") as SQLite's default, wrapping the current default.
 * Call before opening the connections to test; idempotent.  Returns 0 or -1 with err (EIO). */
int store_fault_vfs_install(struct allot_error *err);
/* Plan: the nth `what` from now fails with sqlite_code (an SQLite result code such as
 * SQLITE_IOERR_WRITE, SQLITE_FULL, SQLITE_IOERR_FSYNC); persistent as above.  nth = 0
 * disarms.  Counters are reset. */
void store_fault_vfs_arm(enum store_fault_io what, long nth, int persistent, int sqlite_code);
long store_fault_vfs_hits(void);

#endif /* ALLOT_TEST */
#endif
