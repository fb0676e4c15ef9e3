/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_job.c - tests of prep/allot's requests without slurmctld: the spool file round
 * trip (write, scan, read back equal, remove), damaged files set aside as .bad, and the
 * retry rules against an allotd that cannot be reached (a closed loopback port): a settle
 * is retried with growing backoff, a hold gives up after its budget.  Submit tokens
 * (HoldMode=submit): a spooled settle keeps its token across a restart, a spool file of
 * the release before tokens (no submit_token line) still reads (token 0), a bad token
 * sets the file aside; the hold carries the token, a release targets the token's run.
 * Durability: a spool file is synced before its rename and its directory after, a failed
 * sync leaves no file; a settle rejected for good is kept as .rejected; a queued copy is
 * whole before a worker can take it.  Requeues: the epilog settles the run that was held.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "plugins/prep/allot/prep_job.h"

static char dir[] = "/tmp/prep_job_test.XXXXXX";

/* fsync as the spool sees it (linked with --wrap=fsync): counted, and failed on demand
 * as a full disk or a failing device reports it. */
int __real_fsync(int fd);
int __wrap_fsync(int fd);
static int fsync_calls, fsync_fail;

int __wrap_fsync(int fd)
{
    fsync_calls++;
    if (fsync_fail) {
        errno = fsync_fail;
        return -1;
    }
    return __real_fsync(fd);
}

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

/* A temporary ".settle.*" that a crash left behind (its rename never came) is removed by
 * the scan once a minute old, and reported; a younger one may be a write in progress in
 * another thread and stays; neither is read as a settle. */
static void test_spool_stale_temp_removed(void **state)
{
    (void)state;
    struct allot_error err;
    char path[512], old[600], young[600];
    prep_job_t a = sample(43);

    assert_int_equal(mkdir(dir, 0700), 0); /* the name test_spool_round_trip made */
    snprintf(path, sizeof(path), "%s/spool", dir);
    assert_int_equal(prep_job_spool_write(path, &a, &err), 0); /* creates the spool */
    snprintf(old, sizeof(old), "%s/.settle.9.0", path);
    snprintf(young, sizeof(young), "%s/.settle.10.0", path);
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(i ? young : old, "w");
        assert_non_null(f);
        fputs("cluster=test\njob_id=", f); /* cut mid-write */
        assert_int_equal(fclose(f), 0);
    }
    struct timeval tv[2] = {{time(NULL) - 120, 0}, {time(NULL) - 120, 0}};
    assert_int_equal(utimes(old, tv), 0);
    nseen = nbad = 0;
    assert_int_equal(prep_job_spool_scan(path, on_job, on_bad, NULL, &err), 1);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].job_id, 43);
    assert_int_equal(nbad, 1);
    assert_int_equal(access(old, F_OK), -1);
    assert_int_equal(access(young, F_OK), 0);
    assert_int_equal(unlink(young), 0);
    assert_int_equal(prep_job_spool_remove(path, &a, &err), 0);
    rmdir(path);
    rmdir(dir);
}

/* Slurm's AllocTRES is kept whole when it fits, else up to its last whole entry: never an
 * entry cut inside ("mem=4000" of "mem=4000M", which would read as 4000 MB of another unit). */
static void test_tres_copy_whole_entries(void **state)
{
    (void)state;
    char dst[16];
    assert_int_equal(prep_job_tres_copy(dst, sizeof(dst), "cpu=2,mem=4000M"), 0);
    assert_string_equal(dst, "cpu=2,mem=4000M"); /* 15 characters: fits */
    assert_int_equal(prep_job_tres_copy(dst, sizeof(dst), "cpu=2,mem=40000M"), 1);
    assert_string_equal(dst, "cpu=2");
    assert_int_equal(prep_job_tres_copy(dst, sizeof(dst), "cpu=2,mem=400M,n=1"), 1);
    assert_string_equal(dst, "cpu=2,mem=400M"); /* the comma at the cut */
    assert_int_equal(prep_job_tres_copy(dst, sizeof(dst), "gres/gpu:a100=12345"), 1);
    assert_string_equal(dst, ""); /* no whole entry fits */
    assert_int_equal(prep_job_tres_copy(dst, sizeof(dst), NULL), 0);
    assert_string_equal(dst, "");
    char big[PREP_TRES_MAX + 64], out[PREP_TRES_MAX];
    size_t n = 0;
    for (int i = 0; n + 16 < sizeof(big); i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, "%slicense/l%d=1", i ? "," : "", i);
    assert_int_equal(prep_job_tres_copy(out, sizeof(out), big), 1);
    assert_true(strlen(out) < sizeof(out) && strlen(out) > sizeof(out) - 20);
    assert_int_equal(strncmp(out, big, strlen(out)), 0);
    assert_int_equal(big[strlen(out)], ',');
}

