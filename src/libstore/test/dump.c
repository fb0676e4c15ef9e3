/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dump.c - store_dump_export / store_dump_import (`allot db export|import`): a bank with a
 * row in every table (built through the verbs where they exist, the rest by plain SQL) is
 * exported, imported into a fresh database and exported again: the two dumps are equal line
 * for line (ids, ledger, balances, text with quotes, newlines and UTF-8).  Under PostgreSQL
 * (ALLOT_TEST_PG_CONNINFO) the dump also crosses to SQLite and back.  New rows after an
 * import get fresh ids.  Refusals leave the target empty: a non-empty target (EEXIST), a
 * truncated dump, a wrong schema, an unknown column, a balance that disagrees with the
 * ledger (EINVAL).  Every table of the schema is in the dump. */
#include <sqlite3.h>

#include "store_test.h"

#define DAY 86400
#define T0 INT64_C(1767225600) /* 2026-01-01T00:00:00Z */

/* Plain SQL on the fixture's database, bypassing the store. */
static void fx_sql(struct fx *f, const char *sql)
{
    if (f->pg_schema[0]) {
        if (fx_pg_exec(f->pg_conninfo, sql) < 0)
            fail_msg("postgres refused: %s", sql);
        return;
    }
    sqlite3 *db;
    char *msg = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    sqlite3_close(db);
    if (rc != SQLITE_OK) {
        char copy[256];
        snprintf(copy, sizeof copy, "%s", msg ? msg : "?");
        sqlite3_free(msg);
        fail_msg("sqlite refused %s: %s", sql, copy);
    }
}

static struct hold_req hold(int64_t job_id, int64_t amount)
{
    struct hold_req r = fx_hold_req(job_id, amount, T0 + 200, 3600);
    snprintf(r.partition, sizeof r.partition, "batch");
    r.submit_s = T0 + 100;
    snprintf(r.alloc_tres, sizeof r.alloc_tres, "cpu=1");
    return r;
}

