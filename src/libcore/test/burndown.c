/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/burndown.c - a burndown series' instants, the ledger kinds' deltas, entries before the
 * start and out of time order, the last point against the balance, overflow refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/burndown.h"

#define CAP 512

static struct ledger_entry entry(int64_t id, enum ledger_kind kind, int64_t amount, int64_t t)
{
    return (struct ledger_entry){
        .id = id, .alloc_id = 1, .kind = kind, .amount_sumin = amount, .time_s = t};
}

/* doc/design.md §2.7 spelt out once more, independently of model_ledger_deltas: the reference the
 * series is checked against. */
static void reference(const struct ledger_entry *e, int64_t g[3])
{
    int64_t a = e->amount_sumin;
    switch (e->kind) {
    case LEDGER_CREDIT:
    case LEDGER_CARRYOVER:
    case LEDGER_ADJUSTMENT:
        g[0] += a;
        break;
    case LEDGER_EXPIRY:
        g[0] -= a;
        break;
    case LEDGER_DEBIT:
        g[1] += a;
        break;
    case LEDGER_REFUND:
        g[1] -= a;
        break;
    case LEDGER_HOLD:
        g[2] += a;
        break;
    case LEDGER_RELEASE:
        g[2] -= a;
        break;
    case LEDGER_KIND_MAX:
        fail();
    }
}

