/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * submit_token.c - tests of hold-at-submit tokens (plugins/common/submit_token.h): tokens
 * grow strictly and stay in [2^32, 2^62]; the AdminComment word is parsed strictly (one
 * well-formed word or nothing is trusted); annotate drops every foreign token word, keeps
 * the administrator's other words and refuses what does not fit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "plugins/common/submit_token.h"

static void test_next_grows_and_in_range(void **state)
{
    (void)state;
    int64_t last = 0;
    int64_t a = submit_token_next(&last, 1700000000, 5);
    assert_int_equal(a, ((int64_t)1700000000 << 20) | 5);
    /* Same microsecond, or a clock that stepped back: still strictly greater. */
    int64_t b = submit_token_next(&last, 1700000000, 5);
    assert_int_equal(b, a + 1);
    int64_t c = submit_token_next(&last, 1699999000, 0);
    assert_int_equal(c, b + 1);
    assert_int_equal(last, c);
    /* A restart (last = 0) one second later still makes a larger token. */
    int64_t last2 = 0;
    assert_true(submit_token_next(&last2, 1700000001, 0) > c);
    int64_t last3 = 0;
    assert_true(submit_token_next(&last3, 4096, 0) >= SUBMIT_TOKEN_MIN);
    assert_true(submit_token_next(&last3, 1, 0) >= SUBMIT_TOKEN_MIN);
    int64_t last4 = 0;
    assert_true(submit_token_next(&last4, (int64_t)4102444800, 999999) <= SUBMIT_TOKEN_MAX);
}

static void test_parse(void **state)
{
    (void)state;
    int64_t t = -7;
    assert_int_equal(submit_token_parse(NULL, &t), 0);
    assert_int_equal(submit_token_parse("", &t), 0);
    assert_int_equal(submit_token_parse("reserved for the chem course", &t), 0);
    assert_int_equal(t, -7);
    assert_int_equal(submit_token_parse("allot_token=4294967296", &t), 1);
    assert_int_equal(t, (int64_t)1 << 32);
    assert_int_equal(submit_token_parse("note 1  allot_token=1782579200000005\tend", &t), 1);
    assert_int_equal(t, 1782579200000005LL);
    assert_int_equal(submit_token_parse("allot_token=4611686018427387904", &t), 1);
    /* Part of another word is not ours. */
    assert_int_equal(submit_token_parse("xallot_token=4294967296", &t), 0);
    /* Malformed or more than one: never trusted. */
    const char *bad[] = {
        "allot_token=",
        "allot_token=4294967295",              /* a job id, below 2^32 */
        "allot_token=4611686018427387905",     /* above 2^62 */
        "allot_token=99999999999999999999999", /* would overflow */
        "allot_token=-4294967296",
        "allot_token=+4294967296",
        "allot_token=4294967296x",
        "allot_token=0x100000000",
        "allot_token=4294967296 allot_token=4294967296",
        "allot_token=4294967296 allot_token=4294967297",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        t = 11;
        assert_int_equal(submit_token_parse(bad[i], &t), -1);
        assert_int_equal(t, 11);
    }
}

static void test_annotate(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(submit_token_annotate(NULL, 4294967296, out, sizeof(out)), 22);
    assert_string_equal(out, "allot_token=4294967296");
    assert_int_equal(submit_token_annotate("", 0, out, sizeof(out)), 0);
    assert_string_equal(out, "");
    submit_token_annotate("  keep  me ", 4294967297, out, sizeof(out));
    assert_string_equal(out, "keep me allot_token=4294967297");
    /* Every foreign token word goes, malformed ones too; the new one is the only one. */
    submit_token_annotate("a allot_token=4294967300 b allot_token=junk", 4294967297, out,
                          sizeof(out));
    assert_string_equal(out, "a b allot_token=4294967297");
    int64_t t = 0;
    assert_int_equal(submit_token_parse(out, &t), 1);
    assert_int_equal(t, 4294967297);
    submit_token_annotate("allot_token=4294967300 x", 0, out, sizeof(out));
    assert_string_equal(out, "x");
    submit_token_annotate("xallot_token=1", 0, out, sizeof(out));
    assert_string_equal(out, "xallot_token=1");
    /* Does not fit: -1 and an empty result, never a cut token. */
    char small[24];
    assert_int_equal(submit_token_annotate("abc", 4294967296, small, sizeof(small)), -1);
    assert_string_equal(small, "");
    assert_int_equal(submit_token_annotate(NULL, 4294967296, small, sizeof(small)), 22);
    char tiny[4];
    assert_int_equal(submit_token_annotate("abcdef", 0, tiny, sizeof(tiny)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_grows_and_in_range),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_annotate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
