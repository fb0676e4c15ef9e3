/* SPDX-License-Identifier: GPL-3.0-or-later */
/* alloc.c - allocations, the payer lookup, credits and the ledger on a real SQLite file:
 * overlap rules (same cluster, "" versus a cluster), nearest-ancestor payer, idempotent
 * credits (replays write nothing), adjustments that may not overdraw, refunds and expiry,
 * ledger filters and paging, and store_check catching a balance row corrupted behind the
 * store's back with raw SQL. */
#include <sqlite3.h>

#include "libstore/store_int.h"
#include "store_test.h"

#define DAY 86400
#define T0 1767225600 /* 2026-01-01T00:00:00Z */

static struct ledger_entry entry(int64_t alloc_id, enum ledger_kind kind, int64_t amount,
                                 const char *key)
{
    struct ledger_entry e;
    memset(&e, 0, sizeof e);
    e.alloc_id = alloc_id;
    e.kind = kind;
    e.amount_sumin = amount;
    snprintf(e.actor, sizeof e.actor, "admin");
    snprintf(e.idem_key, sizeof e.idem_key, "%s", key);
    e.time_s = T0;
    return e;
}

static void test_alloc_overlap(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    TX(f, store_cluster_add(f->st, "c2", &f->err));
    int64_t a1 = fx_add_alloc(f, "chem", "cpu", "c1", T0, T0 + 30 * DAY, 0);
    /* Same cluster, overlapping: refused, naming the other allocation. */
    struct allocation a = fx_alloc("chem", "cpu", "c1", T0 + 10 * DAY, T0 + 40 * DAY);
    TX_FAILS(f, ALLOT_ECONFLICT, store_alloc_add(f->st, &a, &f->err));
    char idtext[32];
    snprintf(idtext, sizeof idtext, "%lld", (long long)a1);
    assert_non_null(strstr(f->err.msg, idtext));
    /* "" (all clusters) intersects c1. */
    a = fx_alloc("chem", "cpu", "", T0 + 10 * DAY, T0 + 40 * DAY);
    TX_FAILS(f, ALLOT_ECONFLICT, store_alloc_add(f->st, &a, &f->err));
    /* Adjacent periods ([start, end) is half-open), other clusters, other resources: fine. */
    fx_add_alloc(f, "chem", "cpu", "c1", T0 + 30 * DAY, T0 + 60 * DAY, 0);
    fx_add_alloc(f, "chem", "cpu", "c2", T0, T0 + 60 * DAY, 0);
    fx_add_alloc(f, "chem", "gpu", "", T0, T0 + 60 * DAY, 0);
    /* Now "" for cpu overlaps c2's. */
    a = fx_alloc("chem", "cpu", "", T0 + 70 * DAY, T0 + 80 * DAY);
    TX(f, store_alloc_add(f->st, &a, &f->err));
    struct allocation b = fx_alloc("chem", "cpu", "c2", T0 + 75 * DAY, T0 + 76 * DAY);
    TX_FAILS(f, ALLOT_ECONFLICT, store_alloc_add(f->st, &b, &f->err));

    /* Validation and existence. */
    a = fx_alloc("chem", "cpu", "c1", T0 + 100 * DAY, T0 + 100 * DAY);
    TX_FAILS(f, ALLOT_EINVAL, store_alloc_add(f->st, &a, &f->err));
    a = fx_alloc("nope", "cpu", "c1", T0, T0 + DAY);
    TX_FAILS(f, ALLOT_ENOENT, store_alloc_add(f->st, &a, &f->err));
    a = fx_alloc("chem", "cpu", "c9", T0 + 200 * DAY, T0 + 201 * DAY);
    TX_FAILS(f, ALLOT_ENOENT, store_alloc_add(f->st, &a, &f->err));
    a = fx_alloc("chem", "", "c1", T0 + 200 * DAY, T0 + 201 * DAY);
    TX_FAILS(f, ALLOT_EINVAL, store_alloc_add(f->st, &a, &f->err));
}

