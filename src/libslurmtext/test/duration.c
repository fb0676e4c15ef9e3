/* SPDX-License-Identifier: GPL-3.0-or-later */
/* duration.c - vectors for slt_duration_parse/format: every form Slurm 22.05.8 printed on
 * the test cluster (Elapsed, Timelimit, TotalCPU "MM:SS.mmm", AveCPU, squeue %L "2:00"),
 * special words, and malformed text (outputs untouched, message names field and text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/duration.h"

static const struct {
    const char *text;
    enum slt_duration_kind kind;
    int64_t ms;
    const char *canon; /* format() output */
} good[] = {
    {"00:00:08", SLT_DUR_VALUE, 8000, "00:00:08"},
    {"00:05:00", SLT_DUR_VALUE, 300000, "00:05:00"},
    {"1-02:03:04", SLT_DUR_VALUE, (86400 + 2 * 3600 + 3 * 60 + 4) * 1000LL, "1-02:03:04"},
    {"2-00:00:00", SLT_DUR_VALUE, 2 * 86400000LL, "2-00:00:00"},
    {"12:00:00", SLT_DUR_VALUE, 12 * 3600000LL, "12:00:00"},
    {"00:04.511", SLT_DUR_VALUE, 4511, "00:00:04.511"},
    {"00:00.004", SLT_DUR_VALUE, 4, "00:00:00.004"},
    {"59:59.999", SLT_DUR_VALUE, 3599999, "00:59:59.999"},
    {"2:00", SLT_DUR_VALUE, 120000, "00:02:00"},
    {"0:00", SLT_DUR_VALUE, 0, "00:00:00"},
    {"1-12", SLT_DUR_VALUE, 36 * 3600000LL, "1-12:00:00"},
    {"1-12:30", SLT_DUR_VALUE, (36 * 3600 + 1800) * 1000LL, "1-12:30:00"},
    {"60", SLT_DUR_VALUE, 3600000, "01:00:00"},
    {"00:00:01.5", SLT_DUR_VALUE, 1500, "00:00:01.500"},
    {"UNLIMITED", SLT_DUR_UNLIMITED, 0, "UNLIMITED"},
    {"infinite", SLT_DUR_UNLIMITED, 0, "UNLIMITED"},
    {"Partition_Limit", SLT_DUR_PARTITION_LIMIT, 0, "Partition_Limit"},
    {"INVALID", SLT_DUR_INVALID, 0, "INVALID"},
    {"", SLT_DUR_NONE, 0, ""},
};

static const char *const bad[] = {
    "x",
    "1:",
    ":1",
    "1::2",
    "00:60:00",
    "00:00:60",
    "1-24:00:00",
    "-1",
    "1-",
    "1-2-3",
    "1:2:3:4",
    "00:00:00.",
    "00:00.1234567",
    "10.5",
    "1-02.5",
    " 1:00",
    "1:00 ",
    "+5",
    "Unlimited_",
    "99999999999999999999",
    "1-2:3:4.x",
};

static void test_good(void **state)
{
    char buf[48];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct slt_duration d = {SLT_DUR_INVALID, -7};
        struct allot_error err = {0};
        int rc = slt_duration_parse(good[i].text, strlen(good[i].text), "Elapsed", &d, &err);
        if (rc != 0)
            fail_msg("'%s': %s", good[i].text, err.msg);
        assert_int_equal(d.kind, good[i].kind);
        if (d.kind == SLT_DUR_VALUE)
            assert_int_equal(d.ms, good[i].ms);
        int n = slt_duration_format(&d, buf, sizeof(buf), &err);
        assert_int_equal(n, (int)strlen(good[i].canon));
        assert_string_equal(buf, good[i].canon);
        /* parse(format(x)) == x */
        struct slt_duration again;
        assert_int_equal(slt_duration_parse(buf, (size_t)n, "Elapsed", &again, &err), 0);
        assert_int_equal(again.kind, d.kind);
        assert_int_equal(again.ms, d.ms);
    }
}

static void test_bad(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct slt_duration d = {SLT_DUR_INVALID, -7};
        struct allot_error err = {0};
        if (slt_duration_parse(bad[i], strlen(bad[i]), "TotalCPU", &d, &err) != -1)
            fail_msg("'%s' parsed as %lld", bad[i], (long long)d.ms);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_non_null(strstr(err.msg, "TotalCPU"));
        assert_int_equal(d.kind, SLT_DUR_INVALID); /* untouched */
        assert_int_equal(d.ms, -7);
    }
}

static void test_format_small_buffer(void **state)
{
    struct slt_duration d = {SLT_DUR_VALUE, 8000};
    char buf[4] = "abc";
    struct allot_error err = {0};
    assert_int_equal(slt_duration_format(&d, buf, sizeof(buf), &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    assert_string_equal(buf, "abc");
    assert_int_equal(slt_duration_s(&d), 8);
    d.kind = SLT_DUR_UNLIMITED;
    assert_int_equal(slt_duration_s(&d), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_format_small_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