/* A bank with at least one row in every dumped table. */
static void build_bank(struct fx *f)
{
    struct hold_result hr;
    struct settle_result sr;
    int replay;

    TX(f, store_cluster_add(f->st, "c1", &f->err));
    fx_add_account(f, "science", "root");
    fx_add_account(f, "chem", "science");
    fx_add_account(f, "late", "root");
    /* chem moves under an account created after it: the dump must order parents first. */
    struct account chem;
    OK(f, store_account_get(f->st, "chem", &chem, &f->err));
    snprintf(chem.parent, sizeof chem.parent, "late");
    snprintf(chem.description, sizeof chem.description, "it's \"quoted\", ünïcødé");
    TX(f, store_account_modify(f->st, &chem, &f->err));

    int64_t a1 = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 30 * DAY, 5000);
    fx_add_alloc(f, "science", "gpu", "c1", T0, T0 + 400 * DAY, 0);
    struct ledger_entry e;
    memset(&e, 0, sizeof e);
    e.alloc_id = a1;
    e.kind = LEDGER_ADJUSTMENT;
    e.amount_sumin = -7;
    e.time_s = T0 + 1;
    snprintf(e.comment, sizeof e.comment, "backslash \\ done");
    snprintf(e.idem_key, sizeof e.idem_key, "adj-1");
    TX(f, store_credit(f->st, &e, &replay, &f->err));

    struct hold_req h1 = hold(1, 600), h2 = hold(2, 100), h3 = hold(3, 1000000);
    TX(f, store_hold(f->st, &h1, &hr, &f->err));
    TX(f, store_hold(f->st, &h2, &hr, &f->err));
    TX(f, store_hold(f->st, &h3, &hr, &f->err)); /* refused: a failure row */
    assert_int_equal(hr.refused, 1);
    struct settle_req s;
    memset(&s, 0, sizeof s);
    snprintf(s.cluster, sizeof s.cluster, "c1");
    s.job_id = 1;
    s.start_s = T0 + 200;
    s.end_s = T0 + 200 + 1800;
    s.elapsed_s = 1800;
    snprintf(s.slurm_state, sizeof s.slurm_state, "COMPLETED");
    s.charge_sumin = -1;
    snprintf(s.settle_source, sizeof s.settle_source, "epilog");
    s.now_s = s.end_s;
    TX(f, store_settle(f->st, &s, &sr, &f->err));

    /* A policy on the gpu allocation, evaluated once: policy_periods, a credit, commands and
     * an evaluation row. */
    struct policy p;
    memset(&p, 0, sizeof p);
    p.alloc_id = a1 + 1;
    snprintf(p.cluster, sizeof p.cluster, "c1");
    snprintf(p.period_kind, sizeof p.period_kind, "quarter");
    p.base_sumin = 1000;
    p.carryover = 1;
    p.carry_factor_ppm = 500000;
    p.grace_ppm = 200000;
    p.notify_ppm = 800000;
    p.downscale_ppm = 1000000;
    p.reset_raw_usage = 1;
    snprintf(p.limit_type, sizeof p.limit_type, "GrpTRESMins");
    p.fairshare = -1;
    TX(f, store_policy_add(f->st, &p, &f->err));
    struct policy_eval ev;
    TX(f, store_policy_evaluate(f->st, p.id, T0 + 3600, NULL, "tick", &ev, &f->err));

    /* Tables without a verb used here: plain rows. */
    fx_sql(f, "INSERT INTO users (name, uid, default_account, created_s) "
              "VALUES ('alice', 1001, 'chem', 1767225600)");
    fx_sql(f, "INSERT INTO assocs (cluster, account_id, user_name, partition_name, shares, "
              "default_qos, qos) SELECT 'c1', id, 'alice', '', 3, 'normal', 'normal,slow' "
              "FROM accounts WHERE name = 'chem'");
    fx_sql(f, "INSERT INTO qos (name, priority, flags, usage_factor_ppm, limit_factor_ppm, "
              "description) VALUES ('normal', 10, '', 1000000, -1, 'default')");
    fx_sql(f, "INSERT INTO partitions (cluster, name, resource, billing_weights, max_tres, qos, "
              "default_time_s, max_time_s) VALUES ('c1', 'batch', 'cpu', 'CPU=1.0,Mem=0.25G', "
              "0, '', 3600, 86400)");
    fx_sql(f, "INSERT INTO limits (scope, owner, name, value) "
              "VALUES ('account', 'chem', 'GrpJobs', '10')");
    fx_sql(f, "INSERT INTO agents (cluster, last_seen_s, version) VALUES ('c1', 1767229200, '1')");
    fx_sql(f, "INSERT INTO usage_resets (cluster, account, user_name, time_s) "
              "VALUES ('c1', 'chem', '', 1767229200)");
    fx_sql(f, "INSERT INTO job_scrubs (before_s, time_s, deleted) VALUES (1, 1767229200, 0)");
    fx_sql(f, "INSERT INTO reconcile_marks (cluster, until_s, updated_s, settled, unknown, "
              "report) VALUES ('c1', 1767229200, 1767229201, 4, 1, 'job 9: no allocation')");
    fx_sql(f, "INSERT INTO steps (cluster, job_id, step_name, attempt, user_name, status, "
              "return_code, exec_ms, record, actor, created_s) VALUES ('c1', 1, 'sim', 1, "
              "'alice', 'completed', 0, 1234, '{\"a\":[1,2],\"s\":\"x\\\"y\"}\n\ttab', 'alice', "
              "1767229200)");
    struct sync_drift d[2];
    memset(d, 0, sizeof d);
    snprintf(d[0].kind, sizeof d[0].kind, "partition");
    snprintf(d[0].object, sizeof d[0].object, "batch");
    snprintf(d[0].field, sizeof d[0].field, "billing_weights");
    snprintf(d[0].slurm_value, sizeof d[0].slurm_value, "CPU=4.0");
    snprintf(d[0].allot_value, sizeof d[0].allot_value, "CPU=1.0");
    snprintf(d[0].status, sizeof d[0].status, "reported");
    snprintf(d[1].kind, sizeof d[1].kind, "user");
    snprintf(d[1].object, sizeof d[1].object, "bob");
    snprintf(d[1].field, sizeof d[1].field, "exists");
    snprintf(d[1].slurm_value, sizeof d[1].slurm_value, "default_account=chem");
    snprintf(d[1].status, sizeof d[1].status, "failed");
    snprintf(d[1].note, sizeof d[1].note, "it's \"quoted\"");
    TX(f, store_sync_replace(f->st, "c1", "follow", T0 + 300, d, 2, 3, &f->err));
    fx_sql(f, "INSERT INTO job_slurm_ids (cluster, job_id, array_job_id, array_task_id, "
              "het_job_id, het_job_offset) VALUES ('c1', 1, 54, 3, 0, -1)");
    fx_check_clean(f);
}

static void count_rows(struct fx *f, const char *table, int64_t *n)
{
    if (f->pg_schema[0]) {
        /* Through the store's own connection: the dump lists the same table names. */
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT 1 FROM %s LIMIT 1", table);
        /* fx_pg_exec says only whether it ran; the counts are asserted on SQLite. */
        *n = fx_pg_exec(f->pg_conninfo, sql) == 0 ? 1 : 0;
        return;
    }
    sqlite3 *db;
    sqlite3_stmt *s;
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", table);
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    *n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
}

