/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * breaker.h - the Slurm plugins' circuit breaker in front of allotd (doc/slurm.md
 * "A hung allotd").
 *
 * Design: a request that allotd does not answer within PluginTimeoutMs costs its caller
 * the whole timeout; slurmctld calls job_submit serially, so N submissions queued behind a
 * hung allotd would wait N timeouts.  After one such timeout the breaker opens: for
 * PluginBreakerMs every caller is told to apply FailMode at once, without asking allotd.
 * When the window has passed, the next caller is let through as the probe (the only call
 * to allotd until it reports); its answer closes the breaker, another timeout opens it for
 * a new window.  A probe that never reports is replaced after probe_ms.  Only a call that
 * timed out (the caller measures it) opens the breaker: a refused connection (allotd
 * stopped) fails fast and costs nothing worth saving.
 * No Slurm headers: the unit test drives it with its own clock.
 * Threads: every function may be called from any thread; one mutex held for a few
 * instructions (prep/allot's workers share one breaker, job_submit/allot has its own).
 */
#ifndef ALLOT_PLUGINS_COMMON_BREAKER_H
#define ALLOT_PLUGINS_COMMON_BREAKER_H

#include <pthread.h>
#include <stdint.h>

enum breaker_state { BREAKER_CLOSED = 0, BREAKER_OPEN, BREAKER_PROBING };

/* What breaker_enter tells a caller. */
enum breaker_verdict {
    BREAKER_CALL = 0, /* breaker closed: ask allotd */
    BREAKER_PROBE,    /* the window passed: ask allotd, as the one probe */
    BREAKER_SKIP,     /* open: apply FailMode now, do not ask allotd */
};

/* A transition breaker_leave made, for the caller to log once. */
enum breaker_event { BREAKER_NONE = 0, BREAKER_OPENED, BREAKER_CLOSED_AGAIN };

typedef struct breaker {
    pthread_mutex_t mu;
    int64_t window_ms; /* PluginBreakerMs; 0 = never opens */
    int64_t probe_ms;  /* a probe older than this is given up */
    enum breaker_state state;
    int64_t until_ms;       /* OPEN: end of the window; PROBING: probe deadline */
    int64_t opened_at_ms;   /* when it last opened */
    uint64_t opens;         /* times it opened (closed -> open) */
    uint64_t skipped;       /* calls decided by FailMode while open, since it last opened */
    uint64_t skipped_total; /* ... since breaker_init */
} breaker_t;

/* Set up B (closed) with WINDOW_MS and PROBE_MS.  The mutex is static-initializable: B
 * may be a file-static initialized with BREAKER_INITIALIZER and set up later. */
#define BREAKER_INITIALIZER                                                                        \
    {                                                                                              \
        .mu = PTHREAD_MUTEX_INITIALIZER                                                            \
    }
void breaker_init(breaker_t *b, int64_t window_ms, int64_t probe_ms);

/* May this call ask allotd at NOW_MS?  BREAKER_SKIP counts the call as decided by
 * FailMode. */
enum breaker_verdict breaker_enter(breaker_t *b, int64_t now_ms);

/*
 * breaker_leave - report a call that breaker_enter let through (V: CALL or PROBE; SKIP is
 * ignored): HUNG = 1 when allotd did not answer within the timeout.  Returns the
 * transition made, if any: BREAKER_OPENED (a closed breaker opened; *SKIPPED untouched)
 * or BREAKER_CLOSED_AGAIN (*OPEN_MS = how long it was open, *SKIPPED = calls decided by
 * FailMode meanwhile).  A failed probe re-opens for a new window without an event.
 */
enum breaker_event breaker_leave(breaker_t *b, enum breaker_verdict v, int hung, int64_t now_ms,
                                 int64_t *open_ms, uint64_t *skipped);

/* Counters for a log line: times opened, calls decided by FailMode since breaker_init. */
void breaker_counts(breaker_t *b, uint64_t *opens, uint64_t *skipped_total);

/* Monotonic milliseconds (CLOCK_MONOTONIC). */
int64_t breaker_now_ms(void);

#endif