static void test_alloc_modify_remove(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t a1 = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 30 * DAY, 0);
    int64_t a2 = fx_add_alloc(f, "chem", "cpu", "", T0 + 30 * DAY, T0 + 60 * DAY, 0);
    struct allocation a;
    struct balance b;
    OK(f, store_alloc_get(f->st, a1, &a, &b, &f->err));
    /* Extending a1 into a2 overlaps. */
    a.end_s = T0 + 31 * DAY;
    TX_FAILS(f, ALLOT_ECONFLICT, store_alloc_modify(f->st, &a, &f->err));
    a.end_s = T0 + 29 * DAY;
    snprintf(a.category, sizeof a.category, "startup");
    snprintf(a.comment, sizeof a.comment, "shortened");
    TX(f, store_alloc_modify(f->st, &a, &f->err));
    struct allocation got;
    OK(f, store_alloc_get(f->st, a1, &got, &b, &f->err));
    assert_int_equal(got.end_s, T0 + 29 * DAY);
    assert_string_equal(got.category, "startup");
    assert_string_equal(got.comment, "shortened");
    a.start_s = a.end_s;
    TX_FAILS(f, ALLOT_EINVAL, store_alloc_modify(f->st, &a, &f->err));
    a.id = 999;
    a.start_s = T0;
    TX_FAILS(f, ALLOT_ENOENT, store_alloc_modify(f->st, &a, &f->err));

    /* A held job started after the new end blocks shrinking. */
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    struct ledger_entry e = entry(a2, LEDGER_CREDIT, 1000, "");
    int replay;
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    struct hold_req hr = {.cluster = "c1",
                          .job_id = 5,
                          .user = "alice",
                          .account = "chem",
                          .resource = "cpu",
                          .start_s = T0 + 50 * DAY,
                          .amount_sumin = 10,
                          .billing_micro = 1000000,
                          .time_limit_s = 600};
    struct hold_result res;
    TX(f, store_hold(f->st, &hr, &res, &f->err));
    assert_false(res.refused);
    OK(f, store_alloc_get(f->st, a2, &a, &b, &f->err));
    a.end_s = T0 + 45 * DAY;
    TX_FAILS(f, ALLOT_ECONFLICT, store_alloc_modify(f->st, &a, &f->err));

    /* remove: only without ledger entries. */
    TX_FAILS(f, ALLOT_ECONFLICT, store_alloc_remove(f->st, a2, &f->err));
    TX(f, store_alloc_remove(f->st, a1, &f->err));
    TX_FAILS(f, ALLOT_ENOENT, store_alloc_remove(f->st, a1, &f->err));
    FAILS(f, ALLOT_ENOENT, store_alloc_get(f->st, a1, &a, &b, &f->err));
    fx_check_clean(f);
}

static int collect_ids(const struct allocation *a, const struct balance *b, void *arg)
{
    char *out = arg;
    char buf[200];
    snprintf(buf, sizeof buf, "%s/%s/%lld ", a->account, a->resource,
             (long long)b->available_sumin);
    strcat(out, buf);
    return 0;
}

static void test_alloc_list(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    fx_add_account(f, "bio", "root");
    fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 30 * DAY, 100);
    fx_add_alloc(f, "chem", "gpu", "", T0, T0 + 30 * DAY, 200);
    fx_add_alloc(f, "bio", "cpu", "", T0 + 30 * DAY, T0 + 60 * DAY, 300);
    char out[256] = "";
    OK(f, store_alloc_list(f->st, NULL, collect_ids, out, &f->err));
    assert_string_equal(out, "bio/cpu/300 chem/cpu/100 chem/gpu/200 ");
    out[0] = '\0';
    struct alloc_filter fl = {.resource = "cpu", .active_at_s = T0 + DAY};
    OK(f, store_alloc_list(f->st, &fl, collect_ids, out, &f->err));
    assert_string_equal(out, "chem/cpu/100 ");
    out[0] = '\0';
    struct alloc_filter fa = {.account = "bio"};
    OK(f, store_alloc_list(f->st, &fa, collect_ids, out, &f->err));
    assert_string_equal(out, "bio/cpu/300 ");
}

