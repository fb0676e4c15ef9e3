/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * test/submit_req.c - the job_submit translation rules, without slurmctld: descriptors
 * are initialised by libslurm's own slurm_init_job_desc_msg (as sbatch does), then given
 * the fields a user would set.  The environment is a small table of partitions and
 * users' default accounts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "plugins/job_submit/allot/submit_req.h"

/* Partitions: "cpu" (default, DefaultTime 60, MaxTime 1440, DefMemPerCPU 1000),
 * "gpu" (no DefaultTime, MaxTime 120, no DefMemPerCPU), "open" (neither limit). */
static int env_default_account(uint32_t uid, char *buf, size_t size, void *arg)
{
    (void)arg;
    if (uid != 1000)
        return -1;
    snprintf(buf, size, "chem");
    return 0;
}

static int env_default_partition(char *buf, size_t size, void *arg)
{
    if (arg && strcmp(arg, "nodefault") == 0)
        return -1;
    snprintf(buf, size, "cpu");
    return 0;
}

static int env_partition_info(const char *name, submit_partition_info_t *out, void *arg)
{
    (void)arg;
    if (strcmp(name, "cpu") == 0)
        *out = (submit_partition_info_t){60, 1440, 1000};
    else if (strcmp(name, "gpu") == 0)
        *out = (submit_partition_info_t){SUBMIT_TIME_UNSET, 120, 0};
    else if (strcmp(name, "open") == 0)
        *out = (submit_partition_info_t){SUBMIT_TIME_UNSET, SUBMIT_TIME_UNLIMITED, 0};
    else
        return -1;
    return 0;
}

static const submit_env_t test_env = {env_default_account, env_default_partition,
                                      env_partition_info, 500, NULL};

static job_desc_msg_t new_desc(void)
{
    job_desc_msg_t d;

    slurm_init_job_desc_msg(&d);
    d.user_id = 1000;
    return d;
}

static void defaults_fill_everything(void **state)
{
    job_desc_msg_t d = new_desc();
    submit_req_t r;
    char msg[256];

    assert_int_equal(submit_req_from_desc(&d, 1000, &test_env, &r, msg, sizeof(msg)),
                     SLURM_SUCCESS);
    assert_string_equal(msg, "");
    assert_int_equal(r.uid, 1000);
    assert_string_equal(r.account, "chem");
    assert_string_equal(r.partition, "cpu");
    assert_string_equal(r.qos, "");
    assert_int_equal(r.time_limit_min, 60);
    assert_int_equal(r.time_min_min, 60);
    assert_int_equal(r.min_nodes, 1);
    assert_int_equal(r.min_cpus, 1);
    assert_true(r.mem_per_cpu);
    assert_true(r.mem_defaulted);
    assert_int_equal(r.mem_mb, 1000);
}

static void explicit_values_are_kept(void **state)
{
    job_desc_msg_t d = new_desc();
    submit_req_t r;
    char msg[256];

    d.account = "bio";
    d.partition = "gpu";
    d.qos = "long";
    d.time_limit = 90;
    d.time_min = 30;
    d.min_nodes = 2;
    d.num_tasks = 4;
    d.cpus_per_task = 8;
    d.pn_min_memory = 64000;
    d.tres_per_node = "gres:gpu:2";
    assert_int_equal(submit_req_from_desc(&d, 0, &test_env, &r, msg, sizeof(msg)), SLURM_SUCCESS);
    assert_string_equal(r.account, "bio");
    assert_string_equal(r.partition, "gpu");
    assert_string_equal(r.qos, "long");
    assert_int_equal(r.time_limit_min, 90);
    assert_int_equal(r.time_min_min, 30);
    assert_int_equal(r.min_nodes, 2);
    assert_int_equal(r.min_cpus, 32);
    assert_false(r.mem_per_cpu);
    assert_false(r.mem_defaulted);
    assert_int_equal(r.mem_mb, 64000);
    assert_string_equal(r.tres_per_node, "gres:gpu:2");
}

static void maxtime_and_site_memory_defaults(void **state)
{
    job_desc_msg_t d = new_desc();
    submit_req_t r;

    d.partition = "gpu";
    d.pn_min_memory = 2048 | MEM_PER_CPU;
    assert_int_equal(submit_req_from_desc(&d, 1000, &test_env, &r, NULL, 0), SLURM_SUCCESS);
    assert_int_equal(r.time_limit_min, 120);
    assert_true(r.mem_per_cpu);
    assert_false(r.mem_defaulted);
    assert_int_equal(r.mem_mb, 2048);

    d.pn_min_memory = NO_VAL64; /* gpu has no DefMemPerCPU: the site default */
    assert_int_equal(submit_req_from_desc(&d, 1000, &test_env, &r, NULL, 0), SLURM_SUCCESS);
    assert_int_equal(r.mem_mb, 500);
    assert_true(r.mem_defaulted);

    d.mem_per_tres = "gres:gpu:16000"; /* --mem-per-gpu: no per-CPU default */
    assert_int_equal(submit_req_from_desc(&d, 1000, &test_env, &r, NULL, 0), SLURM_SUCCESS);
    assert_int_equal(r.mem_mb, 0);
    assert_false(r.mem_defaulted);
}

