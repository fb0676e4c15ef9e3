/* SPDX-License-Identifier: GPL-3.0-or-later */
/* argv.c - the exact argument vectors allot-step hands to srun, sstat, sacct, squeue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/argv.h"

static void expect(const struct slt_argv *a, const char *const *want)
{
    size_t i = 0;
    for (; want[i]; i++) {
        assert_true(i < a->argc);
        assert_string_equal(a->argv[i], want[i]);
    }
    assert_int_equal(a->argc, i);
    assert_null(a->argv[i]);
}

static void test_srun(void **state)
{
    static struct slt_argv a;
    char *cmd[] = {"python", "-c", "print('a b; $(x)')", NULL};
    struct slt_srun_opts o = {.job_id = 12,
                              .step_name = "wf42_j7_r1_a1",
                              .nodes = 1,
                              .cpus_per_task = 2,
                              .mem_mb = 500,
                              .time_min = 59,
                              .signal = "TERM@120"};
    slt_argv_init(&a);
    assert_int_equal(slt_argv_srun(&a, "srun", &o, cmd, NULL), 0);
    const char *want[] = {"srun",      "--jobid=12",         "--ntasks=1",
                          "--exact",   "--cpu-bind=none",    "--job-name=wf42_j7_r1_a1",
                          "--nodes=1", "--cpus-per-task=2",  "--mem=500M",
                          "--time=59", "--signal=TERM@120",  "python",
                          "-c",        "print('a b; $(x)')", NULL};
    expect(&a, want);
    assert_ptr_equal(a.argv[11], cmd[0]); /* borrowed */

    struct slt_srun_opts min = {.job_id = 3, .step_name = "s", .nodes = 2, .cpu_bind = true};
    slt_argv_init(&a);
    assert_int_equal(slt_argv_srun(&a, "/x/srun", &min, cmd, NULL), 0);
    const char *want2[] = {
        "/x/srun", "--jobid=3", "--ntasks=1",         "--exact", "--job-name=s", "--nodes=2",
        "python",  "-c",        "print('a b; $(x)')", NULL};
    expect(&a, want2);

    struct allot_error err = {0};
    o.signal = "TERM@x";
    slt_argv_init(&a);
    assert_int_equal(slt_argv_srun(&a, "srun", &o, cmd, &err), -1);
    assert_non_null(strstr(err.msg, "signal"));
    assert_int_equal(a.argc, 0);
    o.signal = NULL;
    char *empty[] = {NULL};
    assert_int_equal(slt_argv_srun(&a, "srun", &o, empty, &err), -1);
    o.step_name = "";
    assert_int_equal(slt_argv_srun(&a, "srun", &o, cmd, &err), -1);
}

static void test_others(void **state)
{
    static struct slt_argv a;
    slt_argv_init(&a);
    assert_int_equal(slt_argv_sstat(&a, "sstat", 12, 3, "JobID,AveCPU,MaxRSS", NULL), 0);
    const char *w1[] = {"sstat", "-n", "-P", "-j", "12.3", "--format=JobID,AveCPU,MaxRSS", NULL};
    expect(&a, w1);
    slt_argv_init(&a);
    assert_int_equal(slt_argv_sacct(&a, "sacct", 12, "JobID,State", true, NULL), 0);
    const char *w2[] = {"sacct",         "-n", "-P", "-j", "12", "--format=JobID,State",
                        "--allocations", NULL};
    expect(&a, w2);
    slt_argv_init(&a);
    assert_int_equal(slt_argv_squeue_steps(&a, "squeue", 12, NULL), 0);
    const char *w3[] = {"squeue", "--steps", "-h", "-j", "12", "-o", "%i|%j", NULL};
    expect(&a, w3);
    slt_argv_init(&a);
    assert_int_equal(slt_argv_squeue_time_left(&a, "squeue", 12, NULL), 0);
    const char *w4[] = {"squeue", "-h", "-j", "12", "-o", "%L", NULL};
    expect(&a, w4);
    assert_int_equal(slt_step_time_min(-1), 0);
    assert_int_equal(slt_step_time_min(0), 1);
    assert_int_equal(slt_step_time_min(59), 1);
    assert_int_equal(slt_step_time_min(120), 1); /* "2:00" left: the step must end first */
    assert_int_equal(slt_step_time_min(121), 2);
    assert_int_equal(slt_step_time_min(3600), 59);
}

static void test_full(void **state)
{
    static struct slt_argv a;
    struct allot_error err = {0};
    slt_argv_init(&a);
    char big[600];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    int i = 0;
    while (slt_argv_add(&a, big, &err) == 0)
        i++;
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    assert_int_equal(a.argc, (size_t)i);
    assert_null(a.argv[a.argc]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_srun),
        cmocka_unit_test(test_others),
        cmocka_unit_test(test_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
