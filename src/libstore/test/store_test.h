/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_test.h - shared fixture for the libstore tests: a fresh SQLite file in its own
 * temporary directory, upgraded to the latest schema, and small helpers that run one
 * write verb in its own transaction.  Header-only so that each test/<name>.c stays one
 * cmocka program. */
#ifndef ALLOT_LIBSTORE_TEST_STORE_TEST_H
#define ALLOT_LIBSTORE_TEST_STORE_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "libstore/store.h"
#include "store_test_pg.h" /* ALLOT_TEST_PG_CONNINFO: run on PostgreSQL */

struct fx {
    char dir[64];
    char path[128];
    store_t *st;
    struct allot_error err;
    char pg_schema[64]; /* PostgreSQL: this fixture's schema ("" = SQLite) */
    char pg_conninfo[1024];
};

/* The fixture's store configuration (SQLite file, or PostgreSQL schema): tests opening a
 * second connection to the same bank start from this. */
static inline struct store_config fx_config(const struct fx *f)
{
    struct store_config cfg = {.backend = "sqlite", .target = f->path, .durable = 0};
    if (f->pg_schema[0]) {
        cfg.backend = "pg";
        cfg.target = f->pg_conninfo;
    }
    return cfg;
}

static inline store_t *fx_open_store(struct fx *f)
{
    struct store_config cfg = fx_config(f);
    store_t *st = store_open(&cfg, &f->err);
    if (!st)
        fail_msg("store_open: %s", f->err.msg);
    return st;
}

static inline int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/allot-store-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/bank.db", f->dir);
    if (fx_pg_base())
        fx_pg_create(f->pg_schema, sizeof f->pg_schema, f->pg_conninfo, sizeof f->pg_conninfo);
    f->st = fx_open_store(f);
    if (store_upgrade(f->st, &f->err) < 0)
        fail_msg("store_upgrade: %s", f->err.msg);
    *state = f;
    return 0;
}

