/* SPDX-License-Identifier: GPL-3.0-or-later */
/* writer.c - the group-commit writer of writer.h.
 *
 * Queue: a singly linked FIFO of caller-owned ops (no allocation per op), bounded by
 * queue_max, guarded by one mutex with two condition variables (work for the writer, room
 * for submitters).  The writer never holds the mutex while it talks to the store.
 * Completion runs on other threads, the completers: the writer hands each finished batch
 * over and goes on with the next one.  On SQLite (store_split_sync) a COMMIT only writes
 * the WAL, and a completer makes the batches handed over so far durable with one fdatasync
 * before it completes any of their ops, so the flush of batch N overlaps the running of
 * batch N+1 and a reply still never precedes its flush.  There are WRITER_COMPLETERS of
 * them, so a batch committed while a flush is under way starts its own flush at once
 * instead of waiting for that one to end: every fdatasync makes durable all that was
 * written before it began, whichever finishes first.  Batches may so complete out of commit
 * order; each batch's ops complete in order.  A failed flush leaves no way to
 * know what is on disk: allotd exits (unacknowledged ops are replayed by their clients,
 * as after a crash).  Elsewhere the commit is durable by itself and the completers only
 * complete.  Readers may see a batch a flush before it is acknowledged, never after a
 * state that could be lost to them alone: the WAL is recovered as a prefix.
 * Crash points: writer.before_commit, writer.after_commit and writer.after_sync (crash.h)
 * bracket the durability boundary, so a test can kill the daemon with a batch written but
 * not committed, committed but not flushed, or flushed but not acknowledged (around
 * store_job_batch too, whose one round trip writes and commits: there "before" is "before
 * anything was sent").
 */
#include "allotd/writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allotd/crash.h"
#include "allotd/metrics.h"
#include "libutil/log.h"
#include "libutil/xalloc.h"

/* Flushes that may run at once.  Two cut the wait for a flush in progress (half of a
 * ~120 us fdatasync, on average): p50 -50 us and +3-5% hold+settle pairs/s in
 * bench/bank_bench.sh (bench/results/bank.md, 2026-11-24, 03ea179); three did no better. */
#define WRITER_COMPLETERS 2

struct writer {
    pthread_mutex_t lock;
    pthread_cond_t work; /* queue became non-empty or stopping */
    pthread_cond_t room; /* queue shrank */
    struct write_op *head, *tail;
    long depth;
    long queue_max;
    int max_batch;
    int stopping;
    pthread_t thread;
    store_t *st;
    struct metrics *m;
    /* The completers: ops of committed (or failed) batches, in commit order. */
    pthread_mutex_t c_lock;
    pthread_cond_t c_work;
    struct write_op *c_head, *c_tail;
    int c_stopping;
    pthread_t completer[WRITER_COMPLETERS];
    int ncompleters; /* started */
    int sync_fd;     /* fdatasync makes the commits so far durable; -1: they are already */
    int batch_jobs;  /* store_batches_jobs: holds and settles go to store_job_batch first */
    struct store_job_op *jobs; /* max_batch slots: a batch's job ops for store_job_batch */
    struct write_op **job_of;  /* jobs[i] belongs to job_of[i] */
    /* Readiness (writer_ready): when an op last committed, and when one last failed for
     * want of storage (EUNAVAIL) with its error; monotonic us, under c_lock. */
    int64_t ok_us, fail_us;
    struct allot_error fail_err;
};

struct sync_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int finished;
};