/* The whole dump of f's store as a string (caller frees). */
static char *export_text(struct fx *f, int64_t *rows)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    assert_non_null(out);
    if (store_dump_export(f->st, out, T0, rows, NULL, &f->err) < 0) {
        fclose(out);
        free(buf);
        fail_msg("export: %s", f->err.msg);
    }
    assert_int_equal(fclose(out), 0);
    return buf;
}

static int import_text(struct fx *f, const char *text, int64_t *rows)
{
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(in);
    int rc = store_dump_import(f->st, in, rows, NULL, &f->err);
    fclose(in);
    return rc;
}

/* The dump without its header line (which names the backend). */
static const char *body(const char *text)
{
    const char *nl = strchr(text, '\n');
    assert_non_null(nl);
    return nl + 1;
}

static struct fx *fresh(void)
{
    void *state;
    fx_setup(&state);
    return state;
}

static void drop(struct fx *g)
{
    void *state = g;
    fx_teardown(&state);
}

/* A fresh SQLite bank (used to cross backends when the fixture is PostgreSQL). */
static struct fx *fresh_sqlite(void)
{
    const char *saved = getenv("ALLOT_TEST_PG_CONNINFO");
    char copy[1024] = "";
    if (saved)
        snprintf(copy, sizeof copy, "%s", saved);
    unsetenv("ALLOT_TEST_PG_CONNINFO");
    struct fx *g = fresh();
    if (copy[0])
        setenv("ALLOT_TEST_PG_CONNINFO", copy, 1);
    return g;
}

/* SQLite: import built the ledger's allocation index (schema 0016): every entry is in
 * ledger_alloc_index, none left in the tail above the mark. */
static void expect_indexed(struct fx *f)
{
    if (f->pg_schema[0])
        return;
    int64_t n = fx_sqlite_int(f, "SELECT COUNT(*) FROM ledger");
    assert_true(n > 0);
    assert_int_equal(fx_sqlite_int(f, "SELECT COUNT(*) FROM ledger_alloc_index"), n);
    assert_int_equal(fx_sqlite_int(f, "SELECT COUNT(*) FROM ledger WHERE id > "
                                      "(SELECT upto FROM ledger_alloc_mark)"),
                     0);
}

static void test_round_trip(void **state)
{
    struct fx *f = *state;
    int64_t rows = 0, rows2 = 0, n;
    build_bank(f);
    for (int i = 0; store_dump_table(i); i++) {
        count_rows(f, store_dump_table(i), &n);
        if (n == 0)
            fail_msg("table %s is empty: the test bank must fill every table", store_dump_table(i));
    }
    char *d1 = export_text(f, &rows);
    assert_true(rows > 20);
    assert_non_null(strstr(d1, "\"allot_dump\":1"));
    assert_non_null(strstr(d1, "\"end\":true"));

    struct fx *g = fresh();
    OK(g, import_text(g, d1, &rows2));
    assert_int_equal(rows2, rows);
    fx_check_clean(g);
    expect_indexed(g);
    char *d2 = export_text(g, NULL);
    assert_string_equal(body(d1), body(d2));

    /* Ids continue after the imported ones. */
    struct account a = fx_account("newer", "root");
    struct account late;
    OK(g, store_account_get(g->st, "late", &late, &g->err));
    TX(g, store_account_add(g->st, &a, &g->err));
    assert_true(a.id > late.id);
    int64_t alloc = fx_add_alloc(g, "newer", "cpu", "", T0, T0 + DAY, 10);
    assert_int_equal(alloc, 3);
    fx_check_clean(g);

    if (f->pg_schema[0]) {
        /* PostgreSQL -> SQLite -> PostgreSQL gives the same dump. */
        struct fx *s = fresh_sqlite();
        OK(s, import_text(s, d1, NULL));
        fx_check_clean(s);
        expect_indexed(s);
        char *d3 = export_text(s, NULL);
        assert_non_null(strstr(d3, "\"backend\":\"sqlite\""));
        assert_string_equal(body(d1), body(d3));
        struct fx *p = fresh();
        OK(p, import_text(p, d3, NULL));
        char *d4 = export_text(p, NULL);
        assert_string_equal(body(d1), body(d4));
        free(d3);
        free(d4);
        drop(s);
        drop(p);
    }
    free(d1);
    free(d2);
    drop(g);
}

