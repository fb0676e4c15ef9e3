/* SPDX-License-Identifier: GPL-3.0-or-later */
/* schema.c - store_open/store_upgrade/store_schema_version, transactions and savepoints on
 * a real SQLite file: upgrade is idempotent, an empty database is version 0 and refuses
 * verbs until upgraded, data survives close and reopen, a rolled-back savepoint leaves
 * nothing, writes outside a transaction are refused. */
#include "store_test.h"

static void test_empty_database(void **state)
{
    struct fx *f = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/empty.db", f->dir);
    struct store_config cfg = {.target = path};
    store_t *st = store_open(&cfg, &f->err);
    assert_non_null(st);
    assert_string_equal(store_backend(st), "sqlite");
    int cur = -1, latest = -1;
    OK(f, store_schema_version(st, &cur, &latest, &f->err));
    assert_int_equal(cur, 0);
    assert_true(latest >= 1);
    struct account a;
    FAILS(f, ALLOT_EUNAVAIL, store_account_get(st, "root", &a, &f->err));
    assert_non_null(strstr(f->err.msg, "upgrade"));
    OK(f, store_upgrade(st, &f->err));
    OK(f, store_schema_version(st, &cur, &latest, &f->err));
    assert_int_equal(cur, latest);
    OK(f, store_account_get(st, "root", &a, &f->err));
    assert_string_equal(a.parent, "");
    assert_int_equal(a.shares, 1);
    store_close(st);
    unlink(path);
    snprintf(path, sizeof path, "%s/empty.db-wal", f->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/empty.db-shm", f->dir);
    unlink(path);
}

static void test_upgrade_idempotent(void **state)
{
    struct fx *f = *state;
    int cur, latest;
    OK(f, store_upgrade(f->st, &f->err));
    OK(f, store_upgrade(f->st, &f->err));
    OK(f, store_schema_version(f->st, &cur, &latest, &f->err));
    assert_int_equal(cur, latest);
    /* A second connection upgrading the same file changes nothing either. */
    store_t *st2 = fx_open_store(f);
    OK(f, store_upgrade(st2, &f->err));
    store_close(st2);
    int n = 0;
    struct account a;
    OK(f, store_account_get(f->st, "root", &a, &f->err));
    (void)n;
}

static void test_bad_target(void **state)
{
    struct fx *f = *state;
    struct store_config cfg = {.target = "/nonexistent-dir/x/bank.db"};
    assert_null(store_open(&cfg, &f->err));
    assert_int_equal(f->err.code, ALLOT_EUNAVAIL);
    struct store_config pg = {.backend = "oracle", .target = "x"};
    assert_null(store_open(&pg, &f->err));
    assert_int_equal(f->err.code, ALLOT_EINVAL);
}

static void test_reopen(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", 1000, 2000, 600);
    store_close(f->st);
    f->st = fx_open_store(f);
    struct account a;
    OK(f, store_account_get(f->st, "chem", &a, &f->err));
    assert_string_equal(a.parent, "root");
    struct allocation al;
    struct balance b;
    OK(f, store_alloc_get(f->st, id, &al, &b, &f->err));
    assert_int_equal(b.granted_sumin, 600);
    assert_int_equal(b.available_sumin, 600);
    assert_int_equal(fx_ledger_rows(f), 1);
    fx_check_clean(f);
}

static void test_savepoint_rollback(void **state)
{
    struct fx *f = *state;
    BEGIN(f);
    struct account a = fx_account("kept", "root");
    OK(f, store_account_add(f->st, &a, &f->err));
    OK(f, store_savepoint(f->st, &f->err));
    struct account b = fx_account("gone", "root");
    OK(f, store_account_add(f->st, &b, &f->err));
    struct allocation al = fx_alloc("gone", "cpu", "", 0, 100);
    OK(f, store_alloc_add(f->st, &al, &f->err));
    store_savepoint_rollback(f->st);
    /* Nested savepoints: inner released, outer kept. */
    OK(f, store_savepoint(f->st, &f->err));
    OK(f, store_savepoint(f->st, &f->err));
    struct account c = fx_account("inner", "root");
    OK(f, store_account_add(f->st, &c, &f->err));
    OK(f, store_savepoint_release(f->st, &f->err));
    OK(f, store_savepoint_release(f->st, &f->err));
    COMMIT(f);
    struct account out;
    OK(f, store_account_get(f->st, "kept", &out, &f->err));
    OK(f, store_account_get(f->st, "inner", &out, &f->err));
    FAILS(f, ALLOT_ENOENT, store_account_get(f->st, "gone", &out, &f->err));
    struct balance bal;
    FAILS(f, ALLOT_ENOENT, store_alloc_get(f->st, al.id, NULL, &bal, &f->err));
    fx_check_clean(f);
}

static void test_transaction_rules(void **state)
{
    struct fx *f = *state;
    struct account a = fx_account("x", "root");
    FAILS(f, ALLOT_EINTERNAL, store_account_add(f->st, &a, &f->err));
    FAILS(f, ALLOT_EINTERNAL, store_commit(f->st, &f->err));
    FAILS(f, ALLOT_EINTERNAL, store_savepoint(f->st, &f->err));
    BEGIN(f);
    FAILS(f, ALLOT_EINTERNAL, store_begin(f->st, &f->err));
    OK(f, store_account_add(f->st, &a, &f->err));
    store_rollback(f->st);
    struct account out;
    FAILS(f, ALLOT_ENOENT, store_account_get(f->st, "x", &out, &f->err));
    /* Closing with an open transaction rolls it back. */
    BEGIN(f);
    OK(f, store_account_add(f->st, &a, &f->err));
    store_close(f->st);
    f->st = fx_open_store(f);
    FAILS(f, ALLOT_ENOENT, store_account_get(f->st, "x", &out, &f->err));
    store_close(NULL);
}

/* A second connection waits for the write lock, then reports EUNAVAIL. */
static void test_busy(void **state)
{
    struct fx *f = *state;
    struct store_config cfg = fx_config(f);
    cfg.busy_timeout_ms = 50;
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
        cmocka_unit_test_setup_teardown(test_empty_database, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_idempotent, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_target, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reopen, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_savepoint_rollback, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_transaction_rules, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_busy, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
