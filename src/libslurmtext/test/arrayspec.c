/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * arrayspec.c - tests of a job array's --array spec (libslurmtext/arrayspec.h):
 * ranges, steps, lists, throttles (which never change the count), repeated indexes counted
 * once, and every malformed spec refused with *tasks untouched; membership of a task.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "libslurmtext/arrayspec.h"

static void test_counts(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        uint32_t tasks;
    } v[] = {
        {"7", 1},       {"1-10", 10},     {"1-10%2", 10}, {"0-15:4", 4},
        {"1-9:2", 5},   {"1-9:2%1", 5},   {"1,3,5", 3},   {"1-3,7,10-20:5%2", 7},
        {"1-3,2,3", 3}, {"0-0", 1},       {"5-6:10", 1},  {"0-4000000:2000000", 3},
        {"4000000", 1}, {"1,1,1%100", 1},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        uint32_t n = 0;
        char msg[128];
        assert_int_equal(slt_array_spec_count(v[i].spec, &n, msg, sizeof(msg)), 0);
        if (n != v[i].tasks)
            fail_msg("%s: %u tasks, expected %u", v[i].spec, n, v[i].tasks);
    }
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",      "%2",      "a",    "1-",      "-3",
        "3-1",   "1-9:0",   "1-9:", "1,,2",    "1,",
        "1%",    "1%x",     "1 2",  "4000001", "1-4000001",
        "1%2%3", "1-3%2,5", "1:2",  "1-9:2:3", "99999999999999999999",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint32_t n = 42;
        char msg[128] = "";
        if (slt_array_spec_count(bad[i], &n, msg, sizeof(msg)) != -1)
            fail_msg("'%s' was accepted", bad[i]);
        assert_int_equal(n, 42);
        assert_non_null(strstr(msg, "--array="));
    }
    uint32_t n = 42;
    assert_int_equal(slt_array_spec_count(NULL, &n, NULL, 0), -1);
    assert_int_equal(n, 42);
}

static void test_has(void **state)
{
    (void)state;
    assert_true(slt_array_spec_has("1-3", 1));
    assert_true(slt_array_spec_has("1-3", 3));
    assert_false(slt_array_spec_has("1-3", 0));
    assert_false(slt_array_spec_has("1-3", 4));
    assert_true(slt_array_spec_has("1-9:2%2", 5));
    assert_false(slt_array_spec_has("1-9:2%2", 4));
    assert_true(slt_array_spec_has("1,3,10-12", 11));
    assert_false(slt_array_spec_has("1,3,10-12", 2));
    assert_true(slt_array_spec_has("7", 7));
    assert_false(slt_array_spec_has("1-", 1));
    assert_false(slt_array_spec_has(NULL, 1));
    assert_false(slt_array_spec_has("", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_has),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
