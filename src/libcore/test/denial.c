/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/denial.c - the refusal text (doc/design.md §3.5): every part a user needs, the same
 * sentence at admission and at the hold, bounded by the caller's buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/denial.h"

/* 2026-03-02T00:00:00Z */
#define AT 1772409600

static struct denial short_of_funds(void)
{
    return (struct denial){.account = "chem-ml",
                           .resource = "cpu",
                           .cluster = "darwin",
                           .at_s = AT,
                           .cost_sumin = 11520, /* 192h: billing 4 x 2 days */
                           .billing_micro = 4000000,
                           .time_limit_s = 172800,
                           .alloc_id = 7,
                           .payer_account = "chem", /* the nearest ancestor pays */
                           .available_sumin = 6390, /* 106h30m */
                           .held_sumin = 90};
}

static void test_admission_text(void **state)
{
    (void)state;
    struct denial d = short_of_funds();
    char buf[1024];
    denial_format(buf, sizeof buf, &d);
    assert_string_equal(buf,
                        "account chem-ml, allocation 7 (cpu of account chem): available 106h30m "
                        "SU, but this job may cost up to 192h SU (billing 4 x time limit 2880 "
                        "min); running jobs hold 1h30m SU. Lower the time limit (--time) or the "
                        "resources, wait for running jobs to finish, ask your PI for more "
                        "credit, or use another account (-A).");
}

/* The hold's text is the admission's with the job in front: one sentence for both. */
static void test_hold_text_is_admission_text_with_job(void **state)
{
    (void)state;
    struct denial d = short_of_funds();
    char admit[1024], hold[1024];
    denial_format(admit, sizeof admit, &d);
    d.job_id = 1003;
    d.run = 2;
    denial_format(hold, sizeof hold, &d);
    const char prefix[] = "job 1003 run 2: ";
    assert_memory_equal(hold, prefix, sizeof prefix - 1);
    assert_string_equal(hold + sizeof prefix - 1, admit);
}

/* Under HoldMode=submit pending jobs hold their price from sbatch on: the text names who
 * holds the credit, running or pending, with both amounts when both hold some. */
static void test_holds_named(void **state)
{
    (void)state;
    struct denial d = short_of_funds();
    char buf[1024];
    d.held_sumin = 2400;
    d.held_pending_sumin = 2400; /* all of it held at submit */
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "; pending jobs hold 40h SU (held at submit). "));
    assert_null(strstr(buf, "running jobs hold"));
    assert_non_null(strstr(buf, "wait for pending jobs to run and finish, "));
    d.held_pending_sumin = 2340; /* 39h pending, 1h running */
    denial_format(buf, sizeof buf, &d);
    assert_non_null(
        strstr(buf, "; running jobs hold 1h SU and pending jobs 39h SU (held at submit). "));
    assert_non_null(strstr(buf, "wait for running jobs to finish, "));
    d.held_pending_sumin = 0;
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "; running jobs hold 40h SU. "));
    d.held_sumin = 0;
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "; running jobs hold 0h SU. "));
    /* A caller's impossible part is bounded by the total, never printed negative. */
    d.held_sumin = 60;
    d.held_pending_sumin = 600;
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "; pending jobs hold 1h SU (held at submit). "));
    d.held_pending_sumin = -5;
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "; running jobs hold 1h SU. "));
}

static void test_parts_are_exact(void **state)
{
    (void)state;
    struct denial d = short_of_funds();
    d.billing_micro = 2500000; /* 2.5 */
    d.time_limit_s = 7230;     /* 120 min 30 s: parts multiply to the cost, no rounding */
    d.cost_sumin = 302;
    char buf[1024];
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "may cost up to 5h2m SU (billing 2.5 x time limit 120 min 30 s)"));
}

static void test_no_payer_text(void **state)
{
    (void)state;
    struct denial d = short_of_funds();
    d.alloc_id = 0;
    d.resource = "gpu";
    d.job_id = 70;
    char buf[1024];
    denial_format(buf, sizeof buf, &d);
    assert_string_equal(buf,
                        "job 70 run 0: account chem-ml has no gpu allocation on cluster darwin "
                        "active at 2026-03-02T00:00:00Z, nor has any parent account; this job may "
                        "cost up to 192h SU (billing 4 x time limit 2880 min). Ask your PI or "
                        "the allocation committee for an allocation, or use another account "
                        "(-A).");
    /* What the payer would have had is not quoted: there is none. */
    assert_null(strstr(buf, "available"));
}

static void test_bounded_by_buffer(void **state)
{
    (void)state;
    struct denial d = short_of_funds();
    char buf[40];
    memset(buf, 'x', sizeof buf);
    denial_format(buf, 24, &d);
    assert_int_equal(strlen(buf), 23);
    assert_int_equal(buf[24], 'x'); /* nothing written past the size given */
    buf[0] = 'y';
    denial_format(buf, 0, &d); /* size 0: nothing written at all */
    assert_int_equal(buf[0], 'y');
}

static void test_impossible_values_print_a_mark(void **state)
{
    (void)state;
    struct denial d = short_of_funds();
    d.time_limit_s = -1;
    d.billing_micro = -1;
    d.alloc_id = 0;
    d.at_s = INT64_MAX; /* a year past 9999 */
    char buf[1024];
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "active at ?,"));
    assert_non_null(strstr(buf, "(billing ? x time limit ?)"));
}

/* A job array costs its tasks, a het component its other components' cost too: the text
 * gives the whole and its parts; a product that overflows falls back to one job's text. */
static void test_array_and_het_text(void **state)
{
    (void)state;
    struct denial d = short_of_funds();
    char buf[1024];
    d.cost_sumin = 5;
    d.billing_micro = 2500000;
    d.time_limit_s = 120;
    d.available_sumin = 32;
    d.tasks = 10;
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "available 32m SU, but this job array may cost up to 50m SU "
                                "(10 tasks x 5m SU, billing 2.5 x time limit 2 min); "));
    d.tasks = 1;
    d.extra_sumin = 30;
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "but this heterogeneous job may cost up to 35m SU (this "
                                "component 5m SU, billing 2.5 x time limit 2 min, and its "
                                "other components 30m SU); "));
    d.extra_sumin = 0;
    d.tasks = INT64_MAX;
    denial_format(buf, sizeof buf, &d);
    assert_non_null(strstr(buf, "but this job may cost up to 5m SU (billing 2.5 x time limit "
                                "2 min); "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admission_text),
        cmocka_unit_test(test_hold_text_is_admission_text_with_job),
        cmocka_unit_test(test_holds_named),
        cmocka_unit_test(test_parts_are_exact),
        cmocka_unit_test(test_no_payer_text),
        cmocka_unit_test(test_bounded_by_buffer),
        cmocka_unit_test(test_impossible_values_print_a_mark),
        cmocka_unit_test(test_array_and_het_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
