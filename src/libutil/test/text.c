/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/text.c - text_copy against snprintf(dst, size, "%s", src), the copy it replaces: same
 * bytes, same termination, and the cut reported, for every length around the array's size;
 * a NULL source copies as "". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "libutil/text.h"

static void test_same_as_snprintf(void **state)
{
    (void)state;
    char src[40];
    for (size_t size = 1; size <= 12; size++) {
        for (size_t len = 0; len < sizeof src - 1 && len <= size + 3; len++) {
            for (size_t k = 0; k < len; k++)
                src[k] = (char)('a' + (int)k);
            src[len] = '\0';
            char got[16], want[16];
            memset(got, 'X', sizeof got);
            memset(want, 'X', sizeof want);
            int cut = text_copy(got, size, src);
            int n = snprintf(want, size, "%s", src);
            assert_memory_equal(got, want, sizeof got); /* nothing written past size */
            assert_int_equal(cut, n >= (int)size);
        }
    }
}

static void test_unterminated_tail_not_read(void **state)
{
    (void)state;
    /* src longer than dst: only size bytes of it are looked at. */
    char src[4] = {'a', 'b', 'c', 'd'}; /* no terminator */
    char dst[3];
    assert_int_equal(text_copy(dst, sizeof dst, src), 1);
    assert_string_equal(dst, "ab");
}

static void test_null_is_empty(void **state)
{
    (void)state;
    char dst[4] = "abc";
    assert_int_equal(text_copy(dst, sizeof dst, NULL), 0);
    assert_string_equal(dst, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_snprintf),
        cmocka_unit_test(test_unterminated_tail_not_read),
        cmocka_unit_test(test_null_is_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
