/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/report.c - usage report rows: grouping by key and period, exact sums, sorting,
 * refusals and CPU records beside jobs, bad input leaving the report unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/report.h"

#define JUL15 1784073600LL /* 2026-07-15T00:00:00Z */
#define AUG01 1785542400LL /* 2026-08-01T00:00:00Z */

static void test_months(void **state)
{
    (void)state;
    struct report r;
    report_init(&r, PERIOD_MONTH, NULL);
    assert_int_equal(report_add_job(&r, "chem", JUL15, 960, 3600 * 16, 0, NULL), 0);
    assert_int_equal(report_add_job(&r, "chem", AUG01 - 1, 40, 600, 1200, NULL), 0);
    assert_int_equal(report_add_job(&r, "chem", AUG01, 7, 60, 0, NULL), 0);
    assert_int_equal(report_add_job(&r, "bio", JUL15, 1, 1, 0, NULL), 0);
    assert_int_equal(report_add_refusal(&r, "chem", JUL15 + 5, NULL), 0);
    assert_int_equal(report_add_cpu(&r, "chem", JUL15, 1800, 3600, NULL), 0);
    report_sort(&r);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.rows[0].key, "bio");
    assert_string_equal(r.rows[1].key, "chem");
    assert_string_equal(r.rows[1].period, "2026-07");
    assert_int_equal(r.rows[1].charged_sumin, 1000);
    assert_int_equal(r.rows[1].jobs, 2);
    assert_int_equal(r.rows[1].cpu_s, 3600 * 16 + 600);
    assert_int_equal(r.rows[1].gpu_s, 1200);
    assert_int_equal(r.rows[1].refusals, 1);
    assert_int_equal(r.rows[1].cpu_used_s, 1800);
    assert_int_equal(r.rows[1].cpu_alloc_s, 3600);
    assert_string_equal(r.rows[2].period, "2026-08");
    assert_int_equal(r.rows[2].charged_sumin, 7);
    report_fini(&r);
}

static void test_kinds(void **state)
{
    (void)state;
    struct report r;
    report_init(&r, PERIOD_QUARTER, NULL);
    assert_int_equal(report_add_job(&r, "a", JUL15, 1, 0, 0, NULL), 0);
    assert_int_equal(report_add_job(&r, "a", AUG01, 2, 0, 0, NULL), 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.rows[0].period, "2026-Q3");
    report_fini(&r);
    report_init(&r, PERIOD_TOTAL, NULL);
    assert_int_equal(report_add_job(&r, "a", JUL15, 1, 0, 0, NULL), 0);
    assert_int_equal(report_add_job(&r, "a", 0, 2, 0, 0, NULL), 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.rows[0].period, "total");
    assert_int_equal(r.rows[0].charged_sumin, 3);
    report_fini(&r);
}

static void test_errors(void **state)
{
    (void)state;
    struct report r;
    struct allot_error err;
    char longkey[ALLOT_NAME_MAX + 1];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    report_init(&r, PERIOD_MONTH, NULL);
    assert_int_equal(report_add_job(&r, "a", JUL15, INT64_MAX, 0, 0, NULL), 0);
    assert_int_equal(report_add_job(&r, "a", JUL15, 1, 5, 0, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(r.rows[0].jobs, 1); /* unchanged: all or nothing */
    assert_int_equal(r.rows[0].cpu_s, 0);
    assert_int_equal(report_add_job(&r, "b", JUL15, -1, 0, 0, &err), -1);
    assert_int_equal(r.n, 1); /* no row left behind */
    assert_int_equal(report_add_job(&r, longkey, JUL15, 1, 0, 0, &err), -1);
    assert_int_equal(r.n, 1);
    report_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_months),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
