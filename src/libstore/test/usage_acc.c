/* SPDX-License-Identifier: GPL-3.0-or-later */
/* usage_acc.c - fair-share usage accumulators (store_usage_acc.c): kept by the verbs as runs
 * settle, they equal what a rebuild from the jobs gives after a random history of holds,
 * settles, post-paid settles, imports of older runs, voids, hold adjustments, batched
 * settles (PostgreSQL), usage clears and a scrub, on several associations and QOS; and
 * reading them costs the same number of rows with 10^4 or 10^6 jobs stored.
 *
 * Tolerance: both sides sum the same non-negative terms with libcore's decay (decay.h), in
 * settle order against (end, job, run) order; each is within (n + 3) * 2^-52 relative of
 * the exact sum of its n terms, so they differ by at most 2 (n + 3) * 2^-52 relative.  The
 * usage printed as sshare prints it (RawUsage truncated, the rest %f) must be identical. */
#include <math.h>

#include "store_test.h"

#define DAY 86400
#define T0 1767225600 /* 2026-01-01T00:00:00Z */

static const char *const accounts[] = {"chem", "phys", "bio"};
static const char *const users[] = {"alice", "bob", "carol", "dave"};
static const char *const qoses[] = {"normal", "high", ""};

/* Deterministic xorshift64: the same history on every run and backend. */
static uint64_t rnd_state;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}
static int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void bank(struct fx *f)
{
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    fx_add_account(f, "chem", "root");
    fx_add_account(f, "phys", "root");
    fx_add_account(f, "bio", "chem");
    for (int a = 0; a < 3; a++)
        fx_add_alloc(f, accounts[a], "cpu", "", T0 - 400 * DAY, T0 + 400 * DAY, 100000000);
}

struct held {
    int64_t job_id;
    int a, u, q;
};

static void hold(struct fx *f, int64_t id, int a, int u, int q, int64_t now, struct held *out)
{
    struct hold_req h;
    memset(&h, 0, sizeof h);
    snprintf(h.cluster, sizeof h.cluster, "c1");
    h.job_id = id;
    snprintf(h.user, sizeof h.user, "%s", users[u]);
    snprintf(h.account, sizeof h.account, "%s", accounts[a]);
    snprintf(h.partition, sizeof h.partition, "cpu");
    snprintf(h.qos, sizeof h.qos, "%s", qoses[q]);
    snprintf(h.resource, sizeof h.resource, "cpu");
    h.start_s = now;
    h.time_limit_s = 7200;
    h.billing_micro = rnd_in(1, 64) * 1000000 + rnd_in(0, 999999);
    h.amount_sumin = (h.billing_micro * h.time_limit_s + 59999999) / 60000000;
    snprintf(h.actor, sizeof h.actor, "slurm");
    h.now_s = now;
    struct hold_result r;
    TX(f, store_hold(f->st, &h, &r, &f->err));
    assert_false(r.refused);
    *out = (struct held){id, a, u, q};
}

static struct settle_req settle_req(int64_t id, int a, int u, int q, int64_t now)
{
    struct settle_req s;
    memset(&s, 0, sizeof s);
    snprintf(s.cluster, sizeof s.cluster, "c1");
    s.job_id = id;
    s.elapsed_s = rnd_in(1, 7000);
    s.end_s = now - rnd_in(0, 600);
    s.start_s = s.end_s - s.elapsed_s;
    snprintf(s.slurm_state, sizeof s.slurm_state, "COMPLETED");
    s.charge_sumin = -1;
    snprintf(s.settle_source, sizeof s.settle_source, "sacct");
    snprintf(s.user, sizeof s.user, "%s", users[u]);
    snprintf(s.account, sizeof s.account, "%s", accounts[a]);
    snprintf(s.partition, sizeof s.partition, "cpu");
    snprintf(s.qos, sizeof s.qos, "%s", qoses[q]);
    snprintf(s.resource, sizeof s.resource, "cpu");
    s.billing_micro = rnd_in(1, 64) * 1000000 + rnd_in(0, 999999);
    snprintf(s.actor, sizeof s.actor, "slurm");
    s.now_s = now;
    return s;
}

