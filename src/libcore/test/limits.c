/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/limits.c - limit table, canonical values, Slurm's resolution order with each
 * exception, provenance, and the submit-time check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/limits.h"

static const struct {
    enum limit_scope scope;
    const char *name, *value, *canon, *canon_name;
} valid[] = {
    {LIMIT_SCOPE_ASSOC, "MaxWall", "2-00:00:00", "2880", "MaxWallDurationPerJob"},
    {LIMIT_SCOPE_ASSOC, "maxwalldurationperjob", "90", "90", "MaxWallDurationPerJob"},
    {LIMIT_SCOPE_QOS, "MaxWall", "1:30", "2", "MaxWallDurationPerJob"},      /* min:sec, up */
    {LIMIT_SCOPE_QOS, "MaxWall", "1:00:00", "60", "MaxWallDurationPerJob"},  /* h:m:s */
    {LIMIT_SCOPE_QOS, "MaxWall", "1-12", "2160", "MaxWallDurationPerJob"},   /* d-h */
    {LIMIT_SCOPE_QOS, "MaxWall", "1-0:30", "1470", "MaxWallDurationPerJob"}, /* d-h:m */
    {LIMIT_SCOPE_QOS, "MaxWall", "0-0:0:1", "1", "MaxWallDurationPerJob"},
    {LIMIT_SCOPE_PARTITION, "maxtime", "UNLIMITED", "-1", "MaxTime"},
    {LIMIT_SCOPE_PARTITION, "MaxNodes", "4", "4", "MaxNodes"},
    {LIMIT_SCOPE_ACCOUNT, "GrpTRES", "Mem=1G,cpu=100,gres/gpu=-1", "cpu=100,mem=1024M,gres/gpu=-1",
     "GrpTRES"},
    {LIMIT_SCOPE_ACCOUNT, "GrpTRESMins", "billing=6000", "billing=6000", "GrpTRESMins"},
    {LIMIT_SCOPE_ACCOUNT, "GrpTRES", "cpu=-1", "cpu=-1", "GrpTRES"},
    {LIMIT_SCOPE_ASSOC, "MaxSubmitJobs", "50", "50", "MaxSubmitJobs"},
    {LIMIT_SCOPE_ASSOC, "MaxSubmit", "-1", "-1", "MaxSubmitJobs"},
    /* flux-accounting's association limits */
    {LIMIT_SCOPE_ASSOC, "max_active_jobs", "2", "2", "MaxSubmitJobs"},
    {LIMIT_SCOPE_ACCOUNT, "max_running_jobs", "UNLIMITED", "-1", "MaxJobs"},
    {LIMIT_SCOPE_ASSOC, "max_nodes", "4", "node=4", "GrpTRES"},
    {LIMIT_SCOPE_ASSOC, "MAX_CORES", "64", "cpu=64", "GrpTRES"},
    {LIMIT_SCOPE_ASSOC, "max_cores", "-1", "cpu=-1", "GrpTRES"},
    {LIMIT_SCOPE_QOS, "MaxJobs", "20", "20", "MaxJobsPerUser"},
    {LIMIT_SCOPE_QOS, "MaxJobsPU", "20", "20", "MaxJobsPerUser"},
    {LIMIT_SCOPE_QOS, "LimitFactor", "2.50", "2.5", "LimitFactor"},
    {LIMIT_SCOPE_QOS, "UsageFactor", "0", "0", "UsageFactor"},
    {LIMIT_SCOPE_QOS, "GraceTime", "00:05:00", "300", "GraceTime"},
    {LIMIT_SCOPE_QOS, "GraceTime", "120", "120", "GraceTime"},
    {LIMIT_SCOPE_QOS, "GrpWall", "INFINITE", "-1", "GrpWall"},
};