static void test_payer(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "science", "root");
    fx_add_account(f, "chem", "science");
    fx_add_account(f, "organic", "chem");
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    TX(f, store_cluster_add(f->st, "c2", &f->err));
    int64_t sci = fx_add_alloc(f, "science", "cpu", "", T0, T0 + 365 * DAY, 1000);
    int64_t chem = fx_add_alloc(f, "chem", "cpu", "c1", T0, T0 + 30 * DAY, 500);
    struct allocation a;
    struct balance b;
    /* organic has none: its parent chem pays on c1 during chem's period. */
    OK(f, store_find_payer(f->st, "organic", "cpu", "c1", T0 + DAY, &a, &b, &f->err));
    assert_int_equal(a.id, chem);
    assert_string_equal(a.account, "chem");
    assert_int_equal(b.available_sumin, 500);
    /* On c2 chem's cluster-scoped allocation does not apply: science pays. */
    OK(f, store_find_payer(f->st, "organic", "cpu", "c2", T0 + DAY, &a, &b, &f->err));
    assert_int_equal(a.id, sci);
    /* After chem's period: science. */
    OK(f, store_find_payer(f->st, "organic", "cpu", "c1", T0 + 40 * DAY, &a, &b, &f->err));
    assert_int_equal(a.id, sci);
    /* The account's own allocation wins over its parent's. */
    int64_t org = fx_add_alloc(f, "organic", "cpu", "", T0, T0 + 10 * DAY, 5);
    OK(f, store_find_payer(f->st, "organic", "cpu", "c1", T0 + DAY, &a, &b, &f->err));
    assert_int_equal(a.id, org);
    /* No gpu anywhere; none after the year. */
    FAILS(f, ALLOT_ENOENT, store_find_payer(f->st, "organic", "gpu", "c1", T0, &a, &b, &f->err));
    assert_non_null(strstr(f->err.msg, "organic"));
    assert_non_null(strstr(f->err.msg, "gpu"));
    assert_non_null(strstr(f->err.msg, "c1"));
    assert_non_null(strstr(f->err.msg, "2026-01-01"));
    FAILS(f, ALLOT_ENOENT,
          store_find_payer(f->st, "organic", "cpu", "c1", T0 + 400 * DAY, &a, &b, &f->err));
    FAILS(f, ALLOT_ENOENT, store_find_payer(f->st, "nope", "cpu", "c1", T0, &a, &b, &f->err));
    FAILS(f, ALLOT_EINVAL, store_find_payer(f->st, "bad name", "cpu", "c1", T0, &a, &b, &f->err));
}

static void test_credit_idempotent(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 0);
    struct ledger_entry e = entry(id, LEDGER_CREDIT, 6000, "grant-2026");
    int replay = -1;
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    assert_int_equal(replay, 0);
    int64_t first = e.id;
    assert_true(first > 0);
    int rows = fx_ledger_rows(f);

    struct ledger_entry again = entry(id, LEDGER_CREDIT, 6000, "grant-2026");
    TX(f, store_credit(f->st, &again, &replay, &f->err));
    assert_int_equal(replay, 1);
    assert_int_equal(again.id, first);
    assert_int_equal(fx_ledger_rows(f), rows);
    struct balance b;
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    assert_int_equal(b.granted_sumin, 6000);

    /* Same key, different amount or kind: conflict, nothing written. */
    struct ledger_entry other = entry(id, LEDGER_CREDIT, 6001, "grant-2026");
    TX_FAILS(f, ALLOT_ECONFLICT, store_credit(f->st, &other, &replay, &f->err));
    assert_non_null(strstr(f->err.msg, "(credit of 100h SU on allocation"));
    other = entry(id, LEDGER_ADJUSTMENT, 6000, "grant-2026");
    TX_FAILS(f, ALLOT_ECONFLICT, store_credit(f->st, &other, &replay, &f->err));
    assert_int_equal(fx_ledger_rows(f), rows);
    fx_check_clean(f);
}

