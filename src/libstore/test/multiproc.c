/* SPDX-License-Identifier: GPL-3.0-or-later */
/* multiproc.c - no overdraft across processes: 4 forked processes, each with its own
 * store_t on the same bank (the fixture's SQLite file or PostgreSQL schema), each taking 500 holds
 * of 1 SU-minute in its own transactions against one allocation credited 1000.  Exactly 1000 holds
 * succeed, the other 1000 are refused, and the cached balance equals the ledger (store_check). */
#include <sys/wait.h>

#include "store_test.h"

#define NPROC 4
#define NHOLD 500
#define CREDIT 1000
#define T0 1767225600

static int child(struct store_config cfg, int k)
{
    struct allot_error err;
    cfg.busy_timeout_ms = 60000;
    store_t *st = store_open(&cfg, &err);
    if (!st) {
        fprintf(stderr, "child %d: open: %s\n", k, err.msg);
        return 1;
    }
    for (int i = 0; i < NHOLD; i++) {
        struct hold_req r;
        struct hold_result res;
        memset(&r, 0, sizeof r);
        snprintf(r.cluster, sizeof r.cluster, "c1");
        r.job_id = (int64_t)k * 100000 + i + 1;
        snprintf(r.user, sizeof r.user, "u%d", k);
        snprintf(r.account, sizeof r.account, "chem");
        snprintf(r.resource, sizeof r.resource, "cpu");
        r.start_s = T0 + 10;
        r.billing_micro = 1000000;
        r.time_limit_s = 60;
        r.amount_sumin = 1;
        r.now_s = T0 + 10;
        if (store_begin(st, &err) < 0 || store_hold(st, &r, &res, &err) < 0 ||
            store_commit(st, &err) < 0) {
            fprintf(stderr, "child %d hold %d: %s\n", k, i, err.msg);
            store_rollback(st);
            store_close(st);
            return 1;
        }
    }
    store_close(st);
    return 0;
}

static void test_no_overdraft_across_processes(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 86400, CREDIT);
    /* Do not carry an open SQLite connection across fork(). */
    store_close(f->st);
    f->st = NULL;
    pid_t pids[NPROC];
    for (int k = 0; k < NPROC; k++) {
        pids[k] = fork();
        assert_true(pids[k] >= 0);
        if (pids[k] == 0)
            _exit(child(fx_config(f), k));
    }
    for (int k = 0; k < NPROC; k++) {
        int status = 0;
        assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    f->st = fx_open_store(f);
    struct balance b;
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    assert_int_equal(b.held_sumin, CREDIT);
    assert_int_equal(b.available_sumin, 0);
    int64_t held = 0;
    OK(f, store_job_count_held(f->st, "c1", "chem", NULL, &held, &f->err));
    assert_int_equal(held, CREDIT);
    /* 1 credit + one hold entry per held job. */
    assert_int_equal(fx_ledger_rows(f), 1 + CREDIT);
    fx_check_clean(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_overdraft_across_processes, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
