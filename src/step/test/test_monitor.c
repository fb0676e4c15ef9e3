/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * test_monitor.c - live CPU % from sstat samples (monitor_fold): the first sample is only a
 * baseline; AveCPU's whole seconds and the time a call takes never make a busy process
 * read outside 100% +- 1 / MONITOR_CPU_ERR_FACTOR; a slow call keeps the window open until
 * it is long enough; rows of other steps and garbage are not samples.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "step/monitor.h"

#define JOB 42
#define STEP 3

/* sstat's text for step JOB.STEP at AveCPU = cpu_ms, truncated to whole seconds as
 * sstat prints it. */
static size_t row(char *buf, size_t cap, long long cpu_ms)
{
    long long s = cpu_ms / 1000;
    int n = snprintf(buf, cap, "%d.%d|%02lld:%02lld:%02lld|2048K|1024K\n", JOB, STEP, s / 3600,
                     (s / 60) % 60, s % 60);
    assert_true(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

static void fresh(struct step_live *l)
{
    memset(l, 0, sizeof(*l));
    l->step_found = true;
    l->step_id = STEP;
}

static void test_first_sample_is_baseline(void **state)
{
    (void)state;
    struct step_live l;
    char buf[128];
    fresh(&l);
    size_t n = row(buf, sizeof(buf), 7000);
    assert_int_equal(monitor_fold(buf, n, JOB, 1000, 1040, &l), 0);
    assert_true(l.have_prev);
    assert_int_equal(l.cpu_samples, 0);
    assert_int_equal(l.samples, 1);
    assert_int_equal(l.prev_t_ms, 1020); /* the middle of the call */
}

/* A fixed pseudo-random sequence (an LCG): the same jitter on every run. */
static unsigned jitter(unsigned *seed, unsigned below)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) % below;
}

/* A process busy on one CPU, sampled about every second by calls of 20-300 ms that read
 * it at any instant within the call, its CPU clock at any offset to the sampler's: every
 * rate taken reads within 1 / MONITOR_CPU_ERR_FACTOR of 100%, and rates are taken.  With a
 * rate per sample, a second of truncation over a 1.0-1.4 s window reads it at up to 200%. */
static void test_busy_reads_near_100(void **state)
{
    (void)state;
    char buf[128];
    unsigned seed = 2026;
    for (long long offset = 0; offset < 1000; offset += 37) {
        struct step_live l;
        fresh(&l);
        long long t0 = 10000;
        for (int k = 0; k < 40; k++) {
            long long t1 = t0 + 20 + jitter(&seed, 281);
            long long read = t0 + jitter(&seed, (unsigned)(t1 - t0 + 1)); /* sstat's instant */
            size_t n = row(buf, sizeof(buf), read - 10000 + offset);      /* 100% since 10 s */
            assert_int_equal(monitor_fold(buf, n, JOB, t0, t1, &l), 0);
            t0 = t1 + 1000 + jitter(&seed, 101); /* the sampler's interval, then its timer */
        }
        assert_true(l.cpu_samples >= 4);
        assert_true(l.peak_cpu_pct >= 80.0 && l.peak_cpu_pct <= 125.0);
        double avg = l.cpu_pct_sum / l.cpu_samples;
        assert_true(avg >= 80.0 && avg <= 125.0);
    }
}

/* A call that took 3 s (a stalled machine) leaves its instant uncertain by 1.5 s: the
 * window from it stays open until it is 5 x (1 s + 1.5 s + the new call's half) long. */
static void test_slow_call_keeps_window_open(void **state)
{
    (void)state;
    struct step_live l;
    char buf[128];
    fresh(&l);
    size_t n = row(buf, sizeof(buf), 0);
    assert_int_equal(monitor_fold(buf, n, JOB, 0, 3000, &l), 0); /* baseline at 1.5 s */
    n = row(buf, sizeof(buf), 6000);
    assert_int_equal(monitor_fold(buf, n, JOB, 7480, 7520, &l), 0); /* 6 s: too short */
    assert_int_equal(l.cpu_samples, 0);
    assert_int_equal(l.prev_t_ms, 1500); /* still the baseline */
    n = row(buf, sizeof(buf), 13000);
    assert_int_equal(monitor_fold(buf, n, JOB, 14480, 14520, &l), 0); /* 13 s >= 12.6 */
    assert_int_equal(l.cpu_samples, 1);
    assert_true(l.peak_cpu_pct > 99.9 && l.peak_cpu_pct < 100.1);
    assert_int_equal(l.prev_t_ms, 14500); /* the next window starts here */
}

/* An idle step: 0%, never negative even if AveCPU went down (a task ended). */
static void test_idle_and_decreasing(void **state)
{
    (void)state;
    struct step_live l;
    char buf[128];
    fresh(&l);
    size_t n = row(buf, sizeof(buf), 9000);
    assert_int_equal(monitor_fold(buf, n, JOB, 0, 10, &l), 0);
    n = row(buf, sizeof(buf), 4000);
    assert_int_equal(monitor_fold(buf, n, JOB, 6000, 6010, &l), 0);
    assert_int_equal(l.cpu_samples, 1);
    assert_true(l.peak_cpu_pct == 0.0 && l.cpu_pct_sum == 0.0);
}

static void test_other_rows_and_garbage(void **state)
{
    (void)state;
    struct step_live l;
    fresh(&l);
    const char other[] = "42.4|00:00:05|2048K|1024K\n43.3|00:00:05|2048K|1024K\n";
    assert_int_equal(monitor_fold(other, strlen(other), JOB, 0, 10, &l), -1);
    const char junk[] = "not|a|row\n\n";
    assert_int_equal(monitor_fold(junk, strlen(junk), JOB, 0, 10, &l), -1);
    assert_int_equal(l.samples, 0);
    assert_false(l.have_prev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_sample_is_baseline),
        cmocka_unit_test(test_busy_reads_near_100),
        cmocka_unit_test(test_slow_call_keeps_window_open),
        cmocka_unit_test(test_idle_and_decreasing),
        cmocka_unit_test(test_other_rows_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
