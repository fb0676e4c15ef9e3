/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/sitefactor.c - HADM site factor: endpoints, monotonicity, l -> 0, vectors, scaling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "libcore/sitefactor.h"

/* The paper's formula evaluated directly in long double, for moderate l only. */
static double direct(double x, double l, double x0)
{
    long double a = expl((long double)l * x) - 1.0L;
    long double b = expl((long double)l) + expl((long double)l * x0);
    long double c = expl((long double)l) - 1.0L;
    long double d = expl((long double)l * x) + expl((long double)l * x0);
    return (double)((a * b) / (c * d));
}

static const double rates[] = {-30, -5, -1, -1e-3, 1e-3, 0.5, 1, 5, 50, 700, 1e4};
static const double mids[] = {0, 0.25, 0.5, 0.75, 1};

static void test_endpoints_monotone(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        for (size_t j = 0; j < sizeof(mids) / sizeof(mids[0]); j++) {
            double l = rates[i], x0 = mids[j];
            assert_true(fabs(sitefactor_sigmoid(0, l, x0)) < 1e-12);
            assert_true(fabs(sitefactor_sigmoid(1, l, x0) - 1) < 1e-12);
            double prev = 0;
            for (int k = 0; k <= 100; k++) {
                double s = sitefactor_sigmoid(k / 100.0, l, x0);
                assert_true(s >= prev - 1e-12);
                assert_true(s >= 0 && s <= 1);
                prev = s;
            }
        }
    }
}

static void test_linear_limit(void **state)
{
    (void)state;
    for (int k = 0; k <= 10; k++) {
        double x = k / 10.0;
        assert_true(sitefactor_sigmoid(x, 0, 0.5) == x);
        assert_true(sitefactor_sigmoid(x, 1e-12, 0.3) == x);
        assert_true(fabs(sitefactor_sigmoid(x, 1e-6, 0.3) - x) < 1e-6);
        assert_true(fabs(sitefactor_sigmoid(x, -1e-6, 0.3) - x) < 1e-6);
    }
}

static void test_vectors(void **state)
{
    (void)state;
    static const struct {
        double l, x0;
    } p[] = {{5, 0.25}, {50, 0.75}, {1, 0.5}, {-5, 0.5}, {0.5, 0}, {10, 1}};
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        for (int k = 0; k <= 20; k++) {
            double x = k / 20.0;
            double got = sitefactor_sigmoid(x, p[i].l, p[i].x0);
            double want = direct(x, p[i].l, p[i].x0);
            if (fabs(got - want) > 1e-12)
                fail_msg("S(%g; l=%g, x0=%g) = %.17g, want %.17g", x, p[i].l, p[i].x0, got, want);
        }
    }
    /* Paper's figure 6: l_t = 50, x0_t = 0.75: well before 75% of the period, S_t ~ 0. */
    assert_true(sitefactor_sigmoid(0.5, 50, 0.75) < 1e-5);
    assert_true(sitefactor_sigmoid(0.9, 50, 0.75) > 0.99);
    /* Huge l: a step at x0. */
    assert_true(sitefactor_sigmoid(0.4, 1e6, 0.5) == 0.0);
    assert_true(sitefactor_sigmoid(0.6, 1e6, 0.5) == 1.0);
    assert_true(sitefactor_sigmoid(0.5, 1e6, 0.5) == 0.5);
    /* Clamping and NaN. */
    assert_true(sitefactor_sigmoid(-1, 5, 0.5) == 0.0);
    assert_true(sitefactor_sigmoid(2, 5, 0.5) == 1.0);
    assert_true(sitefactor_sigmoid(NAN, 5, 0.5) == 0.0);
    assert_true(sitefactor_sigmoid(0.5, NAN, 0.5) == 0.0);
    double s2 = sitefactor_sigmoid2(0.5, 5, 0.25, 0.9, 50, 0.75);
    assert_true(fabs(s2 - direct(0.5, 5, 0.25) * direct(0.9, 50, 0.75)) < 1e-12);
}

