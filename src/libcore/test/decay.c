/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/decay.c - half-life decay: exact factors, cadence independence (bitwise), error bound
 * against a long-double closed form, reset periods, NoDecay and UsageFactor, flux-accounting's
 * 2-node x 2000 s usage example. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>

#include "libcore/decay.h"

#define DAY 86400
#define T0 1773839100 /* 2026-03-18T13:05:00Z, a Wednesday */

static void test_exact_factor(void **state)
{
    (void)state;
    int64_t h = 7 * DAY;
    assert_true(decay_factor_exact(h, 0) == 1.0);
    assert_true(decay_factor_exact(h, h) == 0.5);
    assert_true(decay_factor_exact(h, 3 * h) == 0.125);
    assert_true(decay_factor_exact(0, 12345) == 1.0);
    assert_true(fabs(decay_factor_exact(h, h / 2) - M_SQRT1_2) < 1e-15);
}

/* Three accumulators get the same charges; one is "decayed" (state touched by a zero charge
 * and read) every minute, one every hour, one never.  With a one-day half-life the run crosses
 * two rebases (every 32 half-lives).  All three must agree to the last bit at every hour. */
static void test_cadence_bitwise(void **state)
{
    (void)state;
    struct decay_params p = {.halflife_s = DAY, .reset = DECAY_RESET_NONE};
    decay_acc_t m, hr, once;
    decay_acc_init(&m);
    decay_acc_init(&hr);
    decay_acc_init(&once);
    uint64_t seed = 42;
    for (int64_t t = T0; t < T0 + 70 * DAY; t += 60) {
        if ((t - T0) % 420 == 0) { /* a job every 7 minutes, pseudo-random charge */
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            double c = (double)(seed >> 40) / 64.0;
            assert_int_equal(decay_acc_add(&m, &p, t, c, 1.0, false, NULL), 0);
            assert_int_equal(decay_acc_add(&hr, &p, t, c, 1.0, false, NULL), 0);
            assert_int_equal(decay_acc_add(&once, &p, t, c, 1.0, false, NULL), 0);
        }
        assert_int_equal(decay_acc_add(&m, &p, t, 0.0, 1.0, false, NULL), 0);
        (void)decay_acc_value(&m, &p, t);
        if ((t - T0) % 3600 == 0) {
            assert_int_equal(decay_acc_add(&hr, &p, t, 0.0, 1.0, false, NULL), 0);
            double a = decay_acc_value(&m, &p, t);
            double b = decay_acc_value(&hr, &p, t);
            double c = decay_acc_value(&once, &p, t);
            assert_true(a == b);
            assert_true(b == c);
        }
    }
    /* the run crossed two rebases (every 32 half-lives) */
    assert_true(m.ref_s >= (T0 / (32 * DAY) + 2) * 32 * DAY);
    int64_t end = T0 + 75 * DAY;
    assert_true(decay_acc_value(&m, &p, end) == decay_acc_value(&once, &p, end));
}

/* Against sum c_i * 2^(-(t - t_i)/h) in long double: relative error <= (n + 3) * 2^-52. */
static void test_error_bound(void **state)
{
    (void)state;
    struct decay_params p = {.halflife_s = 7 * DAY + 13, .reset = DECAY_RESET_NONE};
    decay_acc_t a;
    decay_acc_init(&a);
    long double ref = 0.0L;
    int n = 0;
    int64_t now = T0 + 400 * DAY;
    for (int64_t t = T0; t < now; t += 4321) {
        double c = 1.0 + (double)(t % 977);
        assert_int_equal(decay_acc_add(&a, &p, t, c, 1.0, false, NULL), 0);
        ref += (long double)c * exp2l(-(long double)(now - t) / (long double)p.halflife_s);
        n++;
    }
    double got = decay_acc_value(&a, &p, now);
    long double rel = fabsl((long double)got - ref) / ref;
    print_message("n=%d rel=%Lg bound=%Lg\n", n, rel,
                  (long double)(n + 3) * (long double)DBL_EPSILON);
    assert_true(rel <= (long double)(n + 3) * (long double)DBL_EPSILON);
}

static void test_reference_usage_example(void **state)
{
    (void)state;
    /* flux-accounting guide: jobs of 2,2,2,1,1 nodes x 2000 s give 16000 node-seconds */
    const double nodes[] = {2, 2, 2, 1, 1};
    struct decay_params none = {.halflife_s = 0, .reset = DECAY_RESET_NONE};
    struct decay_params week = {.halflife_s = 7 * DAY, .reset = DECAY_RESET_NONE};
    decay_acc_t a, b;
    decay_acc_init(&a);
    decay_acc_init(&b);
    int64_t end = 1605637403;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(decay_acc_add(&a, &none, end, nodes[i] * 2000.0, 1.0, false, NULL), 0);
        assert_int_equal(decay_acc_add(&b, &week, end, nodes[i] * 2000.0, 1.0, false, NULL), 0);
    }
    assert_true(decay_acc_value(&a, &none, end + 30 * DAY) == 16000.0);
    assert_true(fabs(decay_acc_value(&b, &week, end) - 16000.0) < 16000.0 * 4 * DBL_EPSILON);
    assert_true(fabs(decay_acc_value(&b, &week, end + 7 * DAY) - 8000.0) < 1e-9);
}

