/* SPDX-License-Identifier: GPL-3.0-or-later */
/* job_void.c - store_void: a run the Slurm plugins cancelled before it started (FailMode=closed,
 * allotd unreachable at the hold) is recorded released and void with a failure row, and no
 * later settle or release of it writes a ledger row; a held run's hold is released; a run
 * already settled keeps its outcome; bad requests change nothing.  store_check passes. */
#include "store_test.h"

#define DAY 86400
#define T0 1767225600 /* 2026-01-01T00:00:00Z */

static struct void_req void_req(int64_t job_id)
{
    struct void_req r;
    memset(&r, 0, sizeof r);
    snprintf(r.cluster, sizeof r.cluster, "c1");
    r.job_id = job_id;
    snprintf(r.user, sizeof r.user, "alice");
    snprintf(r.account, sizeof r.account, "chem");
    snprintf(r.partition, sizeof r.partition, "cpu");
    r.submit_s = T0 + 100;
    r.start_s = T0 + 200;
    r.time_limit_s = 600;
    snprintf(r.reason, sizeof r.reason, "allotd at unix:/run/allotd.sock did not answer");
    snprintf(r.actor, sizeof r.actor, "slurm");
    r.now_s = T0 + 300;
    return r;
}

static struct settle_req sacct_settle(int64_t job_id)
{
    struct settle_req s = fx_settle_req(job_id, T0 + 200, 2, "CANCELLED", "sacct");
    snprintf(s.user, sizeof s.user, "alice");
    snprintf(s.account, sizeof s.account, "chem");
    snprintf(s.partition, sizeof s.partition, "cpu");
    snprintf(s.resource, sizeof s.resource, "cpu");
    s.billing_micro = 1000000;
    s.now_s = T0 + 400;
    return s;
}

static int count_failures(const struct failure *fl, void *arg)
{
    (void)fl;
    (*(int *)arg)++;
    return 0;
}

static void test_void_unknown_run_never_charged(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 30 * DAY, 600);
    struct void_req v = void_req(50);
    struct settle_result r;
    TX(f, store_void(f->st, &v, &r, &f->err));
    assert_false(r.replay);
    assert_int_equal(r.job.status, JOB_RELEASED);
    assert_string_equal(r.job.settle_source, "void");
    assert_int_equal(r.job.charge_sumin, 0);
    assert_int_equal(r.job.start_s, T0 + 200);
    assert_int_equal(fx_ledger_rows(f), 1); /* the grant only */
    /* The agent's sacct settle, a release and the void itself again: replays, no rows. */
    struct settle_req s = sacct_settle(50);
    TX(f, store_settle(f->st, &s, &r, &f->err));
    assert_true(r.replay);
    assert_string_equal(r.job.settle_source, "void");
    TX(f, store_release(f->st, "c1", 50, 0, "slurm", "", T0 + 500, &r, &f->err));
    assert_true(r.replay);
    TX(f, store_void(f->st, &v, &r, &f->err));
    assert_true(r.replay);
    assert_int_equal(fx_ledger_rows(f), 1);
    int n = 0;
    struct failure_filter ff = {0};
    OK(f, store_failure_list(f->st, &ff, count_failures, &n, &f->err));
    assert_int_equal(n, 1);
    fx_check_clean(f);
}

static void test_void_held_run_released(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 30 * DAY, 600);
    struct hold_req h = fx_hold_req(51, 10, T0 + 200, 600);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    /* The hold's answer never reached the plugin, which cancelled the job. */
    struct void_req v = void_req(51);
    struct settle_result r;
    TX(f, store_void(f->st, &v, &r, &f->err));
    assert_false(r.replay);
    assert_int_equal(r.job.status, JOB_RELEASED);
    assert_string_equal(r.job.settle_source, "void");
    struct balance b;
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    assert_int_equal(b.held_sumin, 0);
    assert_int_equal(b.used_sumin, 0);
    int rows = fx_ledger_rows(f);
    struct settle_req s = sacct_settle(51);
    TX(f, store_settle(f->st, &s, &r, &f->err));
    assert_true(r.replay);
    assert_int_equal(fx_ledger_rows(f), rows);
    OK(f, store_job_get(f->st, "c1", 51, 0, &r.job, &f->err));
    assert_string_equal(r.job.settle_source, "void");
    fx_check_clean(f);
}

static void test_void_settled_run_stands(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 30 * DAY, 600);
    struct settle_req s = sacct_settle(52);
    struct settle_result r;
    TX(f, store_settle(f->st, &s, &r, &f->err));
    assert_int_equal(r.job.charge_sumin, 1);
    int rows = fx_ledger_rows(f);
    struct void_req v = void_req(52);
    TX(f, store_void(f->st, &v, &r, &f->err));
    assert_true(r.replay);
    assert_int_equal(r.job.status, JOB_SETTLED);
    assert_int_equal(fx_ledger_rows(f), rows);
    /* Bad requests: nothing written. */
    v = void_req(53);
    v.user[0] = '\0';
    TX_FAILS(f, ALLOT_EINVAL, store_void(f->st, &v, &r, &f->err));
    v = void_req(0);
    TX_FAILS(f, ALLOT_EINVAL, store_void(f->st, &v, &r, &f->err));
    v = void_req(53);
    v.run = -1;
    TX_FAILS(f, ALLOT_EINVAL, store_void(f->st, &v, &r, &f->err));
    assert_int_equal(fx_ledger_rows(f), rows);
    fx_check_clean(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_void_unknown_run_never_charged, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_void_held_run_released, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_void_settled_run_stands, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
