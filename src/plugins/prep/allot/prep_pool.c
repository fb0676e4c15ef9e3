/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_pool.c - the worker pool of prep_pool.h.
 *
 * One mutex guards the list and the counters; workers wait on `work`, prep_pool_destroy on
 * `gone`.  Items due later (retries) stay in the list in arrival order (a retry is appended
 * again); a worker takes the first due item that is fresh or urgent, else the first due
 * retry, so a retry never overtakes fresh work and a settle's retries never hold up a
 * hold.  The list is short (jobs starting and ending now, and retries): one walk per take.  Workers
 * are detached: the pool counts them instead of joining, so a shrinking worker needs nobody to reap
 * it. `st.threads` counts workers that have not decided to leave (the shrink and grow decisions
 * read it); `live` also counts a leaving worker until its context is destroyed, and is what
 * prep_pool_destroy waits for, so no worker touches the pool after destroy returns.
 * Invariant: idle <= threads <= live.
 */
#include "plugins/prep/allot/prep_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct node {
    void *item;
    int attempts;
    int urgent;        /* ops.urgent's answer at push */
    int64_t queued_ms; /* when pushed */
    int64_t due_ms;    /* not before */
    struct node *next;
};

struct prep_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* an item arrived or the pool stops */
    pthread_cond_t gone; /* a worker exited */
    struct node *head, *tail;
    prep_pool_ops_t ops;
    int min, max, grow_after_ms, idle_exit_ms;
    int stopping;
    int live; /* workers not yet past ctx_destroy */
    prep_pool_stats_t st;
};

int64_t prep_pool_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void abs_deadline(struct timespec *ts, int64_t in_ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += in_ms / 1000;
    ts->tv_nsec += (in_ms % 1000) * 1000000;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

static void *worker(void *arg);

/* Start one worker; caller holds mu.  0 or -1. */
static int spawn_locked(prep_pool_t *p)
{
    pthread_t t;
    pthread_attr_t a;
    int rc;

    if (pthread_attr_init(&a) != 0)
        return -1;
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &a, worker, p);
    pthread_attr_destroy(&a);
    if (rc != 0)
        return -1;
    p->st.threads++;
    p->live++;
    if (p->st.threads > p->st.peak_threads)
        p->st.peak_threads = p->st.threads;
    return 0;
}

/* Grow when a due item has waited grow_after_ms and no worker is free.  Caller holds mu. */
static void maybe_grow_locked(prep_pool_t *p, int64_t now)
{
    if (p->stopping || p->st.idle > 0 || p->st.threads >= p->max)
        return;
    for (struct node *n = p->head; n; n = n->next) {
        if (n->due_ms <= now && now - n->queued_ms >= p->grow_after_ms) {
            (void)spawn_locked(p); /* a failed spawn leaves the work to the others */
            return;
        }
    }
}

/* A retried item that is not urgent waits for every due item that is fresh or urgent. */
static int behind(const struct node *n)
{
    return n->attempts > 0 && !n->urgent;
}

/* Unlink and return the first due item that is not behind(), else the first due one, or
 * NULL with *next_due_ms set (INT64_MAX: none). */
static struct node *take_due_locked(prep_pool_t *p, int64_t now, int64_t *next_due_ms)
{
    struct node *prev = NULL, *pick = NULL, *pick_prev = NULL;

    *next_due_ms = INT64_MAX;
    for (struct node *n = p->head; n; prev = n, n = n->next) {
        if (n->due_ms > now) {
            if (n->due_ms < *next_due_ms)
                *next_due_ms = n->due_ms;
        } else if (!pick || (behind(pick) && !behind(n))) {
            pick = n;
            pick_prev = prev;
            if (!behind(n))
                break;
        }
    }
    if (!pick)
        return NULL;
    if (pick_prev)
        pick_prev->next = pick->next;
    else
        p->head = pick->next;
    if (p->tail == pick)
        p->tail = pick_prev;
    pick->next = NULL;
    p->st.queued--;
    return pick;
}

static void append_locked(prep_pool_t *p, struct node *n)
{
    n->next = NULL;
    if (p->tail)
        p->tail->next = n;
    else
        p->head = n;
    p->tail = n;
    p->st.queued++;
}

