/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/money.c - SU amounts, checked arithmetic, charges and holds (doc/design.md §3.3 vectors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/money.h"
#include "libcore/numparse.h"

static const struct {
    const char *in;
    int64_t sumin;
    const char *fmt;
} parse_ok[] = {
    {"100000h", 6000000, "100000h"},
    {"1.5h", 90, "1h30m"},
    {"250m", 250, "4h10m"},
    {"2", 120, "2h"},
    {"0.5", 30, "30m"},
    {"0.05h", 3, "3m"},
    {".5h", 30, "30m"},
    {"12h30m", 750, "12h30m"},
    {"0h59m", 59, "59m"},
    {"0", 0, "0h"},
    {"0m", 0, "0h"},
    {"1.0m", 1, "1m"},
    {"1.500000000000000000h", 90, "1h30m"},
    {"153722867280912930h7m", INT64_MAX, "153722867280912930h7m"},
    {"9223372036854775807m", INT64_MAX, "153722867280912930h7m"},
};

static const char *const parse_bad[] = {
    "",
    "h",
    "m",
    "-5h",
    "1.01h",
    "0.5m",
    "1x",
    "1 h",
    "1h60m",
    "h30m",
    "1hm",
    "1h5",
    "1.",
    "1.5h30m",
    "abc",
    "1e3",
    "+5h",
    "1..5h",
    "153722867280912931h",
    "9223372036854775808m",
    "153722867280912930h8m",
    "153722867280912930.5h",
    "0.0000000000000000001h",
    "1234567890123456789012345678901234567890123456789012345678901234567890h",
};

static void test_parse(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(parse_ok) / sizeof(parse_ok[0]); i++) {
        int64_t v = -1, back = -1;
        char buf[MONEY_FORMAT_MAX];
        struct allot_error err = {0};
        if (money_parse_sumin(parse_ok[i].in, &v, &err) != 0)
            fail_msg("'%s': %s", parse_ok[i].in, err.msg);
        assert_int_equal(v, parse_ok[i].sumin);
        assert_int_equal(money_format_sumin(v, buf, sizeof(buf)), 0);
        assert_string_equal(buf, parse_ok[i].fmt);
        assert_int_equal(money_parse_signed_sumin(buf, &back, &err), 0);
        assert_int_equal(back, v);
    }
    for (size_t i = 0; i < sizeof(parse_bad) / sizeof(parse_bad[0]); i++) {
        int64_t v = 77;
        struct allot_error err = {0};
        if (money_parse_sumin(parse_bad[i], &v, &err) != -1)
            fail_msg("'%s' accepted as %lld", parse_bad[i], (long long)v);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_int_equal(v, 77);
    }
    int64_t v = 0;
    assert_int_equal(money_parse_sumin(NULL, &v, NULL), -1);
    assert_int_equal(money_parse_signed_sumin(NULL, &v, NULL), -1);
}