static const struct {
    enum limit_scope scope;
    const char *name, *value;
} invalid[] = {
    {LIMIT_SCOPE_ASSOC, "Fairshare", "10"},     /* shares, not a limit */
    {LIMIT_SCOPE_ASSOC, "MaxJobsPerUser", "1"}, /* QOS only */
    {LIMIT_SCOPE_QOS, "MaxTime", "10"},         /* partition only */
    {LIMIT_SCOPE_PARTITION, "GrpJobs", "1"},
    {LIMIT_SCOPE_ASSOC, "MaxJobs", "-2"},
    {LIMIT_SCOPE_ASSOC, "MaxJobs", "ten"},
    {LIMIT_SCOPE_ASSOC, "MaxJobs", ""},
    {LIMIT_SCOPE_ASSOC, "MaxJobs", NULL},
    {LIMIT_SCOPE_ASSOC, NULL, "1"},
    {LIMIT_SCOPE_ASSOC, "MaxWall", "1:2:3:4"},
    {LIMIT_SCOPE_ASSOC, "MaxWall", "1:"},
    {LIMIT_SCOPE_ASSOC, "MaxWall", "x-1"},
    {LIMIT_SCOPE_ASSOC, "MaxWall", "1-x"},
    {LIMIT_SCOPE_ASSOC, "MaxWall", "99999999999999999999"},
    {LIMIT_SCOPE_ASSOC, "MaxWall", "153722867280912930"},
    {LIMIT_SCOPE_ASSOC, "GrpTRES", "cpu=1,cpu=-1"},
    {LIMIT_SCOPE_ASSOC, "max_nodes", "two"},
    {LIMIT_SCOPE_ASSOC, "max_nodes", "cpu=2"},
    {LIMIT_SCOPE_ASSOC, "max_cores", "1.5"},
    {LIMIT_SCOPE_QOS, "max_active_jobs", "2"},
    {LIMIT_SCOPE_ASSOC, "GrpTRES", "cpu=1,"},
    {LIMIT_SCOPE_ASSOC, "GrpTRES", "cpux=-1"},
    {LIMIT_SCOPE_ASSOC, "GrpTRES", "cpu=x"},
    {LIMIT_SCOPE_ASSOC, "GrpTRES", ","},
    {LIMIT_SCOPE_QOS, "LimitFactor", "1.0000001"},
    {LIMIT_SCOPE_QOS, "LimitFactor", "-2"},
};