static void test_deltas(void **state)
{
    (void)state;
    for (int k = 0; k < LEDGER_KIND_MAX; k++) {
        struct ledger_entry e = entry(1, (enum ledger_kind)k, 7, 0);
        int64_t got[3] = {100, 200, 300}, want[3] = {100, 200, 300};
        assert_int_equal(model_ledger_deltas(&e, &got[0], &got[1], &got[2], NULL), 0);
        reference(&e, want);
        assert_memory_equal(got, want, sizeof(got));
    }
    struct allot_error err = {0};
    int64_t g = INT64_MAX - 1, u = INT64_MIN + 1, h = 5;
    struct ledger_entry e = entry(1, LEDGER_CREDIT, 2, 0);
    assert_int_equal(model_ledger_deltas(&e, &g, &u, &h, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_non_null(strstr(err.msg, "credit"));
    e.kind = LEDGER_REFUND;
    assert_int_equal(model_ledger_deltas(&e, &g, &u, &h, &err), -1);
    e.kind = LEDGER_KIND_MAX;
    assert_int_equal(model_ledger_deltas(&e, &g, &u, &h, &err), -1);
    assert_int_equal(err.code, ALLOT_EINTERNAL);
    assert_true(g == INT64_MAX - 1 && u == INT64_MIN + 1 && h == 5);
}

static void test_to(void **state)
{
    (void)state;
    /* start, end, now, newest -> to */
    static const int64_t v[][5] = {
        {100, 1000, 500, 50, 500},     /* running: now */
        {100, 1000, 500, 700, 700},    /* an entry after now (a clock ahead) */
        {100, 1000, 5000, 50, 1000},   /* ended: its end */
        {100, 1000, 5000, 1200, 1200}, /* settled after its end */
        {100, 1000, 50, 0, 100},       /* not started: one point at start */
        {100, 1000, 50, 300, 300},     /* not started, an entry dated later */
        {100, 1000, 100, 100, 100},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        assert_int_equal(burndown_to(v[i][0], v[i][1], v[i][2], v[i][3]), v[i][4]);
}

static void test_instants(void **state)
{
    (void)state;
    struct burndown_point pts[CAP];
    struct burndown b;
    assert_int_equal(burndown_init(&b, 1000, 1010, 4, pts, CAP, NULL), 0);
    assert_int_equal(b.n_pts, 5);
    static const int64_t want[] = {1000, 1002, 1005, 1007, 1010}; /* floor(10 k / 4) */
    for (size_t k = 0; k < 5; k++) {
        assert_int_equal(pts[k].time_s, want[k]);
        assert_true(pts[k].granted_sumin == 0 && pts[k].used_sumin == 0 && pts[k].held_sumin == 0 &&
                    pts[k].available_sumin == 0);
    }
    /* A span shorter than n: instants repeat, still ascending, last = to. */
    assert_int_equal(burndown_init(&b, 0, 3, 5, pts, CAP, NULL), 0);
    static const int64_t rep[] = {0, 0, 1, 1, 2, 3};
    for (size_t k = 0; k < 6; k++)
        assert_int_equal(pts[k].time_s, rep[k]);
    /* The widest span: span * k would leave int64; 128-bit reference. */
    const int64_t from = -5, to = INT64_MAX;
    assert_int_equal(burndown_init(&b, 0, to, 500, pts, CAP, NULL), 0);
    assert_int_equal(b.n_pts, 501);
    for (int k = 0; k <= 500; k++)
        assert_true(pts[k].time_s == (int64_t)((__int128)to * k / 500));
    assert_int_equal(pts[500].time_s, INT64_MAX);
    assert_int_equal(burndown_init(&b, from, 1000003, 7, pts, CAP, NULL), 0);
    for (int k = 0; k <= 7; k++)
        assert_true(pts[k].time_s == from + (int64_t)((__int128)(1000003 - from) * k / 7));
}

static void test_init_errors(void **state)
{
    (void)state;
    struct burndown_point pts[CAP];
    struct burndown b = {NULL, 42};
    struct allot_error err = {0};
    pts[0].time_s = 99;
    assert_int_equal(burndown_init(&b, 0, 10, 0, pts, CAP, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(burndown_init(&b, 0, 10, -1, pts, CAP, &err), -1);
    assert_int_equal(burndown_init(&b, 11, 10, 5, pts, CAP, &err), -1);
    assert_int_equal(burndown_init(&b, -2, INT64_MAX, 5, pts, CAP, &err), -1);
    assert_int_equal(burndown_init(&b, 0, 10, 5, pts, 5, &err), -1); /* 6 needed */
    assert_non_null(strstr(err.msg, "6 needed"));
    assert_true(b.pts == NULL && b.n_pts == 42 && pts[0].time_s == 99);
    assert_int_equal(burndown_init(&b, 0, 10, 5, pts, 6, &err), 0);
    assert_int_equal(burndown_init(&b, 7, 7, 500, pts, 1, &err), 0); /* one point fits 1 */
}

/* One point when to == from: entries at or before it count, later ones are refused. */
static void test_single_point(void **state)
{
    (void)state;
    struct burndown_point pts[CAP];
    struct burndown b;
    struct allot_error err = {0};
    assert_int_equal(burndown_init(&b, 500, 500, 50, pts, CAP, NULL), 0);
    assert_int_equal(b.n_pts, 1);
    struct ledger_entry e1 = entry(1, LEDGER_CREDIT, 600, 400);
    struct ledger_entry e2 = entry(2, LEDGER_HOLD, 100, 500);
    struct ledger_entry e3 = entry(3, LEDGER_DEBIT, 1, 501);
    assert_int_equal(burndown_add(&b, &e1, NULL), 0);
    assert_int_equal(burndown_add(&b, &e2, NULL), 0);
    assert_int_equal(burndown_add(&b, &e3, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(burndown_finish(&b, NULL), 0);
    assert_true(pts[0].time_s == 500 && pts[0].granted_sumin == 600 && pts[0].used_sumin == 0 &&
                pts[0].held_sumin == 100 && pts[0].available_sumin == 500);
}

/* A hand-worked series: the initial credit written before the start, a hold and its settle,
 * a back-dated refund arriving last (id order is not time order), an expiry at the end. */
static void test_series(void **state)
{
    (void)state;
    struct burndown_point pts[CAP];
    struct burndown b;
    const struct ledger_entry es[] = {
        entry(1, LEDGER_CREDIT, 1000, 50),  /* before from = 100: in every point */
        entry(2, LEDGER_HOLD, 300, 120),    /* -> t=125 */
        entry(3, LEDGER_DEBIT, 200, 160),   /* -> t=175 */
        entry(4, LEDGER_RELEASE, 300, 160), /* -> t=175 */
        entry(5, LEDGER_CREDIT, 500, 125),  /* exactly at an instant: counts there */
        entry(6, LEDGER_REFUND, 50, 101),   /* back-dated: -> t=125 */
        entry(7, LEDGER_EXPIRY, 1250, 200), /* -> t=200 */
    };
    assert_int_equal(burndown_init(&b, 100, 200, 4, pts, CAP, NULL), 0);
    for (size_t i = 0; i < sizeof(es) / sizeof(es[0]); i++)
        assert_int_equal(burndown_add(&b, &es[i], NULL), 0);
    assert_int_equal(burndown_finish(&b, NULL), 0);
    static const int64_t want[5][5] = {
        /* time, granted, used, held, available */
        {100, 1000, 0, 0, 1000},     /* the initial credit */
        {125, 1500, -50, 300, 1250}, /* hold, credit, back-dated refund */
        {150, 1500, -50, 300, 1250}, /* nothing new */
        {175, 1500, 150, 0, 1350},   /* settled: debit and release */
        {200, 250, 150, 0, 100},     /* expiry */
    };
    for (int k = 0; k < 5; k++) {
        assert_int_equal(pts[k].time_s, want[k][0]);
        assert_int_equal(pts[k].granted_sumin, want[k][1]);
        assert_int_equal(pts[k].used_sumin, want[k][2]);
        assert_int_equal(pts[k].held_sumin, want[k][3]);
        assert_int_equal(pts[k].available_sumin, want[k][4]);
    }
}

/* Many entries in shuffled time order against a brute-force sum per instant; the last point
 * equals the balance of all entries, whatever the number of intervals. */
static void test_brute_force(void **state)
{
    (void)state;
    enum { N_ENTRIES = 400 };
    static struct ledger_entry es[N_ENTRIES];
    uint64_t x = 88172645463325252ull; /* xorshift: reproducible */
    for (int i = 0; i < N_ENTRIES; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        enum ledger_kind k = (enum ledger_kind)(x % LEDGER_KIND_MAX);
        int64_t amount = (int64_t)(x >> 40) % 1000 + 1;
        if (k == LEDGER_ADJUSTMENT && (x & 1))
            amount = -amount;
        es[i] = entry(i + 1, k, amount, (int64_t)((x >> 20) % 5000) - 500);
    }
    static const int ns[] = {1, 2, 3, 7, 50, 499, 500};
    for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
        struct burndown_point pts[CAP];
        struct burndown b;
        assert_int_equal(burndown_init(&b, 0, 4499, ns[t], pts, CAP, NULL), 0);
        for (int i = 0; i < N_ENTRIES; i++)
            assert_int_equal(burndown_add(&b, &es[i], NULL), 0);
        assert_int_equal(burndown_finish(&b, NULL), 0);
        assert_int_equal(b.n_pts, (size_t)ns[t] + 1);
        for (size_t k = 0; k < b.n_pts; k++) {
            int64_t g[3] = {0, 0, 0};
            for (int i = 0; i < N_ENTRIES; i++)
                if (es[i].time_s <= pts[k].time_s)
                    reference(&es[i], g);
            assert_int_equal(pts[k].granted_sumin, g[0]);
            assert_int_equal(pts[k].used_sumin, g[1]);
            assert_int_equal(pts[k].held_sumin, g[2]);
            assert_int_equal(pts[k].available_sumin, g[0] - g[1] - g[2]);
            if (k)
                assert_true(pts[k].time_s >= pts[k - 1].time_s);
        }
        int64_t bal[3] = {0, 0, 0};
        for (int i = 0; i < N_ENTRIES; i++)
            reference(&es[i], bal);
        assert_int_equal(pts[b.n_pts - 1].time_s, 4499);
        assert_int_equal(pts[b.n_pts - 1].granted_sumin, bal[0]);
        assert_int_equal(pts[b.n_pts - 1].used_sumin, bal[1]);
        assert_int_equal(pts[b.n_pts - 1].held_sumin, bal[2]);
    }
}

static void test_overflow(void **state)
{
    (void)state;
    struct burndown_point pts[CAP], copy[CAP];
    struct burndown b;
    struct allot_error err = {0};
    /* Within one instant: burndown_add refuses, the point keeps its sums. */
    assert_int_equal(burndown_init(&b, 0, 100, 2, pts, CAP, NULL), 0);
    struct ledger_entry big = entry(1, LEDGER_CREDIT, INT64_MAX - 10, 10);
    struct ledger_entry more = entry(2, LEDGER_CARRYOVER, 11, 20);
    assert_int_equal(burndown_add(&b, &big, NULL), 0);
    assert_int_equal(burndown_add(&b, &more, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_non_null(strstr(err.msg, "ledger entry 2"));
    assert_int_equal(pts[1].granted_sumin, INT64_MAX - 10);
    /* Across instants: each sum fits, the running total does not; finish refuses and
     * leaves the points as they were. */
    more.time_s = 90;
    assert_int_equal(burndown_add(&b, &more, NULL), 0);
    memcpy(copy, pts, sizeof(pts[0]) * b.n_pts);
    assert_int_equal(burndown_finish(&b, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_memory_equal(copy, pts, sizeof(pts[0]) * b.n_pts);
    /* available = granted - used - held out of range, every total in range. */
    assert_int_equal(burndown_init(&b, 0, 100, 1, pts, CAP, NULL), 0);
    struct ledger_entry neg = entry(3, LEDGER_ADJUSTMENT, -10, 0);
    struct ledger_entry used = entry(4, LEDGER_DEBIT, INT64_MAX, 0);
    assert_int_equal(burndown_add(&b, &neg, NULL), 0);
    assert_int_equal(burndown_add(&b, &used, NULL), 0);
    assert_int_equal(burndown_finish(&b, &err), -1);
    assert_int_equal(pts[0].available_sumin, 0);
    /* The extremes that fit are exact. */
    assert_int_equal(burndown_init(&b, 0, 100, 1, pts, CAP, NULL), 0);
    big.amount_sumin = INT64_MAX;
    assert_int_equal(burndown_add(&b, &big, NULL), 0);
    assert_int_equal(burndown_finish(&b, NULL), 0);
    assert_true(pts[1].granted_sumin == INT64_MAX && pts[1].available_sumin == INT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deltas),       cmocka_unit_test(test_to),
        cmocka_unit_test(test_instants),     cmocka_unit_test(test_init_errors),
        cmocka_unit_test(test_single_point), cmocka_unit_test(test_series),
        cmocka_unit_test(test_brute_force),  cmocka_unit_test(test_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
