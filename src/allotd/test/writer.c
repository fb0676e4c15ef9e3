/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/writer.c - the group-commit writer on a real SQLite file (and PostgreSQL as
 * allotd_writer_pg, label pg): a batch of rerunnable ops
 * (run without savepoints) in which one op fails after writing keeps the others' effects
 * and none of the failed op's, and reports the failed op's own error; the same with a
 * non-rerunnable op in the batch (savepoints from the start); and a batch without failure
 * commits all.  A first op that sleeps keeps the writer busy so that the next ops queue
 * up and form one batch.  Holds offered to store_job_batch (op->job): applied and
 * committed by it on PostgreSQL before the writer's own transaction, where they stand
 * when another op's failure rolls that transaction back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "allotd/metrics.h"
#include "allotd/writer.h"
#include "libstore/test/store_test_pg.h"

struct acct_op {
    struct write_op op;
    char name[32];
    int fail;  /* 1: add the account, then fail */
    int sleep; /* 1: sleep 300 ms first (keeps the writer busy) */
    int done;
    /* A hold instead of an account (hold.job_id > 0), as api_job.c runs one. */
    struct hold_req hold;
    struct hold_result hres;
    struct store_job_op job;
};

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    struct acct_op *a = arg;
    if (a->sleep) {
        struct timespec ts = {0, 300 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (a->hold.job_id > 0)
        return a->job.done ? 0 : store_hold(st, &a->hold, &a->hres, err);
    struct account acc;
    memset(&acc, 0, sizeof(acc));
    snprintf(acc.name, sizeof(acc.name), "%s", a->name);
    snprintf(acc.parent, sizeof(acc.parent), "root");
    acc.shares = 1;
    if (store_account_add(st, &acc, err) < 0)
        return -1;
    if (a->fail)
        return allot_errorf(err, ALLOT_ECONFLICT, "%s: failed on purpose", a->name);
    return 0;
}

static void op_done(struct write_op *op)
{
    struct acct_op *a = op->done_arg;
    __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}

struct fixture {
    char dir[64];
    char path[128];
    struct store_config cfg;
    struct metrics *m;
    char pg_schema[64]; /* PostgreSQL: this fixture's schema */
    char pg_conninfo[1024];
    int64_t alloc_id; /* chem's cpu allocation */
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/allotd-writer-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    snprintf(fx->path, sizeof(fx->path), "%s/w.sqlite", fx->dir);
    fx->cfg = (struct store_config){.backend = "sqlite", .target = fx->path, .durable = 1};
    if (fx_pg_base()) {
        fx_pg_create(fx->pg_schema, sizeof(fx->pg_schema), fx->pg_conninfo,
                     sizeof(fx->pg_conninfo));
        fx->cfg.backend = "pg";
        fx->cfg.target = fx->pg_conninfo;
    }
    struct allot_error err = {0};
    store_t *st = store_open(&fx->cfg, &err);
    assert_non_null(st);
    assert_int_equal(store_upgrade(st, &err), 0);
    /* For the holds: account chem with 1000 SU-minutes of cpu. */
    struct account acc;
    memset(&acc, 0, sizeof(acc));
    snprintf(acc.name, sizeof(acc.name), "chem");
    snprintf(acc.parent, sizeof(acc.parent), "root");
    acc.shares = 1;
    struct allocation al;
    memset(&al, 0, sizeof(al));
    snprintf(al.account, sizeof(al.account), "chem");
    snprintf(al.resource, sizeof(al.resource), "cpu");
    al.start_s = 0;
    al.end_s = INT64_C(4102444800);
    struct ledger_entry e;
    memset(&e, 0, sizeof(e));
    e.kind = LEDGER_CREDIT;
    e.amount_sumin = 1000;
    int replay;
    assert_int_equal(store_begin(st, &err), 0);
    assert_int_equal(store_account_add(st, &acc, &err), 0);
    assert_int_equal(store_alloc_add(st, &al, &err), 0);
    e.alloc_id = al.id;
    assert_int_equal(store_credit(st, &e, &replay, &err), 0);
    assert_int_equal(store_commit(st, &err), 0);
    fx->alloc_id = al.id;
    store_close(st);
    fx->m = metrics_create();
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", fx->dir);
    if (fx->pg_schema[0])
        fx_pg_drop(fx->pg_schema);
    metrics_destroy(fx->m);
    free(fx);
    return 0;
}

static int account_exists(struct fixture *fx, const char *name)
{
    struct allot_error err = {0};
    store_t *st = store_open(&fx->cfg, &err);
    assert_non_null(st);
    struct account a;
    int rc = store_account_get(st, name, &a, &err);
    store_close(st);
    if (rc < 0)
        assert_int_equal(err.code, ALLOT_ENOENT);
    return rc == 0;
}

/* Ops: a sleeper (alone in the first batch), then n more queued behind it. */
static void run_ops(struct fixture *fx, struct acct_op *ops, int n)
{
    struct allot_error err = {0};
    struct writer *w = writer_start(&fx->cfg, 64, 1024, fx->m, &err);
    assert_non_null(w);
    for (int i = 0; i < n; i++) {
        ops[i].op.run = run_add;
        ops[i].op.arg = &ops[i];
        ops[i].op.done = op_done;
        ops[i].op.done_arg = &ops[i];
        assert_int_equal(writer_submit(w, &ops[i].op, 1000, &err), 0);
        if (i == 0) {
            struct timespec ts = {0, 50 * 1000000L}; /* the writer takes the sleeper alone */
            nanosleep(&ts, NULL);
        }
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 1000 && !__atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE); k++) {
            struct timespec ts = {0, 10 * 1000000L};
            nanosleep(&ts, NULL);
        }
        assert_true(__atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE));
    }
    writer_destroy(w);
}