static void test_reset_start(void **state)
{
    (void)state;
    assert_true(decay_reset_start(DECAY_RESET_NONE, T0) == INT64_MIN);
    assert_true(decay_reset_start(DECAY_RESET_DAILY, T0) == 1773792000);
    assert_true(decay_reset_start(DECAY_RESET_WEEKLY, T0) == 1773532800);
    assert_true(decay_reset_start(DECAY_RESET_MONTHLY, T0) == 1772323200);
    assert_true(decay_reset_start(DECAY_RESET_QUARTERLY, T0) == 1767225600);
    assert_true(decay_reset_start(DECAY_RESET_YEARLY, T0) == 1767225600);
    /* before 1970 */
    assert_true(decay_reset_start(DECAY_RESET_YEARLY, -1) == -365 * DAY);
    assert_true(decay_reset_start(DECAY_RESET_DAILY, -1) == -DAY);
}

static void test_reset_behaviour(void **state)
{
    (void)state;
    struct decay_params p = {.halflife_s = 0, .reset = DECAY_RESET_MONTHLY};
    decay_acc_t a;
    decay_acc_init(&a);
    int64_t feb = 1772323200 - 10 * DAY, mar = 1772323200 + DAY;
    assert_int_equal(decay_acc_add(&a, &p, feb, 100.0, 1.0, false, NULL), 0);
    assert_true(decay_acc_value(&a, &p, feb + 1) == 100.0);
    assert_true(decay_acc_value(&a, &p, mar) == 0.0); /* March: reset */
    assert_int_equal(decay_acc_add(&a, &p, mar, 5.0, 1.0, false, NULL), 0);
    assert_true(decay_acc_value(&a, &p, mar) == 5.0);
    assert_int_equal(decay_acc_add(&a, &p, feb, 50.0, 1.0, false, NULL), 0); /* late: dropped */
    assert_true(decay_acc_value(&a, &p, mar) == 5.0);
}

static void test_nodecay_and_factor(void **state)
{
    (void)state;
    struct decay_params p = {.halflife_s = DAY, .reset = DECAY_RESET_NONE};
    decay_acc_t a;
    decay_acc_init(&a);
    assert_int_equal(decay_acc_add(&a, &p, T0, 10.0, 2.0, true, NULL), 0);
    assert_int_equal(decay_acc_add(&a, &p, T0, 8.0, 0.5, false, NULL), 0);
    double v = decay_acc_value(&a, &p, T0 + DAY);
    assert_true(fabs(v - (20.0 + 2.0)) < 1e-12);
    assert_true(fabs(decay_acc_value(&a, &p, T0 + 100 * DAY) - 20.0) < 1e-12);
}

static void test_invalid(void **state)
{
    (void)state;
    struct allot_error err = {0};
    struct decay_params p = {.halflife_s = DAY, .reset = DECAY_RESET_NONE};
    decay_acc_t a;
    decay_acc_init(&a);
    assert_int_equal(decay_acc_add(&a, &p, T0, 3.0, 1.0, false, NULL), 0);
    decay_acc_t before = a;
    assert_int_equal(decay_acc_add(&a, &p, T0 + 40 * DAY, -1.0, 1.0, false, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(decay_acc_add(&a, &p, T0 + 40 * DAY, 1.0, NAN, false, &err), -1);
    assert_memory_equal(&a, &before, sizeof(a));
    struct decay_params bad = {.halflife_s = -1};
    assert_int_equal(decay_params_check(&bad, &err), -1);
    bad.halflife_s = DECAY_HALFLIFE_MAX_S + 1;
    assert_int_equal(decay_params_check(&bad, &err), -1);
    bad.halflife_s = 1;
    bad.reset = (enum decay_reset)42;
    assert_int_equal(decay_params_check(&bad, &err), -1);
    assert_int_equal(decay_params_check(&p, &err), 0);
    decay_acc_t empty;
    decay_acc_init(&empty);
    assert_true(decay_acc_value(&empty, &p, T0) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_factor),       cmocka_unit_test(test_cadence_bitwise),
        cmocka_unit_test(test_error_bound),        cmocka_unit_test(test_reference_usage_example),
        cmocka_unit_test(test_reset_start),        cmocka_unit_test(test_reset_behaviour),
        cmocka_unit_test(test_nodecay_and_factor), cmocka_unit_test(test_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
