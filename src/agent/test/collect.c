/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect.c - collect_check_output: a sacct window is acted on only when every row of its
 * output reads whole; a row skipped with the marker moved past it would be a job never
 * charged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/collect.h"

/* JobIDRaw,State,User,Account,Partition,QOS,Start,End,ElapsedRaw,Timelimit,AllocTRES,AllocCPUS,
 * JobID */
#define ROW1                                                                                       \
    "101|COMPLETED|alice|chem|debug|normal|2026-11-21T20:42:20|2026-11-21T20:43:20|"               \
    "60|01:00:00|billing=4,cpu=4,mem=4000M,node=1|4|100_1\n"
#define ROW2                                                                                       \
    "102|CANCELLED by 0|bob|phys|debug|normal|Unknown|2026-11-21T20:44:00|"                        \
    "0|01:00:00||0|102\n"

static int check(const char *text, struct allot_error *err)
{
    return collect_check_output(text, strlen(text), err);
}

static void test_good(void **state)
{
    struct allot_error err = {0};
    assert_int_equal(check(ROW1 ROW2, &err), 0);
    assert_int_equal(check("", &err), 0);
}

static void test_extra_column_refused(void **state)
{
    struct allot_error err = {0};
    assert_int_equal(check(ROW1 "103|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                                "2026-11-21T20:43:20|60|01:00:00|billing=1|1|103|x\n",
                           &err),
                     -1);
    assert_non_null(strstr(err.msg, "line 2"));
}

static void test_cut_output_refused(void **state)
{
    struct allot_error err = {0};
    /* cut inside AllocCPUS: "16" read as "1" would still parse */
    assert_int_equal(check(ROW1 "103|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                                "2026-11-21T20:43:20|60|01:00:00||1|10",
                           &err),
                     -1);
    assert_non_null(strstr(err.msg, "newline"));
}

static void test_billing_units_refused(void **state)
{
    struct allot_error err = {0};
    assert_int_equal(check("103|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                           "2026-11-21T20:43:20|60|01:00:00|billing=2K,cpu=4|4|103\n",
                           &err),
                     -1);
    assert_non_null(strstr(err.msg, "AllocTRES"));
    assert_int_equal(check("103|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                           "2026-11-21T20:43:20|60|01:00:00|billing=1.5|4|103\n",
                           &err),
                     -1);
}

static void test_bad_values_refused(void **state)
{
    struct allot_error err = {0};
    /* a step id where a job id belongs, an unknown state, an ElapsedRaw with a unit */
    assert_int_equal(check("103.batch|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                           "2026-11-21T20:43:20|60|01:00:00|billing=1|1|103.batch\n",
                           &err),
                     -1);
    assert_int_equal(check("103|DONE|a|chem|debug|normal|2026-11-21T20:42:20|"
                           "2026-11-21T20:43:20|60|01:00:00|billing=1|1|103\n",
                           &err),
                     -1);
    assert_int_equal(check("103|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                           "2026-11-21T20:43:20|60s|01:00:00|billing=1|1|103\n",
                           &err),
                     -1);
}

static void test_job_names(void **state)
{
    struct allot_error err = {0};
    /* an array task and a het component as sacct names them; a bad JobID is refused */
    assert_int_equal(check("103|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                           "2026-11-21T20:43:20|60|01:00:00|billing=1|1|100_3\n"
                           "104|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                           "2026-11-21T20:43:20|60|01:00:00|billing=1|1|103+1\n",
                           &err),
                     0);
    assert_int_equal(check("103|COMPLETED|a|chem|debug|normal|2026-11-21T20:42:20|"
                           "2026-11-21T20:43:20|60|01:00:00|billing=1|1|100_x\n",
                           &err),
                     -1);
    assert_non_null(strstr(err.msg, "JobID"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_extra_column_refused),
        cmocka_unit_test(test_cut_output_refused),
        cmocka_unit_test(test_billing_units_refused),
        cmocka_unit_test(test_bad_values_refused),
        cmocka_unit_test(test_job_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
