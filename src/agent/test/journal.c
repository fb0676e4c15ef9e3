/* SPDX-License-Identifier: GPL-3.0-or-later */
/* journal.c - an applied command's result survives a restart until allotd acknowledged it,
 * so the agent posts it again instead of applying the command again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/journal.h"

static void test_survives_restart(void **state)
{
    char path[] = "/tmp/agent-journal-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char why[256], text[JOURNAL_TEXT_MAX];
    int ok = -1;
    struct journal *j = journal_open(path, why, sizeof why);
    assert_non_null(j);
    assert_int_equal(journal_find(j, 7, &ok, text, sizeof text), 0);
    assert_int_equal(journal_applied(j, 7, 1, "verified RawUsage=0"), 0);
    assert_int_equal(journal_applied(j, 8, 0, "sacctmgr exit 1:\n bad qos"), 0);
    assert_int_equal(journal_acked(j, 8), 0);
    journal_close(j); /* the agent is killed before 7's result reached allotd */

    j = journal_open(path, why, sizeof why);
    assert_non_null(j);
    assert_int_equal(journal_find(j, 7, &ok, text, sizeof text), 1);
    assert_int_equal(ok, 1);
    assert_string_equal(text, "verified RawUsage=0");
    assert_int_equal(journal_find(j, 8, &ok, text, sizeof text), 0);
    assert_int_equal(journal_acked(j, 7), 0);
    journal_close(j);

    j = journal_open(path, why, sizeof why);
    assert_non_null(j);
    assert_int_equal(journal_find(j, 7, &ok, text, sizeof text), 0);
    journal_close(j);
    unlink(path);
}

/* A crash mid-append leaves a torn last line: ignored, the rest is read. */
static void test_torn_line(void **state)
{
    char path[] = "/tmp/agent-journal-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char text[] = "A 5 1 verified qos=slow\nA 6 1 verif";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char why[256], got[JOURNAL_TEXT_MAX];
    int ok;
    struct journal *j = journal_open(path, why, sizeof why);
    assert_non_null(j);
    assert_int_equal(journal_find(j, 5, &ok, got, sizeof got), 1);
    assert_int_equal(journal_find(j, 6, &ok, got, sizeof got), 0);
    journal_close(j);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_survives_restart),
        cmocka_unit_test(test_torn_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