static inline int fx_teardown(void **state)
{
    struct fx *f = *state;
    char p[160];
    store_close(f->st);
    if (f->pg_schema[0])
        fx_pg_drop(f->pg_schema);
    unlink(f->path);
    snprintf(p, sizeof p, "%s-wal", f->path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", f->path);
    unlink(p);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Assert a call succeeded, printing the store's message otherwise. */
#define OK(f, call)                                                                                \
    do {                                                                                           \
        if ((call) < 0)                                                                            \
            fail_msg("%s: %s", #call, (f)->err.msg);                                               \
    } while (0)

/* Assert a call failed with the given code. */
#define FAILS(f, ecode, call)                                                                      \
    do {                                                                                           \
        allot_error_clear(&(f)->err);                                                              \
        if ((call) != -1)                                                                          \
            fail_msg("%s: succeeded, expected %s", #call, allot_errname(ecode));                   \
        if ((f)->err.code != (ecode))                                                              \
            fail_msg("%s: got %s (%s), expected %s", #call, allot_errname((f)->err.code),          \
                     (f)->err.msg, allot_errname(ecode));                                          \
    } while (0)

#define BEGIN(f) OK(f, store_begin((f)->st, &(f)->err))
#define COMMIT(f) OK(f, store_commit((f)->st, &(f)->err))

/* Run one write verb in its own transaction; commit on success, roll back on failure. */
#define TX(f, call)                                                                                \
    do {                                                                                           \
        BEGIN(f);                                                                                  \
        if ((call) < 0) {                                                                          \
            store_rollback((f)->st);                                                               \
            fail_msg("%s: %s", #call, (f)->err.msg);                                               \
        }                                                                                          \
        COMMIT(f);                                                                                 \
    } while (0)

/* Run a write verb expected to fail with code, inside a transaction then rolled back. */
#define TX_FAILS(f, ecode, call)                                                                   \
    do {                                                                                           \
        BEGIN(f);                                                                                  \
        allot_error_clear(&(f)->err);                                                              \
        int rc_ = (call);                                                                          \
        store_rollback((f)->st);                                                                   \
        if (rc_ != -1)                                                                             \
            fail_msg("%s: succeeded, expected %s", #call, allot_errname(ecode));                   \
        if ((f)->err.code != (ecode))                                                              \
            fail_msg("%s: got %s (%s), expected %s", #call, allot_errname((f)->err.code),          \
                     (f)->err.msg, allot_errname(ecode));                                          \
    } while (0)

static inline struct account fx_account(const char *name, const char *parent)
{
    struct account a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "%s", name);
    snprintf(a.parent, sizeof a.parent, "%s", parent);
    a.shares = 1;
    return a;
}

static inline struct allocation fx_alloc(const char *account, const char *resource,
                                         const char *cluster, int64_t start_s, int64_t end_s)
{
    struct allocation a;
    memset(&a, 0, sizeof a);
    snprintf(a.account, sizeof a.account, "%s", account);
    snprintf(a.resource, sizeof a.resource, "%s", resource);
    snprintf(a.cluster, sizeof a.cluster, "%s", cluster);
    a.start_s = start_s;
    a.end_s = end_s;
    return a;
}

/* Add account (under parent), return its id. */
static inline int64_t fx_add_account(struct fx *f, const char *name, const char *parent)
{
    struct account a = fx_account(name, parent);
    TX(f, store_account_add(f->st, &a, &f->err));
    return a.id;
}

/* Add an allocation and credit it with amount (if > 0); returns its id. */
static inline int64_t fx_add_alloc(struct fx *f, const char *account, const char *resource,
                                   const char *cluster, int64_t start_s, int64_t end_s,
                                   int64_t amount)
{
    struct allocation a = fx_alloc(account, resource, cluster, start_s, end_s);
    BEGIN(f);
    OK(f, store_alloc_add(f->st, &a, &f->err));
    if (amount > 0) {
        struct ledger_entry e;
        int replay;
        memset(&e, 0, sizeof e);
        e.alloc_id = a.id;
        e.kind = LEDGER_CREDIT;
        e.amount_sumin = amount;
        e.time_s = start_s;
        OK(f, store_credit(f->st, &e, &replay, &f->err));
    }
    COMMIT(f);
    return a.id;
}

static inline int fx_count_cb(const struct ledger_entry *e, void *arg)
{
    (void)e;
    (*(int *)arg)++;
    return 0;
}

/* Number of ledger entries in the database. */
static inline int fx_ledger_rows(struct fx *f)
{
    int n = 0;
    struct ledger_filter lf = {0};
    OK(f, store_ledger_list(f->st, &lf, fx_count_cb, &n, &f->err));
    return n;
}

/* Offer every op to store_job_batch (its own transaction), as allotd's writer does, then
 * run the verb of each op it did not take in one transaction.  Every op must be one the
 * batch takes on PostgreSQL (done = 1) and none on SQLite (done = 0). */
static inline void fx_job_batch_all(struct fx *f, struct store_job_op *ops, int n)
{
    OK(f, store_job_batch(f->st, ops, n, &f->err));
    BEGIN(f);
    for (int k = 0; k < n; k++) {
        assert_int_equal(ops[k].done, f->pg_schema[0] ? 1 : 0);
        if (ops[k].done)
            continue;
        if (ops[k].hold)
            OK(f, store_hold(f->st, ops[k].hold, ops[k].hold_res, &f->err));
        else
            OK(f, store_settle(f->st, ops[k].settle, ops[k].settle_res, &f->err));
    }
    COMMIT(f);
}

static inline void fx_problem_print(const char *problem, void *arg)
{
    (void)arg;
    fprintf(stderr, "# check: %s\n", problem);
}

/* One integer that SQL reads from the fixture's SQLite file, bypassing the store. */
static inline int64_t fx_sqlite_int(const struct fx *f, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

/* store_check must pass. */
static inline void fx_check_clean(struct fx *f)
{
    int n = store_check(f->st, fx_problem_print, NULL, &f->err);
    if (n != 0)
        fail_msg("store_check: %d problems (%s)", n, n < 0 ? f->err.msg : "see above");
}

/* A hold of job_id for alice on account chem, partition and resource cpu of cluster c1:
 * amount SU-minutes, starting at now_s with time_limit_s, billing 1, filed by "slurm".  A
 * test sets what its case changes. */
static inline struct hold_req fx_hold_req(int64_t job_id, int64_t amount, int64_t now_s,
                                          int64_t time_limit_s)
{
    struct hold_req r;
    memset(&r, 0, sizeof r);
    snprintf(r.cluster, sizeof r.cluster, "c1");
    r.job_id = job_id;
    snprintf(r.user, sizeof r.user, "alice");
    snprintf(r.account, sizeof r.account, "chem");
    snprintf(r.partition, sizeof r.partition, "cpu");
    snprintf(r.resource, sizeof r.resource, "cpu");
    r.start_s = now_s;
    r.time_limit_s = time_limit_s;
    r.billing_micro = 1000000;
    r.amount_sumin = amount;
    snprintf(r.actor, sizeof r.actor, "slurm");
    r.now_s = now_s;
    return r;
}

/* The settle of job_id on cluster c1 that started at start_s and ran elapsed_s, ending in
 * Slurm state `state`, priced by the store (charge -1), reported by source as "slurm" at its
 * end.  A test sets what its case changes. */
static inline struct settle_req fx_settle_req(int64_t job_id, int64_t start_s, int64_t elapsed_s,
                                              const char *state, const char *source)
{
    struct settle_req r;
    memset(&r, 0, sizeof r);
    snprintf(r.cluster, sizeof r.cluster, "c1");
    r.job_id = job_id;
    r.start_s = start_s;
    r.end_s = start_s + elapsed_s;
    r.elapsed_s = elapsed_s;
    snprintf(r.slurm_state, sizeof r.slurm_state, "%s", state);
    r.charge_sumin = -1;
    snprintf(r.settle_source, sizeof r.settle_source, "%s", source);
    snprintf(r.actor, sizeof r.actor, "slurm");
    r.now_s = start_s + elapsed_s;
    return r;
}

#endif
