/* SPDX-License-Identifier: GPL-3.0-or-later */
/* breaker.c - circuit breaker in front of allotd for the Slurm plugins (breaker.h). */
#include "plugins/common/breaker.h"

#include <time.h>

void breaker_init(breaker_t *b, int64_t window_ms, int64_t probe_ms)
{
    pthread_mutex_lock(&b->mu);
    b->window_ms = window_ms > 0 ? window_ms : 0;
    b->probe_ms = probe_ms > 0 ? probe_ms : 1;
    b->state = BREAKER_CLOSED;
    b->until_ms = b->opened_at_ms = 0;
    b->opens = b->skipped = b->skipped_total = 0;
    pthread_mutex_unlock(&b->mu);
}

enum breaker_verdict breaker_enter(breaker_t *b, int64_t now_ms)
{
    enum breaker_verdict v = BREAKER_CALL;

    pthread_mutex_lock(&b->mu);
    if (b->state != BREAKER_CLOSED) {
        if (now_ms < b->until_ms) {
            v = BREAKER_SKIP;
            b->skipped++;
            b->skipped_total++;
        } else {
            /* The window passed, or the probe in flight is overdue: this call probes. */
            v = BREAKER_PROBE;
            b->state = BREAKER_PROBING;
            b->until_ms = now_ms + b->probe_ms;
        }
    }
    pthread_mutex_unlock(&b->mu);
    return v;
}

enum breaker_event breaker_leave(breaker_t *b, enum breaker_verdict v, int hung, int64_t now_ms,
                                 int64_t *open_ms, uint64_t *skipped)
{
    enum breaker_event ev = BREAKER_NONE;

    if (v == BREAKER_SKIP)
        return ev;
    pthread_mutex_lock(&b->mu);
    if (hung) {
        if (b->window_ms > 0 && b->state == BREAKER_CLOSED) {
            b->state = BREAKER_OPEN;
            b->until_ms = now_ms + b->window_ms;
            b->opened_at_ms = now_ms;
            b->opens++;
            b->skipped = 0;
            ev = BREAKER_OPENED;
        } else if (b->state != BREAKER_CLOSED && v == BREAKER_PROBE) {
            b->state = BREAKER_OPEN; /* the probe timed out too: a new window */
            b->until_ms = now_ms + b->window_ms;
        }
        /* A call let through before the breaker opened, timing out now: already open. */
    } else if (b->state != BREAKER_CLOSED) {
        /* Any answer (the probe's, or a late one of a call let through before the breaker
         * opened) shows allotd answering again. */
        b->state = BREAKER_CLOSED;
        if (open_ms)
            *open_ms = now_ms - b->opened_at_ms;
        if (skipped)
            *skipped = b->skipped;
        ev = BREAKER_CLOSED_AGAIN;
    }
    pthread_mutex_unlock(&b->mu);
    return ev;
}

void breaker_counts(breaker_t *b, uint64_t *opens, uint64_t *skipped_total)
{
    pthread_mutex_lock(&b->mu);
    *opens = b->opens;
    *skipped_total = b->skipped_total;
    pthread_mutex_unlock(&b->mu);
}

int64_t breaker_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