static void test_validate(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
        char canon[ALLOT_TRES_MAX];
        struct allot_error err = {0};
        if (limits_validate(valid[i].scope, valid[i].name, valid[i].value, canon, sizeof(canon),
                            &err) != 0)
            fail_msg("%s=%s: %s", valid[i].name, valid[i].value, err.msg);
        assert_string_equal(canon, valid[i].canon);
        assert_string_equal(limits_find(valid[i].scope, valid[i].name)->name, valid[i].canon_name);
        /* canonical text is a fixed point */
        char again[ALLOT_TRES_MAX];
        assert_int_equal(
            limits_validate(valid[i].scope, valid[i].name, canon, again, sizeof(again), &err), 0);
        assert_string_equal(again, canon);
    }
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        char canon[ALLOT_TRES_MAX] = "keep";
        struct allot_error err = {0};
        if (limits_validate(invalid[i].scope, invalid[i].name, invalid[i].value, canon,
                            sizeof(canon), &err) != -1)
            fail_msg("%s=%s accepted as %s", invalid[i].name ? invalid[i].name : "(null)",
                     invalid[i].value ? invalid[i].value : "(null)", canon);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_string_equal(canon, "keep");
    }
    char small[4] = "ab";
    struct allot_error err = {0};
    assert_int_equal(
        limits_validate(LIMIT_SCOPE_ASSOC, "GrpTRES", "cpu=1000", small, sizeof(small), &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    assert_string_equal(small, "ab");
    size_t n;
    const struct limit_def *t = limits_table(&n);
    assert_true(n >= 30);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(limits_find(t[i].where & LIMIT_IN_ASSOC ? LIMIT_SCOPE_ASSOC
                                     : t[i].where & LIMIT_IN_QOS ? LIMIT_SCOPE_QOS
                                                                 : LIMIT_SCOPE_PARTITION,
                                     t[i].name),
                         &t[i]);
    assert_null(limits_find((enum limit_scope)9, "MaxJobs"));
}

static void test_flags(void **state)
{
    (void)state;
    assert_int_equal(limits_qos_flags("DenyOnLimit,NoDecay,overpartqos"),
                     LIMIT_QOS_DENY_ON_LIMIT | LIMIT_QOS_OVER_PART_QOS);
    assert_int_equal(limits_qos_flags("PartitionTimeLimit,PartitionMinNodes,PartitionMaxNodes"),
                     LIMIT_QOS_PART_TIME_LIMIT | LIMIT_QOS_PART_MIN_NODE | LIMIT_QOS_PART_MAX_NODE);
    assert_int_equal(limits_qos_flags(""), 0);
    assert_int_equal(limits_qos_flags(NULL), 0);
    assert_int_equal(limits_qos_flags("Deny,DenyOnLimitX"), 0);
    assert_string_equal(limits_level_kind_name(LIMIT_LEVEL_USER_ASSOC), "user association");
    assert_string_equal(limits_level_kind_name((enum limit_level_kind)42), "?");
}

/* A chain builder for the tests: levels in Slurm's order. */
struct fixture {
    struct limit_chain chain;
    struct limit_pair pairs[LIMIT_CHAIN_MAX][8];
};

static int add_level(struct fixture *f, enum limit_level_kind kind, const char *owner,
                     unsigned flags, const char *const *kv)
{
    int i = f->chain.n++;
    struct limit_level *lv = &f->chain.level[i];
    lv->kind = kind;
    lv->owner = owner;
    lv->qos_flags = flags;
    lv->pairs = f->pairs[i];
    lv->n = 0;
    for (int k = 0; kv && kv[k]; k += 2) {
        f->pairs[i][lv->n].name = kv[k];
        f->pairs[i][lv->n].value = kv[k + 1];
        lv->n++;
    }
    return i;
}

static struct limit_effective *resolve(struct fixture *f)
{
    struct limit_effective *eff = malloc(sizeof(*eff));
    struct allot_error err = {0};
    assert_non_null(eff);
    if (limits_resolve(&f->chain, eff, &err) != 0)
        fail_msg("resolve: %s", err.msg);
    return eff;
}

static int64_t tres_of(const struct limit_effective *eff, const char *lim, const char *tres,
                       const char **owner)
{
    const struct limit_resolved *r = limits_get(eff, lim);
    if (!r)
        return -2;
    for (int i = 0; i < r->tres.n; i++)
        if (strcmp(r->tres.item[i].name, tres) == 0) {
            if (owner)
                *owner = r->tres_src[i].owner;
            return r->tres.item[i].count;
        }
    return -1;
}

/* Slurm's worked example: MaxJobs=20 in the partition QOS, nothing in the job QOS,
 * MaxJobs=4 and MaxSubmitJobs=50 in the user association -> MaxJobs=20, MaxSubmitJobs=50. */
static void test_worked_example(void **state)
{
    (void)state;
    struct fixture f = {0};
    add_level(&f, LIMIT_LEVEL_PARTITION_QOS, "pq", 0, (const char *[]){"MaxJobs", "20", NULL});
    add_level(&f, LIMIT_LEVEL_JOB_QOS, "normal", 0, NULL);
    add_level(&f, LIMIT_LEVEL_USER_ASSOC, "alice@chem on cluster c1", 0,
              (const char *[]){"MaxJobs", "4", "MaxSubmitJobs", "50", NULL});
    add_level(&f, LIMIT_LEVEL_ACCOUNT_ASSOC, "chem on cluster c1", 0,
              (const char *[]){"MaxSubmitJobs", "10", NULL});
    add_level(&f, LIMIT_LEVEL_ROOT_ASSOC, "root on cluster c1", 0, NULL);
    add_level(&f, LIMIT_LEVEL_PARTITION, "debug on cluster c1", 0, NULL);
    struct limit_effective *eff = resolve(&f);
    const struct limit_resolved *mj = limits_get(eff, "MaxJobs");
    const struct limit_resolved *ms = limits_get(eff, "maxsubmitjobs");
    assert_non_null(mj);
    assert_non_null(ms);
    assert_int_equal(mj->value, 20);
    assert_int_equal(mj->src.kind, LIMIT_LEVEL_PARTITION_QOS);
    assert_string_equal(mj->src.owner, "pq");
    assert_int_equal(ms->value, 50);
    assert_int_equal(ms->src.level, 2);
    assert_string_equal(ms->src.owner, "alice@chem on cluster c1");
    char row[256];
    assert_int_equal(limits_format_row(ms, 0, row, sizeof(row)), 0);
    assert_string_equal(row, "MaxSubmitJobs\t50\tuser association\talice@chem on cluster c1");

    /* Submitting the 51st job is refused with a message naming limit and level. */
    struct job_request job = {.time_limit_s = 600};
    struct submit_counts counts = {.user_jobs = 50};
    struct limit_violation v;
    char msg[256];
    assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_DENY);
    assert_int_equal(limits_violation_format(&v, msg, sizeof(msg)), 0);
    assert_string_equal(msg, "MaxSubmitJobs=50 from user association alice@chem on cluster c1: "
                             "the job would be submitted job 51; wait until a job ends or "
                             "ask an admin");
    assert_int_equal(v.requested, 51);
    counts.user_jobs = 49;
    assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_OK);
    assert_int_equal(limits_violation_format(&v, msg, 8), -1);
    free(eff);
}

