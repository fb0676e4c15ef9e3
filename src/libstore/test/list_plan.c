/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * list_plan.c - each ledger, job, failure and step listing reads through the index of its
 * filter, not the whole table: SQLite's own plan (EXPLAIN QUERY PLAN) of the statement that
 * store_ledger_list, store_job_list, store_failure_list or store_step_list runs, on a bank
 * at the latest schema.  A job's ledger entries by
 * ledger_job, an allocation's by ledger_alloc_index in id order (no sort) merged with the
 * unindexed tail read by id, an account's by ledger_alloc_index per allocation and the
 * tail, entries since a time by ledger_time; no filter walks the
 * ledger in id order from the paging bound.  One job's runs by the primary key.  Failures
 * by account, user or time, and steps by job, user or cluster, through their indexes.  Counts of
 * held runs through the partial indexes on held jobs, reading their entries only (the
 * statement's program reads no column of a jobs row).  The hot verbs' joined lookups (a
 * hold's payer by account name, a settle's run with its allocation) by their keys.
 * SQLite only (plans are the backend's own): under the PostgreSQL run it reports a skip.
 */
#include <sqlite3.h>

#include "libstore/store_int.h"
#include "store_test.h"

/* The plan's lines, joined with '|'. */
static void plan_of(sqlite3 *db, const char *sql, char *out, size_t size)
{
    char q[4096];
    sqlite3_stmt *s = NULL;
    assert_true(snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql) < (int)sizeof q);
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
    out[0] = '\0';
    while (sqlite3_step(s) == SQLITE_ROW) {
        size_t n = strlen(out);
        snprintf(out + n, size - n, "%s|", (const char *)sqlite3_column_text(s, 3));
    }
    sqlite3_finalize(s);
}

static void expect_plan(sqlite3 *db, const char *sql, const char *want, const char *unwanted)
{
    char plan[2048];
    plan_of(db, sql, plan, sizeof plan);
    if (!strstr(plan, want) || (unwanted && strstr(plan, unwanted)))
        fail_msg("plan '%s': want '%s'%s%s", plan, want, unwanted ? ", not " : "",
                 unwanted ? unwanted : "");
}

/* The plan of the statement that list_sql (store_*_list_sql) picks for filter f. */
#define EXPECT(list_sql, f, want, unwanted)                                                        \
    do {                                                                                           \
        const char *sql_ = NULL;                                                                   \
        list_sql(f, &sql_);                                                                        \
        expect_plan(db, sql_, want, unwanted);                                                     \
    } while (0)

/* The ledger's statements as SQLite's store picks them. */
static int ledger_sql(const struct ledger_filter *f, const char **sql)
{
    return store_ledger_list_sql("sqlite", f, sql);
}

static void test_each_filter_uses_its_index(void **state)
{
    struct fx *f = *state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    struct ledger_filter job = {.cluster = "c", .job_id = 7, .account = "a", .limit = 10};
    EXPECT(ledger_sql, &job, "USING INDEX ledger_job (cluster=? AND job_id=?)", NULL);
    struct ledger_filter alloc = {.alloc_id = 3, .since_s = 1, .limit = 10};
    /* ledger_alloc_index in id order, merged with the tail above the mark read by id. */
    EXPECT(ledger_sql, &alloc, "SEARCH x USING PRIMARY KEY (alloc_id=? AND id>? AND id<?)",
           "TEMP B-TREE");
    EXPECT(ledger_sql, &alloc, "MERGE (UNION ALL)", "SCAN l|");
    EXPECT(ledger_sql, &alloc,
           "RIGHT|SEARCH al USING INTEGER PRIMARY KEY (rowid=?)|SEARCH ac "
           "USING INTEGER PRIMARY KEY (rowid=?)|SEARCH l USING INTEGER PRIMARY KEY (rowid>?)",
           NULL);
    struct ledger_filter account = {.account = "a", .limit = 10};
    EXPECT(ledger_sql, &account, "SEARCH x USING PRIMARY KEY (alloc_id=? AND id>? AND id<?)",
           "SCAN l|");
    EXPECT(ledger_sql, &account, "SEARCH l USING INTEGER PRIMARY KEY (rowid>?)", NULL);
    struct ledger_filter since = {.since_s = 1000, .limit = 10};
    EXPECT(ledger_sql, &since, "USING INDEX ledger_time (time_s>? AND time_s<?)", NULL);
    struct ledger_filter none = {.after_id = 5, .limit = 10};
    EXPECT(ledger_sql, &none, "SEARCH l USING INTEGER PRIMARY KEY (rowid>?)", "TEMP B-TREE");
    /* A job id without its cluster cannot lead ledger_job: no job plan then. */
    struct ledger_filter jobid = {.job_id = 7};
    EXPECT(ledger_sql, &jobid, "(rowid>?)", "ledger_job");
    sqlite3_close(db);
}

static void test_job_runs_by_key(void **state)
{
    struct fx *f = *state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    struct job_filter job = {.cluster = "c", .job_id = 7, .status = -1};
    EXPECT(store_job_list_sql, &job, "USING INDEX sqlite_autoindex_jobs_1 (cluster=? AND job_id=?)",
           NULL);
    struct job_filter recent = {.status = -1, .limit = 20};
    EXPECT(store_job_list_sql, &recent, "USING INDEX jobs_updated", "sqlite_autoindex_jobs_1");
    sqlite3_close(db);
}

static void test_failures_by_their_indexes(void **state)
{
    struct fx *f = *state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    struct failure_filter job = {.cluster = "c", .job_id = 7, .user = "u"};
    EXPECT(store_failure_list_sql, &job, "USING INDEX failures_job (cluster=? AND job_id=?)", NULL);
    struct failure_filter account = {.account = "a", .user = "u", .limit = 10};
    EXPECT(store_failure_list_sql, &account, "USING INDEX failures_account (account=?", NULL);
    struct failure_filter user = {.user = "u", .since_s = 5};
    EXPECT(store_failure_list_sql, &user, "USING INDEX failures_user (user_name=?", NULL);
    struct failure_filter since = {.since_s = 1000, .limit = 10};
    EXPECT(store_failure_list_sql, &since, "USING INDEX failures_time (time_s>? AND time_s<?)",
           NULL);
    struct failure_filter none = {.limit = 10};
    EXPECT(store_failure_list_sql, &none, "SCAN failures", "INDEX");
    sqlite3_close(db);
}

static void test_steps_by_their_indexes(void **state)
{
    struct fx *f = *state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    struct step_filter job = {.cluster = "c", .job_id = 7, .user = "u"};
    EXPECT(store_step_list_sql, &job,
           "USING INDEX sqlite_autoindex_steps_1 (cluster=? AND job_id=?)", NULL);
    struct step_filter user = {.user = "u", .limit = 10};
    EXPECT(store_step_list_sql, &user, "USING INDEX steps_user (user_name=?)", NULL);
    struct step_filter cluster = {.cluster = "c", .limit = 10};
    EXPECT(store_step_list_sql, &cluster, "USING INDEX sqlite_autoindex_steps_1 (cluster=?)",
           "SCAN steps");
    sqlite3_close(db);
}
/* The hot verbs' lookups that join: the payer by the account's name reads the account by
 * its unique name and its allocation through allocations_payer in start order (no sort),
 * by an ancestor's id likewise; a settle reads its run by the primary key and its
 * allocation, account and balance by their keys. */
static void test_hot_lookups_by_keys(void **state)
{
    struct fx *f = *state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    expect_plan(db, store_payer_sql(1),
                "SEARCH ac USING COVERING INDEX sqlite_autoindex_accounts_1 (name=?)",
                "TEMP B-TREE");
    expect_plan(db, store_payer_sql(1),
                "SEARCH al USING INDEX allocations_payer (account_id=? AND resource=? AND "
                "start_s<?)",
                "SCAN");
    expect_plan(db, store_payer_sql(0),
                "SEARCH al USING INDEX allocations_payer (account_id=? AND resource=? AND "
                "start_s<?)",
                "TEMP B-TREE");
    expect_plan(db, store_job_payer_sql(),
                "SEARCH j USING INDEX sqlite_autoindex_jobs_1 (cluster=? AND job_id=? AND run=?)",
                "SCAN");
    expect_plan(
        db, store_job_payer_sql(),
        "|SEARCH al USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN|SEARCH ac USING INTEGER "
        "PRIMARY KEY (rowid=?) LEFT-JOIN|SEARCH b USING INDEX "
        "sqlite_autoindex_alloc_balance_1 (alloc_id=?) LEFT-JOIN|CORRELATED SCALAR "
        "SUBQUERY 1|SEARCH p USING COVERING INDEX sqlite_autoindex_policies_1 (alloc_id=?)|",
        NULL);
    sqlite3_close(db);
}

/* Whether the program of sql reads a column of a row of table (not of an index of it): a
 * Column opcode on a cursor opened on the table's root page.  EXPLAIN's rows are addr,
 * opcode, p1, p2, p3, p4, p5, comment. */
static int reads_table_rows(sqlite3 *db, const char *sql, const char *table)
{
    sqlite3_stmt *s = NULL;
    char q[4096];
    assert_true(snprintf(q, sizeof q,
                         "SELECT rootpage FROM sqlite_schema WHERE type = 'table' "
                         "AND name = '%s'",
                         table) < (int)sizeof q);
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int root = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    assert_true(snprintf(q, sizeof q, "EXPLAIN %s", sql) < (int)sizeof q);
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
    int cursors[64], ncur = 0, reads = 0, opened = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *op = (const char *)sqlite3_column_text(s, 1);
        int p1 = sqlite3_column_int(s, 2), p2 = sqlite3_column_int(s, 3);
        if (strcmp(op, "OpenRead") == 0 && p2 == root && ncur < 64) {
            cursors[ncur++] = p1;
            opened = 1;
        }
        for (int i = 0; strcmp(op, "Column") == 0 && i < ncur; i++)
            reads += p1 == cursors[i];
    }
    sqlite3_finalize(s);
    assert_true(opened || reads == 0);
    return reads > 0;
}

