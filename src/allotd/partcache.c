/* SPDX-License-Identifier: GPL-3.0-or-later */
/* partcache.c - the partition cache and its watch thread (partcache.h).
 *
 * Correctness rests on one rule: an entry is stored only when no drop happened between
 * reading the generation and reading the database (gen unchanged), and only while the
 * watch listens.  A change committed before the lookup's read is then either in what it
 * read or followed by a drop that refuses the entry.  The watch drops the cache after its
 * LISTEN takes effect, so changes made before the watch began are never served stale.
 */
#include "allotd/partcache.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allotd/metrics.h"
#include "libutil/log.h"
#include "libutil/xalloc.h"

#define PARTCACHE_SLOTS 64 /* partitions cached; more are read from the database */
#define WATCH_POLL_MS 1000
#define WATCH_RETRY_MIN_MS 100
#define WATCH_RETRY_MAX_MS 5000

struct partcache {
    struct store_config cfg;
    struct metrics *m;
    pthread_mutex_t lock; /* guards everything below but the thread fields; a leaf lock */
    uint64_t gen;         /* bumped by every drop */
    int live;             /* the watch listens: entries may be stored and served */
    int nused;
    struct partition slot[PARTCACHE_SLOTS];
    atomic_int stopping;
    int wake[2]; /* partcache_stop writes to wake[1]; the watch polls wake[0] */
    pthread_t thread;
    int started;
};

/* Empty the cache and set whether it may answer (-1: unchanged). */
static void drop(struct partcache *c, int live)
{
    pthread_mutex_lock(&c->lock);
    c->gen++;
    c->nused = 0;
    if (live >= 0)
        c->live = live;
    int now = c->live;
    pthread_mutex_unlock(&c->lock);
    metrics_partition_cache(c->m, now);
}

void partcache_changed(struct partcache *c)
{
    drop(c, -1);
}

int partcache_watching(struct partcache *c)
{
    pthread_mutex_lock(&c->lock);
    int live = c->live;
    pthread_mutex_unlock(&c->lock);
    return live;
}

int partcache_get(struct partcache *c, store_t *st, const char *cluster, const char *name,
                  struct partition *out, struct allot_error *err)
{
    pthread_mutex_lock(&c->lock);
    uint64_t gen = c->gen;
    if (c->live) {
        for (int i = 0; i < c->nused; i++) {
            const struct partition *p = &c->slot[i];
            if (strcmp(p->name, name) == 0 && strcmp(p->cluster, cluster) == 0) {
                *out = *p;
                pthread_mutex_unlock(&c->lock);
                metrics_partition_lookup(c->m, 1);
                return 0;
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    metrics_partition_lookup(c->m, 0);
    if (store_partition_get(st, cluster, name, out, err) < 0)
        return -1;
    pthread_mutex_lock(&c->lock);
    if (c->live && c->gen == gen && c->nused < PARTCACHE_SLOTS)
        c->slot[c->nused++] = *out;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

/* Sleep ms, or less when partcache_stop wakes us. */
static void nap(struct partcache *c, int ms)
{
    struct pollfd p = {.fd = c->wake[0], .events = POLLIN};
    while (poll(&p, 1, ms) < 0 && errno == EINTR && !atomic_load(&c->stopping))
        ;
}

/* One watch: connect, listen, drop on each change until the connection is lost.
 * Returns 1 when it listened (the next attempt may come at once), 0 when it never did. */
static int watch_once(struct partcache *c, int *quiet)
{
    struct allot_error err = {0};
    store_t *st = store_open(&c->cfg, &err);
    if (!st || store_watch_partitions(st, &err) < 0) {
        if (!*quiet)
            log_warn("msg=\"partition watch not listening (retrying); partitions are read "
                     "from the database meanwhile\" error=\"%s\"",
                     err.msg);
        *quiet = 1; /* one line per outage, not one per retry */
        store_close(st);
        return 0;
    }
    log_info("msg=\"partition watch listening: jobs are priced from the partition cache\"");
    drop(c, 1); /* after LISTEN: what changed before is not served from the cache */
    *quiet = 0;
    int rc;
    while ((rc = store_wait_partitions(st, c->wake[0], WATCH_POLL_MS, &err)) >= 0 &&
           !atomic_load(&c->stopping))
        if (rc > 0)
            drop(c, 1);
    drop(c, 0);
    if (rc < 0) {
        log_warn("msg=\"partition watch lost; partitions are read from the database until it "
                 "listens again\" error=\"%s\"",
                 err.msg);
        *quiet = 1;
    }
    store_close(st);
    return 1;
}

static void *watch_main(void *arg)
{
    struct partcache *c = arg;
    int retry_ms = WATCH_RETRY_MIN_MS, quiet = 0;
    while (!atomic_load(&c->stopping)) {
        if (watch_once(c, &quiet))
            retry_ms = WATCH_RETRY_MIN_MS;
        else if (retry_ms < WATCH_RETRY_MAX_MS)
            retry_ms *= 2;
        if (!atomic_load(&c->stopping))
            nap(c, retry_ms);
    }
    return NULL;
}

struct partcache *partcache_start(const struct store_config *cfg, struct metrics *m,
                                  struct allot_error *err)
{
    struct partcache *c = xcalloc(1, sizeof(*c));
    c->cfg = *cfg;
    c->m = m;
    c->wake[0] = c->wake[1] = -1;
    pthread_mutex_init(&c->lock, NULL);
    if (pipe(c->wake) < 0) {
        allot_errorf(err, ALLOT_EINTERNAL, "partition watch: pipe: %s", strerror(errno));
        partcache_stop(c);
        return NULL;
    }
    int rc = pthread_create(&c->thread, NULL, watch_main, c);
    if (rc != 0) {
        allot_errorf(err, ALLOT_EINTERNAL, "partition watch: pthread_create: %s", strerror(rc));
        partcache_stop(c);
        return NULL;
    }
    c->started = 1;
    return c;
}

void partcache_stop(struct partcache *c)
{
    if (!c)
        return;
    if (c->started) {
        atomic_store(&c->stopping, 1);
        char b = 1;
        while (write(c->wake[1], &b, 1) < 0 && errno == EINTR)
            ;
        pthread_join(c->thread, NULL);
    }
    for (int i = 0; i < 2; i++)
        if (c->wake[i] >= 0)
            close(c->wake[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