static void test_partition_time(void **state)
{
    (void)state;
    for (int flag = 0; flag < 2; flag++) {
        struct fixture f = {0};
        add_level(&f, LIMIT_LEVEL_JOB_QOS, "long", flag ? LIMIT_QOS_PART_TIME_LIMIT : 0,
                  (const char *[]){"MaxWallDurationPerJob", "2880", NULL});
        add_level(&f, LIMIT_LEVEL_USER_ASSOC, "bob", 0, NULL);
        add_level(&f, LIMIT_LEVEL_PARTITION, "short", 0, (const char *[]){"MaxTime", "1440", NULL});
        struct limit_effective *eff = resolve(&f);
        const struct limit_resolved *r = limits_get(eff, "MaxWallDurationPerJob");
        assert_int_equal(r->value, flag ? 2880 : 1440);
        assert_string_equal(r->src.owner, flag ? "long" : "short");
        /* Over the effective wall time: always refused. */
        struct job_request job = {.time_limit_s = 1441 * 60};
        struct submit_counts counts = {0};
        struct limit_violation v;
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v),
                         flag ? LIMIT_CHECK_OK : LIMIT_CHECK_DENY);
        /* Over the QOS's MaxWall (no DenyOnLimit): the job would pend. */
        job.time_limit_s = 2880 * 60 + 1;
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v),
                         flag ? LIMIT_CHECK_PEND : LIMIT_CHECK_DENY);
        assert_int_equal(v.requested, 2881);
        free(eff);
    }
    /* Only the partition sets it: the partition's value; a lower QOS value stays. */
    struct fixture f = {0};
    add_level(&f, LIMIT_LEVEL_JOB_QOS, "q", 0, (const char *[]){"MaxWall", "60", NULL});
    add_level(&f, LIMIT_LEVEL_PARTITION, "p", 0, (const char *[]){"MaxTime", "1440", NULL});
    struct limit_effective *eff = resolve(&f);
    assert_int_equal(limits_get(eff, "MaxWallDurationPerJob")->value, 60);
    free(eff);
    struct fixture g = {0};
    add_level(&g, LIMIT_LEVEL_USER_ASSOC, "u", 0, NULL);
    add_level(&g, LIMIT_LEVEL_PARTITION, "p", 0,
              (const char *[]){"MaxTime", "1440", "MinNodes", "-1", NULL});
    eff = resolve(&g);
    assert_int_equal(limits_get(eff, "MaxWallDurationPerJob")->value, 1440);
    assert_string_equal(limits_get(eff, "MaxWallDurationPerJob")->src.owner, "p");
    free(eff);
}

