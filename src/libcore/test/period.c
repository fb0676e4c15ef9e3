/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/period.c - period strings, period_of in UTC and shifted zones, DST, boundaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/period.h"

#define T_2026_01_01 1767225600LL
#define T_2026_07_01 1782864000LL
#define T_2026_08_01 1785542400LL
#define T_2026_10_01 1790812800LL
#define T_2027_01_01 1798761600LL

static void test_parse_format(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
        enum period_kind kind;
        int year, index;
    } ok[] = {
        {"2026-07", "2026-07", PERIOD_MONTH, 2026, 7},
        {"2026-Q3", "2026-Q3", PERIOD_QUARTER, 2026, 3},
        {"2026-q1", "2026-Q1", PERIOD_QUARTER, 2026, 1},
        {"2026", "2026", PERIOD_YEAR, 2026, 0},
        {"total", "total", PERIOD_TOTAL, 0, 0},
        {"0001-01", "0001-01", PERIOD_MONTH, 1, 1},
        {"9999-12", "9999-12", PERIOD_MONTH, 9999, 12},
    };
    static const char *const bad[] = {"",        "2026-13", "2026-00", "2026-Q5", "2026-Q0",
                                      "0000",    "26",      "2026-7",  "2026/07", "Total",
                                      "2026-Qx", "20260",   "x026",    "2026-1a"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct period p;
        char buf[PERIOD_STR_MAX];
        assert_int_equal(period_parse(ok[i].in, &p, NULL), 0);
        assert_int_equal(p.kind, ok[i].kind);
        assert_int_equal(p.year, ok[i].year);
        assert_int_equal(p.index, ok[i].index);
        assert_int_equal(period_format(&p, buf, sizeof(buf), NULL), 0);
        assert_string_equal(buf, ok[i].out);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct period p = {.year = 42};
        struct allot_error err = {0};
        if (period_parse(bad[i], &p, &err) != -1)
            fail_msg("'%s' accepted", bad[i]);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_int_equal(p.year, 42);
    }
    struct period p = {PERIOD_MONTH, 2026, 13};
    char buf[4];
    struct allot_error err = {0};
    assert_int_equal(period_parse(NULL, &p, &err), -1);
    assert_int_equal(period_format(&p, buf, sizeof(buf), &err), -1);
    p.index = 7;
    assert_int_equal(period_format(&p, buf, sizeof(buf), &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    p.kind = (enum period_kind)9;
    assert_int_equal(period_format(&p, buf, sizeof(buf), &err), -1);
}

static void test_kind_names(void **state)
{
    (void)state;
    enum period_kind k;
    for (int i = 0; i <= PERIOD_TOTAL; i++) {
        assert_int_equal(period_kind_parse(period_kind_name((enum period_kind)i), &k), 0);
        assert_int_equal(k, i);
    }
    assert_int_equal(period_kind_parse("week", &k), -1);
    assert_int_equal(period_kind_parse(NULL, &k), -1);
    assert_string_equal(period_kind_name((enum period_kind)7), "?");
}

static int64_t plus_2h(int64_t utc_s, void *arg)
{
    (void)utc_s;
    (void)arg;
    return 7200;
}

static int64_t minus_5h(int64_t utc_s, void *arg)
{
    (void)utc_s;
    (void)arg;
    return -18000;
}

/* A zone at +1h that moves to +2h at *arg (UTC): a gap from local T+1h to T+2h. */
static int64_t dst_forward(int64_t utc_s, void *arg)
{
    return utc_s < *(int64_t *)arg ? 3600 : 7200;
}

/* +2h that falls back to +1h at *arg: local hours repeat. */
static int64_t dst_back(int64_t utc_s, void *arg)
{
    return utc_s < *(int64_t *)arg ? 7200 : 3600;
}

static void test_period_of(void **state)
{
    (void)state;
    struct period p;
    char buf[PERIOD_STR_MAX];
    struct period_tz east = {plus_2h, NULL}, west = {minus_5h, NULL};

    assert_int_equal(period_of(PERIOD_MONTH, T_2026_07_01, NULL, &p, NULL), 0);
    period_format(&p, buf, sizeof(buf), NULL);
    assert_string_equal(buf, "2026-07");
    assert_int_equal(period_of(PERIOD_MONTH, T_2026_07_01 - 1, NULL, &p, NULL), 0);
    period_format(&p, buf, sizeof(buf), NULL);
    assert_string_equal(buf, "2026-06");
    /* 22:30 UTC on June 30 is already July 1 at +2h; 03:00 UTC July 1 is still June at -5h. */
    assert_int_equal(period_of(PERIOD_MONTH, T_2026_07_01 - 5400, &east, &p, NULL), 0);
    period_format(&p, buf, sizeof(buf), NULL);
    assert_string_equal(buf, "2026-07");
    assert_int_equal(period_of(PERIOD_QUARTER, T_2026_07_01 + 3 * 3600, &west, &p, NULL), 0);
    period_format(&p, buf, sizeof(buf), NULL);
    assert_string_equal(buf, "2026-Q2");
    assert_int_equal(period_of(PERIOD_YEAR, T_2027_01_01 - 1, NULL, &p, NULL), 0);
    period_format(&p, buf, sizeof(buf), NULL);
    assert_string_equal(buf, "2026");
    assert_int_equal(period_of(PERIOD_TOTAL, 0, NULL, &p, NULL), 0);
    assert_int_equal(p.kind, PERIOD_TOTAL);
    assert_int_equal(period_of(PERIOD_MONTH, -1, NULL, &p, NULL), 0);
    period_format(&p, buf, sizeof(buf), NULL);
    assert_string_equal(buf, "1969-12");
    assert_int_equal(period_of(PERIOD_MONTH, 951868800LL - 1, NULL, &p, NULL), 0);
    period_format(&p, buf, sizeof(buf), NULL);
    assert_string_equal(buf, "2000-02"); /* leap year */
    assert_int_equal(period_of(PERIOD_MONTH, -62135596800LL, NULL, &p, NULL), 0);
    period_format(&p, buf, sizeof(buf), NULL);
    assert_string_equal(buf, "0001-01");
    struct allot_error err = {0};
    assert_int_equal(period_of(PERIOD_MONTH, -62135596801LL, NULL, &p, &err), -1);
    assert_int_equal(period_of(PERIOD_MONTH, INT64_MAX, NULL, &p, &err), -1);
    assert_int_equal(period_of((enum period_kind)9, 0, NULL, &p, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
}

static void test_step(void **state)
{
    (void)state;
    static const struct {
        const char *p, *next, *prev;
    } v[] = {
        {"2026-12", "2027-01", "2026-11"}, {"2026-01", "2026-02", "2025-12"},
        {"2026-Q4", "2027-Q1", "2026-Q3"}, {"2026-Q1", "2026-Q2", "2025-Q4"},
        {"2026", "2027", "2025"},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        struct period p, n, b;
        char buf[PERIOD_STR_MAX];
        assert_int_equal(period_parse(v[i].p, &p, NULL), 0);
        assert_int_equal(period_next(&p, &n, NULL), 0);
        period_format(&n, buf, sizeof(buf), NULL);
        assert_string_equal(buf, v[i].next);
        assert_int_equal(period_parse(v[i].prev, &b, NULL), 0); /* and from the one before */
        assert_int_equal(period_next(&b, &n, NULL), 0);
        assert_memory_equal(&n, &p, sizeof(p));
    }
    struct period p, q = {.year = 5};
    struct allot_error err = {0};
    assert_int_equal(period_parse("total", &p, NULL), 0);
    assert_int_equal(period_next(&p, &q, &err), -1);
    assert_int_equal(q.year, 5);
    assert_int_equal(period_parse("9999-12", &p, NULL), 0);
    assert_int_equal(period_next(&p, &q, &err), -1);
    assert_int_equal(period_parse("2026", &p, NULL), 0);
    p.index = 3; /* invalid year period */
    assert_int_equal(period_next(&p, &q, &err), -1);
    assert_int_equal(q.year, 5);
}

static void test_bounds(void **state)
{
    (void)state;
    struct period p;
    int64_t s, e;
    struct period_tz east = {plus_2h, NULL};

    assert_int_equal(period_parse("2026-07", &p, NULL), 0);
    assert_int_equal(period_start_utc(&p, NULL, &s, NULL), 0);
    assert_int_equal(period_end_utc(&p, NULL, &e, NULL), 0);
    assert_int_equal(s, T_2026_07_01);
    assert_int_equal(e, T_2026_08_01);
    assert_int_equal(period_start_utc(&p, &east, &s, NULL), 0);
    assert_int_equal(s, T_2026_07_01 - 7200);
    assert_int_equal(period_parse("2026-Q3", &p, NULL), 0);
    assert_int_equal(period_start_utc(&p, NULL, &s, NULL), 0);
    assert_int_equal(period_end_utc(&p, NULL, &e, NULL), 0);
    assert_int_equal(s, T_2026_07_01);
    assert_int_equal(e, T_2026_10_01);
    assert_int_equal(period_parse("2026", &p, NULL), 0);
    assert_int_equal(period_start_utc(&p, NULL, &s, NULL), 0);
    assert_int_equal(period_end_utc(&p, NULL, &e, NULL), 0);
    assert_int_equal(s, T_2026_01_01);
    assert_int_equal(e, T_2027_01_01);
    assert_int_equal(period_parse("total", &p, NULL), 0);
    assert_int_equal(period_start_utc(&p, NULL, &s, NULL), 0);
    assert_int_equal(period_end_utc(&p, NULL, &e, NULL), 0);
    assert_true(s == INT64_MIN && e == INT64_MAX);
    assert_int_equal(period_parse("9999", &p, NULL), 0);
    assert_int_equal(period_end_utc(&p, NULL, &e, NULL), 0);
    assert_int_equal(e, 253402300800LL);
    p.index = 4;
    assert_int_equal(period_start_utc(&p, NULL, &s, NULL), -1);
    assert_int_equal(period_end_utc(&p, NULL, &e, NULL), -1);
}

static void test_dst(void **state)
{
    (void)state;
    struct period p;
    int64_t s;
    /* Gap exactly over local midnight July 1: at T = July 1 00:00 local(+1h) = June 30 23:00Z
     * clocks jump from 00:00 to 01:00; local midnight does not exist. */
    int64_t t = T_2026_07_01 - 3600;
    struct period_tz fwd = {dst_forward, &t};
    assert_int_equal(period_parse("2026-07", &p, NULL), 0);
    assert_int_equal(period_start_utc(&p, &fwd, &s, NULL), 0);
    assert_int_equal(s, T_2026_07_01 - 3600); /* the first instant of July there */
    assert_int_equal(period_of(PERIOD_MONTH, s, &fwd, &p, NULL), 0);
    assert_int_equal(p.index, 7);
    assert_int_equal(period_of(PERIOD_MONTH, s - 1, &fwd, &p, NULL), 0);
    assert_int_equal(p.index, 6);
    /* Overlap over midnight: +2h falls back to +1h at July 1 00:30 local(+2h) = June 30
     * 22:30Z; local 00:00..00:30 then occurs twice.  The earlier midnight wins. */
    int64_t t2 = T_2026_07_01 - 5400;
    struct period_tz back = {dst_back, &t2};
    assert_int_equal(period_parse("2026-07", &p, NULL), 0);
    assert_int_equal(period_start_utc(&p, &back, &s, NULL), 0);
    assert_int_equal(s, T_2026_07_01 - 7200);
    /* Offset changes far from midnight do not matter. */
    int64_t t3 = T_2026_07_01 + 10 * 86400;
    struct period_tz far = {dst_forward, &t3};
    assert_int_equal(period_start_utc(&p, &far, &s, NULL), 0);
    assert_int_equal(s, T_2026_07_01 - 3600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_format), cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_period_of),    cmocka_unit_test(test_step),
        cmocka_unit_test(test_bounds),       cmocka_unit_test(test_dst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
