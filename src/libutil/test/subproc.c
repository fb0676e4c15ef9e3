/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/subproc.c - subproc_run: stdout and stderr apart; exit status, signal and a program
 * that cannot start told apart; a cap that flags (or kills) and never cuts silently; every
 * run ends by its deadline with the child reaped and, with own_group, its whole group
 * killed; stdin is /dev/null; env entries replace the same names.  monotime's clock moves
 * forward and its sleep lasts as long as asked. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "libutil/monotime.h"
#include "libutil/subproc.h"

static const struct subproc_opts plain = {.timeout_ms = 10000, .out_max = 1024};

static void test_output_apart(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    struct subproc_result r;
    assert_int_equal(subproc_run(argv, &plain, &r), 0);
    assert_int_equal(r.status, 3);
    assert_int_equal(r.signo, 0);
    assert_int_equal(r.exec_errno, 0);
    assert_string_equal(r.out, "out\n");
    assert_int_equal(r.n, 4);
    assert_string_equal(r.err, "err\n");
    assert_false(r.too_big);
    assert_false(r.timed_out);
    subproc_result_free(&r);
}

static void test_no_output(void **state)
{
    (void)state;
    char *argv[] = {"true", NULL};
    struct subproc_result r;
    assert_int_equal(subproc_run(argv, &plain, &r), 0);
    assert_int_equal(r.status, 0);
    assert_null(r.out);
    assert_int_equal(r.n, 0);
    subproc_result_free(&r);
}

static void test_signal(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "kill -TERM $$", NULL};
    struct subproc_result r;
    assert_int_equal(subproc_run(argv, &plain, &r), 0);
    assert_int_equal(r.signo, SIGTERM);
    assert_int_equal(r.status, 128 + SIGTERM);
    subproc_result_free(&r);
}

/* Past the cap: flagged, the first out_max bytes kept, the rest drained so the child ends. */
static void test_cap_flagged(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "head -c 200000 /dev/zero; echo done >&2", NULL};
    struct subproc_opts o = {.timeout_ms = 10000, .out_max = 4096};
    struct subproc_result r;
    assert_int_equal(subproc_run(argv, &o, &r), 0);
    assert_true(r.too_big);
    assert_true(r.n <= 4096);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "done\n");
    subproc_result_free(&r);
}

static void test_cap_exact(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "printf 1234", NULL};
    struct subproc_opts o = {.timeout_ms = 10000, .out_max = 4};
    struct subproc_result r;
    assert_int_equal(subproc_run(argv, &o, &r), 0);
    assert_false(r.too_big);
    assert_string_equal(r.out, "1234");
    subproc_result_free(&r);
    o.out_max = 3;
    assert_int_equal(subproc_run(argv, &o, &r), 0);
    assert_true(r.too_big);
    subproc_result_free(&r);
}

/* kill_at_cap: an endless writer is stopped at the cap, long before the deadline. */
static void test_cap_kills(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "exec cat /dev/zero", NULL};
    struct subproc_opts o = {.timeout_ms = 20000, .out_max = 1 << 20, .kill_at_cap = 1};
    struct subproc_result r;
    int64_t t0 = monotime_ms();
    assert_int_equal(subproc_run(argv, &o, &r), -1);
    assert_true(monotime_ms() - t0 < 10000);
    assert_true(r.too_big);
    assert_false(r.timed_out);
    assert_true(r.n <= (size_t)1 << 20);
    assert_non_null(strstr(r.err, "more than"));
    subproc_result_free(&r);
}

/* The pid a script wrote to file (0 when none). */
static int read_pid(const char *file)
{
    int pid = 0;
    FILE *f = fopen(file, "r");
    if (f) {
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return pid;
}

/* 1 when pid runs (not gone, not a zombie). */
static int alive(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    int up = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "State:", 6) == 0)
            up = strchr(line, 'Z') == NULL;
    if (f)
        fclose(f);
    return up;
}

/* A child that exits while a grandchild keeps the pipe open: with own_group, killed at the
 * deadline with its whole group; without, the grandchild is left (and killed here). */
