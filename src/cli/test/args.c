/* SPDX-License-Identifier: GPL-3.0-or-later */
/* args.c - unit tests of the CLI's argument syntax (src/cli/args.c): key=value
 * splitting, amounts, dates, time limits, booleans and decimals, table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/args.h"

static void test_split(void **state)
{
    (void)state;
    char *argv[] = {"chem", "Parent=science", "fairshare=100", "comment=a=b c", "su=-2h"};
    const char *pos[2];
    int npos = -1;
    struct kvlist kvs;
    struct allot_error err = {0};

    assert_int_equal(args_split(5, argv, pos, 1, &npos, &kvs, &err), 0);
    assert_int_equal(npos, 1);
    assert_string_equal(pos[0], "chem");
    assert_int_equal(kvs.n, 4);
    assert_string_equal(args_get(&kvs, "parent"), "science"); /* keys are case-insensitive */
    assert_string_equal(args_get(&kvs, "comment"), "a=b c");  /* first '=' splits */
    assert_null(args_get(&kvs, "missing"));
    assert_int_equal(args_check_used(&kvs, "account add", &err), -1);
    assert_non_null(strstr(err.msg, "unknown key 'fairshare'"));
    args_get(&kvs, "fairshare");
    args_get(&kvs, "su");
    assert_int_equal(args_check_used(&kvs, "account add", &err), 0);
}

static void test_split_errors(void **state)
{
    (void)state;
    const char *pos[1];
    int npos = 0;
    struct kvlist kvs;
    struct allot_error err = {0};
    char *twice[] = {"a=1", "A=2"};
    char *nokey[] = {"=x"};
    char *extra[] = {"one", "two"};
    char *odd[] = {"a-b=1"}; /* not a key: a positional word */

    assert_int_equal(args_split(2, twice, pos, 1, &npos, &kvs, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_non_null(strstr(err.msg, "a: given twice"));
    assert_int_equal(args_split(1, nokey, pos, 1, &npos, &kvs, &err), -1);
    assert_non_null(strstr(err.msg, "missing key"));
    assert_int_equal(args_split(2, extra, pos, 1, &npos, &kvs, &err), -1);
    assert_non_null(strstr(err.msg, "unexpected argument 'two'"));
    assert_int_equal(args_split(1, odd, pos, 1, &npos, &kvs, &err), 0);
    assert_int_equal(npos, 1);
    assert_int_equal(kvs.n, 0);
}

static const struct {
    const char *in;
    int signed_ok;
    int ok;
    int64_t sumin;
} amounts[] = {
    {"100000h", 0, 1, 6000000},
    {"1.5h", 0, 1, 90},
    {"90m", 0, 1, 90},
    {"12h30m", 0, 1, 750},
    {"2", 0, 1, 120},
    {"0h", 0, 1, 0},
    {"-2h", 1, 1, -120},
    {"-2h", 0, 0, 0},
    {"abc", 0, 0, 0},
    {"1.001h", 0, 0, 0},
    {"", 0, 0, 0},
    {"10x", 0, 0, 0},
    {"99999999999999999999h", 0, 0, 0},
};

static void test_amounts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(amounts) / sizeof(amounts[0]); i++) {
        int64_t v = -77;
        struct allot_error err = {0};
        int rc = args_amount("su", amounts[i].in, amounts[i].signed_ok, &v, &err);
        if (amounts[i].ok) {
            if (rc != 0 || v != amounts[i].sumin)
                fail_msg("'%s': rc %d v %lld (%s)", amounts[i].in, rc, (long long)v, err.msg);
        } else {
            if (rc != -1 || v != -77 || err.code != ALLOT_EINVAL || strncmp(err.msg, "su: ", 4))
                fail_msg("'%s' accepted or bad error '%s'", amounts[i].in, err.msg);
        }
    }
}

static const struct {
    const char *in;
    int ok;
    int64_t epoch;
} times[] = {
    {"2026-01-01", 1, 1767225600},
    {"2026-01-01T00:00:00Z", 1, 1767225600},
    {"2026-01-01T12:30", 1, 1767225600 + 45000},
    {"2026-01-01 12:30:15Z", 1, 1767225600 + 45015},
    {"1767225600", 1, 1767225600},
    {"2024-02-29", 1, 1709164800},
    {"2026-02-29", 0, 0}, /* not a leap year */
    {"2026-13-01", 0, 0},
    {"2026-1-1", 0, 0},
    {"2026-01-01T25:00", 0, 0},
    {"1969-12-31", 0, 0},
    {"2026-01-01x", 0, 0},
    {"yesterday", 0, 0},
    {"", 0, 0},
};

static void test_times(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        int64_t v = -1;
        struct allot_error err = {0};
        int rc = args_time("start", times[i].in, &v, &err);
        if (times[i].ok) {
            if (rc != 0 || v != times[i].epoch)
                fail_msg("'%s': rc %d v %lld (%s)", times[i].in, rc, (long long)v, err.msg);
        } else {
            if (rc != -1 || v != -1 || strncmp(err.msg, "start: ", 7))
                fail_msg("'%s' accepted or bad error '%s'", times[i].in, err.msg);
        }
    }
    char buf[32];
    args_format_time(1767225600 + 45015, buf, sizeof(buf));
    assert_string_equal(buf, "2026-01-01T12:30:15Z");
}

