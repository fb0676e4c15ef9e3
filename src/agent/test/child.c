/* SPDX-License-Identifier: GPL-3.0-or-later */
/* child.c - child_run: every run ends by its deadline with the child reaped and its whole
 * process group killed; stdout and stderr apart; a cap refuses, never cuts silently. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/child.h"

static void test_output_apart(void **state)
{
    char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    struct child_out c;
    assert_int_equal(child_run(argv, NULL, 10, 1024, &c), 3);
    assert_string_equal(c.out, "out\n");
    assert_string_equal(c.errtext, "err\n");
    assert_false(c.too_big);
    child_out_free(&c);
}

static void test_cap_flagged(void **state)
{
    char *argv[] = {"sh", "-c", "head -c 5000 /dev/zero", NULL};
    struct child_out c;
    assert_int_equal(child_run(argv, NULL, 10, 4096, &c), 0);
    assert_true(c.too_big);
    child_out_free(&c);
}

/* A child that exits while a grandchild keeps the pipe open: killed at the deadline with
 * its whole group, so no process of the run outlives it. */
static void test_group_killed(void **state)
{
    char pidfile[] = "/tmp/agent-child-XXXXXX";
    int fd = mkstemp(pidfile);
    assert_true(fd >= 0);
    close(fd);
    char script[256];
    snprintf(script, sizeof script, "sleep 30 & echo $! > %s; exit 0", pidfile);
    char *argv[] = {"sh", "-c", script, NULL};
    struct child_out c;
    time_t t0 = time(NULL);
    assert_int_equal(child_run(argv, NULL, 1, 1024, &c), -1);
    assert_true(time(NULL) - t0 <= 3);
    assert_non_null(strstr(c.errtext, "timed out"));
    child_out_free(&c);
    FILE *f = fopen(pidfile, "r");
    assert_non_null(f);
    int pid = 0;
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    unlink(pidfile);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    /* gone, or a zombie waiting for init to reap it (it was reparented) */
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    f = fopen(path, "r");
    int alive = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "State:", 6) == 0)
            alive = strchr(line, 'Z') == NULL;
    if (f)
        fclose(f);
    assert_false(alive);
}

/* stdin is /dev/null: a tool asking a question reads EOF at once. */
static void test_stdin_null(void **state)
{
    char *argv[] = {"sh", "-c", "read x; echo \"got[$x]\"", NULL};
    struct child_out c;
    assert_int_equal(child_run(argv, NULL, 5, 1024, &c), 0);
    assert_string_equal(c.out, "got[]\n");
    child_out_free(&c);
}

static void test_env_added(void **state)
{
    char *env[] = {"TZ=UTC0", NULL};
    char *argv[] = {"sh", "-c", "echo \"$TZ\"", NULL};
    struct child_out c;
    assert_int_equal(setenv("TZ", "Europe/Paris", 1), 0);
    assert_int_equal(child_run(argv, env, 5, 1024, &c), 0);
    assert_string_equal(c.out, "UTC0\n");
    child_out_free(&c);
}

static void test_not_found(void **state)
{
    char *argv[] = {"/nonexistent/sacct", NULL};
    struct child_out c;
    assert_int_equal(child_run(argv, NULL, 5, 1024, &c), 127);
    assert_non_null(strstr(c.errtext, "cannot run"));
    child_out_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_apart), cmocka_unit_test(test_cap_flagged),
        cmocka_unit_test(test_group_killed), cmocka_unit_test(test_stdin_null),
        cmocka_unit_test(test_env_added),    cmocka_unit_test(test_not_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