static void run_grandchild(int own_group, int want_alive)
{
    char pidfile[] = "/tmp/subproc-test-XXXXXX";
    int fd = mkstemp(pidfile);
    assert_true(fd >= 0);
    close(fd);
    char script[256];
    snprintf(script, sizeof script, "sleep 30 & echo $! > %s; exit 0", pidfile);
    char *argv[] = {"sh", "-c", script, NULL};
    struct subproc_opts o = {.timeout_ms = 1000, .out_max = 1024, .own_group = own_group};
    struct subproc_result r;
    int64_t t0 = monotime_ms();
    assert_int_equal(subproc_run(argv, &o, &r), -1);
    int64_t took = monotime_ms() - t0;
    assert_true(took >= 1000 && took <= 3000);
    assert_true(r.timed_out);
    assert_int_equal(r.status, -1);
    assert_non_null(strstr(r.err, "no answer within 1000 ms"));
    subproc_result_free(&r);
    int pid = read_pid(pidfile);
    unlink(pidfile);
    assert_true(pid > 0);
    monotime_sleep_ms(200, NULL);
    assert_int_equal(alive(pid), want_alive);
    if (want_alive)
        kill(pid, SIGKILL);
}

static void test_group_killed(void **state)
{
    (void)state;
    run_grandchild(1, 0);
}

static void test_group_kept(void **state)
{
    (void)state;
    run_grandchild(0, 1);
}

/* A child that closes its output and keeps running is killed at the deadline too. */
static void test_closed_output_bounded(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "exec >&- 2>&-; sleep 30", NULL};
    struct subproc_opts o = {.timeout_ms = 500, .out_max = 1024};
    struct subproc_result r;
    int64_t t0 = monotime_ms();
    assert_int_equal(subproc_run(argv, &o, &r), -1);
    assert_true(monotime_ms() - t0 < 2500);
    assert_true(r.timed_out);
    subproc_result_free(&r);
}

static void test_stdin_null(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "read x; echo \"got[$x]\"", NULL};
    struct subproc_result r;
    assert_int_equal(subproc_run(argv, &plain, &r), 0);
    assert_string_equal(r.out, "got[]\n");
    subproc_result_free(&r);
}

static void test_env_replaced(void **state)
{
    (void)state;
    char *env[] = {"TZ=UTC0", "ALLOT_SUBPROC_NEW=1", NULL};
    char *argv[] = {"sh", "-c", "echo \"$TZ $ALLOT_SUBPROC_NEW $HOME\"", NULL};
    struct subproc_opts o = plain;
    o.env = env;
    struct subproc_result r;
    assert_int_equal(setenv("TZ", "Europe/Paris", 1), 0);
    assert_int_equal(setenv("HOME", "/kept", 1), 0);
    assert_int_equal(subproc_run(argv, &o, &r), 0);
    assert_string_equal(r.out, "UTC0 1 /kept\n");
    subproc_result_free(&r);
}

static void test_not_found(void **state)
{
    (void)state;
    char *argv[] = {"/nonexistent/sacct", NULL};
    struct subproc_result r;
    assert_int_equal(subproc_run(argv, &plain, &r), -1);
    assert_int_equal(r.exec_errno, ENOENT);
    assert_int_equal(r.status, 127);
    assert_string_equal(r.err, "cannot run /nonexistent/sacct: No such file or directory");
    subproc_result_free(&r);
}

static void test_monotime(void **state)
{
    (void)state;
    int64_t t0 = monotime_ms();
    monotime_sleep_ms(120, NULL);
    int64_t t1 = monotime_ms();
    assert_true(t1 - t0 >= 120 && t1 - t0 < 2000);
    monotime_sleep_ms(0, NULL);
    monotime_sleep_ms(-5, NULL);
    assert_true(monotime_ms() >= t1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_apart),
        cmocka_unit_test(test_no_output),
        cmocka_unit_test(test_signal),
        cmocka_unit_test(test_cap_flagged),
        cmocka_unit_test(test_cap_exact),
        cmocka_unit_test(test_cap_kills),
        cmocka_unit_test(test_group_killed),
        cmocka_unit_test(test_group_kept),
        cmocka_unit_test(test_closed_output_bounded),
        cmocka_unit_test(test_stdin_null),
        cmocka_unit_test(test_env_replaced),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_monotime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