/* An allocation's totals stop at STORE_BALANCE_MAX (10^18 SU-minutes): repeated credits
 * reach it exactly, the next one is refused and writes nothing, and the totals stay integers
 * (SQLite would have turned an overflowing sum into a float). */
static void test_credit_total_bounded(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 0);
    int replay;
    BEGIN(f);
    for (int i = 0; i < 1000; i++) {
        struct ledger_entry e = entry(id, LEDGER_CREDIT, INT64_C(1000000000000000), "");
        OK(f, store_credit(f->st, &e, &replay, &f->err));
    }
    COMMIT(f);
    int rows = fx_ledger_rows(f);
    struct ledger_entry e = entry(id, LEDGER_CREDIT, 1, "");
    TX_FAILS(f, ALLOT_EINVAL, store_credit(f->st, &e, &replay, &f->err));
    assert_non_null(strstr(f->err.msg, "limited to"));
    assert_int_equal(fx_ledger_rows(f), rows);
    struct balance b;
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    assert_int_equal(b.granted_sumin, INT64_C(1000000000000000000));
    fx_check_clean(f);
}

static void test_credit_kinds(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 1000);
    int replay;
    struct balance b;
    /* Negative adjustment within the balance. */
    struct ledger_entry e = entry(id, LEDGER_ADJUSTMENT, -300, "");
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    assert_int_equal(b.granted_sumin, 700);
    /* ... but never below zero available. */
    e = entry(id, LEDGER_ADJUSTMENT, -701, "");
    TX_FAILS(f, ALLOT_EFUNDS, store_credit(f->st, &e, &replay, &f->err));
    e = entry(id, LEDGER_EXPIRY, 701, "");
    TX_FAILS(f, ALLOT_EFUNDS, store_credit(f->st, &e, &replay, &f->err));
    assert_non_null(strstr(f->err.msg, "expiry of 11h41m SU would make allocation"));
    assert_non_null(strstr(f->err.msg, "(available 11h40m SU)"));
    e = entry(id, LEDGER_EXPIRY, 200, "");
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    e = entry(id, LEDGER_CARRYOVER, 50, "");
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    assert_int_equal(b.granted_sumin, 550);
    /* A refund cannot exceed what was used. */
    e = entry(id, LEDGER_REFUND, 1, "");
    TX_FAILS(f, ALLOT_EINVAL, store_credit(f->st, &e, &replay, &f->err));
    assert_non_null(strstr(f->err.msg, "refund of 1m SU exceeds the 0h SU used"));
    struct settle_req sr = {.cluster = "c1",
                            .job_id = 9,
                            .start_s = T0 + 10,
                            .end_s = T0 + 70,
                            .elapsed_s = 60,
                            .billing_micro = 2000000,
                            .charge_sumin = -1,
                            .user = "alice",
                            .account = "chem",
                            .resource = "cpu",
                            .settle_source = "sacct"};
    struct settle_result sres;
    TX(f, store_settle(f->st, &sr, &sres, &f->err));
    assert_int_equal(sres.job.charge_sumin, 2);
    e = entry(id, LEDGER_REFUND, 2, "");
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    assert_int_equal(b.used_sumin, 0);
    assert_int_equal(b.available_sumin, 550);

    /* Kinds the verb does not take, bad amounts, unknown allocation. */
    e = entry(id, LEDGER_HOLD, 5, "");
    TX_FAILS(f, ALLOT_EINVAL, store_credit(f->st, &e, &replay, &f->err));
    e = entry(id, LEDGER_DEBIT, 5, "");
    TX_FAILS(f, ALLOT_EINVAL, store_credit(f->st, &e, &replay, &f->err));
    e = entry(id, LEDGER_CREDIT, 0, "");
    TX_FAILS(f, ALLOT_EINVAL, store_credit(f->st, &e, &replay, &f->err));
    e = entry(id, LEDGER_CREDIT, -5, "");
    TX_FAILS(f, ALLOT_EINVAL, store_credit(f->st, &e, &replay, &f->err));
    e = entry(id, LEDGER_CREDIT, INT64_MAX, "");
    TX_FAILS(f, ALLOT_EINVAL, store_credit(f->st, &e, &replay, &f->err));
    e = entry(id, LEDGER_ADJUSTMENT, 0, "");
    TX_FAILS(f, ALLOT_EINVAL, store_credit(f->st, &e, &replay, &f->err));
    e = entry(4242, LEDGER_CREDIT, 5, "");
    TX_FAILS(f, ALLOT_ENOENT, store_credit(f->st, &e, &replay, &f->err));
    fx_check_clean(f);
}

