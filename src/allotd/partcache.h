/* SPDX-License-Identifier: GPL-3.0-or-later */
/* partcache.h - partitions cached to price jobs without reading the database.
 *
 * An HTTP worker prices every hold from the job's partition (bank_cost).  On PostgreSQL
 * that lookup was one round trip per hold, ~15-20% of the machine's CPU under load
 * (bench/results/postgresql.md, 2026-11-22, 73b30bf); on SQLite a read transaction that, after each
 * group commit, reads its pages again (~5-7 us of allotd's CPU per hold, 2026-11-24, 03ea179).
 * The cache answers only while its watch thread watches partition changes on a connection
 * of its own (store_watch_partitions):
 *  - every change committed by anyone (this allotd, another one, psql or the sqlite3 shell)
 *    empties it when the watch learns of it: PostgreSQL notifies, SQLite is looked at every
 *    250 ms;
 *  - a change made through this allotd empties it before the client's reply too
 *    (partcache_changed), so that client's next job is priced the new way;
 *  - a lost watch connection turns the cache off (every lookup reads the database) until a
 *    new watch listens; it starts empty.
 * A lookup racing with a change may see the old partition, as it could before the cache:
 * the price is read outside the writer's transaction either way.
 * Threads: every function is thread-safe.
 */
#ifndef ALLOT_ALLOTD_PARTCACHE_H
#define ALLOT_ALLOTD_PARTCACHE_H

#include "libstore/store.h"

struct partcache;
struct metrics;

/* The cache and its watch thread (cfg and m are borrowed for the cache's life).  The
 * watch connects in the background: until it listens, lookups read the database.  NULL
 * with err (EINTERNAL) when the thread cannot start. */
struct partcache *partcache_start(const struct store_config *cfg, struct metrics *m,
                                  struct allot_error *err);
/* Stop the watch (at most one poll timeout) and free; NULL is a no-op. */
void partcache_stop(struct partcache *c);

/* store_partition_get through the cache: read with st (the caller's read connection) when
 * the cache cannot answer.  0, or -1 with err as store_partition_get. */
int partcache_get(struct partcache *c, store_t *st, const char *cluster, const char *name,
                  struct partition *out, struct allot_error *err);
/* A partition write by this process has committed: empty the cache now. */
void partcache_changed(struct partcache *c);
/* 1 while the watch listens (the cache may answer), else 0. */
int partcache_watching(struct partcache *c);

#endif
