/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_faults.c - storage fault loops over a representative bank workload (STYLE §4,
 * after SQLite's faultsimConfig loops).
 *
 * The workload (accounts, allocation + grant, credit, holds, settle, release, NODE_FAIL,
 * a refused hold, and a writer-style group commit with one savepoint per request) runs
 * against a fresh SQLite file once per N = 1, 2, ... with the Nth storage call failing,
 * until a run hits no fault.  Each mode is a loop:
 *   db-once, db-persist      store_fault_arm: the Nth driver call fails with EIO/EUNAVAIL
 *   write-ioerr, write-full  shim VFS: the Nth write fails (SQLITE_IOERR_WRITE, SQLITE_FULL)
 *   sync-ioerr               shim VFS: the Nth fsync fails (durable commits)
 *   write-persist            shim VFS: every write from the Nth on fails (disk gone)
 * For every operation that fails the test asserts: the error is clean (an I/O-class code and
 * a message), and the bank state read back is exactly the state before the operation (it
 * happened not at all).  The client then retries the operation, as allotd's clients do with
 * their idempotency keys and job ids; in persistent modes the fault is lifted first (the disk
 * comes back) and the connection reopened.  At the end the state must equal a fault-free
 * run's, byte for byte (each operation happened exactly once) and store_check must pass.
 * The loops use SQLite files (the VFS layer is SQLite's; the db layer is backend-neutral).
 * Usage: store_faults [MODE]  (one mode only; default all).
 *
 * Prints one line per mode (runs, faults hit) and "ok"/"not ok"; exits 1 on any failure.
 */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libstore/store.h"
#include "libstore/store_fault.h"

#define DAY 86400
#define T0 1767225600 /* 2026-01-01T00:00:00Z */
#define MAX_RUNS 5000 /* far above the workload's call count: a loop that never ends is a bug */
#define STATE_MAX 65536

static int failures;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("# FAIL: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    failures++;
}

/* ---- state summary: everything a client can observe, without row ids ---- */

struct sbuf {
    char s[STATE_MAX];
    size_t n;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (b->n < sizeof b->s) {
        int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
        if (k > 0)
            b->n += (size_t)k;
    }
    va_end(ap);
}

static int sum_account(const struct account *a, void *arg)
{
    sb_add(arg, "account %s parent=%s\n", a->name, a->parent);
    return 0;
}
static int sum_alloc(const struct allocation *a, const struct balance *bal, void *arg)
{
    sb_add(arg, "alloc %s/%s/%s granted=%lld used=%lld held=%lld avail=%lld\n", a->account,
           a->resource, a->cluster, (long long)bal->granted_sumin, (long long)bal->used_sumin,
           (long long)bal->held_sumin, (long long)bal->available_sumin);
    return 0;
}
static int sum_ledger(const struct ledger_entry *e, void *arg)
{
    sb_add(arg, "ledger %s %lld job=%s:%lld.%d key=%s\n", model_ledger_kind_name(e->kind),
           (long long)e->amount_sumin, e->cluster, (long long)e->job_id, e->run, e->idem_key);
    return 0;
}
static int sum_job(const struct job *j, void *arg)
{
    sb_add(arg, "job %s:%lld.%d %s hold=%lld charge=%lld\n", j->cluster, (long long)j->job_id,
           j->run, model_job_status_name(j->status), (long long)j->hold_sumin,
           (long long)j->charge_sumin);
    return 0;
}
static int sum_failure(const struct failure *f, void *arg)
{
    sb_add(arg, "failure %lld %s needed=%lld\n", (long long)f->job_id, f->stage,
           (long long)f->needed_sumin);
    return 0;
}

/* Read the whole observable state; -1 when a read fails. */
static int summarize(store_t *st, struct sbuf *b, struct allot_error *err)
{
    b->n = 0;
    b->s[0] = '\0';
    struct alloc_filter af = {0};
    struct ledger_filter lf = {0};
    struct job_filter jf = {.status = -1};
    struct failure_filter ff = {0};
    if (store_account_list(st, sum_account, b, err) < 0 ||
        store_alloc_list(st, &af, sum_alloc, b, err) < 0 ||
        store_ledger_list(st, &lf, sum_ledger, b, err) < 0 ||
        store_job_list(st, &jf, sum_job, b, err) < 0 ||
        store_failure_list(st, &ff, sum_failure, b, err) < 0)
        return -1;
    return 0;
}

/* ---- the workload: one transaction per step, as allotd's writer runs them ---- */

static struct hold_req hold_req(int64_t job_id, int64_t amount)
{
    struct hold_req r;
    memset(&r, 0, sizeof r);
    snprintf(r.cluster, sizeof r.cluster, "c1");
    r.job_id = job_id;
    snprintf(r.user, sizeof r.user, "alice");
    snprintf(r.account, sizeof r.account, "chem");
    snprintf(r.partition, sizeof r.partition, "cpu");
    snprintf(r.qos, sizeof r.qos, "normal");
    snprintf(r.resource, sizeof r.resource, "cpu");
    r.submit_s = T0 + 100;
    r.start_s = T0 + 200;
    r.time_limit_s = 3600;
    r.billing_micro = 1000000;
    r.amount_sumin = amount;
    snprintf(r.req_tres, sizeof r.req_tres, "cpu=1,mem=1G,node=1");
    snprintf(r.alloc_tres, sizeof r.alloc_tres, "cpu=1,mem=1G,node=1");
    snprintf(r.actor, sizeof r.actor, "slurm");
    r.now_s = T0 + 200;
    return r;
}

static struct settle_req settle_req(int64_t job_id, int64_t elapsed_s, const char *state)
{
    struct settle_req r;
    memset(&r, 0, sizeof r);
    snprintf(r.cluster, sizeof r.cluster, "c1");
    r.job_id = job_id;
    r.start_s = T0 + 200;
    r.end_s = T0 + 200 + elapsed_s;
    r.elapsed_s = elapsed_s;
    snprintf(r.slurm_state, sizeof r.slurm_state, "%s", state);
    r.charge_sumin = -1;
    snprintf(r.settle_source, sizeof r.settle_source, "epilog");
    snprintf(r.actor, sizeof r.actor, "slurm");
    r.now_s = T0 + 200 + elapsed_s;
    return r;
}

static int w_account(store_t *st, const char *name, const char *parent, struct allot_error *err)
{
    struct account a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "%s", name);
    snprintf(a.parent, sizeof a.parent, "%s", parent);
    a.shares = 1;
    return store_account_add(st, &a, err);
}

static int find_alloc_cb(const struct allocation *a, const struct balance *b, void *arg)
{
    (void)b;
    *(int64_t *)arg = a->id;
    return 0;
}

/* The allocation id of chem/cpu (0 when none). */
static int chem_alloc(store_t *st, int64_t *id, struct allot_error *err)
{
    struct alloc_filter af = {.account = "chem", .resource = "cpu"};
    *id = 0;
    return store_alloc_list(st, &af, find_alloc_cb, id, err);
}

static int w_credit(store_t *st, int64_t amount, const char *key, struct allot_error *err)
{
    int64_t id;
    if (chem_alloc(st, &id, err) < 0)
        return -1;
    struct ledger_entry e;
    int replay;
    memset(&e, 0, sizeof e);
    e.alloc_id = id;
    e.kind = LEDGER_CREDIT;
    e.amount_sumin = amount;
    e.time_s = T0;
    snprintf(e.actor, sizeof e.actor, "admin");
    snprintf(e.idem_key, sizeof e.idem_key, "%s", key);
    return store_credit(st, &e, &replay, err);
}

static int w_hold(store_t *st, int64_t job, int64_t amount, struct allot_error *err)
{
    struct hold_req r = hold_req(job, amount);
    struct hold_result res;
    return store_hold(st, &r, &res, err);
}

static int w_settle(store_t *st, int64_t job, int64_t elapsed_s, const char *state,
                    struct allot_error *err)
{
    struct settle_req r = settle_req(job, elapsed_s, state);
    struct settle_result res;
    return store_settle(st, &r, &res, err);
}

/* Step k of the workload inside the caller's transaction; -1 past the end. */
static int step_body(store_t *st, int k, struct allot_error *err)
{
    switch (k) {
    case 0:
        return w_account(st, "science", "root", err);
    case 1:
        return w_account(st, "chem", "science", err);
    case 2: {
        struct allocation a;
        memset(&a, 0, sizeof a);
        snprintf(a.account, sizeof a.account, "chem");
        snprintf(a.resource, sizeof a.resource, "cpu");
        a.start_s = T0;
        a.end_s = T0 + 30 * DAY;
        if (store_alloc_add(st, &a, err) < 0)
            return -1;
        return w_credit(st, 1000 * 60, "grant-1", err);
    }
    case 3:
        return w_credit(st, 50 * 60, "topup-1", err);
    case 4:
        return w_hold(st, 1, 120 * 60, err);
    case 5:
        return w_hold(st, 2, 60 * 60, err);
    case 6:
        return w_settle(st, 1, 1800, "COMPLETED", err);
    case 7: {
        struct settle_result res;
        return store_release(st, "c1", 2, 0, "slurm", "never started", T0 + 300, &res, err);
    }
    case 8:
        if (w_hold(st, 3, 30 * 60, err) < 0)
            return -1;
        return w_settle(st, 3, 600, "NODE_FAIL", err);
    case 9: /* refused: more than is available; an outcome, written like any other */
        return w_hold(st, 5, 100000 * 60, err);
    default:
        return -1;
    }
}
#define STEPS 10

/* Group commit as allotd's writer does it: requests in savepoints, one commit. */
static int step_group(store_t *st, struct allot_error *err)
{
    if (store_savepoint(st, err) < 0)
        return -1;
    if (w_hold(st, 4, 10 * 60, err) < 0 || store_savepoint_release(st, err) < 0) {
        store_savepoint_rollback(st);
        return -1;
    }
    if (store_savepoint(st, err) < 0)
        return -1;
    if (w_settle(st, 4, 120, "COMPLETED", err) < 0 || store_savepoint_release(st, err) < 0) {
        store_savepoint_rollback(st);
        return -1;
    }
    return 0;
}
#define ALL_STEPS (STEPS + 1)

static int run_step(store_t *st, int k, struct allot_error *err)
{
    if (store_begin(st, err) < 0)
        return -1;
    int rc = k < STEPS ? step_body(st, k, err) : step_group(st, err);
    if (rc < 0) {
        store_rollback(st);
        return -1;
    }
    return store_commit(st, err);
}

/* ---- one run with a fault plan ---- */

enum mode_kind { M_DB, M_VFS };
struct mode {
    const char *name;
    enum mode_kind kind;
    int persistent;
    enum allot_errnum db_code;   /* M_DB */
    enum store_fault_io io_what; /* M_VFS */
    int io_code;
    int durable;
};

struct bank {
    char dir[64];
    char path[128];
};

static void bank_remove(struct bank *b)
{
    char p[160];
    unlink(b->path);
    snprintf(p, sizeof p, "%s-wal", b->path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", b->path);
    unlink(p);
}

static store_t *bank_open(struct bank *b, int durable, struct allot_error *err)
{
    struct store_config cfg = {.backend = "sqlite", .target = b->path, .durable = durable};
    return store_open(&cfg, err);
}

/* A fresh, upgraded bank file (no faults armed). */
static int bank_fresh(struct bank *b, struct allot_error *err)
{
    bank_remove(b);
    store_t *st = bank_open(b, 0, err);
    if (!st)
        return -1;
    int rc = store_upgrade(st, err);
    store_close(st);
    return rc;
}

static void arm(const struct mode *m, store_t *st, long n)
{
    struct allot_error err = {0};
    if (m->kind == M_DB) {
        if (store_fault_arm(st, n, m->persistent, m->db_code, &err) < 0)
            problem("store_fault_arm: %s", err.msg);
    } else {
        store_fault_vfs_arm(m->io_what, n, m->persistent, m->io_code);
    }
}

static long hits(const struct mode *m)
{
    return m->kind == M_DB ? store_fault_hits() : store_fault_vfs_hits();
}

/* Faults injected in this run, summed over each arm..disarm span. */
static long run_hits;

static void disarm(const struct mode *m, store_t *st)
{
    run_hits += hits(m);
    if (m->kind == M_DB)
        store_fault_disarm(st);
    else
        store_fault_vfs_arm(m->io_what, 0, 0, 0);
}

/* Bookkeeping reads are not part of the workload: the db layer neither counts nor fails them
 * (the VFS plan needs nothing: reads neither write nor sync). */
static void suspend(const struct mode *m, int on)
{
    if (m->kind == M_DB)
        store_fault_suspend(on);
}

static int clean_code(enum allot_errnum c)
{
    return c == ALLOT_EIO || c == ALLOT_EUNAVAIL;
}

/* Run the workload with fault plan n (0 = none).  Returns the faults injected, or -1 when the
 * run could not go on.
 * final: the state after the run, for comparison with the fault-free one. */
static long run_once(const struct mode *m, struct bank *b, long n, struct sbuf *final)
{
    struct allot_error err = {0};
    static struct sbuf before, after;
    run_hits = 0;
    if (bank_fresh(b, &err) < 0) {
        problem("%s N=%ld: fresh bank: %s", m->name, n, err.msg);
        return -1;
    }
    store_t *st = bank_open(b, m->durable, &err);
    if (!st) {
        problem("%s N=%ld: open: %s", m->name, n, err.msg);
        return -1;
    }
    if (n > 0)
        arm(m, st, n);
    for (int k = 0; k < ALL_STEPS; k++) {
        suspend(m, 1);
        int rs = summarize(st, &before, &err);
        suspend(m, 0);
        if (rs < 0) {
            problem("%s N=%ld step %d: reading state: %s", m->name, n, k, err.msg);
            break;
        }
        allot_error_clear(&err);
        long h0 = hits(m);
        int rc = run_step(st, k, &err);
        if (rc == 0) {
            if (hits(m) != h0 && m->kind == M_DB)
                problem("%s N=%ld step %d: a fault was injected but the step succeeded", m->name, n,
                        k);
            continue;
        }
        /* The step failed: it must be our fault, clean, and have changed nothing. */
        if (hits(m) == h0) {
            problem("%s N=%ld step %d: failed without an injected fault: %s (%s)", m->name, n, k,
                    allot_errname(err.code), err.msg);
            break;
        }
        if (!clean_code(err.code) || !err.msg[0])
            problem("%s N=%ld step %d: unclean error %s (%s)", m->name, n, k,
                    allot_errname(err.code), err.msg);
        if (m->persistent) {
            /* The disk comes back: lift the fault, reopen, verify, retry. */
            disarm(m, st);
            store_close(st);
            st = bank_open(b, m->durable, &err);
            if (!st) {
                problem("%s N=%ld step %d: reopen: %s", m->name, n, k, err.msg);
                return -1;
            }
        }
        suspend(m, 1);
        rs = summarize(st, &after, &err);
        suspend(m, 0);
        if (rs < 0) {
            problem("%s N=%ld step %d: reading state after the fault: %s", m->name, n, k, err.msg);
            break;
        }
        if (strcmp(before.s, after.s) != 0)
            problem(
                "%s N=%ld step %d: a failed step changed the bank:\n--- before\n%s--- after\n%s",
                m->name, n, k, before.s, after.s);
        /* The client retries; a once-fault has fired, a persistent one was lifted. */
        allot_error_clear(&err);
        if (run_step(st, k, &err) < 0) {
            problem("%s N=%ld step %d: retry failed: %s (%s)", m->name, n, k,
                    allot_errname(err.code), err.msg);
            break;
        }
    }
    disarm(m, st);
    if (summarize(st, final, &err) < 0)
        problem("%s N=%ld: final state: %s", m->name, n, err.msg);
    store_close(st);
    /* A fresh connection must see a consistent bank, equal to what the writer saw. */
    st = bank_open(b, 0, &err);
    if (!st) {
        problem("%s N=%ld: reopen for check: %s", m->name, n, err.msg);
        return -1;
    }
    static struct sbuf reread;
    if (summarize(st, &reread, &err) < 0)
        problem("%s N=%ld: re-read: %s", m->name, n, err.msg);
    else if (strcmp(reread.s, final->s) != 0)
        problem("%s N=%ld: a new connection sees another state", m->name, n);
    int np = store_check(st, NULL, NULL, &err);
    if (np != 0)
        problem("%s N=%ld: store_check: %d problems %s", m->name, n, np, np < 0 ? err.msg : "");
    store_close(st);
    return run_hits;
}

static const struct mode modes[] = {
    {"db-once-eio", M_DB, 0, ALLOT_EIO, 0, 0, 0},
    {"db-once-eunavail", M_DB, 0, ALLOT_EUNAVAIL, 0, 0, 0},
    {"db-persist-eio", M_DB, 1, ALLOT_EIO, 0, 0, 0},
    {"write-ioerr", M_VFS, 0, 0, STORE_FAULT_WRITE, SQLITE_IOERR_WRITE, 1},
    {"write-full", M_VFS, 0, 0, STORE_FAULT_WRITE, SQLITE_FULL, 1},
    {"sync-ioerr", M_VFS, 0, 0, STORE_FAULT_SYNC, SQLITE_IOERR_FSYNC, 1},
    {"write-persist", M_VFS, 1, 0, STORE_FAULT_WRITE, SQLITE_IOERR_WRITE, 1},
    {"sync-persist", M_VFS, 1, 0, STORE_FAULT_SYNC, SQLITE_IOERR_FSYNC, 1},
};

int main(int argc, char **argv)
{
    struct allot_error err = {0};
    static struct bank b;
    static struct sbuf ref, got;
    const char *only = argc > 1 ? argv[1] : NULL;

    if (store_fault_vfs_install(&err) < 0) {
        printf("not ok - %s\n", err.msg);
        return 1;
    }
    snprintf(b.dir, sizeof b.dir, "/tmp/allot-fault-XXXXXX");
    if (!mkdtemp(b.dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(b.path, sizeof b.path, "%s/bank.db", b.dir);

    if (run_once(&modes[0], &b, 0, &ref) < 0 || failures) {
        printf("not ok - the fault-free workload fails\n");
        return 1;
    }
    int t = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        const struct mode *m = &modes[i];
        if (only && strcmp(only, m->name) != 0)
            continue;
        int before = failures;
        long n, faults = 0;
        for (n = 1; n <= MAX_RUNS; n++) {
            long h = run_once(m, &b, n, &got);
            if (h < 0)
                break;
            if (strcmp(got.s, ref.s) != 0) {
                problem("%s N=%ld: final state differs from the fault-free run:\n--- want\n%s"
                        "--- got\n%s",
                        m->name, n, ref.s, got.s);
            }
            if (failures > before + 5)
                break; /* enough to debug */
            if (h == 0)
                break; /* N is past the workload's last call */
            faults += h;
        }
        if (n > MAX_RUNS)
            problem("%s: still hitting faults after %d runs", m->name, MAX_RUNS);
        printf("%s %d - %s: %ld runs, %ld faults injected\n", failures == before ? "ok" : "not ok",
               ++t, m->name, n, faults);
        fflush(stdout);
    }
    printf("1..%d\n", t);
    bank_remove(&b);
    rmdir(b.dir);
    return failures ? 1 : 0;
}