/* A settle is on disk, complete, before the epilog returns: its data is synced before the
 * rename (else a machine crash can leave the name on an empty file) and the directory after
 * it; a sync that fails (ENOSPC, EIO) is an error and leaves no file behind. */
static void test_spool_durable(void **state)
{
    (void)state;
    struct allot_error err;
    char path[512], file[600];
    prep_job_t a = sample(51);

    snprintf(path, sizeof(path), "%s/spool", dir);
    fsync_calls = 0;
    assert_int_equal(prep_job_spool_write(path, &a, &err), 0);
    assert_int_equal(fsync_calls, 2); /* the file, then the directory */
    assert_int_equal(prep_job_spool_remove(path, &a, &err), 0);

    const int errs[] = {ENOSPC, EIO};
    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
        fsync_calls = 0;
        fsync_fail = errs[i];
        assert_int_equal(prep_job_spool_write(path, &a, &err), -1);
        fsync_fail = 0;
        assert_int_equal(err.code, ALLOT_EIO);
        assert_non_null(strstr(err.msg, strerror(errs[i])));
        assert_int_equal(fsync_calls, 1); /* stopped before the rename */
        snprintf(file, sizeof(file), "%s/settle.51.2", path);
        assert_int_equal(access(file, F_OK), -1);
        snprintf(file, sizeof(file), "%s/.settle.51.2", path);
        assert_int_equal(access(file, F_OK), -1);
    }
}

/* A settle allotd rejects for good (403 while slurmctld's user is not yet an Operator, 409,
 * 500) keeps its record as .rejected, which no restart re-queues; an acknowledged one goes. */
static void test_settle_done_keeps_rejected(void **state)
{
    (void)state;
    struct allot_error err;
    char path[512], file[600], kept[700];
    prep_job_t a = sample(61), b = sample(62), r;

    snprintf(path, sizeof(path), "%s/spool", dir);
    assert_int_equal(prep_job_spool_write(path, &a, &err), 0);
    assert_int_equal(prep_job_spool_write(path, &b, &err), 0);
    assert_int_equal(prep_job_settle_done(path, &a, PREP_JOB_OK, kept, sizeof(kept), &err), 0);
    assert_string_equal(kept, "");
    snprintf(file, sizeof(file), "%s/settle.61.2", path);
    assert_int_equal(access(file, F_OK), -1);

    assert_int_equal(prep_job_settle_done(path, &b, PREP_JOB_FAILED, kept, sizeof(kept), &err), 0);
    snprintf(file, sizeof(file), "%s/settle.62.2.rejected", path);
    assert_string_equal(kept, file);
    assert_int_equal(prep_job_spool_read(file, &r, &err), 0); /* the whole record is there */
    assert_int_equal(r.job_id, 62);
    nseen = nbad = 0;
    assert_int_equal(prep_job_spool_scan(path, on_job, on_bad, NULL, &err), 0);
    assert_int_equal(nbad, 0);
    assert_int_equal(access(file, F_OK), 0);
    unlink(file);
    /* Nothing to keep (the epilog could not spool it): said, not hidden. */
    assert_int_equal(prep_job_settle_done(path, &b, PREP_JOB_REFUSED, kept, sizeof(kept), &err),
                     -1);
    assert_int_equal(err.code, ALLOT_EIO);
}

/* A worker may take an item the moment it is queued (the pool runs before the spool is
 * read at start): what the push sees must already be the whole job. */
static prep_job_t *pushed;
static int push_refuse;

static int push_as_worker(void *item, void *arg)
{
    (void)arg;
    const prep_job_t *j = item;
    assert_int_equal(j->job_id, 71); /* a worker handling it now reads this */
    assert_string_equal(j->cluster, "test");
    assert_int_equal(j->enqueued_ms, 12345);
    if (push_refuse)
        return -1;
    pushed = item;
    return 0;
}

