/* SPDX-License-Identifier: GPL-3.0-or-later */
/* breaker.c - unit tests of the plugins' circuit breaker (plugins/common/breaker.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plugins/common/breaker.h"

static breaker_t b = BREAKER_INITIALIZER;

/* closed -> a timeout opens it -> calls skip for the window -> one probe -> its answer
 * closes it, with the count of calls decided while open. */
static void test_open_window_probe_close(void **state)
{
    (void)state;
    int64_t open_ms = -1;
    uint64_t skipped = 99, opens, total;

    breaker_init(&b, 1000, 3000);
    enum breaker_verdict v = breaker_enter(&b, 0);
    assert_int_equal(v, BREAKER_CALL);
    assert_int_equal(breaker_leave(&b, v, 0, 10, &open_ms, &skipped), BREAKER_NONE);
    v = breaker_enter(&b, 100);
    assert_int_equal(v, BREAKER_CALL);
    assert_int_equal(breaker_leave(&b, v, 1, 600, &open_ms, &skipped), BREAKER_OPENED);
    assert_int_equal(skipped, 99); /* untouched on open */
    for (int t = 600; t < 1600; t += 100)
        assert_int_equal(breaker_enter(&b, t), BREAKER_SKIP);
    v = breaker_enter(&b, 1600);
    assert_int_equal(v, BREAKER_PROBE);
    assert_int_equal(breaker_enter(&b, 1650), BREAKER_SKIP); /* one probe at a time */
    assert_int_equal(breaker_leave(&b, v, 0, 1700, &open_ms, &skipped), BREAKER_CLOSED_AGAIN);
    assert_int_equal(open_ms, 1100);
    assert_int_equal(skipped, 11);
    assert_int_equal(breaker_enter(&b, 1800), BREAKER_CALL);
    breaker_counts(&b, &opens, &total);
    assert_int_equal(opens, 1);
    assert_int_equal(total, 11);
}

/* A probe that times out re-opens for a new window, without a second "opened" event. */
static void test_failed_probe_reopens(void **state)
{
    (void)state;
    uint64_t opens, total;

    breaker_init(&b, 1000, 3000);
    assert_int_equal(breaker_leave(&b, BREAKER_CALL, 1, 0, NULL, NULL), BREAKER_OPENED);
    enum breaker_verdict v = breaker_enter(&b, 1000);
    assert_int_equal(v, BREAKER_PROBE);
    assert_int_equal(breaker_leave(&b, v, 1, 1500, NULL, NULL), BREAKER_NONE);
    assert_int_equal(breaker_enter(&b, 2499), BREAKER_SKIP);
    assert_int_equal(breaker_enter(&b, 2500), BREAKER_PROBE);
    breaker_counts(&b, &opens, &total);
    assert_int_equal(opens, 1);
}

/* A probe that never reports is replaced once probe_ms has passed. */
static void test_lost_probe_replaced(void **state)
{
    (void)state;
    breaker_init(&b, 1000, 3000);
    breaker_leave(&b, BREAKER_CALL, 1, 0, NULL, NULL);
    assert_int_equal(breaker_enter(&b, 1000), BREAKER_PROBE);
    assert_int_equal(breaker_enter(&b, 3999), BREAKER_SKIP);
    assert_int_equal(breaker_enter(&b, 4000), BREAKER_PROBE);
}

/* Calls let through before the breaker opened: a late timeout changes nothing, a late
 * answer closes it (allotd answers again); a skipped call's report is ignored. */
static void test_in_flight_calls(void **state)
{
    (void)state;
    int64_t open_ms = 0;
    uint64_t skipped = 0;

    breaker_init(&b, 1000, 3000);
    assert_int_equal(breaker_leave(&b, BREAKER_CALL, 1, 0, NULL, NULL), BREAKER_OPENED);
    assert_int_equal(breaker_leave(&b, BREAKER_CALL, 1, 100, NULL, NULL), BREAKER_NONE);
    assert_int_equal(breaker_enter(&b, 200), BREAKER_SKIP);
    assert_int_equal(breaker_leave(&b, BREAKER_SKIP, 0, 200, NULL, NULL), BREAKER_NONE);
    assert_int_equal(breaker_enter(&b, 300), BREAKER_SKIP);
    assert_int_equal(breaker_leave(&b, BREAKER_CALL, 0, 400, &open_ms, &skipped),
                     BREAKER_CLOSED_AGAIN);
    assert_int_equal(open_ms, 400);
    assert_int_equal(skipped, 2);
    assert_int_equal(breaker_enter(&b, 500), BREAKER_CALL);
}

/* PluginBreakerMs=0: never opens, every call asks allotd. */
static void test_disabled(void **state)
{
    (void)state;
    breaker_init(&b, 0, 3000);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(breaker_enter(&b, i), BREAKER_CALL);
        assert_int_equal(breaker_leave(&b, BREAKER_CALL, 1, i, NULL, NULL), BREAKER_NONE);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_window_probe_close),
        cmocka_unit_test(test_failed_probe_reopens),
        cmocka_unit_test(test_lost_probe_replaced),
        cmocka_unit_test(test_in_flight_calls),
        cmocka_unit_test(test_disabled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
