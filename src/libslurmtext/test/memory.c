/* SPDX-License-Identifier: GPL-3.0-or-later */
/* memory.c - vectors for slt_memory_parse/format: MaxRSS "10672K", "2.50M", bare bytes
 * (sstat MaxDiskRead "14937"), "0.07M", ReqMem "500M", older "4000Mn"/"2000Mc". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/memory.h"

static const struct {
    const char *text;
    int64_t unit;
    int64_t bytes;
    enum slt_mem_scope scope;
    const char *canon;
} good[] = {
    {"10672K", 1, 10672LL * 1024, SLT_MEM_TOTAL, "10672K"},
    {"414264K", 1, 414264LL * 1024, SLT_MEM_TOTAL, "414264K"},
    {"2.50M", 1, 2621440, SLT_MEM_TOTAL, "2560K"},
    {"0.07M", 1, 73400, SLT_MEM_TOTAL, "73400"},
    {"0.00M", 1, 0, SLT_MEM_TOTAL, "0"},
    {"14937", 1, 14937, SLT_MEM_TOTAL, "14937"},
    {"0", 1, 0, SLT_MEM_TOTAL, "0"},
    {"500M", 1 << 20, 500LL << 20, SLT_MEM_TOTAL, "500M"},
    {"4000", 1 << 20, 4000LL << 20, SLT_MEM_TOTAL, "4000M"},
    {"1G", 1, 1LL << 30, SLT_MEM_TOTAL, "1G"},
    {"1.5T", 1, 3LL << 39, SLT_MEM_TOTAL, "1536G"},
    {"4000Mn", 1, 4000LL << 20, SLT_MEM_PER_NODE, "4000Mn"},
    {"2000Mc", 1, 2000LL << 20, SLT_MEM_PER_CPU, "2000Mc"},
    {"8P", 1, 8LL << 50, SLT_MEM_TOTAL, "8P"},
};

static const char *const bad[] = {"K",
                                  "1.",
                                  ".5M",
                                  "1.5.5M",
                                  "12Q",
                                  "-1K",
                                  "1KK",
                                  "1 K",
                                  "99999999999999999999",
                                  "9000P",
                                  "1.0000000001M",
                                  "n",
                                  "Mn",
                                  "1Kx"};

static void test_good(void **state)
{
    char buf[40];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct slt_memory m;
        struct allot_error err = {0};
        if (slt_memory_parse(good[i].text, strlen(good[i].text), "MaxRSS", good[i].unit, &m,
                             &err) != 0)
            fail_msg("'%s': %s", good[i].text, err.msg);
        assert_true(m.has);
        assert_int_equal(m.bytes, good[i].bytes);
        assert_int_equal(m.scope, good[i].scope);
        assert_true(slt_memory_format(&m, buf, sizeof(buf), &err) > 0);
        assert_string_equal(buf, good[i].canon);
        struct slt_memory again;
        assert_int_equal(slt_memory_parse(buf, strlen(buf), "MaxRSS", 1, &again, &err), 0);
        assert_int_equal(again.bytes, m.bytes);
        assert_int_equal(again.scope, m.scope);
    }
}

static void test_empty_is_no_data(void **state)
{
    struct slt_memory m = {true, 5, SLT_MEM_PER_CPU};
    assert_int_equal(slt_memory_parse("", 0, "MaxRSS", 1, &m, NULL), 0);
    assert_false(m.has);
    char buf[8];
    assert_int_equal(slt_memory_format(&m, buf, sizeof(buf), NULL), 0);
    assert_string_equal(buf, "");
}

static void test_bad(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct slt_memory m = {true, 77, SLT_MEM_PER_NODE};
        struct allot_error err = {0};
        if (slt_memory_parse(bad[i], strlen(bad[i]), "MaxRSS", 1, &m, &err) != -1)
            fail_msg("'%s' parsed as %lld", bad[i], (long long)m.bytes);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_non_null(strstr(err.msg, "MaxRSS"));
        assert_int_equal(m.bytes, 77);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_empty_is_no_data),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
