/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/priority.c - Slurm multi-factor sum with clamping and job-size rules; flux formula
 * with its urgency edges; sprio-style formatting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "libcore/priority.h"

static void test_slurm_sum(void **state)
{
    (void)state;
    struct priority_slurm_weights w = {
        .age = 1000, .fairshare = 10000, .partition = 1000, .qos = 2000, .max_age_s = 7 * 86400};
    struct priority_slurm_job j = {.now_s = 1000000 + 302400,
                                   .eligible_s = 1000000,
                                   .fairshare = 0.75,
                                   .part_job_factor = 1,
                                   .part_max_job_factor = 2,
                                   .qos_priority = 10,
                                   .qos_max_priority = 40,
                                   .nice = 100,
                                   .site_factor = 7,
                                   .cluster_nodes = 10,
                                   .cluster_cpus = 320};
    struct priority_breakdown b;
    assert_int_equal(priority_slurm(&w, &j, &b, NULL), 0);
    assert_true(b.age == 500.0);
    assert_true(b.fairshare == 7500.0);
    assert_true(b.partition == 500.0);
    assert_true(b.qos == 500.0);
    assert_int_equal(b.priority, 500 + 7500 + 500 + 500 + 7 - 100);
    j.nice = 100000; /* floor is 1: 0 means held */
    assert_int_equal(priority_slurm(&w, &j, &b, NULL), 0);
    assert_int_equal(b.priority, 1);
    j.nice = 0;
    j.now_s = j.eligible_s + 30 * 86400; /* age saturates */
    w.fairshare = UINT32_MAX;
    j.fairshare = 1.0;
    assert_int_equal(priority_slurm(&w, &j, &b, NULL), 0);
    assert_true(b.age == 1000.0);
    assert_int_equal(b.priority, UINT32_MAX);
}

static void test_slurm_jobsize_tres(void **state)
{
    (void)state;
    struct priority_slurm_weights w = {.jobsize = 1000, .tres_count = 2, .tres = {100.0, 50.0}};
    struct priority_slurm_job j = {.min_nodes = 2,
                                   .cpus = 32,
                                   .cluster_nodes = 10,
                                   .cluster_cpus = 320,
                                   .tres_count = 2,
                                   .tres = {0.5, 1.0}};
    struct priority_breakdown b;
    assert_int_equal(priority_slurm(&w, &j, &b, NULL), 0);
    assert_true(fabs(b.jobsize - 150.0) < 1e-9); /* (2/10 + 32/320) / 2 */
    assert_true(b.tres == 100.0);
    assert_int_equal(b.priority, 250);
    w.favor_small = true;
    assert_int_equal(priority_slurm(&w, &j, &b, NULL), 0);
    assert_true(fabs(b.jobsize - 850.0) < 1e-9); /* (8/10 + 288/320) / 2 */
    w.size_relative = true;
    w.favor_small = false;
    j.time_limit_min = 4;
    assert_int_equal(priority_slurm(&w, &j, &b, NULL), 0);
    assert_true(fabs(b.jobsize - 1000.0 * (64.0 / 4.0 / 320.0)) < 1e-9);
    struct allot_error err = {0};
    j.fairshare = 1.5;
    assert_int_equal(priority_slurm(&w, &j, &b, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    j.fairshare = 0.5;
    j.tres[1] = NAN;
    assert_int_equal(priority_slurm(&w, &j, &b, &err), -1);
}

static void test_flux(void **state)
{
    (void)state;
    struct priority_flux_weights w = PRIORITY_FLUX_DEFAULTS;
    struct priority_flux_breakdown b;
    assert_int_equal(priority_flux(&w, 0.5, 1.0, 0.0, 16, &b, NULL), 0);
    assert_int_equal(b.priority, 60000);
    struct priority_flux_weights only_urgency = {.urgency = 1000};
    assert_int_equal(priority_flux(&only_urgency, 0.5, 1.0, 0.0, 17, &b, NULL), 0);
    assert_int_equal(b.priority, 1000); /* 1000 * (17 - 16) */
    assert_int_equal(priority_flux(&only_urgency, 0.5, 1.0, 0.0, 10, &b, NULL), 0);
    assert_int_equal(b.priority, 0); /* negative clamps to 0 */
    assert_int_equal(priority_flux(&w, 0.5, 1.0, 0.0, 0, &b, NULL), 0);
    assert_int_equal(b.priority, 0);
    assert_int_equal(priority_flux(&w, 0.5, 1.0, 0.0, 31, &b, NULL), 0);
    assert_int_equal(b.priority, UINT32_MAX);
    struct allot_error err = {0};
    assert_int_equal(priority_flux(&w, 0.5, 1.0, 0.0, 32, &b, &err), -1);
    assert_int_equal(priority_flux(&w, -0.1, 1.0, 0.0, 16, &b, &err), -1);
}

static void test_format(void **state)
{
    (void)state;
    struct priority_breakdown b = {.priority = 8407,
                                   .age = 500,
                                   .fairshare = 7500,
                                   .partition = 500,
                                   .qos = 500,
                                   .nice = 100,
                                   .site = 7};
    char line[256];
    struct allot_error err = {0};
    int n = priority_format_sprio(42, "debug", "alice", "chem", &b, line, sizeof(line), &err);
    assert_true(n > 0);
    assert_non_null(strstr(line, "     42 debug"));
    assert_non_null(strstr(line, "8407"));
    assert_true(strlen(priority_sprio_header()) > 0);
    assert_int_equal(priority_format_sprio(42, "debug", "alice", "chem", &b, line, 20, &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_sum),
        cmocka_unit_test(test_slurm_jobsize_tres),
        cmocka_unit_test(test_flux),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
