/* SPDX-License-Identifier: GPL-3.0-or-later */
/* schema.c - store_open/store_upgrade/store_schema_version, transactions and savepoints on
 * a real SQLite file: upgrade is idempotent, an empty database is version 0 and refuses
 * verbs until upgraded, data survives close and reopen, a rolled-back savepoint leaves
 * nothing, writes outside a transaction are refused. */
#include <sqlite3.h>

#include "libstore/store_int.h" /* store_migrations: build a bank at an older version */
#include "store_test.h"

/* Remove an extra SQLite file a test made in the fixture's directory (and its WAL files),
 * so that fx_teardown can remove the directory. */
static void unlink_db(const struct fx *f, const char *name)
{
    static const char *suffix[] = {"", "-wal", "-shm"};
    char path[192];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s%s", f->dir, name, suffix[i]);
        unlink(path);
    }
}

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
    unlink_db(f, "empty.db");
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

static void sql(sqlite3 *db, const char *text)
{
    char *msg = NULL;
    if (sqlite3_exec(db, text, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%.60s: %s", text, msg ? msg : "?");
}

static int64_t held(store_t *st, const char *account, const char *user)
{
    struct allot_error err;
    int64_t n = -1;
    if (store_job_count_held(st, NULL, account, user, &n, &err) < 0)
        fail_msg("count held: %s", err.msg);
    return n;
}

/* Held runs of QOS qos on c1, optionally a user's or an account's. */
static int64_t held_qos(store_t *st, const char *qos, const char *user, const char *account)
{
    struct allot_error err;
    int64_t n = -1;
    if (store_job_count_held_qos(st, "c1", qos, user, account, &n, &err) < 0)
        fail_msg("count held in QOS: %s", err.msg);
    return n;
}

static int usage_end(const struct usage_job *u, void *arg)
{
    int64_t *ends = arg;
    ends[++ends[0]] = u->end_s;
    return ends[0] < 7 ? 0 : 1;
}

/* Migrations run on banks with data, not only on empty ones.  A file is built with the
 * embedded migrations up to version 10 (before 0011 made the job indexes partial) and
 * given held, settled and released jobs; store_upgrade brings it to the latest version,
 * after which the held counts of admission and the usage report give the same answers,
 * from the new indexes, and 0016 has indexed its ledger entries by allocation.  SQLite only (its
 * catalogue): PostgreSQL runs the same statements in its 0011. */
struct alloc_ids {
    int64_t id[4];
    int n;
};

static int alloc_entry(const struct ledger_entry *e, void *arg)
{
    struct alloc_ids *x = arg;
    assert_true(x->n < 4);
    x->id[x->n++] = e->id;
    return 0;
}

static void test_upgrade_populated(void **state)
{
    struct fx *f = *state;
    if (f->pg_schema[0])
        skip();
    char path[160];
    snprintf(path, sizeof path, "%s/old.db", f->dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int i = 0; i < store_migration_count; i++) {
        const struct store_migration *m = &store_migrations[i];
        if (strcmp(m->backend, "sqlite") != 0 || m->version > 10)
            continue;
        char rec[96];
        snprintf(rec, sizeof rec, "INSERT INTO schema_version (version, applied_s) VALUES (%d, 0)",
                 m->version);
        sql(db, m->sql);
        sql(db, rec);
    }
    /* Ledger entries of two allocations, for 0016's index of them. */
    sql(db, "INSERT INTO allocations (id, account_id, resource, start_s, end_s, created_s) "
            "SELECT 1, id, 'cpu', 0, 100, 0 FROM accounts WHERE name = 'root' UNION ALL "
            "SELECT 2, id, 'gpu', 0, 100, 0 FROM accounts WHERE name = 'root'");
    sql(db, "INSERT INTO ledger (alloc_id, kind, amount_sumin, time_s) VALUES "
            "(1, 'credit', 5, 1), (2, 'credit', 6, 1), (1, 'credit', 7, 1)");
    sql(db, "INSERT INTO jobs (cluster, job_id, run, user_name, account, qos, status, end_s, "
            "charge_sumin, updated_s) VALUES "
            "('c1', 1, 0, 'u1', 'a1', 'long', 'held', 0, 0, 1), "
            "('c1', 2, 0, 'u1', 'a1', '', 'held', 0, 0, 1), "
            "('c1', 3, 0, 'u2', 'a1', 'long', 'held', 0, 0, 1), "
            "('c1', 4, 0, 'u1', 'a2', 'long', 'held', 0, 0, 1), "
            "('c1', 5, 0, 'u1', 'a1', 'long', 'settled', 300, 7, 1), "
            "('c1', 6, 0, 'u2', 'a2', '', 'settled', 100, 5, 1), "
            "('c1', 7, 0, 'u1', 'a1', 'long', 'released', 200, 0, 1)");
    sqlite3_close(db);

    struct store_config cfg = {.target = path};
    store_t *st = store_open(&cfg, &f->err);
    assert_non_null(st);
    int cur, latest;
    OK(f, store_schema_version(st, &cur, &latest, &f->err));
    assert_int_equal(cur, 10);
    assert_true(latest > 10);
    OK(f, store_upgrade(st, &f->err));
    OK(f, store_schema_version(st, &cur, &latest, &f->err));
    assert_int_equal(cur, latest);

    assert_int_equal(held(st, "a1", NULL), 3);
    assert_int_equal(held(st, "a1", "u1"), 2);
    assert_int_equal(held(st, NULL, "u1"), 3);
    assert_int_equal(held(st, "a2", NULL), 1);
    assert_int_equal(held(st, NULL, NULL), 4);
    /* 0017 rebuilt the held indexes with qos and cluster: the counts by QOS see them. */
    assert_int_equal(held_qos(st, "long", NULL, NULL), 3);
    assert_int_equal(held_qos(st, "long", "u1", NULL), 2);
    assert_int_equal(held_qos(st, "long", NULL, "a1"), 2);
    assert_int_equal(held_qos(st, "long", "u2", NULL), 1);
    assert_int_equal(held_qos(st, "normal", NULL, NULL), 0);
    int64_t ends[8] = {0};
    struct usage_filter uf = {0};
    OK(f, store_usage_jobs(st, &uf, usage_end, ends, &f->err));
    assert_int_equal(ends[0], 2); /* settled only, oldest end first */
    assert_int_equal(ends[1], 100);
    assert_int_equal(ends[2], 300);
    /* 0016 indexed the entries there were, by allocation, up to the last. */
    struct alloc_ids got = {0};
    struct ledger_filter lf = {.alloc_id = 1};
    OK(f, store_ledger_list(st, &lf, alloc_entry, &got, &f->err));
    assert_int_equal(got.n, 2);
    assert_int_equal(got.id[0], 1);
    assert_int_equal(got.id[1], 3);
    store_close(st);

    /* The indexes of jobs are now exactly those of 0011 (and jobs_updated of 0001). */
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT group_concat(name, ' ') FROM (SELECT name FROM "
                                        "sqlite_master WHERE type = 'index' AND tbl_name = "
                                        "'jobs' AND name NOT LIKE 'sqlite_%' ORDER BY name)",
                                        -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0),
                        "jobs_held_account jobs_held_user jobs_settled_end jobs_updated");
    sqlite3_finalize(q);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (SELECT group_concat(alloc_id || ':' || id, ' ') "
                                        "FROM ledger_alloc_index), (SELECT upto FROM "
                                        "ledger_alloc_mark), (SELECT COUNT(*) FROM sqlite_master "
                                        "WHERE name = 'ledger_alloc')",
                                        -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "1:1 1:3 2:2");
    assert_int_equal(sqlite3_column_int64(q, 1), 3);
    assert_int_equal(sqlite3_column_int64(q, 2), 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    unlink_db(f, "old.db");
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
        cmocka_unit_test_setup_teardown(test_upgrade_populated, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_target, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reopen, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_savepoint_rollback, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_transaction_rules, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_busy, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
