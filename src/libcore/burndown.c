/* SPDX-License-Identifier: GPL-3.0-or-later */
/* burndown.c - an allocation's totals at evenly spaced instants (burndown.h). */
#include "libcore/burndown.h"

#include <assert.h>

#include "libcore/money.h"

int64_t burndown_to(int64_t start_s, int64_t end_s, int64_t now_s, int64_t newest_s)
{
    int64_t to = now_s < end_s ? now_s : end_s;
    if (to < start_s)
        to = start_s;
    return newest_s > to ? newest_s : to;
}

int burndown_init(struct burndown *b, int64_t from_s, int64_t to_s, int n,
                  struct burndown_point *pts, size_t cap, struct allot_error *err)
{
    int64_t span;
    if (n < 1)
        return allot_errorf(err, ALLOT_EINVAL, "intervals: %d, must be at least 1", n);
    if (to_s < from_s)
        return allot_errorf(err, ALLOT_EINVAL, "to: %lld is before from %lld", (long long)to_s,
                            (long long)from_s);
    if (money_sub(to_s, from_s, &span) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "to: %lld - %lld is beyond int64", (long long)to_s,
                            (long long)from_s);
    size_t n_pts = span ? BURNDOWN_POINTS(n) : 1;
    if (cap < n_pts)
        return allot_errorf(err, ALLOT_EINVAL, "points: room for %zu, %zu needed", cap, n_pts);
    /* span * k / n without the product, which can leave int64: with span = q n + r,
     * floor(span k / n) = q k + floor(r k / n), and q k <= span, r k < n * n. */
    int64_t q = span / n, r = span % n;
    for (size_t k = 0; k < n_pts; k++)
        pts[k] = (struct burndown_point){
            .time_s = from_s + q * (int64_t)k + r * (int64_t)k / n,
        };
    b->pts = pts;
    b->n_pts = n_pts;
    return 0;
}

int burndown_add(struct burndown *b, const struct ledger_entry *e, struct allot_error *err)
{
    if (e->time_s > b->pts[b->n_pts - 1].time_s)
        return allot_errorf(
            err, ALLOT_EINVAL, "time: ledger entry %lld at %lld is after the series' end %lld",
            (long long)e->id, (long long)e->time_s, (long long)b->pts[b->n_pts - 1].time_s);
    /* The instants ascend (several may be equal when the span is shorter than n): the first
     * one >= e->time_s, by bisection, as a series may take many entries. */
    size_t lo = 0, hi = b->n_pts - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->pts[mid].time_s < e->time_s)
            lo = mid + 1;
        else
            hi = mid;
    }
    struct burndown_point *p = &b->pts[lo];
    if (model_ledger_deltas(e, &p->granted_sumin, &p->used_sumin, &p->held_sumin, err) < 0)
        return allot_error_prefix(err, "ledger entry %lld", (long long)e->id);
    return 0;
}

/* The running totals up to and including point k from those before it (prev, NULL for the
 * first) and point k's own sums; -1 when one leaves int64. */
static int running(const struct burndown_point *prev, const struct burndown_point *own,
                   struct burndown_point *out)
{
    struct burndown_point t = *own;
    int64_t avail;
    if (prev && (money_add(prev->granted_sumin, own->granted_sumin, &t.granted_sumin) < 0 ||
                 money_add(prev->used_sumin, own->used_sumin, &t.used_sumin) < 0 ||
                 money_add(prev->held_sumin, own->held_sumin, &t.held_sumin) < 0))
        return -1;
    if (money_sub(t.granted_sumin, t.used_sumin, &avail) < 0 ||
        money_sub(avail, t.held_sumin, &t.available_sumin) < 0)
        return -1;
    *out = t;
    return 0;
}

int burndown_finish(struct burndown *b, struct allot_error *err)
{
    /* Checked first, written after: a refused series keeps its per-instant sums. */
    struct burndown_point t, prev;
    for (size_t k = 0; k < b->n_pts; k++) {
        if (running(k ? &prev : NULL, &b->pts[k], &t) < 0)
            return allot_errorf(err, ALLOT_EINVAL,
                                "points: the totals at %lld are beyond int64 SU-minutes",
                                (long long)b->pts[k].time_s);
        prev = t;
    }
    for (size_t k = 0; k < b->n_pts; k++) {
        int rc = running(k ? &b->pts[k - 1] : NULL, &b->pts[k], &b->pts[k]);
        assert(rc == 0); /* the same sums passed above */
        (void)rc;
    }
    return 0;
}
