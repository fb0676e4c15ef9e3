/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * jobname.c - tests of naming a job as Slurm prints it (libslurmtext/jobname.h): a job id,
 * an array task, a list of tasks (ranges, steps, throttle), a het component; steps, zero,
 * malformed lists and trailing text refused with the output untouched; which array tasks
 * a name covers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "libslurmtext/jobname.h"

static void test_forms(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        enum slt_job_name_kind kind;
        uint32_t job, index;
        const char *spec;
    } v[] = {
        {"54", SLT_JOB_NAME_ID, 54, 0, ""},
        {"54_3", SLT_JOB_NAME_TASK, 54, 3, ""},
        {"54_0", SLT_JOB_NAME_TASK, 54, 0, ""},
        {"54_[1-3]", SLT_JOB_NAME_TASKS, 54, 0, "1-3"},
        {"54_[1-9:2,12%2]", SLT_JOB_NAME_TASKS, 54, 0, "1-9:2,12%2"},
        {"60+1", SLT_JOB_NAME_HET, 60, 1, ""},
        {"4294967295_4000000", SLT_JOB_NAME_TASK, 4294967295u, 4000000, ""},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        struct slt_job_name n;
        struct allot_error err = {0};
        if (slt_job_name_parse(v[i].text, "job", &n, &err) < 0)
            fail_msg("%s: %s", v[i].text, err.msg);
        assert_int_equal(n.kind, v[i].kind);
        assert_int_equal(n.job, v[i].job);
        assert_int_equal(n.index, v[i].index);
        assert_string_equal(n.spec, v[i].spec);
    }
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",      "0",     "x",        "54.batch",  "54.0",       "54_3.0",       "54+1.2",
        "54_",   "54_[]", "54_[3-1]", "54_[1-",    "54_[a]",     "54 ",          "-1",
        "54_3x", "54+",   "+1",       "54_[1-3]x", "4294967296", "54_[4000001]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct slt_job_name n = {.job = 99};
        struct allot_error err = {0};
        if (slt_job_name_parse(bad[i], "job", &n, &err) != -1)
            fail_msg("'%s' was accepted", bad[i]);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_non_null(strstr(err.msg, "job: '"));
        assert_int_equal(n.job, 99);
    }
    struct allot_error err = {0};
    struct slt_job_name n;
    assert_int_equal(slt_job_name_parse(NULL, "job", &n, &err), -1);
}

static void test_has_task(void **state)
{
    (void)state;
    struct slt_job_name n;
    assert_int_equal(slt_job_name_parse("54", "job", &n, NULL), 0);
    assert_true(slt_job_name_has_task(&n, 54, 7));
    assert_false(slt_job_name_has_task(&n, 55, 7));
    assert_int_equal(slt_job_name_parse("54_3", "job", &n, NULL), 0);
    assert_true(slt_job_name_has_task(&n, 54, 3));
    assert_false(slt_job_name_has_task(&n, 54, 4));
    assert_int_equal(slt_job_name_parse("54_[1-3,9]", "job", &n, NULL), 0);
    assert_true(slt_job_name_has_task(&n, 54, 2));
    assert_true(slt_job_name_has_task(&n, 54, 9));
    assert_false(slt_job_name_has_task(&n, 54, 4));
    assert_int_equal(slt_job_name_parse("60+1", "job", &n, NULL), 0);
    assert_false(slt_job_name_has_task(&n, 60, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_has_task),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
