/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_bench.c - throughput of the storage hot path: hold+settle pairs through store.h on
 * an SQLite file, grouped 1, 16 and 64 pairs per transaction (as the daemon's group commit
 * does, each verb in its own savepoint), durable (synchronous=FULL) and not; plus the payer
 * lookup alone (a walk up a 5-deep account chain), and admission's counts of held runs
 * with HELD runs held (100 accounts, 200 users, one run in ten in QOS "long"), each count
 * read as allotd's readers read it: after another connection's commit, which empties the
 * reader's page cache.  Prints numbers; asserts nothing.
 *
 * usage: store_bench [pairs-per-run (default 2000)] [directory (default /tmp)] [held (50000)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libstore/store.h"
#include "host_cond.h"

#define T0 1767225600

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const struct allot_error *err)
{
    fprintf(stderr, "store_bench: %s: %s\n", what, err->msg);
    exit(1);
}

static store_t *open_bank(const char *path, int durable)
{
    struct allot_error err;
    struct store_config cfg = {.target = path, .durable = durable, .busy_timeout_ms = 10000};
    store_t *st = store_open(&cfg, &err);
    if (!st)
        die("open", &err);
    return st;
}

static void setup(const char *path)
{
    struct allot_error err;
    store_t *st = open_bank(path, 0);
    if (store_upgrade(st, &err) < 0 || store_begin(st, &err) < 0)
        die("setup", &err);
    const char *chain[] = {"l1", "l2", "l3", "l4", "l5"};
    const char *parent = "root";
    for (int i = 0; i < 5; i++) {
        struct account a;
        memset(&a, 0, sizeof a);
        snprintf(a.name, sizeof a.name, "%s", chain[i]);
        snprintf(a.parent, sizeof a.parent, "%s", parent);
        a.shares = 1;
        if (store_account_add(st, &a, &err) < 0)
            die("account add", &err);
        parent = chain[i];
    }
    struct allocation al;
    memset(&al, 0, sizeof al);
    snprintf(al.account, sizeof al.account, "l1");
    snprintf(al.resource, sizeof al.resource, "cpu");
    al.start_s = T0;
    al.end_s = T0 + 365 * 86400;
    if (store_alloc_add(st, &al, &err) < 0)
        die("alloc add", &err);
    struct ledger_entry e;
    int replay;
    memset(&e, 0, sizeof e);
    e.alloc_id = al.id;
    e.kind = LEDGER_CREDIT;
    e.amount_sumin = INT64_C(100000000000);
    e.time_s = T0;
    if (store_credit(st, &e, &replay, &err) < 0 || store_commit(st, &err) < 0)
        die("credit", &err);
    store_close(st);
}

static void run(const char *path, int durable, int batch, int pairs, int64_t *next_job)
{
    struct allot_error err;
    store_t *st = open_bank(path, durable);
    struct hold_req h;
    struct settle_req s;
    struct hold_result hr;
    struct settle_result sr;
    memset(&h, 0, sizeof h);
    memset(&s, 0, sizeof s);
    snprintf(h.cluster, sizeof h.cluster, "c1");
    snprintf(h.user, sizeof h.user, "alice");
    snprintf(h.account, sizeof h.account, "l5"); /* paid by l1, four levels up */
    snprintf(h.partition, sizeof h.partition, "cpu");
    snprintf(h.resource, sizeof h.resource, "cpu");
    snprintf(h.actor, sizeof h.actor, "slurm");
    h.start_s = T0 + 100;
    h.billing_micro = 4000000;
    h.time_limit_s = 3600;
    h.amount_sumin = 240;
    h.now_s = T0 + 100;
    memcpy(s.cluster, h.cluster, sizeof s.cluster);
    s.start_s = T0 + 100;
    s.end_s = T0 + 1000;
    s.elapsed_s = 900;
    snprintf(s.slurm_state, sizeof s.slurm_state, "COMPLETED");
    s.charge_sumin = -1;
    snprintf(s.settle_source, sizeof s.settle_source, "epilog");
    s.now_s = T0 + 1000;

    double t0 = now_s();
    int done = 0;
    while (done < pairs) {
        if (store_begin(st, &err) < 0)
            die("begin", &err);
        for (int i = 0; i < batch && done < pairs; i++, done++) {
            h.job_id = s.job_id = ++*next_job;
            if (store_savepoint(st, &err) < 0 || store_hold(st, &h, &hr, &err) < 0 ||
                store_savepoint_release(st, &err) < 0)
                die("hold", &err);
            if (store_savepoint(st, &err) < 0 || store_settle(st, &s, &sr, &err) < 0 ||
                store_savepoint_release(st, &err) < 0)
                die("settle", &err);
            if (hr.refused)
                die("hold refused", &err);
        }
        if (store_commit(st, &err) < 0)
            die("commit", &err);
    }
    double dt = now_s() - t0;
    printf("durable=%d batch=%-3d pairs=%-6d %9.0f pairs/s  %8.1f us/pair\n", durable, batch, pairs,
           pairs / dt, dt * 1e6 / pairs);
    store_close(st);
}

