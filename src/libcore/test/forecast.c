/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/forecast.c - the exhaustion forecast on constructed ledgers whose answer is known
 * exactly: a constant burn, a step change, an idle allocation, one about to expire with
 * credit left, an exhausted one, a young one, refunds, the window's edges, bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/forecast.h"

#define D FORECAST_DAY_S
#define NOW 1800000000LL /* a Friday in 2027; any instant will do */

static void add(struct forecast_burn *b, enum ledger_kind kind, int64_t amount, int64_t t)
{
    struct ledger_entry e = {
        .id = 1, .alloc_id = 1, .kind = kind, .amount_sumin = amount, .time_s = t};
    assert_int_equal(forecast_burn_add(b, &e, NULL), 0);
}

/* 100 SU-minutes a day for 60 days, one debit an hour before each day's end. */
static void constant_history(struct forecast_burn *b)
{
    assert_int_equal(forecast_burn_init(b, NOW - 60 * D, NOW, FORECAST_WINDOW_DEFAULT, NULL), 0);
    add(b, LEDGER_CREDIT, 5000, NOW - 60 * D);
    for (int64_t i = 0; i < 60; i++) {
        add(b, LEDGER_HOLD, 400, NOW - i * D - 7200);
        add(b, LEDGER_DEBIT, 100, NOW - i * D - 3600);
        add(b, LEDGER_RELEASE, 400, NOW - i * D - 3600);
    }
}

static void test_constant(void **state)
{
    (void)state;
    struct forecast_burn b;
    struct forecast f;
    constant_history(&b);
    assert_int_equal(b.days, FORECAST_WINDOW_DEFAULT); /* 14 */
    assert_int_equal(forecast_compute(&b, 1000, NOW + 30 * D, &f, NULL), 0);
    assert_int_equal(f.rate_sumin, 100);
    assert_int_equal(f.rate_low_sumin, 100);
    assert_int_equal(f.rate_high_sumin, 100);
    assert_int_equal(f.exhaust_s, NOW + 10 * D); /* 1000 / 100 a day */
    assert_int_equal(f.exhaust_early_s, NOW + 10 * D);
    assert_int_equal(f.exhaust_late_s, NOW + 10 * D);
    assert_true(f.before_end);
    assert_int_equal(f.end_balance_sumin, 1000 - 30 * 100);
    assert_int_equal(f.end_balance_low_sumin, -2000);
    assert_int_equal(f.end_balance_high_sumin, -2000);
    assert_true(forecast_days_left(&f, NOW) == 10.0);
}

/* 100 a day for days 27..14, then 200 a day for days 13..0: weights 28..1 give
 * R = (200 (28 + ... + 15) + 100 (14 + ... + 1)) / 406 = 70700 / 406, and a two-valued
 * burn's weighted spread is 100 sqrt(p q), p = 301 / 406, q = 105 / 406. */
static void test_step(void **state)
{
    (void)state;
    struct forecast_burn b;
    struct forecast f;
    assert_int_equal(forecast_burn_init(&b, NOW - 90 * D, NOW, 28, NULL), 0);
    for (int64_t i = 0; i < 90; i++)
        add(&b, LEDGER_DEBIT, i < 14 ? 200 : 100, NOW - i * D - 1);
    assert_int_equal(forecast_compute(&b, 70700, NOW + 10 * D, &f, NULL), 0);
    assert_int_equal(f.rate_num, 70700);
    assert_int_equal(f.rate_den, 406);
    assert_int_equal(f.rate_sumin, 174);
    assert_int_equal(f.exhaust_s, NOW + 406 * D);
    /* Use over 10 days: 707000 / 406 = 1741.4..., rounded up. */
    assert_int_equal(f.end_balance_sumin, 70700 - 1742);
    double sigma = 100.0 * sqrt(301.0 * 105.0) / 406.0; /* 43.79 */
    double r = 70700.0 / 406.0;
    assert_int_equal(f.rate_low_sumin, (int64_t)floor(r - sigma));  /* 130 */
    assert_int_equal(f.rate_high_sumin, (int64_t)floor(r + sigma)); /* 217 */
    assert_int_equal(f.rate_low_sumin, 130);
    assert_int_equal(f.rate_high_sumin, 217);
    assert_int_equal(f.exhaust_early_s, NOW + (int64_t)floor(70700.0 * D / (r + sigma)));
    assert_int_equal(f.exhaust_late_s, NOW + (int64_t)floor(70700.0 * D / (r - sigma)));
    assert_true(f.exhaust_early_s < f.exhaust_s && f.exhaust_s < f.exhaust_late_s);
    assert_true(f.end_balance_low_sumin < f.end_balance_sumin &&
                f.end_balance_sumin < f.end_balance_high_sumin);
    /* The recent step weighs more than its half of the days: above the plain mean 150. */
    assert_true(f.rate_sumin > 150);
}