static void test_factors(void **state)
{
    (void)state;
    assert_true(sitefactor_credit(0, 1000) == 1.0);
    assert_true(sitefactor_credit(250, 1000) == 0.75);
    assert_true(sitefactor_credit(1500, 1000) == 0.0);
    assert_true(sitefactor_credit(-10, 1000) == 1.0);
    assert_true(sitefactor_credit(0, 0) == 0.0);
    /* min 0: some allocation ends now, so the others are measured from that instant. */
    assert_true(sitefactor_temporal(0, 0, 100) == 1.0);
    assert_true(sitefactor_temporal(25, 0, 100) == 0.75);
    assert_true(sitefactor_temporal(100, 0, 100) == 0.0);
    assert_true(sitefactor_temporal(200, 0, 100) == 0.0);
    assert_true(sitefactor_temporal(-5, 0, 100) == 1.0);
    assert_true(sitefactor_temporal(5, 0, 0) == 1.0);
    assert_true(sitefactor_temporal(25, -10, 100) == 0.75);
    /* Power rule: squaring biases; four times the priority for twice the unused credit. */
    assert_true(fabs(sitefactor_power(0.5, 1, 2, 1) / sitefactor_power(0.25, 1, 2, 1) - 4) < 1e-12);
    assert_true(sitefactor_power(0.64, 0.5, 0.5, 1) == 0.4);
    assert_true(sitefactor_power(0, 0, 0, 0) == 1.0);
    assert_true(sitefactor_power(2, 1, 1, 1) == 1.0);
    assert_true(sitefactor_power(0.5, 0.5, -1, -1) == 1.0);
}

/* The extremes of f_temporal, and what they give under the power rule at SiteFactorMax=1000
 * (f_c^1 x f_t^1): allocations that tie on their end get one factor, never 0 for lack of a
 * later one. */
static void test_temporal_ties(void **state)
{
    (void)state;
    const int64_t year = 365 * 86400;
    /* One allocation alone: the soonest and the last at once. */
    assert_true(sitefactor_temporal(year, year, year) == 1.0);
    /* Three sharing one end date, with 100 %, 50 % and 0 % of their credit left: the
     * factor is the credit's alone (this was 0, 0, 0). */
    static const struct {
        int64_t used, granted;
    } tie[] = {{0, 6000}, {3000, 6000}, {6000, 6000}};
    uint32_t want[] = {1000, 500, 0};
    for (size_t i = 0; i < 3; i++) {
        double ft = sitefactor_temporal(year, year, year);
        assert_true(ft == 1.0);
        double sf = sitefactor_power(sitefactor_credit(tie[i].used, tie[i].granted), ft, 1, 1);
        assert_int_equal(sitefactor_to_slurm(sf, 1000), want[i]);
    }
    /* Ends in 30, 30 and 100 days: the two first tie at 1, the last gets 30/100. */
    int64_t d30 = 30 * 86400, d100 = 100 * 86400;
    assert_true(sitefactor_temporal(d30, d30, d100) == 1.0);
    assert_true(fabs(sitefactor_temporal(d100, d30, d100) - 0.3) < 1e-12);
    assert_true(fabs(sitefactor_temporal(65 * 86400, d30, d100) - 0.65) < 1e-12);
    assert_int_equal(
        sitefactor_to_slurm(sitefactor_power(1, sitefactor_temporal(d100, d30, d100), 1, 1), 1000),
        300);
    /* No credit: 0 whatever the time (nothing to spend, nothing to hurry); with Nc = 0
     * the credit is left out and time alone decides (0^0 = 1). */
    assert_true(sitefactor_power(sitefactor_credit(0, 0), 1, 1, 1) == 0.0);
    assert_true(sitefactor_power(sitefactor_credit(0, 0), 1, 0, 1) == 1.0);
    /* Expired or ending now: as urgent as can be. */
    assert_true(sitefactor_temporal(0, 0, d100) == 1.0);
    assert_true(sitefactor_temporal(-d30, -d30, d100) == 1.0);
    /* The sigmoid rule at a tie: S(1) = 1 exactly, so again the credit's factor alone. */
    assert_true(sitefactor_sigmoid2(0.5, 1, 0.5, sitefactor_temporal(d30, d30, d30), 50, 0.75) ==
                sitefactor_sigmoid(0.5, 1, 0.5));
}

static void test_to_slurm(void **state)
{
    (void)state;
    assert_int_equal(sitefactor_to_slurm(0, 1000000), 0);
    assert_int_equal(sitefactor_to_slurm(1, 1000000), 1000000);
    assert_int_equal(sitefactor_to_slurm(0.5, 1000), 500);
    assert_int_equal(sitefactor_to_slurm(0.0015, 1000), 2);
    assert_int_equal(sitefactor_to_slurm(2, 1000), 1000);
    assert_int_equal(sitefactor_to_slurm(-1, 1000), 0);
    assert_int_equal(sitefactor_to_slurm(NAN, 1000), 0);
    assert_int_equal(sitefactor_to_slurm(1, UINT32_MAX), UINT32_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoints_monotone),
        cmocka_unit_test(test_linear_limit),
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_factors),
        cmocka_unit_test(test_temporal_ties),
        cmocka_unit_test(test_to_slurm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
