/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exitcode.c - "exit:signal" vectors from the test cluster: 0:0, 3:0, 9:0, 0:9, 124:0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/exitcode.h"

static void test_exitcode(void **state)
{
    static const struct {
        const char *t;
        int st, sig;
    } good[] = {{"0:0", 0, 0},     {"3:0", 3, 0},   {"9:0", 9, 0},        {"0:9", 0, 9},
                {"124:0", 124, 0}, {"0:15", 0, 15}, {"255:255", 255, 255}};
    char buf[16];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct slt_exitcode e;
        assert_int_equal(slt_exitcode_parse(good[i].t, strlen(good[i].t), "ExitCode", &e, NULL), 0);
        assert_true(e.has);
        assert_int_equal(e.status, good[i].st);
        assert_int_equal(e.signal, good[i].sig);
        assert_true(slt_exitcode_format(&e, buf, sizeof(buf), NULL) > 0);
        assert_string_equal(buf, good[i].t);
    }
    static const char *const bad[] = {"0", ":0", "0:", "256:0", "0:256", "a:b", "0:0:0", "-1:0"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct slt_exitcode e = {false, 42, 42};
        struct allot_error err = {0};
        assert_int_equal(slt_exitcode_parse(bad[i], strlen(bad[i]), "ExitCode", &e, &err), -1);
        assert_non_null(strstr(err.msg, "ExitCode"));
        assert_int_equal(e.status, 42);
    }
    struct slt_exitcode e = {true, 1, 1};
    assert_int_equal(slt_exitcode_parse("", 0, "ExitCode", &e, NULL), 0);
    assert_false(e.has);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_exitcode)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
