/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/partcache.c - the partition cache (partcache.h) on SQLite (allotd_partcache: hits
 * counted in /metrics, changes seen within the watch's 250 ms poll) and on PostgreSQL
 * (allotd_partcache_pg, label pg):
 * while its watch listens it answers from memory -- a change made with the notification
 * trigger disabled stays unseen, which is how the test knows a lookup was a hit -- and it
 * drops what it holds on partcache_changed, on a committed change's notification, and when
 * the watch connection is lost (terminated by the server), before it answers again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "allotd/metrics.h"
#include "allotd/partcache.h"
#include "libstore/test/store_test_pg.h"

struct fixture {
    char dir[64];
    char path[128];
    struct store_config cfg;
    struct metrics *m;
    char pg_schema[64];
    char pg_conninfo[1024];
    char app[64]; /* PostgreSQL: application_name of this fixture's connections */
    store_t *st;  /* the caller's read connection */
};

static void set_weights(struct fixture *fx, const char *w)
{
    struct allot_error err = {0};
    store_t *st = store_open(&fx->cfg, &err);
    assert_non_null(st);
    struct partition p;
    assert_int_equal(store_partition_get(st, "c1", "batch", &p, &err), 0);
    snprintf(p.billing_weights, sizeof(p.billing_weights), "%s", w);
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(store_partition_modify(st, &p, &err), 0);
    assert_int_equal(store_commit(st, &err), 0);
    store_close(st);
}

/* PostgreSQL: change the weights without the notification (trigger off for the update). */
static void set_weights_silently(struct fixture *fx, const char *w)
{
    char sql[256];
    snprintf(sql, sizeof(sql),
             "BEGIN; ALTER TABLE partitions DISABLE TRIGGER partitions_changed; "
             "UPDATE partitions SET billing_weights = '%s'; "
             "ALTER TABLE partitions ENABLE TRIGGER partitions_changed; COMMIT",
             w);
    assert_int_equal(fx_pg_exec(fx->pg_conninfo, sql), 0);
}

static const char *weights(struct fixture *fx, struct partcache *c)
{
    static struct partition p;
    struct allot_error err = {0};
    assert_int_equal(partcache_get(c, fx->st, "c1", "batch", &p, &err), 0);
    return p.billing_weights;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Wait up to ms for partcache_watching(c) == want; returns whether it got there. */
static int wait_watching(struct partcache *c, int want, int ms)
{
    for (int i = 0; i < ms; i++) {
        if (partcache_watching(c) == want)
            return 1;
        sleep_ms(1);
    }
    return partcache_watching(c) == want;
}

/* Wait up to ms for lookups to answer billing weights want; returns whether they did. */
static int wait_weights(struct fixture *fx, struct partcache *c, const char *want, int ms)
{
    for (int i = 0; i < ms; i++) {
        if (strcmp(weights(fx, c), want) == 0)
            return 1;
        sleep_ms(1);
    }
    return strcmp(weights(fx, c), want) == 0;
}

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/allotd-partcache-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    snprintf(fx->path, sizeof(fx->path), "%s/p.sqlite", fx->dir);
    fx->cfg = (struct store_config){.backend = "sqlite", .target = fx->path, .durable = 1};
    if (fx_pg_base()) {
        char conninfo[900];
        fx_pg_create(fx->pg_schema, sizeof(fx->pg_schema), conninfo, sizeof(conninfo));
        snprintf(fx->app, sizeof(fx->app), "partcache_t%ld", (long)getpid());
        snprintf(fx->pg_conninfo, sizeof(fx->pg_conninfo), "%s application_name=%s", conninfo,
                 fx->app);
        fx->cfg.backend = "pg";
        fx->cfg.target = fx->pg_conninfo;
    }
    struct allot_error err = {0};
    store_t *st = store_open(&fx->cfg, &err);
    assert_non_null(st);
    assert_int_equal(store_upgrade(st, &err), 0);
    struct partition p;
    memset(&p, 0, sizeof(p));
    snprintf(p.cluster, sizeof(p.cluster), "c1");
    snprintf(p.name, sizeof(p.name), "batch");
    snprintf(p.resource, sizeof(p.resource), "cpu");
    snprintf(p.billing_weights, sizeof(p.billing_weights), "CPU=1");
    p.default_time_s = -1;
    p.max_time_s = -1;
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(store_cluster_add(st, "c1", &err), 0);
    assert_int_equal(store_partition_add(st, &p, &err), 0);
    assert_int_equal(store_commit(st, &err), 0);
    fx->st = st;
    fx->m = metrics_create();
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    store_close(fx->st);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", fx->dir);
    if (fx->pg_schema[0])
        fx_pg_drop(fx->pg_schema);
    metrics_destroy(fx->m);
    free(fx);
    return 0;
}

/* Partition lookups the cache answered (hits), from /metrics. */
static long hits(struct fixture *fx)
{
    char *buf = NULL;
    size_t len = 0;
    metrics_render(fx->m, 0, NULL, 0, &buf, &len);
    assert_non_null(buf);
    const char *key = "allot_partition_lookups_total{result=\"hit\"} ";
    const char *at = strstr(buf, key);
    assert_non_null(at);
    long n = strtol(at + strlen(key), NULL, 10);
    free(buf);
    return n;
}

/* SQLite: the watch looks at the table every 250 ms.  Lookups are answered from memory
 * (hits), a change through this process is seen at once (partcache_changed), and a change
 * committed by another connection without telling the cache is seen within a few polls. */
static void test_sqlite_cache_and_drops(void **state)
{
    struct fixture *fx = *state;
    if (fx_pg_base())
        skip();
    struct allot_error err = {0};
    struct partcache *c = partcache_start(&fx->cfg, fx->m, &err);
    assert_non_null(c);
    assert_true(wait_watching(c, 1, 10000));

    long h0 = hits(fx);
    assert_string_equal(weights(fx, c), "CPU=1");
    assert_string_equal(weights(fx, c), "CPU=1");
    assert_string_equal(weights(fx, c), "CPU=1");
    assert_true(hits(fx) >= h0 + 2);

    set_weights(fx, "CPU=2");
    partcache_changed(c);
    assert_string_equal(weights(fx, c), "CPU=2");

    set_weights(fx, "CPU=3"); /* another connection; the cache is not told */
    assert_true(wait_weights(fx, c, "CPU=3", 5000));
    long h1 = hits(fx);
    assert_string_equal(weights(fx, c), "CPU=3");
    assert_true(hits(fx) > h1); /* cached again after the drop */

    /* Stopping takes at most one poll of the watch. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    partcache_stop(c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 3);
}

static void test_pg_cache_and_drops(void **state)
{
    struct fixture *fx = *state;
    if (!fx_pg_base())
        skip();
    struct allot_error err = {0};
    struct partcache *c = partcache_start(&fx->cfg, fx->m, &err);
    assert_non_null(c);
    assert_true(wait_watching(c, 1, 10000));

    /* Served from memory: a change the watch is not told of stays unseen... */
    assert_string_equal(weights(fx, c), "CPU=1");
    set_weights_silently(fx, "CPU=2");
    assert_string_equal(weights(fx, c), "CPU=1");
    /* ...until this process says it changed partitions. */
    partcache_changed(c);
    assert_string_equal(weights(fx, c), "CPU=2");

    /* A change committed elsewhere, with its notification: seen once it arrives. */
    set_weights(fx, "CPU=3");
    assert_true(wait_weights(fx, c, "CPU=3", 5000));

    /* The watch connection is lost after a change it was not told of: the cache stops
     * answering, and a new watch starts empty. */
    assert_string_equal(weights(fx, c), "CPU=3");
    set_weights_silently(fx, "CPU=4");
    assert_string_equal(weights(fx, c), "CPU=3");
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
             "WHERE application_name = '%s' AND query LIKE 'LISTEN%%'",
             fx->app);
    assert_int_equal(fx_pg_exec(fx->pg_conninfo, sql), 0);
    assert_true(wait_watching(c, 0, 5000));
    assert_string_equal(weights(fx, c), "CPU=4"); /* read from the database */
    assert_true(wait_watching(c, 1, 10000));
    assert_string_equal(weights(fx, c), "CPU=4");

    /* Stopping takes at most one poll of the watch. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    partcache_stop(c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sqlite_cache_and_drops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pg_cache_and_drops, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
