/* SPDX-License-Identifier: GPL-3.0-or-later */
/* squeue.c - step lookup over real 'squeue --steps -h -o "%i|%j"' output and edge cases. */
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

static void test_real(void **state)
{
    size_t len;
    char *text = data_load("squeue-steps-22.05.8.txt", &len);
    uint32_t step = 99;
    assert_int_equal(st_squeue_find_step(text, len, 14, "s_tmo", &step, NULL), 1);
    assert_int_equal(step, 0);
    step = 99;
    /* ".batch" is not a numbered step even though its name is "batch". */
    assert_int_equal(st_squeue_find_step(text, len, 14, "batch", &step, NULL), 0);
    assert_int_equal(st_squeue_find_step(text, len, 15, "s_tmo", &step, NULL), 0);
    assert_int_equal(step, 99);
    free(text);
}

static void test_cases(void **state)
{
    const char *out = "12.0|a\n12.1|wf|odd\n12.3|a\n13.5|a\n12.batch|batch\n";
    uint32_t step = 0;
    assert_int_equal(st_squeue_find_step(out, strlen(out), 12, "a", &step, NULL), 1);
    assert_int_equal(step, 3); /* newest of a reused name */
    assert_int_equal(st_squeue_find_step(out, strlen(out), 12, "wf|odd", &step, NULL), 1);
    assert_int_equal(step, 1);
    const char *junk = "12.0|a\ngarbage\n";
    struct allot_error err = {0};
    step = 7;
    assert_int_equal(st_squeue_find_step(junk, strlen(junk), 12, "a", &step, &err), -1);
    assert_int_equal(err.code, ALLOT_EPROTO);
    assert_non_null(strstr(err.msg, "line 2"));
    assert_int_equal(step, 7);
    assert_int_equal(st_squeue_find_step("", 0, 12, "a", &step, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real),
        cmocka_unit_test(test_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
