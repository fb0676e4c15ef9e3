/* SPDX-License-Identifier: GPL-3.0-or-later */
/* burndown.h - an allocation's granted / used / held totals at evenly spaced instants, from
 * its ledger (GET /v1/allocations/{id}/burndown draws them).
 *
 * Design: the series spans [from_s, to_s] in n intervals; its instants are
 * t_k = from_s + (to_s - from_s) * k / n, k = 0..n, rounded down in exact integer arithmetic
 * (so t_0 = from_s and t_n = to_s), or the one instant from_s when to_s == from_s.  The point
 * at t_k holds the totals of every entry with time_s <= t_k, entries before from_s included
 * (an initial credit written before the allocation starts counts in every point).  A ledger
 * comes in id order, which is not time order (concurrent writers, back-dated entries), so
 * each entry is added to the first point whose instant is at or after its time, and
 * burndown_finish turns those per-point sums into running totals.  Once every entry of an
 * allocation is added, the last point is its balance (model.h struct balance).
 * Memory: none; the caller owns the points.  Amounts are exact int64: a total that would
 * leave int64 is refused, never wrapped.
 * Thread rule: a struct burndown belongs to one thread; the functions are reentrant.
 */
#ifndef ALLOT_LIBCORE_BURNDOWN_H
#define ALLOT_LIBCORE_BURNDOWN_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libcore/model.h"

/* Room a series of n intervals needs, in points. */
#define BURNDOWN_POINTS(n) ((size_t)(n) + 1)

struct burndown_point {
    int64_t time_s; /* the instant t_k */
    int64_t granted_sumin;
    int64_t used_sumin;
    int64_t held_sumin;
    int64_t available_sumin; /* granted - used - held; set by burndown_finish */
};

struct burndown {
    struct burndown_point *pts; /* the caller's, borrowed for the series' life */
    size_t n_pts;               /* points in the series: n + 1, or 1 when to_s == from_s */
};

/* The end of an allocation's series (doc/api.md, burndown): the latest of its start, of
 * now or its end whichever comes first, and of its newest entry's time (newest_s; any value
 * <= start_s when it has none), so that every entry falls within the series. */
int64_t burndown_to(int64_t start_s, int64_t end_s, int64_t now_s, int64_t newest_s);

/* Start a series over [from_s, to_s] in n >= 1 intervals into pts (room for cap points, at
 * least BURNDOWN_POINTS(n)): the instants set, every total 0.  Returns 0, or -1 with EINVAL
 * (n < 1, to_s < from_s, a span beyond int64, cap too small); *b and pts are then untouched. */
int burndown_init(struct burndown *b, int64_t from_s, int64_t to_s, int n,
                  struct burndown_point *pts, size_t cap, struct allot_error *err);

/* Add ledger entry e (model_ledger_deltas) at the first instant >= e->time_s.  Returns 0, or
 * -1 with EINVAL (e is after the last instant, or a total would leave int64) or EINTERNAL (an
 * unknown kind); the series is then unchanged.  Call before burndown_finish only. */
int burndown_add(struct burndown *b, const struct ledger_entry *e, struct allot_error *err);

/* Turn the per-instant sums into running totals and set available_sumin; call once, after
 * the last burndown_add.  Returns 0, or -1 with EINVAL when a total would leave int64; the
 * points are then untouched. */
int burndown_finish(struct burndown *b, struct allot_error *err);

#endif