/* Settle held runs: on PostgreSQL through the batched statement (usage left pending), else
 * (and for what the batch leaves) one by one. */
static void settle_held(struct fx *f, struct held *h, int n, int64_t now)
{
    struct settle_req *req = calloc((size_t)n + 1, sizeof *req);
    struct settle_result *res = calloc((size_t)n + 1, sizeof *res);
    struct store_job_op *ops = calloc((size_t)n + 1, sizeof *ops);
    assert_non_null(req);
    assert_non_null(res);
    assert_non_null(ops);
    for (int i = 0; i < n; i++) {
        req[i] = settle_req(h[i].job_id, h[i].a, h[i].u, h[i].q, now);
        if (req[i].start_s < now - 7200)
            req[i].start_s = 0; /* keep the hold's start */
        ops[i] = (struct store_job_op){.settle = &req[i], .settle_res = &res[i]};
    }
    OK(f, store_job_batch(f->st, ops, n, &f->err));
    for (int i = 0; i < n; i++)
        if (!ops[i].done)
            TX(f, store_settle(f->st, &req[i], &res[i], &f->err));
    free(req);
    free(res);
    free(ops);
}

struct acc_list {
    struct usage_acc_row v[64];
    int n;
    struct store_usage_params p;
};

static int on_acc(const struct usage_acc_row *r, const struct store_usage_params *p, void *arg)
{
    struct acc_list *l = arg;
    assert_true(l->n < 64);
    l->v[l->n++] = *r;
    l->p = *p;
    return 0;
}

static int row_cmp(const void *a, const void *b)
{
    const struct usage_acc_row *x = a, *y = b;
    int c = strcmp(x->account, y->account);
    if (!c)
        c = strcmp(x->user, y->user);
    return c ? c : strcmp(x->qos, y->qos);
}

static void list(struct fx *f, const struct store_usage_params *p, int64_t now, struct acc_list *l)
{
    memset(l, 0, sizeof *l);
    OK(f, store_usage_acc_list(f->st, "c1", p, now, on_acc, l, &f->err));
    qsort(l->v, (size_t)l->n, sizeof l->v[0], row_cmp);
}

/* sshare's way of printing a usage: RawUsage truncated, the normalised values %f. */
static void printed(double v, double total, char *buf, size_t size)
{
    snprintf(buf, size, "%lld|%f", (long long)v, total > 0 ? v / total : 0.0);
}

/* The value of key k in l (0 when l has no row for it: a key whose runs were all cleared
 * may keep an empty row on one side and have none on the other). */
static double value_of(const struct acc_list *l, const struct usage_acc_row *k, int nodecay,
                       int64_t now)
{
    for (int i = 0; i < l->n; i++)
        if (!row_cmp(&l->v[i], k))
            return store_usage_acc_value(&l->v[i], &l->p, nodecay, now);
    return 0.0;
}

static void compare_into(const struct acc_list *a, const struct acc_list *b, int64_t runs,
                         int64_t now)
{
    double tol = 2.0 * (double)(runs + 3) * ldexp(1.0, -52);
    double ta = 0, tb = 0;
    for (int i = 0; i < a->n; i++)
        ta += store_usage_acc_value(&a->v[i], &a->p, 0, now);
    for (int i = 0; i < b->n; i++)
        tb += store_usage_acc_value(&b->v[i], &b->p, 0, now);
    for (int i = 0; i < a->n; i++) {
        for (int nodecay = 0; nodecay < 2; nodecay++) {
            double x = store_usage_acc_value(&a->v[i], &a->p, nodecay, now);
            double y = value_of(b, &a->v[i], nodecay, now);
            double m = fmax(fabs(x), fabs(y));
            if (fabs(x - y) > tol * m)
                fail_msg("%s/%s/%s nodecay=%d: %.17g against %.17g (tolerance %.3g)",
                         a->v[i].account, a->v[i].user, a->v[i].qos, nodecay, x, y, tol * m);
            char px[64], py[64];
            printed(x, nodecay ? 0 : ta, px, sizeof px);
            printed(y, nodecay ? 0 : tb, py, sizeof py);
            assert_string_equal(px, py);
        }
    }
}

