/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_pool.c - tests of prep/allot's worker pool: every item handled once, retries come
 * back when due without blocking fresh items, the pool grows under queue wait up to its
 * maximum and shrinks back to its minimum when idle, destroy frees what is left.
 * Real threads; waits are bounded polls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "plugins/prep/allot/prep_pool.h"

struct item {
    int id;
    int retries_wanted; /* PREP_RETRY this many times first */
    int sleep_ms;       /* work time per handling */
};

static atomic_int handled[256];
static atomic_int freed, ctx_made, ctx_gone;
static atomic_int ctx_destroy_ms; /* a slow context teardown, to catch destroy returning early */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void *ctx_create(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ctx_made, 1);
    return NULL;
}

static void ctx_destroy(void *ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    if (atomic_load(&ctx_destroy_ms))
        sleep_ms(atomic_load(&ctx_destroy_ms));
    atomic_fetch_add(&ctx_gone, 1);
}

static enum prep_outcome handle(void *item, void *ctx, int attempt, int64_t *due_ms, void *arg)
{
    struct item *it = item;
    (void)ctx;
    (void)arg;
    if (it->sleep_ms)
        sleep_ms(it->sleep_ms);
    if (attempt < it->retries_wanted) {
        *due_ms = prep_pool_now_ms() + 30;
        return PREP_RETRY;
    }
    atomic_fetch_add(&handled[it->id], 1);
    return PREP_DONE;
}

static void item_free(void *item, void *arg)
{
    (void)arg;
    atomic_fetch_add(&freed, 1);
    free(item);
}

static const prep_pool_ops_t ops = {ctx_create, ctx_destroy, handle, item_free, NULL};

static void reset(void)
{
    for (int i = 0; i < 256; i++)
        atomic_store(&handled[i], 0);
    atomic_store(&freed, 0);
    atomic_store(&ctx_made, 0);
    atomic_store(&ctx_gone, 0);
    atomic_store(&ctx_destroy_ms, 0);
}

static struct item *mk(int id, int retries, int ms)
{
    struct item *it = calloc(1, sizeof(*it));
    assert_non_null(it);
    it->id = id;
    it->retries_wanted = retries;
    it->sleep_ms = ms;
    return it;
}

/* Poll until done == n or 10 s pass. */
static void wait_done(prep_pool_t *p, int64_t n)
{
    prep_pool_stats_t st;
    for (int i = 0; i < 1000; i++) {
        prep_pool_stats(p, &st);
        if (st.done >= n)
            return;
        sleep_ms(10);
    }
    fail_msg("only %lld of %lld items done", (long long)st.done, (long long)n);
}

static void test_each_item_once(void **state)
{
    (void)state;
    reset();
    prep_pool_t *p = prep_pool_create(2, 4, 20, 1000, &ops);
    assert_non_null(p);
    for (int i = 0; i < 200; i++)
        assert_int_equal(prep_pool_push(p, mk(i, 0, 0)), 0);
    wait_done(p, 200);
    for (int i = 0; i < 200; i++)
        assert_int_equal(atomic_load(&handled[i]), 1);
    assert_int_equal(prep_pool_destroy(p, 5000), 0);
    assert_int_equal(atomic_load(&freed), 200);
    assert_int_equal(atomic_load(&ctx_made), atomic_load(&ctx_gone));
}

static void test_retry_does_not_block(void **state)
{
    (void)state;
    reset();
    prep_pool_t *p = prep_pool_create(1, 1, 20, 1000, &ops);
    assert_non_null(p);
    assert_int_equal(prep_pool_push(p, mk(0, 3, 0)), 0); /* comes back three times */
    for (int i = 1; i < 20; i++)
        assert_int_equal(prep_pool_push(p, mk(i, 0, 0)), 0);
    wait_done(p, 20);
    prep_pool_stats_t st;
    prep_pool_stats(p, &st);
    assert_int_equal(st.retries, 3);
    for (int i = 0; i < 20; i++)
        assert_int_equal(atomic_load(&handled[i]), 1);
    assert_int_equal(prep_pool_destroy(p, 5000), 0);
}

static void test_grows_and_shrinks(void **state)
{
    (void)state;
    reset();
    prep_pool_t *p = prep_pool_create(1, 4, 10, 200, &ops);
    assert_non_null(p);
    for (int i = 0; i < 40; i++)
        assert_int_equal(prep_pool_push(p, mk(i, 0, 20)), 0);
    wait_done(p, 40);
    prep_pool_stats_t st;
    prep_pool_stats(p, &st);
    assert_true(st.peak_threads > 1);
    assert_true(st.peak_threads <= 4);
    /* Idle workers above the minimum leave after 200 ms. */
    for (int i = 0; i < 300; i++) {
        prep_pool_stats(p, &st);
        if (st.threads == 1)
            break;
        sleep_ms(10);
    }
    assert_int_equal(st.threads, 1);
    assert_int_equal(prep_pool_destroy(p, 5000), 0);
    assert_int_equal(atomic_load(&ctx_made), atomic_load(&ctx_gone));
}

/* prep_pool_destroy returns only after every worker destroyed its context: a worker that
 * touched the pool after that would use freed memory. */
static void test_destroy_waits_for_contexts(void **state)
{
    (void)state;
    reset();
    prep_pool_t *p = prep_pool_create(3, 3, 10, 1000, &ops);
    assert_non_null(p);
    for (int i = 0; i < 6; i++)
        assert_int_equal(prep_pool_push(p, mk(i, 0, 0)), 0);
    wait_done(p, 6);
    atomic_store(&ctx_destroy_ms, 100);
    assert_int_equal(prep_pool_destroy(p, 5000), 0);
    assert_int_equal(atomic_load(&ctx_made), 3);
    assert_int_equal(atomic_load(&ctx_gone), 3);
}

static void test_destroy_frees_pending(void **state)
{
    (void)state;
    reset();
    prep_pool_t *p = prep_pool_create(1, 1, 1000, 1000, &ops);
    assert_non_null(p);
    /* Retried far in the future: still queued at destroy. */
    assert_int_equal(prep_pool_push(p, mk(0, 1000000, 0)), 0);
    sleep_ms(50);
    assert_int_equal(prep_pool_destroy(p, 5000), 0);
    assert_int_equal(atomic_load(&freed), 1);
    assert_int_equal(atomic_load(&handled[0]), 0);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    assert_null(prep_pool_create(0, 1, 10, 10, &ops));
    assert_null(prep_pool_create(2, 1, 10, 10, &ops));
    assert_null(prep_pool_create(1, 257, 10, 10, &ops));
    assert_null(prep_pool_create(1, 1, 10, 0, &ops));
    assert_int_equal(prep_pool_destroy(NULL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_item_once),
        cmocka_unit_test(test_retry_does_not_block),
        cmocka_unit_test(test_grows_and_shrinks),
        cmocka_unit_test(test_destroy_waits_for_contexts),
        cmocka_unit_test(test_destroy_frees_pending),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