static void test_idle(void **state)
{
    (void)state;
    struct forecast_burn b;
    struct forecast f;
    assert_int_equal(forecast_burn_init(&b, NOW - 40 * D, NOW, 28, NULL), 0);
    add(&b, LEDGER_CREDIT, 6000, NOW - 40 * D);
    add(&b, LEDGER_DEBIT, 500, NOW - 35 * D); /* before the window */
    add(&b, LEDGER_HOLD, 300, NOW - 2 * D);   /* a job pending: its hold is not burn */
    assert_int_equal(forecast_compute(&b, 5200, NOW + 100 * D, &f, NULL), 0);
    assert_int_equal(f.rate_num, 0);
    assert_int_equal(f.rate_sumin, 0);
    assert_int_equal(f.exhaust_s, FORECAST_NEVER);
    assert_int_equal(f.exhaust_early_s, FORECAST_NEVER);
    assert_int_equal(f.exhaust_late_s, FORECAST_NEVER);
    assert_false(f.before_end);
    assert_int_equal(f.end_balance_sumin, 5200);
    assert_true(isinf(forecast_days_left(&f, NOW)));
}

/* 100 a day, 1000 left, the allocation ends in 2 days: it expires with 800 unused. */
static void test_expiring(void **state)
{
    (void)state;
    struct forecast_burn b;
    struct forecast f;
    constant_history(&b);
    assert_int_equal(forecast_compute(&b, 1000, NOW + 2 * D, &f, NULL), 0);
    assert_int_equal(f.exhaust_s, NOW + 10 * D);
    assert_false(f.before_end);
    assert_int_equal(f.end_balance_sumin, 800);
    /* Half a day left: 50 more, 950 expires; an end already past keeps the balance. */
    assert_int_equal(forecast_compute(&b, 1000, NOW + D / 2, &f, NULL), 0);
    assert_int_equal(f.end_balance_sumin, 950);
    assert_int_equal(forecast_compute(&b, 1000, NOW - 1, &f, NULL), 0);
    assert_int_equal(f.end_balance_sumin, 1000);
    assert_false(f.before_end);
}

static void test_exhausted(void **state)
{
    (void)state;
    struct forecast_burn b;
    struct forecast f;
    constant_history(&b);
    assert_int_equal(forecast_compute(&b, 0, NOW + 5 * D, &f, NULL), 0);
    assert_int_equal(f.exhaust_s, NOW);
    assert_int_equal(f.exhaust_early_s, NOW);
    assert_int_equal(f.exhaust_late_s, NOW);
    assert_true(f.before_end);
    assert_int_equal(f.end_balance_sumin, -500);
    assert_int_equal(forecast_compute(&b, -30, NOW + 5 * D, &f, NULL), 0);
    assert_int_equal(f.exhaust_s, NOW);
    assert_true(forecast_days_left(&f, NOW) == 0.0);
}

/* Six hours old with 50 used: 200 a day, from its one partial day. */
static void test_young(void **state)
{
    (void)state;
    struct forecast_burn b;
    struct forecast f;
    assert_int_equal(forecast_burn_init(&b, NOW - 6 * 3600, NOW, 28, NULL), 0);
    assert_int_equal(b.days, 0);
    add(&b, LEDGER_DEBIT, 50, NOW - 3600);
    add(&b, LEDGER_DEBIT, 9999, NOW - 6 * 3600); /* at the start: before its first second */
    assert_int_equal(forecast_compute(&b, 1000, NOW + 30 * D, &f, NULL), 0);
    assert_int_equal(f.rate_sumin, 200);
    assert_int_equal(f.exhaust_s, NOW + 5 * D);
    assert_int_equal(f.exhaust_early_s, NOW + 5 * D);
    /* Not started yet: no history, no burn. */
    assert_int_equal(forecast_burn_init(&b, NOW + D, NOW, 28, NULL), 0);
    assert_int_equal(forecast_compute(&b, 1000, NOW + 30 * D, &f, NULL), 0);
    assert_int_equal(f.exhaust_s, FORECAST_NEVER);
    assert_int_equal(f.end_balance_sumin, 1000);
    /* Three days old: three whole days, weights 3, 2, 1. */
    assert_int_equal(forecast_burn_init(&b, NOW - 3 * D - 5, NOW, 28, NULL), 0);
    assert_int_equal(b.days, 3);
    add(&b, LEDGER_DEBIT, 600, NOW - 1);   /* day 0 */
    add(&b, LEDGER_DEBIT, 7, NOW - 3 * D); /* the start's partial day: not counted */
    assert_int_equal(forecast_compute(&b, 1800, NOW + 30 * D, &f, NULL), 0);
    assert_int_equal(f.rate_num, 1800);
    assert_int_equal(f.rate_den, 6);
    assert_int_equal(f.exhaust_s, NOW + 6 * D); /* 1800 at 300 a day */
}

