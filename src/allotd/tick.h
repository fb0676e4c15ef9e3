/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tick.h - the period/policy clock of allotd (doc/design.md §5): a thread that, every interval,
 * evaluates every policy through the writer (one write op per policy, so each boundary is
 * one transaction of the group commit), and the zone offset used for period strings.
 *
 * Zone: tick_start sets TZ to the configured zone once (before other threads read it) and
 * tick_utc_offset_s answers with localtime_r's tm_gmtoff, so a period boundary is local
 * midnight there.  Threads: tick_* from the main thread; the callback from any thread.
 */
#ifndef ALLOT_ALLOTD_TICK_H
#define ALLOT_ALLOTD_TICK_H

#include <stdint.h>

#include "allot/error.h"
#include "libcore/period.h"
#include "libstore/store.h"

struct allotd;
struct tick;

/* The zone callback for struct period_tz (arg unused). */
int64_t tick_utc_offset_s(int64_t utc_s, void *arg);
/* The process's period zone (TZ set by tick_start). */
const struct period_tz *tick_zone(void);

/* Evaluate every policy once at now_s through d's writer; returns the number evaluated
 * (boundaries rolled counted into *rolled when non-NULL) or -1 with err (first failure;
 * the other policies are still evaluated). */
int tick_run_once(struct allotd *d, int64_t now_s, int *rolled, struct allot_error *err);

/* Thresholds on each settle and credit (doc/design.md §5.5): called inside the writer's transaction
 * by a write that changed allocation alloc_id's money.  When the allocation has a policy,
 * evaluates it at now_s in a nested savepoint (only its period boundary when boundary_only),
 * so the flags and any downscale/pause commands commit with the write that caused them.
 * `by` ("settle", "credit") is the evaluation's actor and the log's by=.  A failing
 * evaluation is logged and rolled back and never fails the write (the next tick evaluates
 * again).  Threads: the writer's. */
void tick_after_write(store_t *st, int64_t alloc_id, int64_t now_s, const char *by,
                      int boundary_only);

/* Start the thread (interval_s >= 1) with zone ("" = UTC).  NULL with err on failure. */
struct tick *tick_start(struct allotd *d, const char *zone, int interval_s,
                        struct allot_error *err);
/* Stop and free; waits for a running pass to finish.  NULL is a no-op. */
void tick_stop(struct tick *t);

#endif
