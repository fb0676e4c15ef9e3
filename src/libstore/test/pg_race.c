/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pg_race.c - the check-and-hold stays atomic across connections (doc/design.md §3.6, "No
 * overdraft, ever"), on SQLite and on PostgreSQL (run by pg.cmake with ALLOT_TEST_PG_CONNINFO).
 *
 * Several threads, each with its own store_t (as several allotd writers have), hold jobs
 * against one allocation in batches of savepointed holds (the daemon's group commit).  The
 * number of holds granted must be exactly what the balance covers, the balance must equal
 * the ledger (store_check), and HADM's case - two 20 SU holds against 30 SU - must give
 * exactly one hold.  A second connection waiting for the write lock gives up with EUNAVAIL
 * after its busy timeout.
 */
#include <pthread.h>

#include "store_test.h"

/* Parameters of one racing writer; outputs filled by the thread, checked by the test. */
struct racer {
    struct store_config cfg;
    int first_job, jobs, batch;
    int64_t amount_sumin;
    int granted, refused, retries;
    char error[ALLOT_ERRMSG_MAX + 16]; /* first unexpected error, "" = none */
};

static void hold_req_fill(struct hold_req *r, int64_t job_id, int64_t amount_sumin)
{
    memset(r, 0, sizeof *r);
    snprintf(r->cluster, sizeof r->cluster, "c1");
    r->job_id = job_id;
    snprintf(r->user, sizeof r->user, "alice");
    snprintf(r->account, sizeof r->account, "chem");
    snprintf(r->resource, sizeof r->resource, "cpu");
    r->start_s = 1500;
    r->submit_s = 1500;
    r->time_limit_s = 60;
    r->billing_micro = 1000000;
    r->amount_sumin = amount_sumin;
    r->now_s = 1500;
}

/* One batch: begin, a savepoint per hold, commit.  Returns 0, or -1 with err (the whole
 * batch is rolled back and will be retried, as the daemon retries EUNAVAIL). */
static int run_batch(store_t *st, struct racer *r, int first, int n, int *granted, int *refused,
                     struct allot_error *err)
{
    *granted = *refused = 0;
    if (store_begin(st, err) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        struct hold_req req;
        struct hold_result res;
        hold_req_fill(&req, first + i, r->amount_sumin);
        if (store_savepoint(st, err) < 0)
            goto fail;
        if (store_hold(st, &req, &res, err) < 0) {
            store_savepoint_rollback(st);
            goto fail;
        }
        if (store_savepoint_release(st, err) < 0)
            goto fail;
        if (res.refused)
            (*refused)++;
        else
            (*granted)++;
    }
    if (store_commit(st, err) < 0)
        return -1;
    return 0;
fail:
    store_rollback(st);
    return -1;
}

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    struct allot_error err = {0};
    store_t *st = store_open(&r->cfg, &err);
    if (!st) {
        snprintf(r->error, sizeof r->error, "open: %s", err.msg);
        return NULL;
    }
    for (int done = 0; done < r->jobs;) {
        int n = r->jobs - done < r->batch ? r->jobs - done : r->batch;
        int g, f;
        if (run_batch(st, r, r->first_job + done, n, &g, &f, &err) < 0) {
            if (err.code == ALLOT_EUNAVAIL && r->retries < 1000) {
                r->retries++;
                continue;
            }
            snprintf(r->error, sizeof r->error, "batch: %s", err.msg);
            break;
        }
        r->granted += g;
        r->refused += f;
        done += n;
    }
    store_close(st);
    return NULL;
}

/* Run nthreads racers of jobs_each holds of amount against a fresh allocation of
 * balance_sumin; return the granted total after checking every thread ran cleanly. */
static int race(struct fx *f, int nthreads, int jobs_each, int batch, int64_t amount,
                int64_t balance_sumin, int64_t *alloc_id)
{
    enum { MAXT = 16 };
    struct racer r[MAXT];
    pthread_t tid[MAXT];
    assert_true(nthreads <= MAXT);
    fx_add_account(f, "chem", "root");
    *alloc_id = fx_add_alloc(f, "chem", "cpu", "", 1000, 100000, balance_sumin);
    for (int i = 0; i < nthreads; i++) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].cfg = fx_config(f);
        r[i].cfg.busy_timeout_ms = 20000;
        r[i].first_job = 1 + i * jobs_each;
        r[i].jobs = jobs_each;
        r[i].batch = batch;
        r[i].amount_sumin = amount;
        assert_int_equal(pthread_create(&tid[i], NULL, racer_main, &r[i]), 0);
    }
    int granted = 0, refused = 0;
    for (int i = 0; i < nthreads; i++) {
        assert_int_equal(pthread_join(tid[i], NULL), 0);
        if (r[i].error[0])
            fail_msg("racer %d: %s", i, r[i].error);
        granted += r[i].granted;
        refused += r[i].refused;
    }
    assert_int_equal(granted + refused, nthreads * jobs_each);
    return granted;
}

static void test_race_many(void **state)
{
    struct fx *f = *state;
    int64_t id;
    /* 8 writers x 40 holds of 7 against 1000: exactly floor(1000 / 7) = 142 fit. */
    int granted = race(f, 8, 40, 5, 7, 1000, &id);
    assert_int_equal(granted, 142);
    struct allocation a;
    struct balance b;
    OK(f, store_alloc_get(f->st, id, &a, &b, &f->err));
    assert_int_equal(b.granted_sumin, 1000);
    assert_int_equal(b.held_sumin, 142 * 7);
    assert_int_equal(b.used_sumin, 0);
    fx_check_clean(f);
}

static void test_hadm_two_holds(void **state)
{
    struct fx *f = *state;
    int64_t id;
    /* HADM: two 20 SU (1200 SU-minute) holds against a 30 SU balance: exactly one. */
    int granted = race(f, 2, 1, 1, 20 * 60, 30 * 60, &id);
    assert_int_equal(granted, 1);
    fx_check_clean(f);
}

/* A second connection waits for the write lock, then reports EUNAVAIL. */
static void test_busy_both(void **state)
{
    struct fx *f = *state;
    struct store_config cfg = fx_config(f);
    cfg.busy_timeout_ms = 100;
    store_t *st2 = store_open(&cfg, &f->err);
    assert_non_null(st2);
    BEGIN(f);
    FAILS(f, ALLOT_EUNAVAIL, store_begin(st2, &f->err));
    COMMIT(f);
    OK(f, store_begin(st2, &f->err));
    OK(f, store_commit(st2, &f->err));
    store_close(st2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_busy_both, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hadm_two_holds, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_race_many, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