/* Kept against rebuilt, both ways round (keys missing on one side count as 0). */
static void compare(const struct acc_list *kept, const struct acc_list *rebuilt, int64_t runs,
                    int64_t now)
{
    compare_into(kept, rebuilt, runs, now);
    compare_into(rebuilt, kept, runs, now);
}

static void history(struct fx *f, const struct store_usage_params *p, uint64_t seed)
{
    rnd_state = seed;
    bank(f);
    TX(f, store_usage_rebuild(f->st, p, T0 - 200 * DAY, NULL, &f->err));
    struct held h[16];
    int nh = 0;
    int64_t now = T0 - 120 * DAY, id = 1, runs = 0;
    for (int step = 0; step < 400; step++) {
        now += rnd_in(60, 6 * 3600) * 2; /* even seconds; clears happen at odd ones */
        int a = (int)rnd_in(0, 2), u = (int)rnd_in(0, 3), q = (int)rnd_in(0, 2);
        int64_t op = rnd_in(0, 99);
        struct settle_result r;
        if (op < 35 && nh < 16) {
            hold(f, id++, a, u, q, now, &h[nh++]);
        } else if (op < 55 && nh > 0) {
            int k = (int)rnd_in(1, nh);
            settle_held(f, h + nh - k, k, now);
            nh -= k;
            runs += k;
        } else if (op < 70) {
            struct settle_req s = settle_req(id++, a, u, q, now);
            TX(f, store_settle(f->st, &s, &r, &f->err));
            runs++;
        } else if (op < 80) {
            /* Older runs imported late: out of end order, some before a clear. */
            struct import_job v[4];
            memset(v, 0, sizeof v);
            for (int i = 0; i < 4; i++) {
                snprintf(v[i].cluster, sizeof v[i].cluster, "c1");
                v[i].job_id = 1000000 + id++;
                snprintf(v[i].user, sizeof v[i].user, "%s", users[rnd_in(0, 3)]);
                snprintf(v[i].account, sizeof v[i].account, "%s", accounts[rnd_in(0, 2)]);
                snprintf(v[i].partition, sizeof v[i].partition, "cpu");
                snprintf(v[i].qos, sizeof v[i].qos, "%s", qoses[rnd_in(0, 2)]);
                snprintf(v[i].resource, sizeof v[i].resource, "cpu");
                v[i].elapsed_s = rnd_in(1, 20000);
                v[i].end_s = now - rnd_in(0, 60 * DAY) * 2;
                v[i].start_s = v[i].end_s - v[i].elapsed_s;
                v[i].time_limit_s = 86400;
                snprintf(v[i].slurm_state, sizeof v[i].slurm_state, "COMPLETED");
                v[i].billing_micro = rnd_in(1, 32) * 1000000;
            }
            struct import_result ir;
            TX(f, store_job_import(f->st, v, 4, (int)(op & 1), "test", now, &ir, &f->err));
            assert_int_equal(ir.imported, 4);
            runs += 4;
        } else if (op < 86 && nh > 0) {
            struct hold_adjust_req q2 = {
                .job_id = h[nh - 1].job_id, .time_limit_s = 3600, .now_s = now};
            snprintf(q2.cluster, sizeof q2.cluster, "c1");
            snprintf(q2.actor, sizeof q2.actor, "slurm");
            struct hold_adjust_result ar;
            TX(f, store_hold_adjust(f->st, &q2, &ar, &f->err));
        } else if (op < 91 && nh > 0) {
            struct held *x = &h[--nh];
            struct void_req v;
            memset(&v, 0, sizeof v);
            snprintf(v.cluster, sizeof v.cluster, "c1");
            v.job_id = x->job_id;
            snprintf(v.user, sizeof v.user, "%s", users[x->u]);
            snprintf(v.account, sizeof v.account, "%s", accounts[x->a]);
            snprintf(v.actor, sizeof v.actor, "slurm");
            v.now_s = now;
            TX(f, store_void(f->st, &v, &r, &f->err));
        } else if (op < 94) {
            TX(f, store_usage_clear(f->st, "c1", accounts[a], op & 1 ? users[u] : "", now + 1,
                                    &f->err));
        } else if (op < 96) {
            TX(f, store_usage_fold(f->st, now, &f->err));
        }
    }
    struct acc_list kept, rebuilt;
    list(f, p, now, &kept);
    assert_true(kept.n > 20);
    int64_t rows = 0;
    TX(f, store_usage_rebuild(f->st, p, now, &rows, &f->err));
    list(f, p, now, &rebuilt);
    assert_int_equal(rows, rebuilt.n);
    compare(&kept, &rebuilt, runs, now);
    /* A scrub of the oldest runs, then more runs: the scrubbed accumulators are recomputed
     * from the runs that remain. */
    int64_t deleted = 0;
    TX(f, store_job_scrub(f->st, T0 - 60 * DAY, now, &deleted, &f->err));
    assert_true(deleted > 0);
    for (int i = 0; i < 20; i++) {
        now += 1200;
        struct settle_result r;
        struct settle_req s =
            settle_req(id++, (int)rnd_in(0, 2), (int)rnd_in(0, 3), (int)rnd_in(0, 2), now);
        TX(f, store_settle(f->st, &s, &r, &f->err));
    }
    list(f, p, now, &kept);
    TX(f, store_usage_rebuild(f->st, p, now, &rows, &f->err));
    list(f, p, now, &rebuilt);
    compare(&kept, &rebuilt, runs + 20, now);
    fx_check_clean(f);
}

