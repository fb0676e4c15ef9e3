/* SPDX-License-Identifier: GPL-3.0-or-later */
/* apply.c - agent_apply against fake sacctmgr/sshare scripts: only a read-back that proves
 * the value confirms; cut, malformed or hung tool output is refused; names and payloads
 * that would make sacctmgr touch another field or account never reach it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/apply.h"

static char dir[64];
static char sacctmgr[128], sshare[128], calls[128];

/* Write a fake tool: every call appends its argv to calls; body is the rest of the script. */
static void fake(const char *path, const char *body)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\necho \"$*\" >> %s\n%s\n", calls, body);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0755), 0);
}

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/agent-apply-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(sacctmgr, sizeof sacctmgr, "%s/sacctmgr", dir);
    snprintf(sshare, sizeof sshare, "%s/sshare", dir);
    snprintf(calls, sizeof calls, "%s/calls", dir);
    return 0;
}

static int teardown(void **state)
{
    unlink(sacctmgr);
    unlink(sshare);
    unlink(calls);
    return rmdir(dir);
}

static int before(void **state)
{
    unlink(calls);
    return 0;
}

static int called(void)
{
    return access(calls, F_OK) == 0;
}

#define RESULT_MAX 1024

/* agent_apply with the fake tools and a tool timeout; result has RESULT_MAX bytes. */
static int apply(int timeout_s, const char *cluster, const char *kind, const char *target,
                 const char *payload, char *result)
{
    struct agent_tools t = {.sacctmgr = sacctmgr, .sshare = sshare, .timeout_s = timeout_s};
    return agent_apply(&t, cluster, kind, target, payload, result, RESULT_MAX);
}

/* sshare's output cut at the old 64 KiB buffer right after "chem||0" of "chem||05": the
 * RawUsage is 5, and must never read as a verified 0. */
static void test_cut_sshare_not_confirmed(void **state)
{
    fake(sacctmgr, "exit 0");
    fake(sshare, "awk 'BEGIN { for (i = 0; i < 8191; i++) print \"f|u|123\"; "
                 "print \"chem||05\" }'");
    char result[RESULT_MAX];
    int ok = apply(10, "hpc", "reset_raw_usage", "chem", "RawUsage=0", result);
    assert_int_equal(ok, 0);
    assert_non_null(strstr(result, "5"));
}

/* More output than the agent reads is refused, not parsed in part. */
static void test_huge_output_refused(void **state)
{
    fake(sacctmgr, "exit 0");
    fake(sshare, "awk 'BEGIN { for (i = 0; i < 200000; i++) print \"f|u|123\"; "
                 "print \"chem||0\" }'");
    char result[RESULT_MAX];
    assert_int_equal(apply(10, "hpc", "reset_raw_usage", "chem", "RawUsage=0", result), 0);
    assert_non_null(strstr(result, "refused"));
}

/* A ',' in the account would make sacctmgr modify two accounts; it never reaches it. */
static void test_bad_names_never_run(void **state)
{
    fake(sacctmgr, "echo '|0'; exit 0");
    char result[RESULT_MAX];
    assert_int_equal(apply(10, "hpc", "set_grpjobs", "chem,phys", "GrpJobs=0", result), 0);
    assert_int_equal(apply(10, "hpc,other", "set_grpjobs", "chem", "GrpJobs=0", result), 0);
    assert_int_equal(apply(10, "hpc", "set_grpjobs", "-chem", "GrpJobs=0", result), 0);
    assert_false(called());
}

/* A payload that sets another field than its kind reads back is refused: a reset carrying
 * fairshare=0 would write fairshare and then "verify" an unrelated RawUsage of 0. */
static void test_payload_must_match_kind(void **state)
{
    fake(sacctmgr, "exit 0");
    fake(sshare, "echo 'chem||0'");
    char result[RESULT_MAX];
    assert_int_equal(apply(10, "hpc", "reset_raw_usage", "chem", "fairshare=0", result), 0);
    assert_int_equal(apply(10, "hpc", "set_grpjobs", "chem", "GrpJobs=0 qos=x", result), 0);
    assert_int_equal(apply(10, "hpc", "set_limit", "chem", "RawUsage=0", result), 0);
    assert_false(called());
}

/* sacctmgr rows with an extra column are refused with a clear error, not read as
 * "0|extra". */
static void test_extra_column_refused(void **state)
{
    fake(sacctmgr, "case \"$3\" in show) echo '|0|extra';; esac; exit 0");
    char result[RESULT_MAX];
    assert_int_equal(apply(10, "hpc", "set_grpjobs", "chem", "GrpJobs=0", result), 0);
    assert_non_null(strstr(result, "not understood"));
}

/* A well-formed read-back confirms; the write then happened exactly once. */
static void test_verified(void **state)
{
    /* before the write the account row reads empty; after it, 0 (a user row beside it) */
    fake(sacctmgr, "case \"$3\" in\n"
                   "show) if [ -f \"$0.done\" ]; then echo 'u1|'; echo '|0'; else echo '|'; fi;;\n"
                   "account) : > \"$0.done\";;\n"
                   "esac");
    char result[RESULT_MAX];
    assert_int_equal(apply(10, "hpc", "set_grpjobs", "chem", "GrpJobs=0", result), 1);
    assert_string_equal(result, "verified GrpJobs=0");
    char done[160];
    snprintf(done, sizeof done, "%s.done", sacctmgr);
    assert_int_equal(unlink(done), 0);
}

/* A sacctmgr that closes its output and hangs is killed at the timeout, not waited for. */
static void test_hung_tool_bounded(void **state)
{
    fake(sacctmgr, "exec >/dev/null 2>&1; sleep 30");
    char result[RESULT_MAX];
    time_t t0 = time(NULL);
    alarm(15); /* without the bound the test would hang: fail it instead */
    assert_int_equal(apply(1, "hpc", "set_grpjobs", "chem", "GrpJobs=0", result), 0);
    alarm(0);
    assert_true(time(NULL) - t0 <= 5);
    assert_non_null(strstr(result, "timed out"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_cut_sshare_not_confirmed, before),
        cmocka_unit_test_setup(test_huge_output_refused, before),
        cmocka_unit_test_setup(test_bad_names_never_run, before),
        cmocka_unit_test_setup(test_payload_must_match_kind, before),
        cmocka_unit_test_setup(test_extra_column_refused, before),
        cmocka_unit_test_setup(test_verified, before),
        cmocka_unit_test_setup(test_hung_tool_bounded, before),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