static void test_partition_nodes(void **state)
{
    (void)state;
    for (int flag = 0; flag < 2; flag++) {
        struct fixture f = {0};
        add_level(
            &f, LIMIT_LEVEL_JOB_QOS, "q",
            flag ? LIMIT_QOS_PART_MAX_NODE | LIMIT_QOS_PART_MIN_NODE : 0,
            (const char *[]){"MaxTRESPerJob", "node=10,cpu=64", "MinTRESPerJob", "node=1", NULL});
        add_level(&f, LIMIT_LEVEL_PARTITION, "p", 0,
                  (const char *[]){"MaxNodes", "4", "MinNodes", "2", NULL});
        struct limit_effective *eff = resolve(&f);
        const char *owner = NULL;
        assert_int_equal(tres_of(eff, "MaxTRESPerJob", "node", &owner), flag ? 10 : 4);
        assert_string_equal(owner, flag ? "q" : "p");
        assert_int_equal(tres_of(eff, "MaxTRESPerJob", "cpu", &owner), 64);
        assert_string_equal(owner, "q");
        assert_int_equal(tres_of(eff, "MinTRESPerJob", "node", &owner), flag ? 1 : 2);
        assert_string_equal(owner, flag ? "q" : "p");
        /* A 5-node job: beyond the partition's MaxNodes it is refused outright. */
        struct job_request job = {.time_limit_s = -1};
        assert_int_equal(tres_parse("cpu=5,node=5", &job.tres, NULL), 0);
        struct submit_counts counts = {0};
        struct limit_violation v;
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v),
                         flag ? LIMIT_CHECK_OK : LIMIT_CHECK_DENY);
        /* One node: below MinNodes=2 of the partition, unless PartitionMinNodes. */
        assert_int_equal(tres_parse("cpu=1,node=1", &job.tres, NULL), 0);
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v),
                         flag ? LIMIT_CHECK_OK : LIMIT_CHECK_DENY);
        if (!flag) {
            assert_string_equal(v.limit, "MinTRESPerJob");
            assert_string_equal(v.tres, "node");
        }
        free(eff);
    }
    /* Partition-only node limits fill in when no other level sets them, and a smaller
     * QOS MaxNodes is kept. */
    struct fixture f = {0};
    add_level(&f, LIMIT_LEVEL_JOB_QOS, "q", 0, (const char *[]){"MaxTRES", "node=2", NULL});
    add_level(&f, LIMIT_LEVEL_PARTITION, "p", 0,
              (const char *[]){"MaxNodes", "4", "MinNodes", "1", NULL});
    struct limit_effective *eff = resolve(&f);
    assert_int_equal(tres_of(eff, "MaxTRESPerJob", "node", NULL), 2);
    assert_int_equal(tres_of(eff, "MinTRESPerJob", "node", NULL), 1);
    free(eff);
}

