/* SPDX-License-Identifier: GPL-3.0-or-later */
/* child.c - what child_run adds to libutil's subproc_run (tested there: stdin, environment,
 * caps, deadlines): the result in the agent's terms (status, -1 with the reason, 127 for a
 * tool that cannot run) and the tool's whole process group killed at the deadline. */
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

/* A tool killed by a signal is a failed run, said in the agent's words. */
static void test_signal(void **state)
{
    char *argv[] = {"sh", "-c", "kill -9 $$", NULL};
    struct child_out c;
    assert_int_equal(child_run(argv, NULL, 5, 1024, &c), -1);
    assert_non_null(strstr(c.errtext, "sh died of signal 9"));
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
        cmocka_unit_test(test_group_killed), cmocka_unit_test(test_signal),
        cmocka_unit_test(test_not_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