/* Admission counts held runs on every request that has a submit limit: each count reads
 * held runs only, through a partial index on held jobs, never every job, and reads only
 * the index's entries: every column a count filters on is in the index (schema 0017), so
 * no held run costs a row read (~35 ms with 50,000 runs held before, bench/results). */
static void test_held_counts_by_partial_indexes(void **state)
{
    struct fx *f = *state;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    static const struct {
        int id;
        const char *want;
    } c[] = {
        {STMT_JOB_COUNT_HELD, "USING INDEX jobs_held_"},
        {STMT_JOB_COUNT_HELD_ACCOUNT, "USING INDEX jobs_held_account (account=?)"},
        {STMT_JOB_COUNT_HELD_USER, "USING INDEX jobs_held_user (user_name=?)"},
        {STMT_JOB_COUNT_SUBTREE, "USING INDEX jobs_held_account (account=?)"},
        {STMT_JOB_COUNT_QOS, "USING INDEX jobs_held_account (account>?)"},
        {STMT_JOB_COUNT_QOS_USER, "USING INDEX jobs_held_user (user_name=? AND qos=?)"},
        {STMT_JOB_COUNT_QOS_ACCOUNT, "USING INDEX jobs_held_account (account=? AND qos=?)"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *sql = store_job_count_sql(c[i].id);
        assert_non_null(sql);
        expect_plan(db, sql, c[i].want, "SCAN jobs|");
        if (reads_table_rows(db, sql, "jobs"))
            fail_msg("count %d reads jobs rows: %s", c[i].id, sql);
    }
    /* A refusal's share held at submit walks held runs only (it reads their rows). */
    expect_plan(db, store_job_count_sql(STMT_JOB_HELD_AT_SUBMIT),
                "USING INDEX jobs_held_account (account>?)", "SCAN jobs|");
    /* The check sees a row read where there is one: the primary key does not hold qos. */
    assert_true(
        reads_table_rows(db, "SELECT qos FROM jobs WHERE cluster = 'c' AND job_id = 1", "jobs"));
    assert_null(store_job_count_sql(STMT_JOB_GET));
    /* Whether history names a removed cluster: one probe each, never a walk of a table. */
    static const struct {
        int h;
        const char *want, *unwanted;
    } hist[] = {
        {STORE_HISTORY_JOBS, "USING COVERING INDEX sqlite_autoindex_jobs_1 (cluster=?)",
         "SCAN jobs"},
        {STORE_HISTORY_LEDGER, "USING COVERING INDEX ledger_job (cluster=?)", "SCAN ledger"},
        {STORE_HISTORY_STEPS, "USING COVERING INDEX sqlite_autoindex_steps_1 (cluster=?)",
         "SCAN steps"},
        {STORE_HISTORY_COMMANDS, "USING COVERING INDEX commands_queue (cluster=?)",
         "SCAN commands"},
    };
    for (size_t i = 0; i < sizeof hist / sizeof hist[0]; i++) {
        assert_non_null(store_history_sql(hist[i].h));
        expect_plan(db, store_history_sql(hist[i].h), hist[i].want, hist[i].unwanted);
    }
    assert_null(store_history_sql(STORE_HISTORY_COMMANDS + 1));
    sqlite3_close(db);
}

int main(void)
{
    if (getenv("ALLOT_TEST_PG_CONNINFO")) {
        printf("1..0 # SKIP query plans are SQLite's here\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_filter_uses_its_index, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_runs_by_key, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hot_lookups_by_keys, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_failures_by_their_indexes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_steps_by_their_indexes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_held_counts_by_partial_indexes, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