static void test_queue_copy_complete_before_push(void **state)
{
    (void)state;
    prep_job_t a = sample(71);

    push_refuse = 0;
    assert_int_equal(prep_job_queue_copy(&a, 12345, push_as_worker, NULL), 0);
    assert_non_null(pushed);
    assert_true(pushed != &a);
    a.enqueued_ms = 12345;
    assert_memory_equal(pushed, &a, sizeof(a));
    free(pushed);
    pushed = NULL;
    push_refuse = 1; /* a stopping pool: the copy is freed (no leak under ASan) */
    assert_int_equal(prep_job_queue_copy(&a, 12345, push_as_worker, NULL), -1);
    assert_null(pushed);
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

/* Slurm 22.05's requeue counts the next run before the epilog of the one that ended
 * (job_mgr.c _job_requeue_op, _job_complete with requeue): the settle must name the run
 * that was held, else it bills a run never held and leaves the real hold open. */
static void test_epilog_run_after_requeue(void **state)
{
    (void)state;
    static const struct {
        uint32_t restart_cnt;
        int pending, requeue_flag;
        int32_t run;
        const char *state;
    } v[] = {
        {0, 0, 0, 0, "COMPLETED"}, /* first run ends */
        {2, 0, 0, 2, "COMPLETED"}, /* third run ends */
        {0, 0, 1, 0, "COMPLETED"}, /* requeue on exit code: counted after the epilog */
        {1, 1, 1, 0, "REQUEUED"},  /* scontrol requeue / preemption of run 0 */
        {5, 1, 1, 4, "REQUEUED"},  /* the same of run 4 */
        {1, 1, 0, 0, "NODE_FAIL"}, /* batch launch failed: sacct says NODE_FAIL */
        {0, 1, 1, 0, "REQUEUED"},  /* never below run 0 */
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        assert_int_equal(prep_job_epilog_run(v[i].restart_cnt, v[i].pending), v[i].run);
        assert_string_equal(prep_job_epilog_state("COMPLETED", v[i].pending, v[i].requeue_flag),
                            v[i].state);
    }
}

/* sacct's ElapsedRaw is end - start - the suspended intervals slurmdbd recorded; 22.05's
 * tot_sus_time also holds the configuring (prolog) time, so it must not be used. */
static void test_elapsed_as_sacct(void **state)
{
    (void)state;
    static const struct {
        int64_t start, end, suspend, pre_sus, want;
    } v[] = {
        {1000, 1032, 0, 0, 32},      /* slow prolog: configuring time counts, as in sacct */
        {0, 1032, 0, 0, 0},          /* never started */
        {1000, 990, 0, 0, 0},        /* clocks apart: never negative */
        {1000, 1100, 1050, 20, 70},  /* ran 20 s, suspended, resumed at 1050, ended at 1100 */
        {1000, 1020, 1020, 20, 20},  /* killed while suspended: end = suspend_time */
        {1000, 1200, 1150, 60, 110}, /* two suspensions: 60 s before the last, 50 s after */
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        assert_int_equal(prep_job_elapsed(v[i].start, v[i].end, v[i].suspend, v[i].pre_sus),
                         v[i].want);
}

/* A void record round-trips through the spool with its kind and reason, and its request
 * carries who, where and why but no settle fields. */
static void test_spool_void(void **state)
{
    (void)state;
    struct allot_error err;
    struct allot_job_desc d;
    char path[512];
    prep_job_t a = sample(45);

    snprintf(path, sizeof(path), "%s/spool", dir);
    a.kind = PREP_JOB_VOID;
    memset(a.state, 0, sizeof(a.state));
    a.elapsed_s = 0;
    snprintf(a.reason, sizeof(a.reason), "Failed to connect to allotd: Connection refused");
    assert_int_equal(prep_job_spool_write(path, &a, &err), 0);
    nseen = nbad = 0;
    assert_int_equal(prep_job_spool_scan(path, on_job, on_bad, NULL, &err), 1);
    seen[0].enqueued_ms = a.enqueued_ms;
    assert_memory_equal(&seen[0], &a, sizeof(a));
    assert_int_equal(prep_job_spool_remove(path, &a, &err), 0);
    prep_job_desc(&a, &d);
    assert_string_equal(d.comment, a.reason);
    assert_int_equal(d.start_s, a.start_s);
    assert_int_equal(d.elapsed_s, -1);
    assert_null(d.state);
    assert_string_equal(d.account, "chem");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spool_round_trip),
        cmocka_unit_test(test_spool_void),
        cmocka_unit_test(test_elapsed_as_sacct),
        cmocka_unit_test(test_spool_submit_token),
        cmocka_unit_test(test_spool_durable),
        cmocka_unit_test(test_settle_done_keeps_rejected),
        cmocka_unit_test(test_queue_copy_complete_before_push),
        cmocka_unit_test(test_spool_bad_file_set_aside),
        cmocka_unit_test(test_spool_stale_temp_removed),
        cmocka_unit_test(test_tres_copy_whole_entries),
        cmocka_unit_test(test_unreachable_allotd),
        cmocka_unit_test(test_desc),
        cmocka_unit_test(test_epilog_run_after_requeue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
