/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_job.c - tests of prep/allot's requests without slurmctld: the spool file round
 * trip (write, scan, read back equal, remove), damaged files set aside as .bad, and the
 * retry rules against an allotd that cannot be reached (a closed loopback port): a settle
 * is retried with growing backoff, a hold gives up after its budget.  Submit tokens
 * (HoldMode=submit): a spooled settle keeps its token across a restart, a spool file of
 * the release before tokens (no submit_token line) still reads (token 0), a bad token
 * sets the file aside; the hold carries the token, a release targets the token's run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugins/prep/allot/prep_job.h"

static char dir[] = "/tmp/prep_job_test.XXXXXX";

static prep_job_t sample(uint32_t id)
{
    prep_job_t j;
    memset(&j, 0, sizeof(j));
    j.kind = PREP_JOB_SETTLE;
    snprintf(j.cluster, sizeof(j.cluster), "test");
    j.job_id = id;
    j.run = 2;
    snprintf(j.user, sizeof(j.user), "alice");
    snprintf(j.account, sizeof(j.account), "chem");
    snprintf(j.partition, sizeof(j.partition), "debug");
    j.submit_s = 1700000000;
    j.start_s = 1700000010;
    j.end_s = 1700000070;
    j.time_limit_s = 600;
    j.elapsed_s = 60;
    snprintf(j.alloc_tres, sizeof(j.alloc_tres), "cpu=2,mem=200M,node=1,billing=2");
    snprintf(j.state, sizeof(j.state), "NODE_FAIL");
    return j;
}

static prep_job_t seen[8];
static int nseen, nbad;

static void on_job(const prep_job_t *j, void *arg)
{
    (void)arg;
    if (nseen < 8)
        seen[nseen] = *j;
    nseen++;
}

static void on_bad(const char *path, const struct allot_error *why, void *arg)
{
    (void)path;
    (void)arg;
    assert_true(why->msg[0] != '\0');
    nbad++;
}

static void test_spool_round_trip(void **state)
{
    (void)state;
    struct allot_error err;
    prep_job_t a = sample(41), b = sample(42);
    char path[512];

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/spool", dir);
    assert_int_equal(prep_job_spool_write(path, &a, &err), 0);
    assert_int_equal(prep_job_spool_write(path, &b, &err), 0);
    nseen = nbad = 0;
    assert_int_equal(prep_job_spool_scan(path, on_job, on_bad, NULL, &err), 2);
    assert_int_equal(nbad, 0);
    assert_int_equal(seen[0].job_id, 41);
    seen[0].enqueued_ms = a.enqueued_ms;
    assert_memory_equal(&seen[0], &a, sizeof(a));
    assert_int_equal(prep_job_spool_remove(path, &a, &err), 0);
    assert_int_equal(prep_job_spool_remove(path, &a, &err), 0); /* already gone: fine */
    nseen = 0;
    assert_int_equal(prep_job_spool_scan(path, on_job, on_bad, NULL, &err), 1);
    assert_int_equal(seen[0].job_id, 42);
    assert_int_equal(prep_job_spool_remove(path, &b, &err), 0);
    /* A missing directory holds nothing. */
    snprintf(path, sizeof(path), "%s/none", dir);
    assert_int_equal(prep_job_spool_scan(path, on_job, on_bad, NULL, &err), 0);
}

static void test_spool_submit_token(void **state)
{
    (void)state;
    struct allot_error err;
    char path[512], file[600];
    prep_job_t a = sample(43), j;

    snprintf(path, sizeof(path), "%s/spool", dir);
    a.submit_token = ((int64_t)1700000000 << 20) | 17;
    assert_int_equal(prep_job_spool_write(path, &a, &err), 0);
    nseen = nbad = 0;
    assert_int_equal(prep_job_spool_scan(path, on_job, on_bad, NULL, &err), 1);
    seen[0].enqueued_ms = a.enqueued_ms;
    assert_memory_equal(&seen[0], &a, sizeof(a));
    assert_int_equal(prep_job_spool_remove(path, &a, &err), 0);

    /* Exactly what the release before submit tokens wrote: still a valid settle. */
    snprintf(file, sizeof(file), "%s/settle.44.0", path);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("cluster=test\njob_id=44\nrun=0\nuser=alice\naccount=chem\npartition=debug\nqos=\n"
          "submit=1700000000\nstart=1700000010\nend=1700000070\ntime_limit_s=600\n"
          "elapsed_s=60\nalloc_tres=cpu=2\nstate=COMPLETED\nbilling_micro=0\n",
          f);
    fclose(f);
    assert_int_equal(prep_job_spool_read(file, &j, &err), 0);
    assert_int_equal(j.job_id, 44);
    assert_int_equal(j.submit_token, 0);
    assert_string_equal(j.state, "COMPLETED");
    unlink(file);

    /* A token that is a job id, out of range or not a number: set aside. */
    const char *bad[] = {"4294967295", "4611686018427387905", "12x", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        f = fopen(file, "w");
        assert_non_null(f);
        fprintf(f, "cluster=t\njob_id=44\nelapsed_s=1\nsubmit_token=%s\n", bad[i]);
        fclose(f);
        assert_int_equal(prep_job_spool_read(file, &j, &err), -1);
        assert_int_equal(err.code, ALLOT_EINVAL);
        unlink(file);
    }
}