static void deadline_after_ms(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int writer_submit(struct writer *w, struct write_op *op, int wait_ms, struct allot_error *err)
{
    struct timespec until;
    deadline_after_ms(&until, wait_ms);
    op->next = NULL;
    op->rc = 0;
    op->in_doubt = 0;
    allot_error_clear(&op->err);
    pthread_mutex_lock(&w->lock);
    while (!w->stopping && w->depth >= w->queue_max) {
        if (pthread_cond_timedwait(&w->room, &w->lock, &until) == ETIMEDOUT)
            break;
    }
    if (w->stopping || w->depth >= w->queue_max) {
        int stopping = w->stopping;
        pthread_mutex_unlock(&w->lock);
        return allot_errorf(err, ALLOT_EUNAVAIL, "%s",
                            stopping ? "allotd is shutting down" : "write queue full; retry later");
    }
    if (w->tail)
        w->tail->next = op;
    else
        w->head = op;
    w->tail = op;
    w->depth++;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

static void sync_done(struct write_op *op)
{
    struct sync_wait *sw = op->done_arg;
    pthread_mutex_lock(&sw->lock);
    sw->finished = 1;
    pthread_cond_signal(&sw->cond);
    pthread_mutex_unlock(&sw->lock);
}

int writer_run(struct writer *w, struct write_op *op, struct allot_error *err)
{
    struct sync_wait sw = {.finished = 0};
    pthread_mutex_init(&sw.lock, NULL);
    pthread_cond_init(&sw.cond, NULL);
    op->done = sync_done;
    op->done_arg = &sw;
    int rc = writer_submit(w, op, 10000, err);
    if (rc == 0) {
        /* Unbounded on purpose: the op lives on this stack until the writer is done with
         * it, and the writer always finishes a batch (store waits are bounded). */
        pthread_mutex_lock(&sw.lock);
        while (!sw.finished)
            pthread_cond_wait(&sw.cond, &sw.lock);
        pthread_mutex_unlock(&sw.lock);
        rc = op->rc;
        if (rc < 0 && err)
            *err = op->err;
    }
    pthread_cond_destroy(&sw.cond);
    pthread_mutex_destroy(&sw.lock);
    return rc;
}

long writer_depth(struct writer *w)
{
    pthread_mutex_lock(&w->lock);
    long d = w->depth;
    pthread_mutex_unlock(&w->lock);
    return d;
}

/* Offer the batch's holds and settles to store_job_batch (writer.h), which commits what it
 * applies in a transaction of its own, before the writer opens one.  When it fails, no op
 * is done and each runs by itself as without it. */
static void offer_jobs(struct writer *w, struct write_op *batch)
{
    int m = 0;
    for (struct write_op *op = batch; op; op = op->next) {
        if (op->job) {
            w->jobs[m] = *op->job;
            w->job_of[m++] = op;
        }
    }
    if (m == 0)
        return;
    struct allot_error jerr = {0};
    ALLOT_CRASHPOINT("writer.before_commit");
    if (store_job_batch(w->st, w->jobs, m, &jerr) < 0) {
        /* The answer to its COMMIT was lost: the ops run one by one next, in the writer's
         * transaction, answer replays if it committed; if that fails too, resolve_doubt. */
        if (jerr.code == ALLOT_EINDOUBT) {
            for (int i = 0; i < m; i++)
                w->job_of[i]->in_doubt = 1;
            log_warn("msg=\"answer to batched holds and settles lost; running them again\" "
                     "ops=%d error=\"%s\"",
                     m, jerr.msg);
        }
        /* Unavailable (database down, lock timeout): the writer's own BEGIN, which
         * reconnects, says so if it persists; one line per batch is enough. */
        else if (jerr.code != ALLOT_EUNAVAIL)
            log_warn("msg=\"batched holds and settles failed; running them one by one\" "
                     "ops=%d error=\"%s\"",
                     m, jerr.msg);
        return;
    }
    ALLOT_CRASHPOINT("writer.after_commit");
    for (int i = 0; i < m; i++)
        w->job_of[i]->job->done = w->jobs[i].done;
}

/* Whether op has anything left to run in the writer's transaction: all but a hold or
 * settle store_job_batch applied, except a settle of an allocation with a policy, whose
 * run() still checks its thresholds (api_job.c). */
static int needs_tx(const struct write_op *op)
{
    const struct store_job_op *j = op->job;
    return !j || !j->done || (j->settle_res && !j->settle_res->no_policy);
}

/* A batch of rerunnable ops without savepoints (writer.h).  1: all ran, the transaction is
 * open for the commit; 0: an op failed (its rc and err are set), the transaction was
 * rolled back and is open again (or ok is 0 when it could not be reopened). */
static int run_optimistic(struct writer *w, struct write_op *batch, int *ok,
                          struct allot_error *err)
{
    for (struct write_op *op = batch; op; op = op->next) {
        if (!op->rerunnable)
            return 0;
    }
    for (struct write_op *op = batch; op; op = op->next) {
        if (op->run(w->st, op->arg, &op->err) < 0) {
            op->rc = -1;
            store_rollback(w->st);
            *ok = store_begin(w->st, err) == 0;
            return 0;
        }
    }
    return 1;
}

/* For writer_ready while the writer looks into a lost answer: the database is not taking
 * writes now (its ops are answered later, when their outcome is known). */
static void note_unavailable(struct writer *w, const struct allot_error *why)
{
    pthread_mutex_lock(&w->c_lock);
    w->fail_us = metrics_now_us();
    allot_errorf(&w->fail_err, ALLOT_EUNAVAIL, "%s", why->msg);
    pthread_mutex_unlock(&w->c_lock);
}

/* Run the ops that need it of a batch in the open transaction, each in a savepoint. */
static void run_each(struct writer *w, struct write_op *batch, int doubt_only)
{
    for (struct write_op *op = batch; op; op = op->next) {
        if (doubt_only ? !(op->in_doubt && op->idempotent) : op->rc < 0)
            continue; /* failed in run_optimistic: its error stands, nothing of it is left */
        if (doubt_only)
            op->rc = 0;
        if (store_savepoint(w->st, &op->err) < 0) {
            op->rc = -1;
            continue;
        }
        if (op->run(w->st, op->arg, &op->err) < 0) {
            op->rc = -1;
            store_savepoint_rollback(w->st);
        } else if (store_savepoint_release(w->st, &op->err) < 0) {
            op->rc = -1;
            store_savepoint_rollback(w->st);
        }
    }
}

/* Find out what stands of the batch's ops in doubt (writer.h): run the idempotent ones
 * again, on the next connection, and commit; waits at most WRITER_DOUBT_MS for the
 * database.  Whatever stays unknown fails with EINDOUBT. */
static void resolve_doubt(struct writer *w, struct write_op *batch, int n)
{
    int64_t until = metrics_now_us() + (int64_t)WRITER_DOUBT_MS * 1000;
    struct allot_error err = {0};
    int keyed = 0;
    for (struct write_op *op = batch; op; op = op->next)
        keyed += op->in_doubt && op->idempotent;
    log_warn("msg=\"answer to a commit lost; finding out what stands\" ops=%d in_doubt_keyed=%d", n,
             keyed);
    const struct timespec pause = {0, 100 * 1000 * 1000};
    while (keyed && metrics_now_us() < until) {
        if (store_begin(w->st, &err) < 0) {
            note_unavailable(w, &err);
            nanosleep(&pause, NULL); /* the driver backs off its reconnects by itself */
            continue;
        }
        run_each(w, batch, 1);
        if (store_commit(w->st, &err) == 0) {
            for (struct write_op *op = batch; op; op = op->next)
                if (op->idempotent)
                    op->in_doubt = 0; /* its rc and err are what stands */
            break;
        }
        store_rollback(w->st);
        if (err.code != ALLOT_EINDOUBT && err.code != ALLOT_EUNAVAIL)
            break; /* no reason to expect a better answer by trying again */
    }
    for (struct write_op *op = batch; op; op = op->next) {
        if (!op->in_doubt)
            continue;
        op->rc = -1;
        if (op->idempotent)
            allot_errorf(&op->err, ALLOT_EINDOUBT,
                         "the database's answer to this change was lost and it could not be "
                         "asked again within %d s whether it was made; sending the same request "
                         "again is safe: it answers what stands (%s)",
                         WRITER_DOUBT_MS / 1000, err.msg);
        else
            allot_errorf(&op->err, ALLOT_EINDOUBT,
                         "the database's answer to this change was lost: it may or may not have "
                         "been made; look before sending it again");
    }
}

/* Run one batch: its holds and settles through store_job_batch first when the store
 * batches them (no transaction is open yet), else in the transaction writer_main opened
 * (ok = 0 when it could not, with begin_err); then each op that needs it (in a savepoint
 * unless optimistic), commit; then hand the batch to the completer. */
static void run_batch(struct writer *w, struct write_op *batch, struct write_op *last, int n,
                      int ok, const struct allot_error *begin_err, int64_t t0)
{
    struct allot_error err = *begin_err;
    int64_t t1;
    int need = 1;
    if (w->batch_jobs) {
        offer_jobs(w, batch);
        need = 0;
        for (struct write_op *op = batch; op && !need; op = op->next)
            need = needs_tx(op);
        if (need)
            ok = store_begin(w->st, &err) == 0;
    }
    int done = !need || (ok && run_optimistic(w, batch, &ok, &err));
    if (ok && !done)
        run_each(w, batch, 0);
    t1 = metrics_now_us();
    if (ok && need) {
        ALLOT_CRASHPOINT("writer.before_commit");
        if (store_commit(w->st, &err) < 0) {
            ok = 0;
            store_rollback(w->st);
        } else {
            ALLOT_CRASHPOINT("writer.after_commit");
        }
    }
    int doubt = 0;
    if (!ok) {
        log_error("msg=\"group commit failed\" ops=%d error=\"%s\"", n, err.msg);
        for (struct write_op *op = batch; op; op = op->next) {
            if (op->job && op->job->done)
                continue; /* committed by store_job_batch: it stands */
            if (err.code == ALLOT_EINDOUBT && op->rc == 0)
                op->in_doubt = 1; /* it ran: the lost commit may have made it */
            else if (err.code == ALLOT_EINDOUBT && !op->in_doubt)
                continue; /* its own error: rolled back before the commit */
            op->rc = -1;
            op->err = err;
            doubt |= op->in_doubt;
        }
    } else {
        for (struct write_op *op = batch; op; op = op->next)
            op->in_doubt = 0; /* answered on this connection: what it says stands */
    }
    if (doubt)
        resolve_doubt(w, batch, n);
    metrics_batch(w->m, n, ok, t1 - t0, metrics_now_us() - t1);
    /* Hand the batch to the completer, which flushes (when split) and completes it. */
    pthread_mutex_lock(&w->c_lock);
    if (w->c_tail)
        w->c_tail->next = batch;
    else
        w->c_head = batch;
    w->c_tail = last;
    pthread_cond_signal(&w->c_work);
    pthread_mutex_unlock(&w->c_lock);
}

/* Remember for writer_ready whether the ops of OP's list committed or found the storage
 * unavailable (other errors are the op's own: they say nothing of the storage). */
static void note_outcomes(struct writer *w, const struct write_op *op, int64_t now_us)
{
    const struct write_op *failed = NULL;
    int ok = 0;
    for (; op; op = op->next) {
        if (op->rc == 0)
            ok = 1;
        else if (op->err.code == ALLOT_EUNAVAIL)
            failed = op;
    }
    if (!ok && !failed)
        return;
    pthread_mutex_lock(&w->c_lock);
    if (ok)
        w->ok_us = now_us;
    if (failed && !ok) {
        w->fail_us = now_us;
        w->fail_err = failed->err;
    }
    pthread_mutex_unlock(&w->c_lock);
}

int writer_ready(struct writer *w, int64_t max_age_us, struct allot_error *err)
{
    int64_t now = metrics_now_us();
    int rc = -1;
    pthread_mutex_lock(&w->c_lock);
    if (w->fail_us > w->ok_us && now - w->fail_us <= max_age_us) {
        if (err)
            *err = w->fail_err;
        rc = 0;
    } else if (w->ok_us && w->ok_us >= w->fail_us && now - w->ok_us <= max_age_us) {
        rc = 1;
    }
    pthread_mutex_unlock(&w->c_lock);
    return rc;
}

/* Complete ops handed over so far: one flush for all of them, then done() in order.
 * WRITER_COMPLETERS threads run this; each takes everything handed over when it looks. */
static void *completer_main(void *arg)
{
    struct writer *w = arg;
    pthread_mutex_lock(&w->c_lock);
    while (1) {
        while (!w->c_head && !w->c_stopping)
            pthread_cond_wait(&w->c_work, &w->c_lock);
        if (!w->c_head)
            break; /* stopping, and everything handed over is completed */
        struct write_op *op = w->c_head;
        w->c_head = w->c_tail = NULL;
        pthread_mutex_unlock(&w->c_lock);

        int64_t t0 = metrics_now_us();
        int wrote = 0;
        for (struct write_op *o = op; o && !wrote; o = o->next)
            wrote = o->rc == 0;
        if (w->sync_fd >= 0 && wrote && fdatasync(w->sync_fd) < 0) {
            log_error("msg=\"cannot flush the database journal; exiting so that no write is "
                      "acknowledged that may not be on disk\" error=\"%s\"",
                      strerror(errno));
            _exit(70);
        }
        ALLOT_CRASHPOINT("writer.after_sync");
        int64_t t1 = metrics_now_us();
        note_outcomes(w, op, t1);
        while (op) { /* done() may free or reuse the op: read next first */
            struct write_op *next = op->next;
            op->done(op);
            op = next;
        }
        metrics_flush(w->m, t1 - t0, metrics_now_us() - t1);
        pthread_mutex_lock(&w->c_lock);
    }
    pthread_mutex_unlock(&w->c_lock);
    return NULL;
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    pthread_mutex_lock(&w->lock);
    while (1) {
        while (!w->head && !w->stopping)
            pthread_cond_wait(&w->work, &w->lock);
        if (!w->head && w->stopping)
            break;
        /* Begin first, then take the batch: ops that arrive while BEGIN waits join this
         * batch instead of waiting for the next.  Not when holds and settles go to
         * store_job_batch first: it begins, runs and commits in one round trip, and ops
         * that arrive meanwhile make the next batch. */
        struct allot_error err = {0};
        int64_t t0 = metrics_now_us();
        int ok = 1;
        if (!w->batch_jobs) {
            pthread_mutex_unlock(&w->lock);
            ok = store_begin(w->st, &err) == 0;
            pthread_mutex_lock(&w->lock);
        }
        struct write_op *batch = w->head, *last = w->head;
        int n = 1;
        while (n < w->max_batch && last->next) {
            last = last->next;
            n++;
        }
        w->head = last->next;
        if (!w->head)
            w->tail = NULL;
        last->next = NULL;
        w->depth -= n;
        pthread_cond_broadcast(&w->room);
        pthread_mutex_unlock(&w->lock);
        run_batch(w, batch, last, n, ok, &err, t0);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Every op handed over is flushed and completed when this returns. */
static void stop_completers(struct writer *w)
{
    pthread_mutex_lock(&w->c_lock);
    w->c_stopping = 1;
    pthread_cond_broadcast(&w->c_work);
    pthread_mutex_unlock(&w->c_lock);
    for (int i = 0; i < w->ncompleters; i++)
        pthread_join(w->completer[i], NULL);
    w->ncompleters = 0;
}

static void writer_free(struct writer *w)
{
    if (w->sync_fd >= 0)
        close(w->sync_fd);
    store_close(w->st);
    free(w->jobs);
    free(w->job_of);
    pthread_cond_destroy(&w->c_work);
    pthread_mutex_destroy(&w->c_lock);
    pthread_cond_destroy(&w->room);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

struct writer *writer_start(const struct store_config *cfg, int max_batch, int queue_max,
                            struct metrics *m, struct allot_error *err)
{
    store_t *st = store_open(cfg, err);
    if (!st)
        return NULL;
    struct writer *w = xcalloc(1, sizeof(*w));
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->room, NULL);
    pthread_mutex_init(&w->c_lock, NULL);
    pthread_cond_init(&w->c_work, NULL);
    w->max_batch = max_batch;
    w->queue_max = queue_max;
    w->jobs = xcalloc((size_t)max_batch, sizeof(*w->jobs));
    w->job_of = xcalloc((size_t)max_batch, sizeof(*w->job_of));
    w->st = st;
    w->batch_jobs = store_batches_jobs(st);
    w->m = m;
    w->sync_fd = -1;
    struct allot_error serr = {0};
    if (store_split_sync(st, &w->sync_fd, &serr) < 0) {
        /* Commits stay durable by themselves: slower, never less safe. */
        log_warn("msg=\"group commit flushes inline\" error=\"%s\"", serr.msg);
    }
    int rc = 0;
    for (int i = 0; i < WRITER_COMPLETERS && rc == 0; i++) {
        rc = pthread_create(&w->completer[i], NULL, completer_main, w);
        if (rc == 0)
            w->ncompleters++;
    }
    const char *what = "completer";
    if (rc == 0) {
        what = "writer";
        rc = pthread_create(&w->thread, NULL, writer_main, w);
    }
    if (rc != 0) {
        stop_completers(w);
        writer_free(w);
        allot_errorf(err, ALLOT_EINTERNAL, "cannot start the %s thread: %s", what, strerror(rc));
        return NULL;
    }
    return w;
}

void writer_stop(struct writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    int was = w->stopping;
    w->stopping = 1;
    pthread_cond_broadcast(&w->work);
    pthread_cond_broadcast(&w->room);
    pthread_mutex_unlock(&w->lock);
    if (was)
        return;
    pthread_join(w->thread, NULL); /* every queued op has run and been handed over */
    stop_completers(w);            /* ... and flushed and completed */
    if (w->sync_fd >= 0)
        close(w->sync_fd);
    w->sync_fd = -1;
    store_close(w->st);
    w->st = NULL;
}

void writer_destroy(struct writer *w)
{
    if (!w)
        return;
    writer_stop(w);
    writer_free(w);
}
