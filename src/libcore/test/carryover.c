/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/carryover.c - doc/design.md §5.3 vectors: carryover, pushed limit, thresholds and
 * clearing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "libcore/carryover.h"

static const struct {
    int64_t base, prev, factor, total, carry;
} vectors[] = {
    {1000, 300, 500000, 1500, 500}, /* doc/design.md §5.3: unused 700, capped at 50% */
    {1000, 1400, 500000, 1000, 0},  /* overspent: no carry */
    {1000, 0, 500000, 1500, 500},   /* nothing used, factor 50% */
    {1000, 800, 500000, 1200, 200}, /* unused below the cap */
    {1000, 1000, 500000, 1000, 0},
    {1000, 0, 0, 1000, 0}, /* carryover off */
    {1000, 0, 1000000, 2000, 1000},
    {1000, 0, 2000000, 2000, 1000}, /* factor above 100%: still at most unused */
    {3, 0, 500000, 4, 1},           /* floor(1.5) = 1 */
    {0, 0, 500000, 0, 0},
    {INT64_MAX, 0, 0, INT64_MAX, 0},
};

static void test_total(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        int64_t total = -1, carry = -1;
        assert_int_equal(carryover_total_sumin(vectors[i].base, vectors[i].prev, vectors[i].factor,
                                               &total, &carry, NULL),
                         0);
        assert_int_equal(total, vectors[i].total);
        assert_int_equal(carry, vectors[i].carry);
    }
    int64_t total = 7;
    struct allot_error err = {0};
    assert_int_equal(carryover_total_sumin(1000, 0, 500000, NULL, NULL, &err), 0);
    assert_int_equal(carryover_total_sumin(-1, 0, 500000, &total, NULL, &err), -1);
    assert_int_equal(carryover_total_sumin(1, -1, 500000, &total, NULL, &err), -1);
    assert_int_equal(carryover_total_sumin(1, 0, -1, &total, NULL, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(carryover_total_sumin(INT64_MAX, 0, 500000, &total, NULL, &err), -1);
    assert_int_equal(total, 7);
}

/* Looking back exactly one period: a chain of months where each month's carry depends only
 * on the month before, never on older surpluses. */
static void test_one_period_back(void **state)
{
    (void)state;
    const int64_t base = 1000;
    const int64_t used[] = {0, 0, 0, 1500};
    const int64_t expect_total[] = {1000, 1500, 1500, 1500, 1000};
    int64_t prev_used = base; /* the month before the first counts as fully used */
    for (size_t i = 0; i < 5; i++) {
        int64_t total;
        assert_int_equal(carryover_total_sumin(base, prev_used, 500000, &total, NULL, NULL), 0);
        assert_int_equal(total, expect_total[i]);
        if (i < 4)
            prev_used = used[i];
    }
}

static void test_limit(void **state)
{
    (void)state;
    int64_t v = -1;
    struct allot_error err = {0};
    assert_int_equal(carryover_limit_tres_min(1500 * 60, 0, &v, NULL), 0);
    assert_int_equal(v, 90000); /* 1500 SU x 60, no grace */
    assert_int_equal(carryover_limit_tres_min(1500 * 60, 200000, &v, NULL), 0);
    assert_int_equal(v, 108000); /* x 1.2 */
    assert_int_equal(carryover_limit_tres_min(7, 200000, &v, NULL), 0);
    assert_int_equal(v, 8); /* floor(8.4) */
    v = 3;
    assert_int_equal(carryover_limit_tres_min(-1, 0, &v, &err), -1);
    assert_int_equal(carryover_limit_tres_min(1, -1, &v, &err), -1);
    assert_int_equal(carryover_limit_tres_min(INT64_MAX, 200000, &v, &err), -1);
    assert_int_equal(v, 3);
}

static void test_flags(void **state)
{
    (void)state;
    static const struct {
        int64_t used, total;
        unsigned flags;
    } v[] = {
        {0, 1000, 0},
        {799, 1000, 0},
        {800, 1000, CARRYOVER_NOTIFY},
        {999, 1000, CARRYOVER_NOTIFY},
        {1000, 1000, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE},
        {1199, 1000, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE},
        {1200, 1000, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE | CARRYOVER_PAUSE},
        {0, 0, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE | CARRYOVER_PAUSE},
        {INT64_MAX, INT64_MAX, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        unsigned f = 99;
        assert_int_equal(carryover_flags(v[i].used, v[i].total, NULL, &f, NULL), 0);
        assert_int_equal(f, v[i].flags);
    }
    /* Custom thresholds, grace 0: downscale and pause coincide. */
    struct carryover_thresholds th = {500000, 1000000, 0};
    unsigned f = 0;
    assert_int_equal(carryover_flags(1000, 1000, &th, &f, NULL), 0);
    assert_int_equal(f, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE | CARRYOVER_PAUSE);
    /* Clearing: usage drops (a refund, a new period) and the flags follow. */
    unsigned before = 0, after = 0, raised, cleared;
    assert_int_equal(carryover_flags(1250, 1000, NULL, &before, NULL), 0);
    assert_int_equal(carryover_flags(900, 1000, NULL, &after, NULL), 0);
    carryover_flags_diff(before, after, &raised, &cleared);
    assert_int_equal(raised, 0);
    assert_int_equal(cleared, CARRYOVER_DOWNSCALE | CARRYOVER_PAUSE);
    carryover_flags_diff(after, before, &raised, &cleared);
    assert_int_equal(raised, CARRYOVER_DOWNSCALE | CARRYOVER_PAUSE);
    assert_int_equal(cleared, 0);
    struct allot_error err = {0};
    f = 42;
    assert_int_equal(carryover_flags(-1, 1000, NULL, &f, &err), -1);
    assert_int_equal(carryover_flags(1, -1, NULL, &f, &err), -1);
    th.grace_ppm = -1;
    assert_int_equal(carryover_flags(1, 1, &th, &f, &err), -1);
    assert_int_equal(f, 42);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_total),
        cmocka_unit_test(test_one_period_back),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
