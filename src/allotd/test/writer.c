/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/writer.c - the group-commit writer on a real SQLite file: a batch of rerunnable ops
 * (run without savepoints) in which one op fails after writing keeps the others' effects
 * and none of the failed op's, and reports the failed op's own error; the same with a
 * non-rerunnable op in the batch (savepoints from the start); and a batch without failure
 * commits all.  A first op that sleeps keeps the writer busy so that the next ops queue
 * up and form one batch. */
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

struct acct_op {
    struct write_op op;
    char name[32];
    int fail;  /* 1: add the account, then fail */
    int sleep; /* 1: sleep 300 ms first (keeps the writer busy) */
    int done;
};

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    struct acct_op *a = arg;
    if (a->sleep) {
        struct timespec ts = {0, 300 * 1000000L};
        nanosleep(&ts, NULL);
    }
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
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/allotd-writer-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    snprintf(fx->path, sizeof(fx->path), "%s/w.sqlite", fx->dir);
    fx->cfg = (struct store_config){.backend = "sqlite", .target = fx->path, .durable = 1};
    struct allot_error err = {0};
    store_t *st = store_open(&fx->cfg, &err);
    assert_non_null(st);
    assert_int_equal(store_upgrade(st, &err), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rerunnable_batch_with_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed_batch_with_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rerunnable_batch_commits_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rerunnable_batch_duplicate, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
