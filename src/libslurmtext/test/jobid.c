/* SPDX-License-Identifier: GPL-3.0-or-later */
/* jobid.c - vectors for job/step ids as sacct/squeue printed them on the test cluster
 * ("1", "1.batch", "7+0", "12.0") plus array forms, each formatted back identically. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/jobid.h"

static const char *const good[] = {
    "1",         "1.batch",   "1.extern",      "3.interactive", "12.0",   "7+0",
    "9+1",       "7+1.batch", "7+0.2",         "4294967295",    "3_7",    "3_7.batch",
    "3_[1-5%2]", "3_[1,4-6]", "12.4294967294", "15.3+0",        "15.3+1", "3_7.2+0"};
static const char *const bad[] = {"",      "x",      "1.",         "1.foo",  "+1",
                                  "1+",    "1_",     "1_[]",       "1_[a]",  "4294967296",
                                  "1.-1",  "1 .0",   "1+2_3",      "1.0.0",  "1_[1-2",
                                  "15.3+", "15.3+x", "15.batch+0", "15.3-0", "15.+0"};

static void test_good(void **state)
{
    char buf[96];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct slt_jobid id;
        struct allot_error err = {0};
        if (slt_jobid_parse(good[i], strlen(good[i]), "JobID", &id, &err) != 0)
            fail_msg("'%s': %s", good[i], err.msg);
        assert_true(slt_jobid_format(&id, buf, sizeof(buf), &err) > 0);
        assert_string_equal(buf, good[i]);
    }
    struct slt_jobid id;
    assert_int_equal(slt_jobid_parse("7+1.batch", 9, "JobID", &id, NULL), 0);
    assert_int_equal(id.job, 7);
    assert_true(id.has_het);
    assert_int_equal(id.het_offset, 1);
    assert_int_equal(id.step_kind, SLT_STEP_BATCH);
    assert_int_equal(slt_jobid_parse("12.3", 4, "JobID", &id, NULL), 0);
    assert_int_equal(id.step_kind, SLT_STEP_NUMBERED);
    assert_int_equal(id.step, 3);
    assert_false(id.has_het);
    assert_false(id.has_step_het);
    assert_int_equal(slt_jobid_parse("15.3+1", 6, "JobID", &id, NULL), 0);
    assert_int_equal(id.job, 15);
    assert_int_equal(id.step_kind, SLT_STEP_NUMBERED);
    assert_int_equal(id.step, 3);
    assert_true(id.has_step_het);
    assert_int_equal(id.step_het_comp, 1);
}

static void test_bad(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct slt_jobid id;
        memset(&id, 0x5a, sizeof(id));
        struct allot_error err = {0};
        if (slt_jobid_parse(bad[i], strlen(bad[i]), "JobID", &id, &err) != -1)
            fail_msg("'%s' parsed", bad[i]);
        assert_non_null(strstr(err.msg, "JobID"));
        assert_int_equal(id.job, 0x5a5a5a5a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