static int collect_entries(const struct ledger_entry *e, void *arg)
{
    char *out = arg;
    char buf[64];
    snprintf(buf, sizeof buf, "%s:%lld ", model_ledger_kind_name(e->kind),
             (long long)e->amount_sumin);
    strcat(out, buf);
    return 0;
}

static int last_id(const struct ledger_entry *e, void *arg)
{
    *(int64_t *)arg = e->id;
    return 0;
}

static void test_ledger_list(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    fx_add_account(f, "bio", "root");
    int64_t c = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 100);
    int64_t b = fx_add_alloc(f, "bio", "cpu", "", T0, T0 + DAY, 200);
    int replay;
    struct ledger_entry e = entry(c, LEDGER_CREDIT, 5, "");
    e.time_s = T0 + 100;
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    char out[256] = "";
    struct ledger_filter byacct = {.account = "chem"};
    OK(f, store_ledger_list(f->st, &byacct, collect_entries, out, &f->err));
    assert_string_equal(out, "credit:100 credit:5 ");
    out[0] = '\0';
    struct ledger_filter byalloc = {.alloc_id = b};
    OK(f, store_ledger_list(f->st, &byalloc, collect_entries, out, &f->err));
    assert_string_equal(out, "credit:200 ");
    out[0] = '\0';
    struct ledger_filter since = {.since_s = T0 + 50};
    OK(f, store_ledger_list(f->st, &since, collect_entries, out, &f->err));
    assert_string_equal(out, "credit:5 ");
    /* Paging: limit 2, then after the last id. */
    int64_t after = 0;
    struct ledger_filter page = {.limit = 2};
    OK(f, store_ledger_list(f->st, &page, last_id, &after, &f->err));
    out[0] = '\0';
    struct ledger_filter page2 = {.limit = 2, .after_id = after};
    OK(f, store_ledger_list(f->st, &page2, collect_entries, out, &f->err));
    assert_string_equal(out, "credit:5 ");
}

static void test_check_finds_corruption(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 1000);
    fx_check_clean(f);
    /* Corrupt the cached balance directly, bypassing the store. */
    if (f->pg_schema[0]) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "UPDATE alloc_balance SET granted_sumin = granted_sumin + 7 "
                 "WHERE alloc_id = %lld",
                 (long long)id);
        assert_int_equal(fx_pg_exec(f->pg_conninfo, sql), 0);
        /* The ledger itself refuses to be edited (schema triggers). */
        assert_int_equal(fx_pg_exec(f->pg_conninfo, "UPDATE ledger SET amount_sumin = 1"), -1);
        assert_int_equal(fx_pg_exec(f->pg_conninfo, "DELETE FROM ledger"), -1);
    } else {
        sqlite3 *db;
        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        char sql[128];
        snprintf(sql, sizeof sql,
                 "UPDATE alloc_balance SET granted_sumin = granted_sumin + 7 "
                 "WHERE alloc_id = %lld",
                 (long long)id);
        int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        /* The ledger itself refuses to be edited (schema triggers). */
        int upd = sqlite3_exec(db, "UPDATE ledger SET amount_sumin = 1", NULL, NULL, NULL);
        int del = sqlite3_exec(db, "DELETE FROM ledger", NULL, NULL, NULL);
        sqlite3_close(db);
        assert_int_equal(rc, SQLITE_OK);
        assert_int_not_equal(upd, SQLITE_OK);
        assert_int_not_equal(del, SQLITE_OK);
    }
    int n = store_check(f->st, fx_problem_print, NULL, &f->err);
    assert_int_equal(n, 1);
}

