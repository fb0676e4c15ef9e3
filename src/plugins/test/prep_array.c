/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_array.c - tests of the shares a job array keeps (plugins/prep/allot/prep_array.h):
 * the first count is sent (allotd's hold is the baseline); a fall sends the new count,
 * a rise or the same count nothing; a bind in flight counts as a task that may start, so a
 * task whose start is being bound never loses its share; records of one token add up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "plugins/prep/allot/prep_array.h"

#define T1 ((int64_t)1 << 40)
#define T2 (((int64_t)1 << 40) + 1)

static prep_array_pass_t pass;

/* One pass with token T1 counted as the sum of COUNTS (n of them); returns releases made. */
static int one_pass(const uint32_t *counts, int n, prep_array_count_t *out)
{
    pass.n = 0;
    for (int i = 0; i < n; i++)
        assert_int_equal(prep_array_pass_add(&pass, T1, counts[i]), 0);
    return prep_array_decide(&pass, out, PREP_ARRAY_PASS_MAX);
}

static void test_baseline_then_falls(void **state)
{
    (void)state;
    prep_array_count_t out[PREP_ARRAY_PASS_MAX];
    prep_array_reset();
    assert_int_equal(one_pass((uint32_t[]){4}, 1, out), 1); /* first seen: 4 tasks */
    assert_int_equal(out[0].may_start, 4);
    assert_int_equal(one_pass((uint32_t[]){4}, 1, out), 0);
    assert_int_equal(one_pass((uint32_t[]){3}, 1, out), 1); /* one cancelled pending */
    assert_true(out[0].token == T1);
    assert_int_equal(out[0].may_start, 3);
    assert_int_equal(one_pass((uint32_t[]){3}, 1, out), 0);    /* sent once */
    assert_int_equal(one_pass((uint32_t[]){2, 1}, 2, out), 0); /* a task split off pending */
    assert_int_equal(one_pass((uint32_t[]){0, 0}, 2, out), 1); /* the array cancelled */
    assert_int_equal(out[0].may_start, 0);
    assert_int_equal(one_pass((uint32_t[]){0}, 1, out), 0);
}

static void test_inflight_bind_keeps_its_share(void **state)
{
    (void)state;
    prep_array_count_t out[PREP_ARRAY_PASS_MAX];
    prep_array_reset();
    assert_int_equal(one_pass((uint32_t[]){3}, 1, out), 1);
    /* Task starts: no longer pending, its bind not yet answered: still 3. */
    prep_array_inflight_add(T1, 77);
    assert_int_equal(one_pass((uint32_t[]){2, 0}, 2, out), 0);
    prep_array_inflight_done(T1, 77); /* bound: the share is taken by allotd */
    assert_int_equal(one_pass((uint32_t[]){2, 0}, 2, out), 1);
    assert_int_equal(out[0].may_start, 2);
    /* Another token's bind does not count for this one. */
    prep_array_inflight_add(T2, 78);
    assert_int_equal(one_pass((uint32_t[]){1}, 1, out), 1);
    assert_int_equal(out[0].may_start, 1);
    prep_array_inflight_done(T2, 78);
}

static void test_first_sight_sent(void **state)
{
    (void)state;
    prep_array_count_t out[PREP_ARRAY_PASS_MAX];
    prep_array_reset();
    pass.n = 0;
    assert_int_equal(prep_array_pass_add(&pass, T2, 0), 0);
    assert_int_equal(prep_array_pass_add(&pass, T1, 5), 0);
    assert_int_equal(prep_array_decide(&pass, out, PREP_ARRAY_PASS_MAX), 2);
    assert_true(out[0].token == T2);
    assert_int_equal(out[0].may_start, 0);
    assert_true(out[1].token == T1);
    assert_int_equal(out[1].may_start, 5);
    /* A full pass refuses more tokens; MAX bounds the releases. */
    pass.n = 0;
    for (int i = 0; i < PREP_ARRAY_PASS_MAX; i++)
        assert_int_equal(prep_array_pass_add(&pass, T1 + 100 + i, 0), 0);
    assert_int_equal(prep_array_pass_add(&pass, T1 + 99, 0), -1);
    assert_int_equal(prep_array_decide(&pass, out, 3), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline_then_falls),
        cmocka_unit_test(test_inflight_bind_keeps_its_share),
        cmocka_unit_test(test_first_sight_sent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