static void test_random_history_decay(void **state)
{
    struct store_usage_params p = {.decay = {.halflife_s = 3 * DAY, .reset = DECAY_RESET_NONE}};
    history(*state, &p, 0x9e3779b97f4a7c15ull);
}

static void test_random_history_billing_reset(void **state)
{
    struct store_usage_params p = {.decay = {.halflife_s = 7 * DAY, .reset = DECAY_RESET_MONTHLY},
                                   .billing = 1};
    history(*state, &p, 0x2545f4914f6cdd1dull);
}

static void test_random_history_no_decay(void **state)
{
    struct store_usage_params p = {.decay = {.halflife_s = 0, .reset = DECAY_RESET_NONE}};
    history(*state, &p, 0x853c49e6748fea9bull);
}

/* Reading needs built accumulators kept with the caller's params. */
static void test_params_checked(void **state)
{
    struct fx *f = *state;
    struct store_usage_params p = {.decay = {.halflife_s = DAY}}, q = p;
    struct acc_list l;
    FAILS(f, ALLOT_EUNAVAIL, store_usage_acc_list(f->st, "c1", &p, T0, on_acc, &l, &f->err));
    int rebuilt = 0;
    TX(f, store_usage_configure(f->st, &p, T0, &rebuilt, &f->err));
    assert_int_equal(rebuilt, 1);
    TX(f, store_usage_configure(f->st, &p, T0, &rebuilt, &f->err));
    assert_int_equal(rebuilt, 0);
    q.billing = 1;
    FAILS(f, ALLOT_ECONFLICT, store_usage_acc_list(f->st, "c1", &q, T0, on_acc, &l, &f->err));
    TX(f, store_usage_configure(f->st, &q, T0, &rebuilt, &f->err));
    assert_int_equal(rebuilt, 1);
    memset(&l, 0, sizeof l);
    OK(f, store_usage_acc_list(f->st, "c1", &q, T0, on_acc, &l, &f->err));
    assert_int_equal(l.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_history_decay, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_random_history_billing_reset, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_random_history_no_decay, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_params_checked, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