/* The entries a listing gives (id and allocation), in its order. */
struct ids {
    int64_t id[4096], alloc[4096];
    int n;
};

static int collect_entry_ids(const struct ledger_entry *e, void *arg)
{
    struct ids *x = arg;
    assert_true(x->n < (int)(sizeof x->id / sizeof x->id[0]));
    x->id[x->n] = e->id;
    x->alloc[x->n++] = e->alloc_id;
    return 0;
}

/* All of filter lf's entries, read in pages of `limit` (after_id = the last id seen). */
static void list_paged(struct fx *f, struct ledger_filter lf, int limit, struct ids *out)
{
    out->n = 0;
    lf.limit = limit;
    for (;;) {
        int before = out->n;
        OK(f, store_ledger_list(f->st, &lf, collect_entry_ids, out, &f->err));
        assert_true(out->n - before <= limit);
        if (out->n - before < limit)
            break;
        lf.after_id = out->id[out->n - 1];
    }
}

static void collect_problem(const char *problem, void *arg)
{
    char *text = arg;
    size_t n = strlen(text);
    snprintf(text + n, 4096 - n, "%s\n", problem);
}

/* An allocation's and an account's entries, paged, are exactly the ledger's entries of that
 * allocation (account) in id order, on both sides of SQLite's index mark (schema 0016):
 * entries indexed by a pass, entries of the tail above it, pages across the two.  The
 * allocation's entry count refuses its removal.  On SQLite, store_check finds an index entry
 * that is missing and one that does not belong. */
static void test_ledger_alloc_pages(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    fx_add_account(f, "bio", "root");
    int64_t c = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 100);
    int64_t g = fx_add_alloc(f, "chem", "gpu", "", T0, T0 + DAY, 100);
    int64_t b = fx_add_alloc(f, "bio", "cpu", "", T0, T0 + DAY, 100);
    /* Enough entries for one pass at the second commit, and 100 in the tail after it. */
    int counts[3] = {STORE_LEDGER_INDEX_EVERY - 100, 1000, 100};
    int k = 0, replay;
    for (int t = 0; t < 3; t++) {
        BEGIN(f);
        for (int i = 0; i < counts[t]; i++, k++) {
            struct ledger_entry e = entry(k % 5 == 4 ? g : k % 2 ? b : c, LEDGER_CREDIT, 1, "");
            OK(f, store_credit(f->st, &e, &replay, &f->err));
        }
        COMMIT(f);
    }
    if (!f->pg_schema[0]) {
        assert_int_equal(fx_sqlite_int(f, "SELECT COUNT(*) FROM ledger WHERE id > "
                                          "(SELECT upto FROM ledger_alloc_mark)"),
                         100);
        assert_int_equal(fx_sqlite_int(f, "SELECT COUNT(*) FROM ledger_alloc_index"), 3 + k - 100);
    }

    static struct ids all, got;
    struct ledger_filter none = {0};
    list_paged(f, none, 1000, &all);
    assert_int_equal(all.n, 3 + k);
    struct ledger_filter by[4] = {
        {.alloc_id = c}, {.alloc_id = b}, {.alloc_id = g}, {.account = "chem"}};
    for (int q = 0; q < 4; q++) {
        list_paged(f, by[q], 37, &got);
        int j = 0;
        for (int i = 0; i < all.n; i++) {
            int64_t a = all.alloc[i];
            if (q == 3 ? a != c && a != g : a != by[q].alloc_id)
                continue;
            assert_true(j < got.n);
            assert_int_equal(got.id[j], all.id[i]);
            assert_int_equal(got.alloc[j], a);
            j++;
        }
        assert_int_equal(j, got.n);
        assert_true(got.n > 100);
    }
    fx_check_clean(f);

    /* The count that refuses a removal sees indexed and tail entries alike. */
    char want[128];
    list_paged(f, by[0], 1000, &got);
    snprintf(want, sizeof want, "allocation %lld has %d ledger entries", (long long)c, got.n);
    BEGIN(f);
    FAILS(f, ALLOT_ECONFLICT, store_alloc_remove(f->st, c, &f->err));
    store_rollback(f->st);
    assert_non_null(strstr(f->err.msg, want));

    if (f->pg_schema[0])
        return;
    /* The index, damaged behind the store's back: each damage is named. */
    sqlite3 *db;
    char sql[256];
    int64_t other = all.alloc[11] == b ? c : b; /* entry 11 filed under the wrong allocation */
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    snprintf(sql, sizeof sql,
             "DELETE FROM ledger_alloc_index WHERE id = %lld; "
             "INSERT INTO ledger_alloc_index VALUES (%lld, %lld)",
             (long long)all.id[10], (long long)other, (long long)all.id[11]);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    static char text[4096];
    text[0] = '\0';
    assert_true(store_check(f->st, collect_problem, text, &f->err) >= 2);
    snprintf(want, sizeof want,
             "ledger entry %lld of allocation %lld is missing from "
             "ledger_alloc_index",
             (long long)all.id[10], (long long)all.alloc[10]);
    if (!strstr(text, want))
        fail_msg("no '%s' in:\n%s", want, text);
    snprintf(want, sizeof want, "ledger_alloc_index has entry %lld under allocation %lld,",
             (long long)all.id[11], (long long)other);
    if (!strstr(text, want))
        fail_msg("no '%s' in:\n%s", want, text);
}