/* Refusals: code, a message naming the fix, and *out untouched. */
struct refusal {
    const char *what;
    void (*setup)(job_desc_msg_t *d);
    const void *env_arg;
    int code;
    const char *msg_part;
};

static void no_account_user(job_desc_msg_t *d)
{
    d->user_id = 2000;
}
static void two_partitions(job_desc_msg_t *d)
{
    d->partition = "cpu,gpu";
}
static void unknown_partition(job_desc_msg_t *d)
{
    d->partition = "nope";
}
static void nothing(job_desc_msg_t *d)
{
    (void)d;
}
static void open_without_time(job_desc_msg_t *d)
{
    d->partition = "open";
}
static void infinite_time(job_desc_msg_t *d)
{
    d->time_limit = INFINITE;
}
static void zero_time(job_desc_msg_t *d)
{
    d->time_limit = 0;
}
static void time_min_above_limit(job_desc_msg_t *d)
{
    d->time_limit = 10;
    d->time_min = 20;
}
static void long_account(job_desc_msg_t *d)
{
    static char name[SUBMIT_NAME_MAX + 10];
    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    d->account = name;
}

static const struct refusal refusals[] = {
    {"no default account", no_account_user, NULL, ESLURM_INVALID_ACCOUNT, "--account"},
    {"two partitions", two_partitions, NULL, ESLURM_INVALID_PARTITION_NAME, "exactly one"},
    {"unknown partition", unknown_partition, NULL, ESLURM_INVALID_PARTITION_NAME,
     "\"nope\" does not exist"},
    {"no default partition", nothing, "nodefault", ESLURM_INVALID_PARTITION_NAME, "--partition"},
    {"no time limit anywhere", open_without_time, NULL, ESLURM_MISSING_TIME_LIMIT, "--time"},
    {"infinite time limit", infinite_time, NULL, ESLURM_INVALID_TIME_LIMIT, "--time"},
    {"zero time limit", zero_time, NULL, ESLURM_INVALID_TIME_LIMIT, "at least 1 minute"},
    {"time_min above limit", time_min_above_limit, NULL, ESLURM_INVALID_TIME_MIN_LIMIT, "exceeds"},
    {"account too long", long_account, NULL, ESLURM_INVALID_ACCOUNT, "longer than"},
};

static void refusals_leave_output_untouched(void **state)
{
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
        const struct refusal *t = &refusals[i];
        job_desc_msg_t d = new_desc();
        submit_env_t env = test_env;
        submit_req_t r, before;
        char msg[256];

        env.arg = (void *)t->env_arg;
        memset(&r, 0x5a, sizeof(r));
        before = r;
        t->setup(&d);
        print_message("case: %s\n", t->what);
        assert_int_equal(submit_req_from_desc(&d, 1000, &env, &r, msg, sizeof(msg)), t->code);
        assert_non_null(strstr(msg, t->msg_part));
        assert_memory_equal(&r, &before, sizeof(r));
    }
}

/* Only the memory default is written: a time_min would make Slurm refuse a user's lower
 * time limit (scontrol update ... timelimit=) as "Invalid time-min specification". */
static void apply_writes_memory_only(void **state)
{
    job_desc_msg_t d = new_desc();
    submit_req_t r;

    assert_int_equal(submit_req_from_desc(&d, 1000, &test_env, &r, NULL, 0), SLURM_SUCCESS);
    submit_req_apply(&r, &d);
    assert_int_equal(d.time_min, NO_VAL);
    assert_true(d.pn_min_memory == (1000 | MEM_PER_CPU));
    assert_int_equal(d.time_limit, NO_VAL);
    assert_null(d.account);
    assert_null(d.partition);

    d = new_desc();
    d.time_limit = 100;
    d.time_min = 50;
    d.pn_min_memory = 4000;
    assert_int_equal(submit_req_from_desc(&d, 1000, &test_env, &r, NULL, 0), SLURM_SUCCESS);
    submit_req_apply(&r, &d);
    assert_int_equal(d.time_min, 50);
    assert_true(d.pn_min_memory == 4000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_fill_everything),
        cmocka_unit_test(explicit_values_are_kept),
        cmocka_unit_test(maxtime_and_site_memory_defaults),
        cmocka_unit_test(refusals_leave_output_untouched),
        cmocka_unit_test(apply_writes_memory_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
