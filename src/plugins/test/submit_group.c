/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * submit_group.c - tests of a het job's components at admission
 * (plugins/job_submit/allot/submit_group.h): offset 0 starts a group, the next offset of the
 * same user continues it and sees the earlier components' cost; a refusal hands back the
 * earlier tokens once and closes the group; anything out of order starts afresh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "plugins/job_submit/allot/submit_group.h"

static void test_sum_and_refusal(void **state)
{
    (void)state;
    submit_group_t g = {0};
    int64_t t[SUBMIT_GROUP_MAX];
    assert_int_equal(submit_group_begin(&g, 1000, 0), 0);
    submit_group_admitted(&g, 0, 60, 111);
    assert_int_equal(submit_group_begin(&g, 1000, 1), 60);
    submit_group_admitted(&g, 1, 30, 222);
    assert_int_equal(submit_group_begin(&g, 1000, 2), 90);
    assert_int_equal(submit_group_refused(&g, t, SUBMIT_GROUP_MAX), 2);
    assert_true(t[0] == 111 && t[1] == 222);
    /* Closed: a later component counts alone and hands back nothing. */
    assert_int_equal(submit_group_begin(&g, 1000, 3), 0);
    assert_int_equal(submit_group_refused(&g, t, SUBMIT_GROUP_MAX), 0);
}

static void test_out_of_order_starts_afresh(void **state)
{
    (void)state;
    submit_group_t g = {0};
    int64_t t[SUBMIT_GROUP_MAX];
    assert_int_equal(submit_group_begin(&g, 1000, 0), 0);
    submit_group_admitted(&g, 0, 60, 0);
    assert_int_equal(submit_group_begin(&g, 2000, 1), 0); /* another user */
    submit_group_admitted(&g, 1, 10, 0);
    assert_int_equal(submit_group_begin(&g, 2000, 2), 10);
    assert_int_equal(submit_group_begin(&g, 1000, 0), 0); /* a new het job */
    submit_group_admitted(&g, 0, 5, 7);
    assert_int_equal(submit_group_begin(&g, 1000, 2), 0); /* offset 1 was never seen */
    assert_int_equal(submit_group_refused(&g, t, 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_and_refusal),
        cmocka_unit_test(test_out_of_order_starts_afresh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