static void check_failed_one(struct fixture *fx, int rerunnable_all, const char *prefix)
{
    struct acct_op ops[5];
    memset(ops, 0, sizeof(ops));
    for (int i = 0; i < 5; i++) {
        snprintf(ops[i].name, sizeof(ops[i].name), "%s%d", prefix, i);
        ops[i].op.rerunnable = 1;
    }
    ops[0].sleep = 1;
    ops[2].fail = 1;
    if (!rerunnable_all)
        ops[4].op.rerunnable = 0;
    run_ops(fx, ops, 5);
    for (int i = 0; i < 5; i++) {
        if (i == 2) {
            assert_int_equal(ops[i].op.rc, -1);
            assert_int_equal(ops[i].op.err.code, ALLOT_ECONFLICT);
            assert_non_null(strstr(ops[i].op.err.msg, "failed on purpose"));
            assert_false(account_exists(fx, ops[i].name));
        } else {
            assert_int_equal(ops[i].op.rc, 0);
            assert_true(account_exists(fx, ops[i].name));
        }
    }
}

static void test_rerunnable_batch_with_failure(void **state)
{
    check_failed_one(*state, 1, "r");
}

static void test_mixed_batch_with_failure(void **state)
{
    check_failed_one(*state, 0, "m");
}

static void test_rerunnable_batch_commits_all(void **state)
{
    struct fixture *fx = *state;
    struct acct_op ops[6];
    memset(ops, 0, sizeof(ops));
    for (int i = 0; i < 6; i++) {
        snprintf(ops[i].name, sizeof(ops[i].name), "ok%d", i);
        ops[i].op.rerunnable = 1;
    }
    ops[0].sleep = 1;
    run_ops(fx, ops, 6);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(ops[i].op.rc, 0);
        assert_true(account_exists(fx, ops[i].name));
    }
}

/* A duplicate inside one rerunnable batch: the second add fails (EEXIST), the first stays. */
static void test_rerunnable_batch_duplicate(void **state)
{
    struct fixture *fx = *state;
    struct acct_op ops[4];
    memset(ops, 0, sizeof(ops));
    const char *names[] = {"d0", "dup", "dup", "d3"};
    for (int i = 0; i < 4; i++) {
        snprintf(ops[i].name, sizeof(ops[i].name), "%s", names[i]);
        ops[i].op.rerunnable = 1;
    }
    ops[0].sleep = 1;
    run_ops(fx, ops, 4);
    assert_int_equal(ops[1].op.rc, 0);
    assert_int_equal(ops[2].op.rc, -1);
    assert_int_equal(ops[2].op.err.code, ALLOT_EEXIST);
    assert_int_equal(ops[3].op.rc, 0);
    assert_true(account_exists(fx, "dup"));
    assert_true(account_exists(fx, "d3"));
}

