/* SPDX-License-Identifier: GPL-3.0-or-later */
/* state.c - every state name round-trips; "CANCELLED by 0" keeps its uid; junk fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/state.h"

static void test_all_names(void **state)
{
    char buf[64];
    for (int i = 1; i < SLT_STATE_MAX; i++) {
        const char *name = slt_state_name((enum slt_job_state)i);
        struct slt_state s;
        assert_int_equal(slt_state_parse(name, strlen(name), "State", &s, NULL), 0);
        assert_int_equal(s.state, i);
        assert_false(s.has_by_uid);
        assert_true(slt_state_format(&s, buf, sizeof(buf), NULL) > 0);
        assert_string_equal(buf, name);
    }
}

static void test_cancelled_by(void **state)
{
    struct slt_state s;
    char buf[64];
    assert_int_equal(slt_state_parse("CANCELLED by 0", 14, "State", &s, NULL), 0);
    assert_int_equal(s.state, SLT_STATE_CANCELLED);
    assert_true(s.has_by_uid);
    assert_int_equal(s.by_uid, 0);
    assert_int_equal(slt_state_parse("CANCELLED by 1000", 17, "State", &s, NULL), 0);
    assert_int_equal(s.by_uid, 1000);
    assert_true(slt_state_format(&s, buf, sizeof(buf), NULL) > 0);
    assert_string_equal(buf, "CANCELLED by 1000");
    assert_true(slt_state_is_final(SLT_STATE_OUT_OF_MEMORY));
    assert_true(slt_state_is_final(SLT_STATE_NODE_FAIL));
    assert_false(slt_state_is_final(SLT_STATE_RUNNING));
}

static void test_bad(void **state)
{
    static const char *const bad[] = {"completed",  "CANCELLED by", "CANCELLED by x",
                                      "CANCELLED+", "RUNNING ",     "CANCELLED by -1",
                                      "?"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct slt_state s = {SLT_STATE_PENDING, false, 9};
        struct allot_error err = {0};
        assert_int_equal(slt_state_parse(bad[i], strlen(bad[i]), "State", &s, &err), -1);
        assert_non_null(strstr(err.msg, "State"));
        assert_int_equal(s.state, SLT_STATE_PENDING);
    }
    struct slt_state s = {SLT_STATE_PENDING, false, 0};
    assert_int_equal(slt_state_parse("", 0, "State", &s, NULL), 0);
    assert_int_equal(s.state, SLT_STATE_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_names),
        cmocka_unit_test(test_cancelled_by),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
