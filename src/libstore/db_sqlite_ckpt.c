/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db_sqlite_ckpt.c - WAL checkpoints of allotd's writer connection, on a thread of their own.
 *
 * Why: under autocheckpoint the connection that commits the 1000th WAL frame copies the
 * WAL's pages into the database file and syncs both files, inside its COMMIT.  On allotd's
 * writer that is the group commit's serial path: one batch in ~50 took a millisecond or more
 * (bench/results/bank.md, 2026-11-24, b368fca).  Here a thread with a connection of its own does
 * the copying every DB_SQLITE_CKPT_FRAMES frames, as PASSIVE checkpoints, which never wait for the
 * writer or a reader.
 *
 * The writer still ends each cycle.  SQLite starts the WAL over from its beginning only when
 * a write transaction begins and finds every frame copied, and under steady load commits
 * land while any other connection checkpoints, so the WAL would grow without bound.  So once
 * the WAL holds DB_SQLITE_CKPT_RESTART frames, the writer's first commit after a pass runs
 * a PASSIVE checkpoint of its own, which copies only the frames committed during that pass,
 * and its next transaction reuses the WAL.  That costs the writer about what one
 * autocheckpoint did, once per DB_SQLITE_CKPT_RESTART frames instead of per 1000; the WAL
 * file so stays below ~(DB_SQLITE_CKPT_RESTART + DB_SQLITE_CKPT_FRAMES) pages, unless a
 * reader keeps an old snapshot open (as under autocheckpoint).
 * Durability is SQLite's: every checkpoint syncs the WAL before it copies and the database
 * file before it records the copy; nothing here decides what is on disk.
 *
 * States, one atomic, each step taken by one side only:
 *   IDLE -> REQUESTED  writer's commit hook, every DB_SQLITE_CKPT_FRAMES new frames
 *   REQUESTED -> RUNNING -> DONE  the checkpointer thread
 *   DONE -> IDLE  writer's commit hook (after its own checkpoint, when the WAL is long)
 * A failed checkpoint (an I/O error) is dropped, as autocheckpoint drops it: the next one
 * copies the same frames again.
 */
#include "libstore/db_sqlite_ckpt.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { IDLE, REQUESTED, RUNNING, DONE };

struct db_sqlite_ckpt {
    sqlite3 *writer;
    sqlite3 *conn; /* the checkpointer's own */
    pthread_t thread;
    pthread_mutex_t lock; /* with wake: the thread sleeps until REQUESTED or stopping */
    pthread_cond_t wake;
    atomic_int state;
    int stopping;
    int asked; /* the WAL's frames when the last pass was asked for (writer's thread only) */
};

/* The writer's wal hook: runs on the writer's thread after each of its commits, with the
 * number of frames in the WAL. */
static int on_commit(void *arg, sqlite3 *conn, const char *db, int frames)
{
    struct db_sqlite_ckpt *c = arg;
    int state = atomic_load_explicit(&c->state, memory_order_acquire);
    if (frames < c->asked)
        c->asked = 0; /* the WAL started over */
    if (state == DONE) {
        if (frames >= DB_SQLITE_CKPT_RESTART)
            (void)sqlite3_wal_checkpoint_v2(conn, db, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        atomic_store_explicit(&c->state, IDLE, memory_order_release);
    } else if (state == IDLE && frames - c->asked >= DB_SQLITE_CKPT_FRAMES) {
        c->asked = frames;
        pthread_mutex_lock(&c->lock);
        atomic_store_explicit(&c->state, REQUESTED, memory_order_release);
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->lock);
    }
    return SQLITE_OK; /* anything else would fail a COMMIT that has happened */
}

static void *checkpointer(void *arg)
{
    struct db_sqlite_ckpt *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->stopping && atomic_load(&c->state) != REQUESTED)
            pthread_cond_wait(&c->wake, &c->lock);
        if (c->stopping)
            break;
        atomic_store(&c->state, RUNNING);
        pthread_mutex_unlock(&c->lock);
        (void)sqlite3_wal_checkpoint_v2(c->conn, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&c->lock);
        atomic_store_explicit(&c->state, DONE, memory_order_release);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

struct db_sqlite_ckpt *db_sqlite_ckpt_start(sqlite3 *writer, const char *path, const char *vfs,
                                            struct allot_error *err)
{
    struct db_sqlite_ckpt *c = calloc(1, sizeof *c);
    if (!c) {
        allot_errorf(err, ALLOT_ENOMEM, "sqlite checkpointer: out of memory");
        return NULL;
    }
    c->writer = writer;
    atomic_init(&c->state, IDLE);
    int rc = sqlite3_open_v2(path, &c->conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, vfs);
    /* A read opens the connection's WAL (a checkpoint on a connection that never read does
     * nothing); synchronous=FULL: a checkpoint syncs the WAL and the database file. */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(c->conn,
                          "PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=0; "
                          "SELECT count(*) FROM sqlite_schema",
                          NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        allot_errorf(err, ALLOT_EUNAVAIL, "sqlite checkpointer: %s: %s", path,
                     c->conn ? sqlite3_errmsg(c->conn) : sqlite3_errstr(rc));
        goto fail;
    }
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        allot_errorf(err, ALLOT_ENOMEM, "sqlite checkpointer: cannot create a mutex");
        goto fail;
    }
    if (pthread_cond_init(&c->wake, NULL) != 0) {
        allot_errorf(err, ALLOT_ENOMEM, "sqlite checkpointer: cannot create a condition");
        pthread_mutex_destroy(&c->lock);
        goto fail;
    }
    if (pthread_create(&c->thread, NULL, checkpointer, c) != 0) {
        allot_errorf(err, ALLOT_ENOMEM, "sqlite checkpointer: cannot start its thread");
        pthread_cond_destroy(&c->wake);
        pthread_mutex_destroy(&c->lock);
        goto fail;
    }
    sqlite3_wal_hook(writer, on_commit, c); /* replaces the autocheckpoint hook */
    return c;
fail:
    sqlite3_close_v2(c->conn);
    free(c);
    return NULL;
}

void db_sqlite_ckpt_stop(struct db_sqlite_ckpt *c)
{
    if (!c)
        return;
    sqlite3_wal_autocheckpoint(c->writer, DB_SQLITE_CKPT_FRAMES); /* removes on_commit */
    pthread_mutex_lock(&c->lock);
    c->stopping = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    sqlite3_close_v2(c->conn);
    free(c);
}