/* A balance as stored. */
static struct balance stored_balance(struct fixture *fx)
{
    struct allot_error err = {0};
    store_t *st = store_open(&fx->cfg, &err);
    assert_non_null(st);
    struct balance b;
    assert_int_equal(store_alloc_get(st, fx->alloc_id, NULL, &b, &err), 0);
    store_close(st);
    return b;
}

/* ops[0]: an account add that sleeps first, so that the ops after it form one batch. */
static void make_sleeper(struct acct_op *op)
{
    snprintf(op->name, sizeof(op->name), "sleeper");
    op->sleep = 1;
    op->op.rerunnable = 1;
}

/* ops[first..first+nholds-1]: holds of 10 SU-minutes each on chem, offered as job ops. */
static void make_holds(struct acct_op *ops, int first, int nholds)
{
    for (int i = first; i < first + nholds; i++) {
        struct hold_req *h = &ops[i].hold;
        snprintf(h->cluster, sizeof(h->cluster), "c1");
        h->job_id = 100 + i;
        snprintf(h->user, sizeof(h->user), "alice");
        snprintf(h->account, sizeof(h->account), "chem");
        snprintf(h->partition, sizeof(h->partition), "cpu");
        snprintf(h->resource, sizeof(h->resource), "cpu");
        h->start_s = 1000000;
        h->time_limit_s = 600;
        h->billing_micro = 1000000;
        h->amount_sumin = 10;
        snprintf(h->actor, sizeof(h->actor), "slurm");
        h->now_s = 1000000;
        ops[i].job.hold = h;
        ops[i].job.hold_res = &ops[i].hres;
        ops[i].op.job = &ops[i].job;
        ops[i].op.rerunnable = 1;
    }
}

/* Holds batched with each other: all held once; on PostgreSQL by store_job_batch. */
static void test_job_batch_commits(void **state)
{
    struct fixture *fx = *state;
    struct acct_op ops[5];
    memset(ops, 0, sizeof(ops));
    make_sleeper(&ops[0]);
    make_holds(ops, 1, 4);
    run_ops(fx, ops, 5);
    int64_t seen = 0;
    for (int i = 1; i < 5; i++) {
        assert_int_equal(ops[i].op.rc, 0);
        assert_int_equal(ops[i].job.done, fx->pg_schema[0] ? 1 : 0);
        assert_false(ops[i].hres.replay);
        assert_int_equal(ops[i].hres.job.status, JOB_HELD);
        assert_int_equal(ops[i].hres.alloc.id, fx->alloc_id);
        /* The balance after each hold: 10, 20, 30, 40 held, each once. */
        int64_t held = ops[i].hres.bal.held_sumin;
        assert_true(held % 10 == 0 && held >= 10 && held <= 40);
        assert_false(seen & (1 << (held / 10)));
        seen |= 1 << (held / 10);
    }
    assert_int_equal(stored_balance(fx).held_sumin, 40);
}

/* An op after the batched holds fails.  On PostgreSQL store_job_batch committed the holds
 * in a transaction of their own, so they stand as applied: done, first answers (not
 * replays), held once; the writer must neither fail them nor run their verbs again after
 * rolling its own transaction back.  On SQLite their verbs run in the writer's transaction,
 * which the failure rolls back and runs again without the failed op.  Either way the
 * failed op leaves nothing. */
static void test_job_batch_with_failure(void **state)
{
    struct fixture *fx = *state;
    struct acct_op ops[6];
    memset(ops, 0, sizeof(ops));
    make_sleeper(&ops[0]);
    make_holds(ops, 1, 4);
    snprintf(ops[5].name, sizeof(ops[5].name), "bad");
    ops[5].fail = 1;
    ops[5].op.rerunnable = 1;
    run_ops(fx, ops, 6);
    for (int i = 1; i < 5; i++) {
        assert_int_equal(ops[i].op.rc, 0);
        assert_int_equal(ops[i].job.done, fx->pg_schema[0] ? 1 : 0);
        assert_false(ops[i].hres.replay);
        assert_int_equal(ops[i].hres.job.status, JOB_HELD);
    }
    assert_int_equal(ops[5].op.rc, -1);
    assert_false(account_exists(fx, "bad"));
    assert_true(account_exists(fx, "sleeper"));
    assert_int_equal(stored_balance(fx).held_sumin, 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rerunnable_batch_with_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed_batch_with_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rerunnable_batch_commits_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rerunnable_batch_duplicate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_batch_commits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_batch_with_failure, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