/* Refunds take burn off their day; the day's edges; net refunds burn nothing. */
static void test_refunds_and_edges(void **state)
{
    (void)state;
    struct forecast_burn b;
    struct forecast f;
    assert_int_equal(forecast_burn_init(&b, NOW - 100 * D, NOW, 2, NULL), 0);
    add(&b, LEDGER_DEBIT, 300, NOW - D + 1);  /* the first instant of day 0 */
    add(&b, LEDGER_REFUND, 100, NOW);         /* its last, now: 200 net */
    add(&b, LEDGER_DEBIT, 50, NOW - D);       /* the last instant of day 1 */
    add(&b, LEDGER_DEBIT, 1000, NOW - 2 * D); /* before the window */
    add(&b, LEDGER_DEBIT, 1000, NOW + 1);     /* after now: not yet history */
    assert_int_equal(b.day_sumin[0], 200);
    assert_int_equal(b.day_sumin[1], 50);
    assert_int_equal(forecast_compute(&b, 450, NOW + 30 * D, &f, NULL), 0);
    assert_int_equal(f.rate_num, 450); /* 2 x 200 + 1 x 50, over 3 */
    assert_int_equal(f.rate_den, 3);
    assert_int_equal(f.exhaust_s, NOW + 3 * D);
    /* A refund of an older charge above the window's debits: no burn, not a gain. */
    assert_int_equal(forecast_burn_init(&b, NOW - 100 * D, NOW, 2, NULL), 0);
    add(&b, LEDGER_REFUND, 500, NOW - 5);
    assert_int_equal(forecast_compute(&b, 450, NOW + 30 * D, &f, NULL), 0);
    assert_int_equal(f.rate_sumin, 0);
    assert_int_equal(f.exhaust_s, FORECAST_NEVER);
    assert_int_equal(f.end_balance_sumin, 450);
}

static void test_errors(void **state)
{
    (void)state;
    struct forecast_burn b;
    struct allot_error err;
    assert_int_equal(forecast_burn_init(&b, 0, NOW, 0, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(forecast_burn_init(&b, 0, NOW, FORECAST_WINDOW_MAX + 1, &err), -1);
    assert_int_equal(forecast_burn_init(&b, 0, NOW, FORECAST_WINDOW_MAX, &err), 0);
    struct ledger_entry e = {.kind = LEDGER_DEBIT, .amount_sumin = INT64_MAX, .time_s = NOW};
    assert_int_equal(forecast_burn_add(&b, &e, NULL), 0);
    e.amount_sumin = 1;
    assert_int_equal(forecast_burn_add(&b, &e, &err), -1);
    assert_int_equal(b.day_sumin[0], INT64_MAX); /* unchanged */
    /* INT64_MAX on the most recent of 366 days: the weighted sum leaves int64. */
    struct forecast f = {.rate_sumin = 42};
    assert_int_equal(forecast_compute(&b, 1000, NOW + D, &f, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(f.rate_sumin, 42);
    /* Huge balances stay exact or saturate, never wrap. */
    struct forecast_burn c;
    assert_int_equal(forecast_burn_init(&c, NOW - 30 * D, NOW, 1, NULL), 0);
    e.amount_sumin = 1;
    assert_int_equal(forecast_burn_add(&c, &e, NULL), 0);
    assert_int_equal(forecast_compute(&c, INT64_MAX, NOW + D, &f, NULL), 0);
    assert_int_equal(f.exhaust_s, FORECAST_NEVER);
    assert_int_equal(f.end_balance_sumin, INT64_MAX - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant),
        cmocka_unit_test(test_step),
        cmocka_unit_test(test_idle),
        cmocka_unit_test(test_expiring),
        cmocka_unit_test(test_exhausted),
        cmocka_unit_test(test_young),
        cmocka_unit_test(test_refunds_and_edges),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