static void test_grp_most_restrictive(void **state)
{
    (void)state;
    struct fixture f = {0};
    add_level(&f, LIMIT_LEVEL_JOB_QOS, "q", 0, (const char *[]){"GrpJobs", "100", NULL});
    add_level(&f, LIMIT_LEVEL_USER_ASSOC, "u", 0,
              (const char *[]){"GrpTRES", "cpu=100", "GrpJobs", "30", "GrpSubmitJobs", "40", NULL});
    add_level(&f, LIMIT_LEVEL_ACCOUNT_ASSOC, "acct", 0,
              (const char *[]){"GrpTRES", "cpu=50,mem=1000M", "GrpSubmitJobs", "100", NULL});
    add_level(&f, LIMIT_LEVEL_ROOT_ASSOC, "root", 0,
              (const char *[]){"GrpJobs", "10", "GrpTRES", "gres/gpu=-1", NULL});
    struct limit_effective *eff = resolve(&f);
    const char *owner;
    assert_int_equal(tres_of(eff, "GrpTRES", "cpu", &owner), 50);
    assert_string_equal(owner, "acct");
    assert_int_equal(tres_of(eff, "GrpTRES", "mem", &owner), 1000);
    assert_int_equal(tres_of(eff, "GrpTRES", "gres/gpu", NULL), -1);
    const struct limit_resolved *gj = limits_get(eff, "GrpJobs");
    assert_int_equal(gj->value, 10);
    assert_string_equal(gj->src.owner, "root");
    /* GrpSubmitJobs binds at every level with its own count. */
    struct job_request job = {.time_limit_s = 60};
    struct submit_counts counts = {0};
    struct limit_violation v;
    char msg[256];
    counts.level_jobs[2] = 99; /* the account subtree is full */
    counts.level_jobs[1] = 5;
    assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_OK);
    counts.level_jobs[2] = 100;
    assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_DENY);
    limits_violation_format(&v, msg, sizeof(msg));
    assert_string_equal(msg, "GrpSubmitJobs=100 from account association acct: the job would "
                             "be submitted job 101; wait until a job ends or ask an admin");
    counts.level_jobs[1] = 40;
    assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_DENY);
    limits_violation_format(&v, msg, sizeof(msg));
    assert_string_equal(msg, "GrpSubmitJobs=40 from user association u: the job would be "
                             "submitted job 41; wait until a job ends or ask an admin");
    /* A job alone larger than GrpTRES pends (no DenyOnLimit). */
    counts = (struct submit_counts){0};
    assert_int_equal(tres_parse("cpu=51", &job.tres, NULL), 0);
    assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_PEND);
    assert_string_equal(v.limit, "GrpTRES");
    assert_int_equal(v.deny, 0);
    char row[256];
    const struct limit_resolved *gt = limits_get(eff, "GrpTRES");
    assert_int_equal(limits_format_row(gt, 0, row, sizeof(row)), 0);
    assert_string_equal(row, "GrpTRES\tcpu=50\taccount association\tacct");
    assert_int_equal(limits_format_row(gt, 5, row, sizeof(row)), -1);
    assert_int_equal(limits_format_row(gj, 0, row, 4), -1);
    free(eff);
}

static void test_over_part_qos(void **state)
{
    (void)state;
    for (int flag = 0; flag < 2; flag++) {
        struct fixture f = {0};
        add_level(&f, LIMIT_LEVEL_PARTITION_QOS, "pq", 0,
                  (const char *[]){"MaxTRESPerJob", "cpu=8", NULL});
        add_level(&f, LIMIT_LEVEL_JOB_QOS, "big", flag ? LIMIT_QOS_OVER_PART_QOS : 0,
                  (const char *[]){"MaxTRESPerJob", "cpu=16,gres/gpu=2", NULL});
        struct limit_effective *eff = resolve(&f);
        const char *owner;
        assert_int_equal(tres_of(eff, "MaxTRESPerJob", "cpu", &owner), flag ? 16 : 8);
        assert_string_equal(owner, flag ? "big" : "pq");
        assert_int_equal(tres_of(eff, "MaxTRESPerJob", "gres/gpu", &owner), 2);
        assert_string_equal(owner, "big");
        free(eff);
    }
}

static void test_limit_factor(void **state)
{
    (void)state;
    struct fixture f = {0};
    add_level(&f, LIMIT_LEVEL_PARTITION_QOS, "pq", 0, (const char *[]){"LimitFactor", "-1", NULL});
    add_level(&f, LIMIT_LEVEL_JOB_QOS, "scaled", 0,
              (const char *[]){"LimitFactor", "2", "GrpTRES", "mem=100M", NULL});
    add_level(&f, LIMIT_LEVEL_USER_ASSOC, "u", 0,
              (const char *[]){"GrpTRES", "cpu=30,mem=80M", "MaxTRESPerJob", "gres/gpu=3",
                               "MaxTRESPerNode", "cpu=4", NULL});
    struct limit_effective *eff = resolve(&f);
    assert_int_equal(tres_of(eff, "GrpTRES", "cpu", NULL), 60);  /* 30 x 2 */
    assert_int_equal(tres_of(eff, "GrpTRES", "mem", NULL), 100); /* QOS 100 < 160 */
    assert_int_equal(tres_of(eff, "MaxTRESPerJob", "gres/gpu", NULL), 6);
    assert_int_equal(tres_of(eff, "MaxTRESPerNode", "cpu", NULL), 4); /* not scaled */
    const struct limit_resolved *lf = limits_get(eff, "LimitFactor");
    char row[128];
    assert_int_equal(limits_format_row(lf, 0, row, sizeof(row)), 0);
    assert_string_equal(row, "LimitFactor\t2\tjob QOS\tscaled");
    free(eff);
    /* Overflow saturates, as Slurm turns it into INFINITE. */
    struct fixture g = {0};
    add_level(&g, LIMIT_LEVEL_JOB_QOS, "x", 0, (const char *[]){"LimitFactor", "1000", NULL});
    add_level(&g, LIMIT_LEVEL_USER_ASSOC, "u", 0,
              (const char *[]){"GrpTRES", "cpu=9223372036854775807", NULL});
    eff = resolve(&g);
    assert_int_equal(tres_of(eff, "GrpTRES", "cpu", NULL), INT64_MAX);
    free(eff);
}