static void test_spool_bad_file_set_aside(void **state)
{
    (void)state;
    struct allot_error err;
    char path[512], file[600];
    prep_job_t j;

    snprintf(path, sizeof(path), "%s/spool", dir);
    snprintf(file, sizeof(file), "%s/settle.7.0", path);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("cluster=test\njob_id=7\nelapsed_s=-5\n", f); /* negative elapsed */
    fclose(f);
    assert_int_equal(prep_job_spool_read(file, &j, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    nseen = nbad = 0;
    assert_int_equal(prep_job_spool_scan(path, on_job, on_bad, NULL, &err), 0);
    assert_int_equal(nbad, 1);
    snprintf(file, sizeof(file), "%s/settle.7.0.bad", path);
    assert_int_equal(access(file, F_OK), 0);
    unlink(file);
    /* Unknown key, missing field, truncated last line. */
    const char *bad[] = {"cluster=t\njob_id=1\nelapsed_s=1\nfuture=1\n", "cluster=t\njob_id=1\n",
                         "cluster=t\njob_id=1\nelapsed_s=1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(file, sizeof(file), "%s/settle.8.0", path);
        f = fopen(file, "w");
        assert_non_null(f);
        fputs(bad[i], f);
        fclose(f);
        assert_int_equal(prep_job_spool_read(file, &j, &err), -1);
        unlink(file);
    }
    rmdir(path);
    rmdir(dir);
}

static void test_unreachable_allotd(void **state)
{
    (void)state;
    struct allot_error err;
    struct allot_job_result res;
    allot_client_t *c = allot_client_create("http://127.0.0.1:1", &err);
    assert_non_null(c);
    assert_int_equal(allot_client_set_timeout_ms(c, 200, &err), 0);
    assert_int_equal(allot_client_set_test_user(c, "root", &err), 0);

    prep_job_t s = sample(5);
    int64_t due = 0, now = 1000000;
    s.enqueued_ms = now;
    assert_int_equal(prep_job_call(c, &s, 0, now, 0, &due, &res, &err), PREP_JOB_RETRY);
    assert_int_equal(err.code, ALLOT_EUNAVAIL);
    assert_int_equal(due, now + 100);
    assert_int_equal(prep_job_call(c, &s, 3, now, 0, &due, &res, &err), PREP_JOB_RETRY);
    assert_int_equal(due, now + 800);
    assert_int_equal(prep_job_call(c, &s, 30, now, 0, &due, &res, &err), PREP_JOB_RETRY);
    assert_int_equal(due, now + 5000); /* capped */

    prep_job_t h = sample(6);
    h.kind = PREP_JOB_HOLD;
    h.enqueued_ms = now;
    assert_int_equal(prep_job_call(c, &h, 0, now, 1000, &due, &res, &err), PREP_JOB_RETRY);
    assert_int_equal(prep_job_call(c, &h, 0, now + 950, 1000, &due, &res, &err),
                     PREP_JOB_UNREACHABLE);
    allot_client_destroy(c);
}

static void test_desc(void **state)
{
    (void)state;
    struct allot_job_desc d;
    prep_job_t s = sample(9);
    prep_job_desc(&s, &d);
    assert_string_equal(d.state, "NODE_FAIL");
    assert_string_equal(d.source, "epilog");
    assert_int_equal(d.elapsed_s, 60);
    assert_int_equal(d.submit_s, 0); /* settle sends no submit time */
    s.kind = PREP_JOB_HOLD;
    prep_job_desc(&s, &d);
    assert_null(d.state);
    assert_int_equal(d.elapsed_s, -1);
    assert_int_equal(d.submit_s, 1700000000);
    assert_int_equal(d.submit_token, 0);
    s.submit_token = (int64_t)1 << 40;
    prep_job_desc(&s, &d);
    assert_int_equal(d.submit_token, (int64_t)1 << 40);
    assert_int_equal(d.job_id, 9);
    /* A release of a job that never started targets the provisional run: (token, 0). */
    s.kind = PREP_JOB_RELEASE;
    s.run = 3;
    prep_job_desc(&s, &d);
    assert_int_equal(d.job_id, (int64_t)1 << 40);
    assert_int_equal(d.run, 0);
    assert_non_null(d.comment);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spool_round_trip),
        cmocka_unit_test(test_spool_submit_token),
        cmocka_unit_test(test_spool_bad_file_set_aside),
        cmocka_unit_test(test_unreachable_allotd),
        cmocka_unit_test(test_desc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