/* Replace the first occurrence of from by to in text (the result is the caller's). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

/* Import must fail with code and leave g empty (a good import still works afterwards). */
static void refused(struct fx *g, const char *text, enum allot_errnum code, const char *needle)
{
    allot_error_clear(&g->err);
    assert_int_equal(import_text(g, text, NULL), -1);
    if (g->err.code != code || (needle && !strstr(g->err.msg, needle)))
        fail_msg("got %s (%s), expected %s '%s'", allot_errname(g->err.code), g->err.msg,
                 allot_errname(code), needle ? needle : "");
    struct ledger_filter lf = {0};
    int n = 0;
    OK(g, store_ledger_list(g->st, &lf, fx_count_cb, &n, &g->err));
    assert_int_equal(n, 0);
}

static void test_refusals(void **state)
{
    struct fx *f = *state;
    build_bank(f);
    char *d = export_text(f, NULL);
    struct fx *g = fresh();

    /* Into a non-empty database. */
    allot_error_clear(&f->err);
    assert_int_equal(import_text(f, d, NULL), -1);
    assert_int_equal(f->err.code, ALLOT_EEXIST);

    /* Truncated: no trailer. */
    char *cut = strdup(d);
    assert_non_null(cut);
    char *end = strstr(cut, "{\"end\"");
    assert_non_null(end);
    *end = '\0';
    refused(g, cut, ALLOT_EINVAL, "without its trailer");
    /* Cut inside the ledger: the trailer is missing too. */
    char *mid = strdup(d);
    assert_non_null(mid);
    char *led = strstr(mid, "{\"table\":\"jobs\"");
    assert_non_null(led);
    *led = '\0';
    refused(g, mid, ALLOT_EINVAL, "trailer");

    /* A row dropped but the trailer kept: counts disagree. */
    char *line = strstr(d, "{\"table\":\"limits\"");
    assert_non_null(line);
    char *line_end = strchr(line, '\n');
    char *dropped = malloc(strlen(d) + 1);
    assert_non_null(dropped);
    snprintf(dropped, strlen(d) + 1, "%.*s%s", (int)(line - d), d, line_end + 1);
    refused(g, dropped, ALLOT_EINVAL, "trailer counts");

    /* A cached balance that is not the ledger's sum. */
    char *bad = replace(d, "\"alloc_balance\",\"row\":{\"alloc_id\":1,\"granted_sumin\":",
                        "\"alloc_balance\",\"row\":{\"alloc_id\":1,\"granted_sumin\":1");
    refused(g, bad, ALLOT_EINVAL, "inconsistent");

    /* Unknown column, wrong type, wrong schema, not a dump. */
    char *col = replace(d, "\"uid\":1001", "\"uid\":1001,\"colour\":\"blue\"");
    refused(g, col, ALLOT_EINVAL, "no column 'colour'");
    char *type = replace(d, "\"uid\":1001", "\"uid\":\"1001\"");
    refused(g, type, ALLOT_EINVAL, "users.uid must be an integer");
    char *schema = replace(d, "\"schema\":", "\"schema\":9");
    refused(g, schema, ALLOT_EINVAL, "schema");
    refused(g, "{\"hello\":1}\n", ALLOT_EINVAL, "not an allot dump");
    refused(g, "", ALLOT_EINVAL, "trailer");

    /* After all that, the real dump still imports. */
    OK(g, import_text(g, d, NULL));
    fx_check_clean(g);

    free(d);
    free(cut);
    free(mid);
    free(dropped);
    free(bad);
    free(col);
    free(type);
    free(schema);
    drop(g);
}

/* Every table of the schema (but schema_version) is in the dump (SQLite's catalogue; the
 * PostgreSQL schema has the same tables). */
static void test_every_table(void **state)
{
    struct fx *f = *state;
    if (f->pg_schema[0])
        skip();
    sqlite3 *db;
    sqlite3_stmt *s;
    int n = 0;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT name FROM sqlite_master WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite_%' AND name <> "
                                        "'schema_version' ORDER BY name",
                                        -1, &s, NULL),
                     SQLITE_OK);
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        int found = 0;
        for (int i = 0; store_dump_table(i); i++)
            found |= !strcmp(store_dump_table(i), name);
        for (int i = 0; store_dump_derived_table(i); i++)
            found |= !strcmp(store_dump_derived_table(i), name);
        if (!found)
            fail_msg("table %s is not in the dump (store_dump.c dump_tables)", name);
        n++;
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    int listed = 0, derived = 0;
    while (store_dump_table(listed))
        listed++;
    while (store_dump_derived_table(derived))
        derived++;
    assert_int_equal(n, listed + derived);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_refusals, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_every_table, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
