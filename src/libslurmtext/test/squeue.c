/* SPDX-License-Identifier: GPL-3.0-or-later */
/* squeue.c - step lookup over real 'squeue --steps -h -o "%i|%j"' output (Slurm 22.05.8 and
 * 24.11.5: a running job with step 0 named s_tmo and its batch step) and edge cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/squeue.h"
#include "data.h"

static const struct slt_job_ref J12 = {.job = 12};

/* A recorded listing and the running job it shows. */
struct real_case {
    const char *file;
    struct slt_job_ref job, other;
};
static const struct real_case REAL_2205 = {"squeue-steps-22.05.8.txt", {.job = 14}, {.job = 15}};
static const struct real_case REAL_2411 = {"squeue-steps-24.11.5.txt", {.job = 6}, {.job = 7}};

static void test_real(void **state)
{
    const struct real_case *c = *state;
    size_t len;
    char *text = data_load(c->file, &len);
    uint32_t step = 99;
    assert_int_equal(slt_squeue_find_step(text, len, &c->job, "s_tmo", &step, NULL), 1);
    assert_int_equal(step, 0);
    step = 99;
    /* ".batch" is not a numbered step even though its name is "batch". */
    assert_int_equal(slt_squeue_find_step(text, len, &c->job, "batch", &step, NULL), 0);
    assert_int_equal(slt_squeue_find_step(text, len, &c->other, "s_tmo", &step, NULL), 0);
    assert_int_equal(step, 99);
    free(text);
}

static void test_cases(void **state)
{
    const char *out = "12.0|a\n12.1|wf|odd\n12.3|a\n13.5|a\n12.batch|batch\n";
    uint32_t step = 0;
    assert_int_equal(slt_squeue_find_step(out, strlen(out), &J12, "a", &step, NULL), 1);
    assert_int_equal(step, 3); /* newest of a reused name */
    assert_int_equal(slt_squeue_find_step(out, strlen(out), &J12, "wf|odd", &step, NULL), 1);
    assert_int_equal(step, 1);
    const char *junk = "12.0|a\ngarbage\n";
    struct allot_error err = {0};
    step = 7;
    assert_int_equal(slt_squeue_find_step(junk, strlen(junk), &J12, "a", &step, &err), -1);
    assert_int_equal(err.code, ALLOT_EPROTO);
    assert_non_null(strstr(err.msg, "line 2"));
    assert_int_equal(step, 7);
    assert_int_equal(slt_squeue_find_step("", 0, &J12, "a", &step, NULL), 0);
}

/* squeue prints an array task's steps under the array's id: "<array job>_<task>.<step>"
 * (src/squeue/print.c, _print_step_id), and a step still waiting as "<id>.TDB". */
static void test_array_task_and_pending(void **state)
{
    const char *out = "40_3.TDB|a\n40_3.0|a\n40_2.1|a\n40_3.2|b\n41.5|a\n40_3.7+0|a\n";
    const struct slt_job_ref task3 = {
        .job = 43, .is_array_task = true, .array_job = 40, .array_task = 3};
    uint32_t step = 99;
    assert_int_equal(slt_squeue_find_step(out, strlen(out), &task3, "a", &step, NULL), 1);
    assert_int_equal(step, 0); /* not task 2's step 1, job 41's step 5 or het step 7 */
    /* Read as job 43 with no array ids, the task's lines are not its own. */
    const struct slt_job_ref j43 = {.job = 43};
    assert_int_equal(slt_squeue_find_step(out, strlen(out), &j43, "a", &step, NULL), 0);
    /* Its own raw id is still its own. */
    assert_int_equal(slt_squeue_find_step("43.4|a\n", 7, &task3, "a", &step, NULL), 1);
    assert_int_equal(step, 4);
    /* Only a pending step so far: not found yet, and not an error. */
    const char *pending = "40_3.TDB|a\n12.TBD|a\n";
    step = 99;
    assert_int_equal(slt_squeue_find_step(pending, strlen(pending), &task3, "a", &step, NULL), 0);
    assert_int_equal(slt_squeue_find_step(pending, strlen(pending), &J12, "a", &step, NULL), 0);
    assert_int_equal(step, 99);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_real, (void *)&REAL_2205),
        cmocka_unit_test_prestate(test_real, (void *)&REAL_2411),
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_array_task_and_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
