/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_pool.h - prep/allot's worker pool: a FIFO of jobs' hold and settle requests served
 * by between MIN and MAX threads (HADM's asynchronous PrEp design).
 *
 * Design: slurmctld's threads only enqueue (a mutex, a list append, a signal) and never wait
 * on allotd.  Workers take the oldest item that is due.  The pool grows by one thread when
 * an item has waited longer than grow_after_ms and no worker is idle, up to MAX; a worker
 * idle for idle_exit_ms exits while more than MIN run.  An item the handler cannot finish
 * yet (allotd unreachable) is put back with a due time (the handler's backoff), so a dead
 * allotd costs no CPU and does not reorder the other items.  A retried item that is not
 * urgent (a settle: slurmctld waits for none) goes behind every due item that is fresh or
 * urgent (a hold: its job waits to start), so when allotd hangs, holds reach their fail
 * mode in their budget instead of queueing behind settles that retry; fresh items keep
 * their arrival order among themselves, so a settle that frees credit still goes before a
 * later hold that needs it.
 * Each worker owns a context made by ctx_create (one allotd connection per thread) and
 * destroyed by ctx_destroy when it exits.
 * No Slurm headers: the pool is unit-tested on its own.
 * Threads: every function may be called from any thread; prep_pool_destroy from one.
 */
#ifndef ALLOT_PLUGINS_PREP_ALLOT_PREP_POOL_H
#define ALLOT_PLUGINS_PREP_ALLOT_PREP_POOL_H

#include <stdint.h>

typedef struct prep_pool prep_pool_t;

/* What a handler did with an item. */
enum prep_outcome {
    PREP_DONE = 0, /* finished (successfully or for good): the pool frees the item */
    PREP_RETRY,    /* try again at *due_ms (monotonic ms, prep_pool_now_ms) */
};

typedef struct prep_pool_ops {
    void *(*ctx_create)(void *arg); /* per worker; NULL allowed as a context */
    void (*ctx_destroy)(void *ctx, void *arg);
    /* Handle ITEM (the pointer given to prep_pool_push); on PREP_RETRY set *due_ms. */
    enum prep_outcome (*handle)(void *item, void *ctx, int attempt, int64_t *due_ms, void *arg);
    void (*item_free)(void *item, void *arg); /* items left at destroy, and finished ones */
    void *arg;
    /* Nonzero: ITEM, fresh or retried, goes before every retried item that is not
     * urgent.  Asked once, at push; NULL: none is urgent. */
    int (*urgent)(const void *item, void *arg);
} prep_pool_ops_t;

typedef struct prep_pool_stats {
    int threads;         /* running now */
    int idle;            /* waiting for work */
    int peak_threads;    /* most at once */
    int64_t queued;      /* items in the queue */
    int64_t done;        /* items finished */
    int64_t retries;     /* PREP_RETRY outcomes */
    int64_t max_wait_ms; /* longest time an item waited before its first handling */
} prep_pool_stats_t;

/* Monotonic clock in milliseconds. */
int64_t prep_pool_now_ms(void);

/*
 * prep_pool_create - start MIN_THREADS workers (1 <= MIN <= MAX <= 256).  GROW_AFTER_MS:
 * queue wait that adds a worker; IDLE_EXIT_MS: idle time after which a worker above MIN
 * exits.  OPS is copied.  NULL on bad arguments or when no thread could start.
 */
prep_pool_t *prep_pool_create(int min_threads, int max_threads, int grow_after_ms, int idle_exit_ms,
                              const prep_pool_ops_t *ops);

/* Queue ITEM (ownership passes to the pool; it is handed to ops->item_free at the end).
 * 0, or -1 when the pool is stopping (the caller keeps ITEM). */
int prep_pool_push(prep_pool_t *p, void *item);

/* A snapshot of the counters. */
void prep_pool_stats(prep_pool_t *p, prep_pool_stats_t *out);

/*
 * prep_pool_destroy - stop: workers finish the item in hand (handlers are bounded by their
 * timeouts), then exit; waits at most WAIT_MS for them, then frees what is still queued.
 * Returns the number of workers that did not exit in time (their memory is leaked rather
 * than freed under them).  NULL is a no-op.
 */
int prep_pool_destroy(prep_pool_t *p, int wait_ms);

#endif