/* SQL run on the store's own database, bypassing the store: 0, or -1 when refused.  On
 * SQLite with foreign keys on, as every store connection has them. */
static int raw_sql(struct fx *f, const char *sql)
{
    if (f->pg_schema[0])
        return fx_pg_exec(f->pg_conninfo, sql);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL), SQLITE_OK);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Two credit entries in one INSERT, bypassing the store: 0, or -1 when refused. */
static int raw_credits(struct fx *f, int64_t a1, int64_t n1, int64_t a2, int64_t n2)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO ledger (alloc_id, kind, amount_sumin, time_s) VALUES (%lld, 'credit', "
             "%lld, %lld), (%lld, 'credit', %lld, %lld)",
             (long long)a1, (long long)n1, (long long)T0, (long long)a2, (long long)n2,
             (long long)T0);
    return raw_sql(f, sql);
}

/* Every ledger entry names an existing allocation, and an allocation that entries name
 * cannot go, whoever writes: a foreign key on SQLite, a check per statement on PostgreSQL
 * (schema 0015). */
static void test_ledger_names_allocation(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t a = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 1000);
    int64_t gone = a + 1000;
    assert_int_equal(raw_credits(f, gone, 1, gone, 1), -1);
    /* One statement naming an allocation that exists and one that does not: none of it. */
    assert_int_equal(raw_credits(f, a, 2, gone, 3), -1);
    char out[256] = "";
    struct ledger_filter byalloc = {.alloc_id = a};
    OK(f, store_ledger_list(f->st, &byalloc, collect_entries, out, &f->err));
    assert_string_equal(out, "credit:1000 ");
    /* Its own allocation: accepted (the check refuses only what it should). */
    assert_int_equal(raw_credits(f, a, 4, a, 5), 0);
    out[0] = '\0';
    OK(f, store_ledger_list(f->st, &byalloc, collect_entries, out, &f->err));
    assert_string_equal(out, "credit:1000 credit:4 credit:5 ");
    char sql[512];
    /* The allocation those entries name stays, and keeps its id (its balance row, which
     * references it too, is removed first in the same transaction). */
    snprintf(sql, sizeof sql,
             "BEGIN; DELETE FROM alloc_balance WHERE alloc_id = %lld; "
             "DELETE FROM allocations WHERE id = %lld; COMMIT",
             (long long)a, (long long)a);
    assert_int_equal(raw_sql(f, sql), -1);
    snprintf(sql, sizeof sql,
             "BEGIN; DELETE FROM alloc_balance WHERE alloc_id = %lld; "
             "UPDATE allocations SET id = %lld WHERE id = %lld; COMMIT",
             (long long)a, (long long)gone, (long long)a);
    assert_int_equal(raw_sql(f, sql), -1);
    struct allocation got;
    struct balance b;
    OK(f, store_alloc_get(f->st, a, &got, &b, &f->err));
    assert_int_equal(b.granted_sumin, 1000);
    if (f->pg_schema[0]) /* SQLite has no TRUNCATE */
        assert_int_equal(raw_sql(f, "TRUNCATE allocations CASCADE"), -1);
    OK(f, store_alloc_get(f->st, a, &got, &b, &f->err));
}

