/* SPDX-License-Identifier: GPL-3.0-or-later */
/* metrics.h - counters for /metrics (Prometheus text format), updated with atomics on the
 * hot path so no request ever takes a lock to be counted.
 *
 * Kept: requests by route and status, a latency histogram for hold and settle, group-commit
 * batch sizes and failures; at scrape time also the writer queue depth and each
 * allocation's available SU (read from the store by the scraping thread).
 * Threads: every function is thread-safe.
 */
#ifndef ALLOT_ALLOTD_METRICS_H
#define ALLOT_ALLOTD_METRICS_H

#include <stdint.h>
#include <time.h>

#include "libstore/store.h"

struct metrics;

/* Monotonic microseconds: what every duration counted here is measured with. */
static inline int64_t metrics_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct metrics *metrics_create(void);
void metrics_destroy(struct metrics *m); /* NULL is a no-op */

/* One finished request: route index (routes.h; -1 = no route), HTTP status, latency.
 * hot: 1 for hold/settle (latency histogram). */
void metrics_request(struct metrics *m, int route, int status, int64_t latency_us, int hot);
/* One group commit of n ops; ok = 0 when the commit failed.  run_us and commit_us: the
 * writer's time running the ops and committing them. */
void metrics_batch(struct metrics *m, int n, int ok, int64_t run_us, int64_t commit_us);
/* One pass of a completer: sync_us flushing committed batches to disk, complete_us
 * completing their ops (waking their connections). */
void metrics_flush(struct metrics *m, int64_t sync_us, int64_t complete_us);

/* One partition lookup to price a job: hit = 1 when allotd's cache answered (partcache.h). */
void metrics_partition_lookup(struct metrics *m, int hit);
/* The cache of partitions was emptied (a change was seen, or the watch went up or down);
 * watching = 1 while the watch runs, i.e. while the cache may answer. */
void metrics_partition_cache(struct metrics *m, int watching);

/* Append the exposition text to *buf (xrealloc'd; the caller frees).  queue_depth is the
 * writer's; st (may be NULL) is read for the sync drifts and, when accounts is 1, for the
 * balance of each allocation (labelled by account: only for callers who may read every
 * account, api_metrics). */
void metrics_render(struct metrics *m, long queue_depth, store_t *st, int accounts, char **buf,
                    size_t *len);

#endif
