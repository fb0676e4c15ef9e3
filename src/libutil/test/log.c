/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/log.c - a logged value cannot forge a line or a field: log_write escapes every
 * control byte of the line (one event is one line, whatever the text), log_quote escapes
 * quotes and backslashes as well, and both cut at a whole escape within their bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "libutil/log.h"

/* What one log_write of "msg=%s" with text wrote, without the "prog: level: " prefix. */
static void logged(const char *text, char *out, size_t size)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    log_init("t", fd[1], 0, LOG_LVL_INFO);
    log_info("msg=%s", text);
    close(fd[1]);
    ssize_t n = read(fd[0], out, size - 1);
    close(fd[0]);
    assert_true(n > 0);
    out[n] = '\0';
    const char *prefix = "t: info: ";
    assert_memory_equal(out, prefix, strlen(prefix));
    memmove(out, out + strlen(prefix), strlen(out) - strlen(prefix) + 1);
}

static void test_one_line_whatever_the_text(void **state)
{
    (void)state;
    char got[4096];
    logged("GET /v1/zz\nts=2026 level=error msg=\"FORGED\"", got, sizeof got);
    assert_string_equal(got, "msg=GET /v1/zz\\nts=2026 level=error msg=\"FORGED\"\n");
    logged("a\rb\tc\x1b[31md\x7f", got, sizeof got);
    assert_string_equal(got, "msg=a\\rb\\tc\\x1b[31md\\x7f\n");
    /* A line too long for the buffer is cut, still one line with its newline. */
    char big[3000];
    memset(big, '\n', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    logged(big, got, sizeof got);
    assert_int_equal(strchr(got, '\n') - got, (long)strlen(got) - 1);
    assert_true(strlen(got) < 2048);
}

static void test_quote(void **state)
{
    (void)state;
    char q[64];
    assert_string_equal(log_quote(q, sizeof q, "a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    assert_string_equal(log_quote(q, sizeof q, NULL), "");
    /* Cut at a whole escape: 5 bytes hold "ab" and not half of \x01. */
    assert_string_equal(log_quote(q, 5, "ab\x01"), "ab");
    assert_string_equal(log_quote(q, 6, "ab\"c"), "ab\\\"c");
    assert_string_equal(log_quote(q, 5, "ab\"c"), "ab\\\"");
    assert_string_equal(log_quote(q, 1, "abc"), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_line_whatever_the_text),
        cmocka_unit_test(test_quote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