/* PostgreSQL: an INSERT into the ledger locks the allocations it names until it commits,
 * as a foreign key does, so a DELETE of one cannot slip in before the entry is visible
 * (schema 0015).  SQLite has one writer at a time: no such race. */
static void test_ledger_insert_locks_allocation(void **state)
{
    struct fx *f = *state;
    if (!f->pg_schema[0])
        skip();
    fx_add_account(f, "chem", "root");
    int64_t b = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 0); /* no entries yet */
    PGconn *c1 = PQconnectdb(f->pg_conninfo);
    PGconn *c2 = PQconnectdb(f->pg_conninfo);
    assert_int_equal(PQstatus(c1), CONNECTION_OK);
    assert_int_equal(PQstatus(c2), CONNECTION_OK);
    char sql[512];
    snprintf(sql, sizeof sql,
             "BEGIN; INSERT INTO ledger (alloc_id, kind, amount_sumin, time_s) "
             "VALUES (%lld, 'credit', 7, %lld)",
             (long long)b, (long long)T0);
    PGresult *r = PQexec(c1, sql);
    int inserted = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    /* The entry is not committed, so the delete's own check cannot see it: only the lock
     * stops it (lock_timeout, instead of a commit that would orphan the entry). */
    snprintf(sql, sizeof sql,
             "SET lock_timeout = '200ms'; BEGIN; DELETE FROM alloc_balance WHERE alloc_id = %lld; "
             "DELETE FROM allocations WHERE id = %lld; COMMIT",
             (long long)b, (long long)b);
    r = PQexec(c2, sql);
    int del_status = PQresultStatus(r);
    char del_state[8] = "";
    const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    snprintf(del_state, sizeof del_state, "%s", st ? st : "");
    PQclear(r);
    r = PQexec(c1, "COMMIT");
    int committed = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    /* Both connections are closed before any assertion: an open transaction would hold
     * its locks and keep the teardown's DROP SCHEMA waiting. */
    PQfinish(c2);
    PQfinish(c1);
    assert_true(inserted);
    assert_int_equal(del_status, PGRES_FATAL_ERROR);
    assert_string_equal(del_state, "55P03"); /* lock_not_available */
    assert_true(committed);
    struct allocation got;
    struct balance bal;
    OK(f, store_alloc_get(f->st, b, &got, &bal, &f->err));
    char out[64] = "";
    struct ledger_filter byalloc = {.alloc_id = b};
    OK(f, store_ledger_list(f->st, &byalloc, collect_entries, out, &f->err));
    assert_string_equal(out, "credit:7 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alloc_overlap, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_modify_remove, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_alloc_list, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_credit_total_bounded, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_payer, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_credit_idempotent, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_credit_kinds, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_ledger_list, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_ledger_alloc_pages, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_check_finds_corruption, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_ledger_names_allocation, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_ledger_insert_locks_allocation, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
