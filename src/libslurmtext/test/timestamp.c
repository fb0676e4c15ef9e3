/* SPDX-License-Identifier: GPL-3.0-or-later */
/* timestamp.c - "2026-11-21T22:02:08", "Unknown", "None"; conversion under a fixed offset
 * and under the local zone (TZ set by the test). */
#include <stdlib.h>
#include <time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/timestamp.h"

static void test_parse_format(void **state)
{
    static const char *const good[] = {
        "2026-11-21T22:02:08", "1970-01-01T00:00:00", "2024-02-29T23:59:59", "Unknown", "None", ""};
    char buf[32];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct slt_time t;
        struct allot_error err = {0};
        if (slt_time_parse(good[i], strlen(good[i]), "Start", &t, &err) != 0)
            fail_msg("%s: %s", good[i], err.msg);
        assert_true(slt_time_format(&t, buf, sizeof(buf), NULL) >= 0);
        assert_string_equal(buf, good[i]);
    }
    static const char *const bad[] = {"2026-11-21 22:02:08",
                                      "2026-13-01T00:00:00",
                                      "2023-02-29T00:00:00",
                                      "2026-11-21T24:00:00",
                                      "1969-12-31T23:59:59",
                                      "2026-11-21T22:02",
                                      "unknown",
                                      "2026-11-21T22:02:08Z",
                                      "2026-04-31T00:00:00"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct slt_time t = {SLT_TIME_NONE, 1, 2, 3, 4, 5, 6};
        struct allot_error err = {0};
        if (slt_time_parse(bad[i], strlen(bad[i]), "End", &t, &err) != -1)
            fail_msg("%s parsed", bad[i]);
        assert_non_null(strstr(err.msg, "End"));
        assert_int_equal(t.kind, SLT_TIME_NONE);
        assert_int_equal(t.year, 1);
    }
}

static void test_epoch(void **state)
{
    struct slt_time t;
    int64_t e = 0;
    assert_int_equal(slt_time_parse("2026-11-21T22:02:08", 19, "Start", &t, NULL), 0);
    struct slt_tz utc = {SLT_TZ_OFFSET, 0}, cet = {SLT_TZ_OFFSET, 3600};
    assert_int_equal(slt_time_to_epoch(&t, &utc, &e, NULL), 0);
    assert_int_equal(e, 1795298528); /* date -u -d 2026-11-21T22:02:08 +%s */
    assert_int_equal(slt_time_to_epoch(&t, &cet, &e, NULL), 0);
    assert_int_equal(e, 1795298528 - 3600);
    setenv("TZ", "America/New_York", 1);
    tzset();
    struct slt_tz local = {SLT_TZ_LOCAL, 0};
    assert_int_equal(slt_time_to_epoch(&t, &local, &e, NULL), 0);
    assert_int_equal(e, 1795298528 + 5 * 3600); /* EST in November */
    /* 2026-03-08T02:30:00 does not exist in New York (spring forward). */
    assert_int_equal(slt_time_parse("2026-03-08T02:30:00", 19, "Start", &t, NULL), 0);
    int64_t keep = 99;
    assert_int_equal(slt_time_to_epoch(&t, &local, &keep, NULL), -1);
    assert_int_equal(keep, 99);
    struct slt_time unk;
    assert_int_equal(slt_time_parse("Unknown", 7, "End", &unk, NULL), 0);
    assert_int_equal(slt_time_to_epoch(&unk, &utc, &keep, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_format),
        cmocka_unit_test(test_epoch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