static void test_job_size_checks(void **state)
{
    (void)state;
    for (int deny = 0; deny < 2; deny++) {
        struct fixture f = {0};
        add_level(&f, LIMIT_LEVEL_JOB_QOS, "normal", deny ? LIMIT_QOS_DENY_ON_LIMIT : 0,
                  (const char *[]){"MaxTRESPerJob", "gres/gpu=4", "MinTRESPerJob", "cpu=2",
                                   "MaxTRESPerNode", "mem=4G", "MaxTRESMinsPerJob", "cpu=600",
                                   "MaxSubmitJobsPerAccount", "3", NULL});
        struct limit_effective *eff = resolve(&f);
        struct submit_counts counts = {0};
        struct limit_violation v;
        char msg[256];
        struct job_request job = {.time_limit_s = 3600};
        assert_int_equal(tres_parse("cpu=8,mem=8G,node=2,gres/gpu=4", &job.tres, NULL), 0);
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_OK);
        enum limit_check want = deny ? LIMIT_CHECK_DENY : LIMIT_CHECK_PEND;
        assert_int_equal(tres_parse("cpu=8,mem=8G,node=2,gres/gpu=5", &job.tres, NULL), 0);
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), want);
        limits_violation_format(&v, msg, sizeof(msg));
        assert_string_equal(msg, "MaxTRESPerJob=gres/gpu=4 from job QOS normal: job asks "
                                 "gres/gpu=5; lower it to at most 4 or ask an admin");
        assert_int_equal(v.requested, 5);
        assert_int_equal(tres_parse("cpu=1,node=1", &job.tres, NULL), 0);
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), want);
        assert_string_equal(v.limit, "MinTRESPerJob");
        assert_int_equal(tres_parse("cpu=4,mem=9G,node=2", &job.tres, NULL), 0);
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), want);
        assert_string_equal(v.limit, "MaxTRESPerNode");
        assert_int_equal(v.requested, 4608);
        assert_int_equal(tres_parse("cpu=11,node=1", &job.tres, NULL), 0);
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), want);
        assert_string_equal(v.limit, "MaxTRESMinsPerJob");
        assert_int_equal(v.requested, 660);
        job.time_limit_s = -1; /* no time limit: the TRES-minutes check cannot apply */
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_OK);
        job.tres.n = 0;
        assert_int_equal(tres_parse("cpu=2", &job.tres, NULL), 0);
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_OK);
        /* A pending reason never hides a denial found later. */
        counts.account_jobs = 3;
        assert_int_equal(tres_parse("cpu=1", &job.tres, NULL), 0);
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_DENY);
        assert_string_equal(v.limit, "MaxSubmitJobsPerAccount");
        free(eff);
    }
}

/* MaxWall: only the association's is "denied at submission" (reference); a QOS MaxWall
 * pends unless DenyOnLimit; the partition's MaxTime refuses.  The message says what the job
 * asks and what to change. */
