/* SPDX-License-Identifier: GPL-3.0-or-later */
/* writer.h - group commit: ONE thread owns the writing store_t (doc/design.md §10.1).
 *
 * Request threads submit write operations; once one is queued the writer opens one
 * transaction (store_begin) and then takes up to MaxBatch queued ops (so ops that arrive
 * while BEGIN waits join the batch), runs each op inside its own savepoint (an op that
 * fails is rolled back alone and the others go on), commits once, and hands the batch to
 * a completer thread, which makes it durable (one fdatasync for every batch handed over
 * and not yet taken, on SQLite; a PostgreSQL commit is durable by itself) and only then
 * completes every op (two completers, so flushes overlap when batches come faster than
 * one flush).  So a reply is never sent before its change is durable, many requests share
 * one flush, and the writer runs the next batch while the last is flushed.
 * When the commit itself fails, every op of the batch fails with the commit's error and
 * nothing of it is visible -- except what store_job_batch committed (below).
 * Where the store batches holds and settles (store_batches_jobs: PostgreSQL), the writer
 * does not begin first: it offers the batch's holds and settles (op->job) to
 * store_job_batch, which applies the common ones in one statement and commits them in one
 * round trip (BEGIN, lock, statement, COMMIT pipelined), and only then opens its
 * transaction for what is left, if anything: ops it did not apply, other ops, and settles
 * whose run() has a threshold check to make.  Ops it applied stand whatever happens to
 * that second transaction.
 * Savepoints cost SQLite a copy of every page an op touches and a release per op (~20k
 * instructions per op), so a batch whose ops are all `rerunnable` runs without them; when
 * op k fails there, the transaction is rolled back, op k keeps its error, and the batch runs
 * again the usual way (savepoints) without op k: the outcome is what the usual way gives.
 *
 * When the answer to a COMMIT is lost with the database connection (store_commit or
 * store_job_batch fails with EINDOUBT), the ops of that commit may stand or not.  Before
 * answering, the writer finds out: on the next connection (waited for at most
 * WRITER_DOUBT_MS) it runs each `idempotent` op of it again in a transaction of its own,
 * which answers a replay if the first run committed and does the work if it did not, and
 * commits.  An op it cannot settle so (no key, or the database stays away) fails with
 * EINDOUBT: outcome unknown.
 *
 * Completion is a callback (op->done), called on a completer thread after the flush (or
 * after the failure): a batch's ops in order, batches in commit order or not.  The HTTP
 * layer uses it to resume a suspended connection, so a worker thread is never blocked
 * waiting for a commit.  An op is owned by the submitter and must stay valid until done()
 * has been called.
 *
 * Threads: writer_submit() from any thread; ops run on the writer thread only, done() on
 * the completer threads.
 */
#ifndef ALLOT_ALLOTD_WRITER_H
#define ALLOT_ALLOTD_WRITER_H

#include <stdint.h>

#include "allot/error.h"
#include "libstore/store.h"

/* How long the writer waits for the database after a lost COMMIT answer (writer.h). */
#define WRITER_DOUBT_MS 5000

struct writer;
struct metrics;

struct write_op {
    /* Inputs (set by the submitter). */
    int (*run)(store_t *st, void *arg, struct allot_error *err); /* in a savepoint */
    void *arg;
    void (*done)(struct write_op *op); /* once durable (or failed); on a completer */
    void *done_arg;
    /* 1: run() may be run again after a rollback of its effects, with the same outcome
     * and no effect outside the store (it rewrites all its outputs).  A batch made only of
     * such ops first runs without per-op savepoints (see below). */
    int rerunnable;
    /* 1: the verb is idempotent by a key of its own (doc/api.md "Outcome unknown"): run()
     * again after its first run committed changes nothing and answers as a replay, so it
     * finds out what stands after a lost COMMIT answer.  Implies rerunnable. */
    int idempotent;
    /* Optional: the op is this hold or settle, which the writer first offers, with the
     * batch's others, to store_job_batch (one statement for the lot on PostgreSQL).  When
     * job->done is 1 the result is already committed and run() must not run the verb
     * again (it still runs, in the writer's transaction, when the op needs it: a settle of
     * an allocation with a policy, for its threshold check).  NULL: run() does everything. */
    struct store_job_op *job;
    /* Outputs (set by the writer before done()). */
    int rc; /* 0 ok and durable; -1 failed (err) and nothing of it is visible */
    struct allot_error err;
    /* Private. */
    int in_doubt; /* ran in a commit whose answer was lost */
    struct write_op *next;
};

/* Open the writer's store (cfg is copied) and start the thread.  max_batch and queue_max
 * come from the conf.  NULL with err when the store cannot be opened. */
struct writer *writer_start(const struct store_config *cfg, int max_batch, int queue_max,
                            struct metrics *m, struct allot_error *err);
/* Queue op.  Waits at most wait_ms for room when the queue is full.  -1 with err
 * (EUNAVAIL) when it is still full or the writer is stopping; then done() is NOT called. */
int writer_submit(struct writer *w, struct write_op *op, int wait_ms, struct allot_error *err);
/* Run op and wait for its completion (for callers that may block, e.g. startup tasks).
 * op->done must be NULL; returns op->rc. */
int writer_run(struct writer *w, struct write_op *op, struct allot_error *err);
/* Readiness from the outcomes of the last writes (/readyz, api_misc.c): 1 when the newest was a
 * commit no older than max_age_us, 0 with err when it was a failure for want of storage
 * (EUNAVAIL: full, read-only, I/O error, database gone) no older than that, -1 when
 * nothing that recent is known (the caller then probes with a write of its own). */
int writer_ready(struct writer *w, int64_t max_age_us, struct allot_error *err);
/* Ops currently queued (for /metrics). */
long writer_depth(struct writer *w);
/* Refuse new ops (EUNAVAIL), finish every queued op (commit), stop the thread, close the
 * store.  The struct stays valid (submitters racing with shutdown get EUNAVAIL) until
 * writer_destroy().  Idempotent; NULL is a no-op. */
void writer_stop(struct writer *w);
/* writer_stop() then free.  NULL is a no-op. */
void writer_destroy(struct writer *w);

#endif