static void test_signed(void **state)
{
    (void)state;
    int64_t v = 0;
    struct allot_error err = {0};
    char buf[MONEY_FORMAT_MAX];
    assert_int_equal(money_parse_signed_sumin("-3m", &v, &err), 0);
    assert_int_equal(v, -3);
    assert_int_equal(money_format_sumin(v, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "-3m");
    assert_int_equal(money_parse_signed_sumin("+2h", &v, &err), 0);
    assert_int_equal(v, 120);
    assert_int_equal(money_parse_signed_sumin("-1.5h", &v, &err), 0);
    assert_int_equal(v, -90);
    assert_int_equal(money_parse_signed_sumin("--1h", &v, &err), -1);
    assert_int_equal(money_parse_signed_sumin("-", &v, &err), -1);
    assert_int_equal(money_format_sumin(INT64_MIN, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "-153722867280912930h8m");
    assert_int_equal(money_format_sumin(-750, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "-12h30m");
    char small[4] = "ab";
    assert_int_equal(money_format_sumin(750, small, sizeof(small)), -1);
    assert_string_equal(small, "ab");
    assert_int_equal(money_format_sumin(60, small, sizeof(small)), 0);
    assert_string_equal(small, "1h");
}

static void test_arith(void **state)
{
    (void)state;
    int64_t r = 5;
    assert_int_equal(money_add(1, 2, &r), 0);
    assert_int_equal(r, 3);
    assert_int_equal(money_add(INT64_MAX, 1, &r), -1);
    assert_int_equal(r, 3);
    assert_int_equal(money_sub(1, 2, &r), 0);
    assert_int_equal(r, -1);
    assert_int_equal(money_sub(INT64_MIN, 1, &r), -1);
    assert_int_equal(money_mul(7, 6, &r), 0);
    assert_int_equal(r, 42);
    assert_int_equal(money_mul(INT64_MAX, 2, &r), -1);
    assert_int_equal(r, 42);
}

static const struct {
    int64_t billing_micro, secs, sumin;
} charges[] = {
    {1000000, 55, 1},                 /* HADM: 55 core-seconds cost 1 core-minute */
    {1000000, 0, 0},                  /* 0 s costs 0 */
    {1000000, 60, 1},                 /* 60 s of one core costs 1 */
    {1000000, 61, 2},                 /* 61 s costs 2 */
    {0, 3600, 0},     {62500, 55, 1}, /* 1 core at CPU=0.0625 for 55 s */
    {62500, 960, 1},                  /* 0.0625 x 16 min = exactly 1 */
    {62500, 961, 2},  {2000000, 3600, 120},
    {1500000, 30, 1}, /* 0.75 minute rounds up */
    {1, 1, 1},        {INT64_MAX, 60000000, INT64_MAX},
};

static void test_charge(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(charges) / sizeof(charges[0]); i++) {
        int64_t c = -1, h = -1;
        struct allot_error err = {0};
        assert_int_equal(money_charge_sumin(charges[i].billing_micro, charges[i].secs, &c, &err),
                         0);
        assert_int_equal(c, charges[i].sumin);
        assert_int_equal(money_hold_sumin(charges[i].billing_micro, charges[i].secs, &h, &err), 0);
        assert_int_equal(h, charges[i].sumin);
    }
    int64_t c = 9;
    struct allot_error err = {0};
    assert_int_equal(money_charge_sumin(-1, 60, &c, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(money_charge_sumin(1, -60, &c, &err), -1);
    assert_int_equal(money_hold_sumin(INT64_MAX, INT64_MAX, &c, &err), -1);
    assert_int_equal(money_charge_sumin(INT64_MAX, 60000001, &c, &err), -1);
    assert_int_equal(c, 9);
}

/* The time-limit factor of a denial: exact, never rounded to whole minutes. */
static void test_format_limit(void **state)
{
    (void)state;
    char buf[32];
    assert_int_equal(money_format_limit(7200, buf, sizeof buf), 0);
    assert_string_equal(buf, "120 min");
    assert_int_equal(money_format_limit(7230, buf, sizeof buf), 0);
    assert_string_equal(buf, "120 min 30 s");
    assert_int_equal(money_format_limit(0, buf, sizeof buf), 0);
    assert_string_equal(buf, "0 min");
    assert_int_equal(money_format_limit(59, buf, sizeof buf), 0);
    assert_string_equal(buf, "0 min 59 s");
    char small[8] = "keep";
    assert_int_equal(money_format_limit(7230, small, sizeof small), -1);
    assert_string_equal(small, "keep");
    assert_int_equal(money_format_limit(-1, buf, sizeof buf), -1);
}

static void test_numparse(void **state)
{
    (void)state;
    int64_t v = 0;
    char buf[32];
    assert_int_equal(numparse_uint("", 0, &v), -1);
    assert_int_equal(numparse_fixed("1.5", 3, 6, &v), 0);
    assert_int_equal(v, 1500000);
    assert_int_equal(numparse_fixed("1.5", 3, 19, &v), -1);
    assert_int_equal(numparse_fixed("1.5", 3, -1, &v), -1);
    assert_int_equal(numparse_fixed("", 0, 2, &v), -1);
    assert_int_equal(numparse_fixed(".", 1, 2, &v), -1);
    assert_int_equal(numparse_fixed("1.2x", 4, 2, &v), -1);
    assert_int_equal(numparse_fixed("1.234", 5, 2, &v), -1);
    assert_int_equal(numparse_fixed("1.230", 5, 2, &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(numparse_fixed("x.5", 3, 2, &v), -1);
    assert_int_equal(numparse_fixed("92233720368547758.08", 20, 2, &v), -1);
    assert_int_equal(numparse_format_fixed(31250, 6, buf, sizeof(buf)), 7);
    assert_string_equal(buf, "0.03125");
    assert_int_equal(numparse_format_fixed(2000000, 6, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "2");
    assert_int_equal(numparse_format_fixed(-1, 6, buf, sizeof(buf)), -1);
    assert_int_equal(numparse_format_fixed(1, 19, buf, sizeof(buf)), -1);
    assert_int_equal(numparse_format_fixed(123456, 3, buf, 4), -1);
    assert_string_equal(buf, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),    cmocka_unit_test(test_signed),
        cmocka_unit_test(test_arith),    cmocka_unit_test(test_charge),
        cmocka_unit_test(test_numparse), cmocka_unit_test(test_format_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
