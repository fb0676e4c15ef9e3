/* SPDX-License-Identifier: GPL-3.0-or-later */
/* rollover_bench.c - cost of period boundaries (doc/design.md §5) for many policies through store.h
 * on an SQLite file: N accounts, each with one allocation and one monthly policy, then
 *   open      the first period (credit, reset/limit commands, marker) for all N,
 *   boundary  the July -> August boundary (expire, carry, credit, 2 commands, marker),
 *   replay    the same boundary again (the marker compare finds nothing to do),
 *   evaluate  a threshold evaluation of every policy (the tick's steady state),
 * each grouped `batch` policies per transaction with one savepoint per policy (as allotd's
 * writer does), not durable; then the September boundary for the first `sample` policies
 * durable with one policy per transaction (what the tick does today: one writer op each).
 * Prints numbers; asserts nothing (STYLE §4 "Bench").
 *
 * usage: rollover_bench [policies (default 100000)] [batch (default 64)] [directory (/tmp)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libcore/carryover.h"
#include "libstore/store.h"
#include "host_cond.h"

/* 2030-01-01, 2030-07-15T12:00Z, 2030-08-01T00:00:05Z, 2030-08-02, 2030-09-01T00:00:05Z */
#define T_2030 INT64_C(1893456000)
#define T_JUL15 INT64_C(1910347200)
#define T_AUG1 INT64_C(1911772805)
#define T_AUG2 INT64_C(1911859200)
#define T_SEP1 INT64_C(1914451205)

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const struct allot_error *err)
{
    fprintf(stderr, "rollover_bench: %s: %s\n", what, err->msg);
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

static void setup(store_t *st, int n, int64_t *ids)
{
    struct allot_error err;
    if (store_upgrade(st, &err) < 0 || store_begin(st, &err) < 0 ||
        store_cluster_add(st, "c1", &err) < 0)
        die("setup", &err);
    for (int i = 0; i < n; i++) {
        struct account a;
        struct allocation al;
        struct policy p;
        memset(&a, 0, sizeof a);
        snprintf(a.name, sizeof a.name, "a%d", i);
        snprintf(a.parent, sizeof a.parent, "root");
        a.shares = 1;
        memset(&al, 0, sizeof al);
        snprintf(al.account, sizeof al.account, "a%d", i);
        snprintf(al.resource, sizeof al.resource, "cpu");
        snprintf(al.cluster, sizeof al.cluster, "c1");
        al.start_s = T_2030;
        al.end_s = T_2030 + 400 * INT64_C(86400);
        memset(&p, 0, sizeof p);
        snprintf(p.cluster, sizeof p.cluster, "c1");
        snprintf(p.period_kind, sizeof p.period_kind, "month");
        p.base_sumin = 60000;
        p.carryover = 1;
        p.carry_factor_ppm = CARRYOVER_DEFAULT_FACTOR_PPM;
        p.grace_ppm = CARRYOVER_DEFAULT_GRACE_PPM;
        p.notify_ppm = CARRYOVER_DEFAULT_NOTIFY_PPM;
        p.downscale_ppm = CARRYOVER_DEFAULT_DOWNSCALE_PPM;
        p.reset_raw_usage = 1;
        snprintf(p.limit_type, sizeof p.limit_type, "GrpTRESMins");
        p.fairshare = -1;
        if (store_account_add(st, &a, &err) < 0 || store_alloc_add(st, &al, &err) < 0)
            die("account/allocation", &err);
        p.alloc_id = al.id;
        if (store_policy_add(st, &p, &err) < 0)
            die("policy add", &err);
        ids[i] = p.id;
        if ((i + 1) % 1000 == 0 && (store_commit(st, &err) < 0 || store_begin(st, &err) < 0))
            die("commit", &err);
    }
    if (store_commit(st, &err) < 0)
        die("commit", &err);
}

enum op { OP_ROLL, OP_EVAL };

/* One pass over ids[0..n): returns seconds; *work counts rolls that did something. */
static double pass(store_t *st, const int64_t *ids, int n, int batch, enum op op, int64_t now,
                   long *work)
{
    struct allot_error err;
    double t0 = mono_s();
    *work = 0;
    for (int i = 0; i < n; i += batch) {
        if (store_begin(st, &err) < 0)
            die("begin", &err);
        for (int j = i; j < n && j < i + batch; j++) {
            if (store_savepoint(st, &err) < 0)
                die("savepoint", &err);
            if (op == OP_ROLL) {
                struct policy_roll r;
                if (store_policy_roll(st, ids[j], now, NULL, "bench", &r, &err) < 0)
                    die("roll", &err);
                *work += r.rolled;
            } else {
                struct policy_eval e;
                if (store_policy_evaluate(st, ids[j], now, NULL, "bench", &e, &err) < 0)
                    die("evaluate", &err);
                *work += e.roll.rolled;
            }
            if (store_savepoint_release(st, &err) < 0)
                die("release", &err);
        }
        if (store_commit(st, &err) < 0)
            die("commit", &err);
    }
    return mono_s() - t0;
}

static void report(const char *what, int n, int batch, int durable, double s, long work)
{
    printf("%-9s policies=%-7d batch=%-3d durable=%d  %8.2f s  %9.0f policies/s  "
           "%7.1f us/policy  (did work: %ld)\n",
           what, n, batch, durable, s, n / s, s * 1e6 / n, work);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int batch = argc > 2 ? atoi(argv[2]) : 64;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    int sample = n < 2000 ? n : 2000;
    if (n < 1 || batch < 1) {
        fprintf(stderr, "usage: rollover_bench [policies] [batch] [directory]\n");
        return 2;
    }
    (void)host_cond_print(stdout, dir); /* the floors this host gives, first */
    char path[512];
    snprintf(path, sizeof path, "%s/rollover_bench.%d.db", dir, (int)getpid());
    int64_t *ids = calloc((size_t)n, sizeof *ids);
    if (!ids)
        return 1;
    store_t *st = open_bank(path, 0);
    double t0 = mono_s();
    setup(st, n, ids);
    printf("setup     %d accounts + allocations + policies in %.2f s\n", n, mono_s() - t0);
    long work;
    double s = pass(st, ids, n, batch, OP_ROLL, T_JUL15, &work);
    report("open", n, batch, 0, s, work);
    s = pass(st, ids, n, batch, OP_ROLL, T_AUG1, &work);
    report("boundary", n, batch, 0, s, work);
    s = pass(st, ids, n, batch, OP_ROLL, T_AUG1, &work);
    report("replay", n, batch, 0, s, work);
    s = pass(st, ids, n, batch, OP_EVAL, T_AUG2, &work);
    report("evaluate", n, batch, 0, s, work);
    store_close(st);
    st = open_bank(path, 1);
    s = pass(st, ids, sample, 1, OP_ROLL, T_SEP1, &work);
    report("boundary", sample, 1, 1, s, work);
    store_close(st);
    free(ids);
    char p2[600];
    unlink(path);
    snprintf(p2, sizeof p2, "%s-wal", path);
    unlink(p2);
    snprintf(p2, sizeof p2, "%s-shm", path);
    unlink(p2);
    return 0;
}