static const struct {
    const char *in;
    int64_t s; /* 0 = refused */
} durations[] = {
    {"60", 3600},
    {"1:30", 90},
    {"1:30:00", 5400},
    {"2-00:00:00", 172800},
    {"1-12", 129600},
    {"1-12:30", 131400},
    {"90s", 90},
    {"0", 0},
    {"1:60", 0},
    {"1:00:60", 0},
    {"1-24", 0},
    {"", 0},
    {"1:2:3:4", 0},
    {"abc", 0},
    {"400-00:00:00", 0},
    {"-5", 0},
    /* The bound, 366 days, in each form (fuzz_args found "526325" minutes accepted while
     * the header said 365 days: the header was wrong). */
    {"365-23:59:59", 31622399},
    {"366-00", 0},
    {"527040", 31622400},
    {"527041", 0},
    {"31622400s", 31622400},
    {"31622401s", 0},
    {"8784:00:00", 31622400},
    {"8784:00:01", 0},
};

static void test_durations(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
        int64_t v = -1;
        struct allot_error err = {0};
        int rc = args_duration("timelimit", durations[i].in, &v, &err);
        if (durations[i].s) {
            if (rc != 0 || v != durations[i].s)
                fail_msg("'%s': rc %d v %lld (%s)", durations[i].in, rc, (long long)v, err.msg);
        } else {
            if (rc != -1 || v != -1 || strncmp(err.msg, "timelimit: ", 11))
                fail_msg("'%s' accepted or bad error '%s'", durations[i].in, err.msg);
        }
    }
}

/* An elapsed time may be 0 (a job cancelled as it started: sacct's 00:00:00); a partition's
 * time may be Slurm's "no limit" words, as -1. */
static void test_elapsed_and_timelimit(void **state)
{
    (void)state;
    int64_t v = 7;
    struct allot_error err = {0};
    static const char *const zeros[] = {"0", "00:00:00", "0s", "0-00:00"};
    for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++) {
        v = 7;
        if (args_elapsed("elapsed", zeros[i], &v, &err) != 0 || v != 0)
            fail_msg("elapsed '%s': v %lld (%s)", zeros[i], (long long)v, err.msg);
    }
    assert_int_equal(args_elapsed("elapsed", "1:30", &v, &err), 0);
    assert_int_equal(v, 90);
    assert_int_equal(args_elapsed("elapsed", "-1", &v, &err), -1);
    assert_int_equal(args_elapsed("elapsed", "400-00:00:00", &v, &err), -1);
    assert_non_null(strstr(err.msg, "elapsed: "));

    static const char *const unlimited[] = {"UNLIMITED", "infinite", "None", ""};
    for (size_t i = 0; i < sizeof(unlimited) / sizeof(unlimited[0]); i++) {
        v = 7;
        if (args_timelimit("maxtime", unlimited[i], &v, &err) != 0 || v != -1)
            fail_msg("maxtime '%s': v %lld (%s)", unlimited[i], (long long)v, err.msg);
    }
    assert_int_equal(args_timelimit("maxtime", "2-00:00:00", &v, &err), 0);
    assert_int_equal(v, 172800);
    v = 7;
    assert_int_equal(args_timelimit("maxtime", "0", &v, &err), -1);
    assert_int_equal(args_timelimit("maxtime", "forever", &v, &err), -1);
    assert_int_equal(v, 7);
    assert_non_null(strstr(err.msg, "maxtime: 'forever'"));
}

static void test_scalars(void **state)
{
    (void)state;
    int64_t v = 0;
    int b = -1;
    struct allot_error err = {0};
    assert_int_equal(args_uint("id", "42", &v, &err), 0);
    assert_int_equal(v, 42);
    assert_int_equal(args_uint("id", "9223372036854775807", &v, &err), 0);
    assert_int_equal(args_uint("id", "9223372036854775808", &v, &err), -1);
    assert_int_equal(args_uint("id", "-1", &v, &err), -1);
    assert_int_equal(args_uint("id", "", &v, &err), -1);
    assert_int_equal(args_bool("maxtres", "YES", &b, &err), 0);
    assert_int_equal(b, 1);
    assert_int_equal(args_bool("maxtres", "off", &b, &err), 0);
    assert_int_equal(b, 0);
    assert_int_equal(args_bool("maxtres", "maybe", &b, &err), -1);
    assert_int_equal(args_decimal("usagefactor", "1.5", &err), 0);
    assert_int_equal(args_decimal("usagefactor", "2", &err), 0);
    assert_int_equal(args_decimal("usagefactor", "0.000001", &err), 0);
    assert_int_equal(args_decimal("usagefactor", "0.0000001", &err), -1);
    assert_int_equal(args_decimal("usagefactor", ".5", &err), -1);
    assert_int_equal(args_decimal("usagefactor", "1.", &err), -1);
    assert_int_equal(args_decimal("usagefactor", "1e3", &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_amounts),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_elapsed_and_timelimit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