static void test_wall_deny_or_pend(void **state)
{
    (void)state;
    static const struct {
        enum limit_level_kind kind;
        unsigned flags;
        enum limit_check want;
    } cases[] = {
        {LIMIT_LEVEL_JOB_QOS, 0, LIMIT_CHECK_PEND},
        {LIMIT_LEVEL_JOB_QOS, LIMIT_QOS_DENY_ON_LIMIT, LIMIT_CHECK_DENY},
        {LIMIT_LEVEL_PARTITION_QOS, 0, LIMIT_CHECK_PEND},
        {LIMIT_LEVEL_USER_ASSOC, 0, LIMIT_CHECK_DENY},
        {LIMIT_LEVEL_ACCOUNT_ASSOC, 0, LIMIT_CHECK_DENY},
        {LIMIT_LEVEL_PARTITION, 0, LIMIT_CHECK_DENY},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fixture f = {0};
        int part = cases[i].kind == LIMIT_LEVEL_PARTITION;
        const char *kv[] = {part ? "MaxTime" : "MaxWall", "60", NULL};
        if (cases[i].kind != LIMIT_LEVEL_JOB_QOS)
            add_level(&f, LIMIT_LEVEL_JOB_QOS, "q", cases[i].flags, NULL);
        add_level(&f, cases[i].kind, "c1:lim", cases[i].flags, kv);
        struct limit_effective *eff = resolve(&f);
        struct job_request job = {.time_limit_s = 90 * 60};
        struct submit_counts counts = {0};
        struct limit_violation v;
        char msg[256];
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), cases[i].want);
        assert_int_equal(v.deny, cases[i].want == LIMIT_CHECK_DENY);
        assert_int_equal(limits_violation_format(&v, msg, sizeof(msg)), 0);
        if (part)
            assert_string_equal(msg, "MaxWallDurationPerJob=60 from partition c1:lim: job asks "
                                     "90 min; lower --time to at most 60 min or ask an admin");
        job.time_limit_s = 60 * 60;
        assert_int_equal(limits_check_submit(eff, &job, &counts, &v), LIMIT_CHECK_OK);
        free(eff);
    }
}

static void test_resolve_errors(void **state)
{
    (void)state;
    struct allot_error err = {0};
    struct limit_effective *eff = malloc(sizeof(*eff));
    assert_non_null(eff);
    struct fixture f = {0};
    add_level(&f, LIMIT_LEVEL_USER_ASSOC, "u", 0, (const char *[]){"MaxTime", "10", NULL});
    assert_int_equal(limits_resolve(&f.chain, eff, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_non_null(strstr(err.msg, "MaxTime"));
    struct fixture g = {0};
    add_level(&g, LIMIT_LEVEL_USER_ASSOC, "u", 0, (const char *[]){"MaxJobs", "2-00:00", NULL});
    assert_int_equal(limits_resolve(&g.chain, eff, &err), -1);
    struct fixture h = {0};
    add_level(&h, LIMIT_LEVEL_USER_ASSOC, "u", 0, (const char *[]){"GrpTRES", "cpu=x", NULL});
    assert_int_equal(limits_resolve(&h.chain, eff, &err), -1);
    struct fixture k = {0};
    add_level(&k, LIMIT_LEVEL_JOB_QOS, "q", 0, (const char *[]){"UsageFactor", "x", NULL});
    assert_int_equal(limits_resolve(&k.chain, eff, &err), -1);
    struct limit_chain bad = {.n = LIMIT_CHAIN_MAX + 1};
    assert_int_equal(limits_resolve(&bad, eff, &err), -1);
    /* Unset values are skipped; unknown lookups give NULL. */
    struct fixture m = {0};
    add_level(&m, LIMIT_LEVEL_USER_ASSOC, "u", 0, (const char *[]){"MaxJobs", "-1", NULL});
    assert_int_equal(limits_resolve(&m.chain, eff, &err), 0);
    assert_null(limits_get(eff, "GrpJobs"));
    free(eff);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate),          cmocka_unit_test(test_flags),
        cmocka_unit_test(test_worked_example),    cmocka_unit_test(test_partition_time),
        cmocka_unit_test(test_partition_nodes),   cmocka_unit_test(test_grp_most_restrictive),
        cmocka_unit_test(test_over_part_qos),     cmocka_unit_test(test_limit_factor),
        cmocka_unit_test(test_job_size_checks),   cmocka_unit_test(test_resolve_errors),
        cmocka_unit_test(test_wall_deny_or_pend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
