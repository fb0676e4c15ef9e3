/* SPDX-License-Identifier: GPL-3.0-or-later */
/* prep_refusal.c - unit tests of what prep/allot does with a refused start hold
 * (prep/allot/prep_refusal.c): wait while credit can free up, cancel when it never can,
 * or always under StartRefusal=cancel; and the reason text names what happens next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/prep/allot/prep_refusal.h"

static struct allot_job_result refused(int64_t cost, int64_t avail, int64_t held)
{
    struct allot_job_result r = {.ok = 0, .refusal = ALLOT_EFUNDS, .alloc_id = 7};
    r.cost_sumin = cost;
    r.available_sumin = avail;
    r.held_sumin = held;
    strcpy(r.message, "account chem: available 7 SU");
    return r;
}

static void test_decide(void **state)
{
    (void)state;
    struct allot_job_result r = refused(10, 7, 30);
    assert_int_equal(prep_refusal_decide(0, &r), PREP_REFUSAL_WAIT);
    assert_int_equal(prep_refusal_decide(1, &r), PREP_REFUSAL_CANCEL);
    /* Exactly what is left in all: it can still be paid once the others settle. */
    r = refused(37, 7, 30);
    assert_int_equal(prep_refusal_decide(0, &r), PREP_REFUSAL_WAIT);
    r = refused(38, 7, 30);
    assert_int_equal(prep_refusal_decide(0, &r), PREP_REFUSAL_NEVER);
    assert_int_equal(prep_refusal_decide(1, &r), PREP_REFUSAL_CANCEL);
    /* No allocation pays for it: waiting cannot help. */
    r = refused(5, 0, 0);
    r.alloc_id = 0;
    assert_int_equal(prep_refusal_decide(0, &r), PREP_REFUSAL_NEVER);
    /* A limit, not credit. */
    r = refused(5, 7, 30);
    r.refusal = ALLOT_ELIMIT;
    assert_int_equal(prep_refusal_decide(0, &r), PREP_REFUSAL_NEVER);
}

static void test_reason(void **state)
{
    (void)state;
    struct allot_job_result r = refused(10, 7, 30);
    char buf[2048], small[16];
    prep_refusal_reason(PREP_REFUSAL_WAIT, 30, &r, buf, sizeof(buf));
    assert_string_equal(buf, "allot: waiting for credit, start retried every 30 s: account "
                             "chem: available 7 SU");
    prep_refusal_reason(PREP_REFUSAL_NEVER, 30, &r, buf, sizeof(buf));
    assert_non_null(strstr(buf, "cannot cover it even when other jobs end"));
    prep_refusal_reason(PREP_REFUSAL_CANCEL, 30, &r, buf, sizeof(buf));
    assert_non_null(strstr(buf, "StartRefusal=cancel"));
    prep_refusal_reason(PREP_REFUSAL_WAIT, 30, &r, small, sizeof(small));
    assert_int_equal(strlen(small), sizeof(small) - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide),
        cmocka_unit_test(test_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
