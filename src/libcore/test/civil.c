/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/civil.c - civil dates against known days, their round trip over 800 years on both
 * sides of 1970, and civil_format_utc against glibc's gmtime_r + strftime. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "libcore/civil.h"

static void test_known_days(void **state)
{
    (void)state;
    assert_int_equal(civil_days(1970, 1, 1), 0);
    assert_int_equal(civil_days(1969, 12, 31), -1);
    assert_int_equal(civil_days(2000, 3, 1), 11017);
    assert_int_equal(civil_days(2026, 1, 1), 20454);
    assert_int_equal(civil_days(2024, 2, 29) + 1, civil_days(2024, 3, 1));
    assert_int_equal(civil_days(2100, 2, 28) + 1, civil_days(2100, 3, 1)); /* not leap */
    assert_int_equal(civil_days(0, 1, 1), -719528);
    assert_int_equal(civil_floor_div(-1, 86400), -1);
    assert_int_equal(civil_floor_div(86399, 86400), 0);
    assert_int_equal(civil_floor_div(-86400, 86400), -1);
}

/* Every day of years -400..2400 maps to its date and back, one day after another. */
static void test_round_trip(void **state)
{
    (void)state;
    int64_t y0, y;
    int m0, d0, m, d;
    civil_date(civil_days(-400, 1, 1), &y0, &m0, &d0);
    assert_true(y0 == -400 && m0 == 1 && d0 == 1);
    for (int64_t z = civil_days(-400, 1, 1); z < civil_days(2400, 1, 1); z++) {
        civil_date(z, &y, &m, &d);
        if (civil_days(y, m, d) != z || m < 1 || m > 12 || d < 1 || d > 31)
            fail_msg("day %lld: %lld-%d-%d", (long long)z, (long long)y, m, d);
        if (d != 1 && !(y == y0 && m == m0 && d == d0 + 1))
            fail_msg("day %lld does not follow %lld-%d-%d", (long long)z, (long long)y0, m0, d0);
        y0 = y;
        m0 = m;
        d0 = d;
    }
}

/* The same text as gmtime_r + strftime for times spread over years 0..9999, and refusal
 * outside them. */
static void test_format_utc(void **state)
{
    (void)state;
    char got[CIVIL_UTC_LEN + 1], want[64];
    uint64_t x = 88172645463325252u; /* xorshift64 */
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t t = -62167219200 + (int64_t)(x % (253402300799u + 62167219200u + 1));
        if (i < 4)
            t = (int64_t[]){0, 1, -1, 253402300799}[i];
        time_t tt = (time_t)t;
        struct tm tm;
        assert_non_null(gmtime_r(&tt, &tm));
        /* glibc prints years before 1000 with fewer digits: compare from the fields. */
        snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        assert_int_equal(civil_format_utc(t, got), CIVIL_UTC_LEN);
        if (strcmp(got, want) != 0)
            fail_msg("%lld: %s, gmtime_r gives %s", (long long)t, got, want);
    }
    assert_int_equal(civil_format_utc(1767225600, got), CIVIL_UTC_LEN);
    assert_string_equal(got, "2026-01-01T00:00:00Z");
    strcpy(got, "untouched");
    assert_int_equal(civil_format_utc(253402300800, got), 0);
    assert_int_equal(civil_format_utc(-62167219201, got), 0);
    assert_string_equal(got, "untouched");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_days),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_format_utc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
