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
#define JUL01 1782864000LL /* 2026-07-01T00:00:00Z */

/* A sum of key at instant t (its period of the report's kind). */
#define AT(k, t) (&(struct report_at){.key = (k), .t_s = (t)})

static void test_months(void **state)
{
    (void)state;
    struct report r;
    report_init(&r, PERIOD_MONTH, NULL);
    assert_int_equal(report_add_jobs(&r, AT("chem", JUL15), 1, 960, 3600 * 16, 0, NULL), 0);
    assert_int_equal(report_add_jobs(&r, AT("chem", AUG01 - 1), 1, 40, 600, 1200, NULL), 0);
    assert_int_equal(report_add_jobs(&r, AT("chem", AUG01), 1, 7, 60, 0, NULL), 0);
    assert_int_equal(report_add_jobs(&r, AT("bio", JUL15), 1, 1, 1, 0, NULL), 0);
    assert_int_equal(report_add_refusals(&r, AT("chem", JUL15 + 5), 1, NULL), 0);
    assert_int_equal(report_add_cpu(&r, AT("chem", JUL15), 1800, 3600, NULL), 0);
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
    assert_int_equal(r.rows[1].start_s, JUL01);
    assert_int_equal(r.rows[1].end_s, AUG01);
    assert_string_equal(r.rows[2].period, "2026-08");
    assert_int_equal(r.rows[2].charged_sumin, 7);
    report_fini(&r);
}

static void test_kinds(void **state)
{
    (void)state;
    struct report r;
    report_init(&r, PERIOD_QUARTER, NULL);
    assert_int_equal(report_add_jobs(&r, AT("a", JUL15), 1, 1, 0, 0, NULL), 0);
    assert_int_equal(report_add_jobs(&r, AT("a", AUG01), 1, 2, 0, 0, NULL), 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.rows[0].period, "2026-Q3");
    report_fini(&r);
    report_init(&r, PERIOD_TOTAL, NULL);
    assert_int_equal(report_add_jobs(&r, AT("a", JUL15), 1, 1, 0, 0, NULL), 0);
    assert_int_equal(report_add_jobs(&r, AT("a", 0), 1, 2, 0, 0, NULL), 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.rows[0].period, "total");
    assert_int_equal(r.rows[0].charged_sumin, 3);
    report_fini(&r);
}

/* Sums already made (per day) add as many jobs; a caller's label (an allocation's window)
 * keeps its bounds and sorts by its start before a later one. */
static void test_sums_and_labels(void **state)
{
    (void)state;
    struct report r;
    struct allot_error err;
    report_init(&r, PERIOD_MONTH, NULL);
    const struct report_at a7 = {"chem", 0, "alloc 7", AUG01, AUG01 + 86400};
    const struct report_at a3 = {"chem", 0, "alloc 3", JUL01, AUG01};
    assert_int_equal(report_add_jobs(&r, &a7, 5, 100, 50, 0, NULL), 0);
    assert_int_equal(report_add_jobs(&r, &a3, 2, 10, 5, 3, NULL), 0);
    assert_int_equal(report_add_refusals(&r, &a7, 3, NULL), 0);
    assert_int_equal(report_add_jobs(&r, &a7, -1, 0, 0, 0, &err), -1);
    const struct report_at bad = {"chem", 0, "a label far too long", 0, 1};
    assert_int_equal(report_add_jobs(&r, &bad, 1, 0, 0, 0, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    report_sort(&r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.rows[0].period, "alloc 3");
    assert_int_equal(r.rows[0].jobs, 2);
    assert_string_equal(r.rows[1].period, "alloc 7");
    assert_int_equal(r.rows[1].jobs, 5);
    assert_int_equal(r.rows[1].charged_sumin, 100);
    assert_int_equal(r.rows[1].refusals, 3);
    assert_int_equal(r.rows[1].start_s, AUG01);
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
    assert_int_equal(report_add_jobs(&r, AT("a", JUL15), 1, INT64_MAX, 0, 0, NULL), 0);
    assert_int_equal(report_add_jobs(&r, AT("a", JUL15), 1, 1, 5, 0, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(r.rows[0].jobs, 1); /* unchanged: all or nothing */
    assert_int_equal(r.rows[0].cpu_s, 0);
    assert_int_equal(report_add_jobs(&r, AT("b", JUL15), 1, -1, 0, 0, &err), -1);
    assert_int_equal(r.n, 1); /* no row left behind */
    assert_int_equal(report_add_jobs(&r, AT(longkey, JUL15), 1, 1, 0, 0, &err), -1);
    assert_int_equal(r.n, 1);
    report_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_months),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_sums_and_labels),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