static void *worker(void *arg)
{
    prep_pool_t *p = arg;
    void *ctx = p->ops.ctx_create ? p->ops.ctx_create(p->ops.arg) : NULL;
    int64_t idle_since = prep_pool_now_ms();

    pthread_mutex_lock(&p->mu);
    p->st.idle++;
    while (!p->stopping) {
        int64_t now = prep_pool_now_ms(), next_due;
        struct node *n = take_due_locked(p, now, &next_due);

        if (!n) {
            int64_t idle_left = p->idle_exit_ms - (now - idle_since);
            if (idle_left <= 0 && p->st.threads > p->min)
                break;
            int64_t wait = idle_left > 0 ? idle_left : p->idle_exit_ms;
            if (next_due != INT64_MAX && next_due - now < wait)
                wait = next_due - now;
            struct timespec ts;
            abs_deadline(&ts, wait > 0 ? wait : 1);
            pthread_cond_timedwait(&p->work, &p->mu, &ts);
            continue;
        }
        p->st.idle--;
        if (n->attempts == 0 && now - n->queued_ms > p->st.max_wait_ms)
            p->st.max_wait_ms = now - n->queued_ms;
        maybe_grow_locked(p, now);
        pthread_mutex_unlock(&p->mu);

        int64_t due = 0;
        enum prep_outcome o = p->ops.handle(n->item, ctx, n->attempts, &due, p->ops.arg);

        pthread_mutex_lock(&p->mu);
        if (o == PREP_RETRY && !p->stopping) {
            n->attempts++;
            n->due_ms = due;
            p->st.retries++;
            append_locked(p, n);
            pthread_cond_signal(&p->work);
        } else {
            p->st.done++;
            if (p->ops.item_free)
                p->ops.item_free(n->item, p->ops.arg);
            free(n);
        }
        p->st.idle++;
        idle_since = prep_pool_now_ms();
    }
    p->st.idle--;
    p->st.threads--;
    pthread_mutex_unlock(&p->mu);
    if (p->ops.ctx_destroy)
        p->ops.ctx_destroy(ctx, p->ops.arg);
    pthread_mutex_lock(&p->mu);
    p->live--;
    pthread_cond_broadcast(&p->gone);
    pthread_mutex_unlock(&p->mu); /* the last touch of p */
    return NULL;
}

prep_pool_t *prep_pool_create(int min_threads, int max_threads, int grow_after_ms, int idle_exit_ms,
                              const prep_pool_ops_t *ops)
{
    prep_pool_t *p;
    pthread_condattr_t ca;

    if (min_threads < 1 || max_threads < min_threads || max_threads > 256 || !ops || !ops->handle ||
        grow_after_ms < 0 || idle_exit_ms < 1)
        return NULL;
    p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->ops = *ops;
    p->min = min_threads;
    p->max = max_threads;
    p->grow_after_ms = grow_after_ms;
    p->idle_exit_ms = idle_exit_ms;
    if (pthread_condattr_init(&ca) != 0) {
        free(p);
        return NULL;
    }
    /* Waits measure intervals: a wall-clock jump must not stretch or cut them. */
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, &ca);
    pthread_cond_init(&p->gone, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < min_threads; i++)
        (void)spawn_locked(p);
    int started = p->st.threads;
    pthread_mutex_unlock(&p->mu);
    if (started == 0) {
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->gone);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

int prep_pool_push(prep_pool_t *p, void *item)
{
    struct node *n = calloc(1, sizeof(*n));

    if (!n)
        return -1;
    n->item = item;
    n->urgent = p->ops.urgent ? p->ops.urgent(item, p->ops.arg) != 0 : 0;
    n->queued_ms = n->due_ms = prep_pool_now_ms();
    pthread_mutex_lock(&p->mu);
    if (p->stopping) {
        pthread_mutex_unlock(&p->mu);
        free(n);
        return -1;
    }
    append_locked(p, n);
    if (p->st.threads == 0 || (p->st.idle == 0 && p->st.threads < p->max && p->head != n &&
                               n->queued_ms - p->head->queued_ms >= p->grow_after_ms))
        (void)spawn_locked(p);
    else
        maybe_grow_locked(p, n->queued_ms);
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void prep_pool_stats(prep_pool_t *p, prep_pool_stats_t *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->st;
    pthread_mutex_unlock(&p->mu);
}

int prep_pool_destroy(prep_pool_t *p, int wait_ms)
{
    struct timespec ts;
    int left;

    if (!p)
        return 0;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->work);
    abs_deadline(&ts, wait_ms > 0 ? wait_ms : 0);
    while (p->live > 0) {
        if (pthread_cond_timedwait(&p->gone, &p->mu, &ts) == ETIMEDOUT)
            break;
    }
    left = p->live;
    struct node *n = p->head;
    p->head = p->tail = NULL;
    pthread_mutex_unlock(&p->mu);
    while (n) {
        struct node *next = n->next;
        if (p->ops.item_free)
            p->ops.item_free(n->item, p->ops.arg);
        free(n);
        n = next;
    }
    if (left > 0)
        return left; /* workers still hold p: leak it rather than free it under them */
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->gone);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return 0;
}