static void payer_lookups(const char *path, const char *account, int n)
{
    struct allot_error err;
    store_t *st = open_bank(path, 0);
    struct allocation a;
    struct balance b;
    /* Inside one transaction, as on the hot path: measures the query, not SQLite's
     * per-transaction WAL locking. */
    if (store_begin(st, &err) < 0)
        die("begin", &err);
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        if (store_find_payer(st, account, "cpu", "c1", T0 + 100, &a, &b, &err) < 0)
            die("payer", &err);
    double dt = now_s() - t0;
    store_rollback(st);
    printf("payer lookup from %s: %9.0f lookups/s  %6.1f us/lookup\n", account, n / dt,
           dt * 1e6 / n);
    store_close(st);
}

/* Hold n runs (not settled) spread over 100 accounts below l1, 200 users and two QOS. */
static void hold_many(const char *path, int n, int64_t *next_job)
{
    struct allot_error err;
    store_t *st = open_bank(path, 0);
    if (store_begin(st, &err) < 0)
        die("begin", &err);
    for (int i = 0; i < 100; i++) {
        struct account a;
        memset(&a, 0, sizeof a);
        snprintf(a.name, sizeof a.name, "a%d", i);
        snprintf(a.parent, sizeof a.parent, "l1");
        a.shares = 1;
        if (store_account_add(st, &a, &err) < 0)
            die("account add", &err);
    }
    struct hold_req h;
    struct hold_result hr;
    memset(&h, 0, sizeof h);
    snprintf(h.cluster, sizeof h.cluster, "c1");
    snprintf(h.partition, sizeof h.partition, "cpu");
    snprintf(h.resource, sizeof h.resource, "cpu");
    snprintf(h.actor, sizeof h.actor, "slurm");
    h.start_s = h.now_s = T0 + 100;
    h.billing_micro = 1000000;
    h.time_limit_s = 60;
    h.amount_sumin = 1;
    for (int i = 0; i < n; i++) {
        h.job_id = ++*next_job;
        snprintf(h.account, sizeof h.account, "a%d", i % 100);
        snprintf(h.user, sizeof h.user, "u%d", i % 200);
        snprintf(h.qos, sizeof h.qos, "%s", i % 10 == 0 ? "long" : "normal");
        if (store_hold(st, &h, &hr, &err) < 0 || hr.refused)
            die("hold", &err);
    }
    if (store_commit(st, &err) < 0)
        die("commit", &err);
    store_close(st);
}

static void held_counts(const char *path, int held, int64_t *next_job)
{
    struct allot_error err;
    hold_many(path, held, next_job);
    store_t *rd = open_bank(path, 0), *wr = open_bank(path, 0);
    static const char *const what[] = {
        "all of the cluster",     "an account's", "a user's",
        "l1 and below (subtree)", "QOS long",     "QOS long, a user's",
        "QOS long, an account's", "QOS normal",
    };
    enum { N = 8, ROUNDS = 20 };
    double total[N] = {0};
    int64_t count[N] = {0};
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < N; k++) {
            /* Another connection's commit: the reader's next transaction starts cold. */
            if (store_begin(wr, &err) < 0 || store_commit(wr, &err) < 0)
                die("writer commit", &err);
            double t0 = now_s();
            int rc = 0;
            const char *c = "c1";
            int64_t *n = &count[k];
            switch (k) {
            case 0:
                rc = store_job_count_held(rd, c, NULL, NULL, n, &err);
                break;
            case 1:
                rc = store_job_count_held(rd, c, "a7", NULL, n, &err);
                break;
            case 2:
                rc = store_job_count_held(rd, c, NULL, "u7", n, &err);
                break;
            case 3:
                rc = store_job_count_held_subtree(rd, c, "l1", n, &err);
                break;
            case 4:
                rc = store_job_count_held_qos(rd, c, "long", NULL, NULL, n, &err);
                break;
            case 5:
                rc = store_job_count_held_qos(rd, c, "long", "u10", NULL, n, &err);
                break;
            case 6:
                rc = store_job_count_held_qos(rd, c, "long", NULL, "a10", n, &err);
                break;
            default:
                rc = store_job_count_held_qos(rd, c, "normal", NULL, NULL, n, &err);
                break;
            }
            if (rc < 0)
                die("count", &err);
            total[k] += now_s() - t0;
        }
    }
    for (int k = 0; k < N; k++)
        printf("held count, %d held: %-24s %7lld runs %9.1f us/count\n", held, what[k],
               (long long)count[k], total[k] * 1e6 / ROUNDS);
    store_close(rd);
    store_close(wr);
}

int main(int argc, char **argv)
{
    int pairs = argc > 1 ? atoi(argv[1]) : 2000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    int held = argc > 3 ? atoi(argv[3]) : 50000;
    if (pairs <= 0 || held < 0) {
        fprintf(stderr, "usage: store_bench [pairs] [directory] [held]\n");
        return 2;
    }
    (void)host_cond_print(stdout, dir); /* the floors this host gives, first */
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s/store_bench.%ld.db", dir, (long)getpid());
    setup(path);
    int64_t job = 0;
    const int batches[] = {1, 16, 64};
    for (int durable = 1; durable >= 0; durable--)
        for (int i = 0; i < 3; i++)
            run(path, durable, batches[i], durable && batches[i] == 1 ? pairs / 4 : pairs, &job);
    payer_lookups(path, "l1", 20000); /* the account's own allocation */
    payer_lookups(path, "l5", 20000); /* four levels up */
    if (held > 0)
        held_counts(path, held, &job);
    unlink(path);
    snprintf(tmp, sizeof tmp, "%s-wal", path);
    unlink(tmp);
    snprintf(tmp, sizeof tmp, "%s-shm", path);
    unlink(tmp);
    return 0;
}
