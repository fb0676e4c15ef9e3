/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_pool.c - tests of prep/allot's worker pool: every item handled once, retries come
 * back when due without blocking fresh items, a hold goes before settles' retries, the pool grows
 * under queue wait up to its maximum and shrinks back to its minimum when idle, destroy frees what
 * is left. Real threads; waits are bounded polls.
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
    int urgent;         /* a hold, for ops.urgent */
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

/* Handling order: order[k] = id of the k-th handling (retries included). */
static atomic_int order[256];
static atomic_int norder;

static enum prep_outcome handle(void *item, void *ctx, int attempt, int64_t *due_ms, void *arg)
{
    struct item *it = item;
    (void)ctx;
    (void)arg;
    int k = atomic_fetch_add(&norder, 1);
    if (k < 256)
        atomic_store(&order[k], it->id);
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

static int urgent(const void *item, void *arg)
{
    (void)arg;
    return ((const struct item *)item)->urgent;
}

static const prep_pool_ops_t ops = {.ctx_create = ctx_create,
                                    .ctx_destroy = ctx_destroy,
                                    .handle = handle,
                                    .item_free = item_free,
                                    .urgent = urgent};

static void reset(void)
{
    for (int i = 0; i < 256; i++)
        atomic_store(&handled[i], 0);
    atomic_store(&freed, 0);
    atomic_store(&ctx_made, 0);
    atomic_store(&ctx_gone, 0);
    atomic_store(&ctx_destroy_ms, 0);
    atomic_store(&norder, 0);
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

/* An allotd that hangs: settles (not urgent) fail slowly and come back as retries.  A hold
 * (urgent) pushed while those retries are due is taken before them, not after every one of
 * them; fresh items keep their arrival order (a settle that frees credit before a later
 * hold that needs it). */
static void test_hold_before_settle_retries(void **state)
{
    (void)state;
    reset();
    prep_pool_t *p = prep_pool_create(1, 1, 1000, 1000, &ops);
    assert_non_null(p);
    /* Settles 0-3: each handling takes 40 ms and the first two handlings fail (retry in
     * 30 ms), so from the second handling on, due retries are always waiting. */
    for (int i = 0; i < 4; i++)
        assert_int_equal(prep_pool_push(p, mk(i, 2, 40)), 0);
    for (int i = 0; i < 200 && atomic_load(&norder) < 6; i++)
        sleep_ms(5);
    assert_true(atomic_load(&norder) >= 6); /* every settle failed once: retries are due */
    struct item *hold = mk(10, 0, 0);
    hold->urgent = 1;
    struct item *late = mk(11, 0, 0); /* a fresh settle after the hold */
    int at = atomic_load(&norder);    /* handlings started before the hold was queued */
    assert_int_equal(prep_pool_push(p, hold), 0);
    assert_int_equal(prep_pool_push(p, late), 0);
    wait_done(p, 6);
    int n = atomic_load(&norder);
    int hold_at = -1, late_at = -1;
    for (int k = 0; k < n && k < 256; k++) {
        if (atomic_load(&order[k]) == 10)
            hold_at = k;
        if (atomic_load(&order[k]) == 11)
            late_at = k;
    }
    /* At most the one handling that may have started between reading `at` and the push
     * comes before the hold; in arrival order, three or more due retries would. */
    assert_true(hold_at >= at && hold_at <= at + 1);
    assert_int_equal(late_at, hold_at + 1);
    assert_int_equal(n, 4 * 3 + 2);
    assert_int_equal(prep_pool_destroy(p, 5000), 0);
}

/* Without urgency, fresh items go in arrival order, holds included. */
static void test_fresh_items_in_order(void **state)
{
    (void)state;
    reset();
    prep_pool_t *p = prep_pool_create(1, 1, 1000, 1000, &ops);
    assert_non_null(p);
    assert_int_equal(prep_pool_push(p, mk(0, 0, 50)), 0); /* keeps the worker busy */
    sleep_ms(10);
    for (int i = 1; i <= 6; i++) {
        struct item *it = mk(i, 0, 0);
        it->urgent = i % 2; /* holds and settles alternate */
        assert_int_equal(prep_pool_push(p, it), 0);
    }
    wait_done(p, 7);
    for (int k = 0; k <= 6; k++)
        assert_int_equal(atomic_load(&order[k]), k);
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
        cmocka_unit_test(test_hold_before_settle_retries),
        cmocka_unit_test(test_fresh_items_in_order),
        cmocka_unit_test(test_grows_and_shrinks),
        cmocka_unit_test(test_destroy_waits_for_contexts),
        cmocka_unit_test(test_destroy_frees_pending),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
