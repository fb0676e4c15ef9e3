/* SPDX-License-Identifier: GPL-3.0-or-later */
/* forecast.h - when an allocation's available balance reaches zero, and what is left of it at
 * its end, from its recent daily burn (GET /v1/allocations/{id}/forecast, `allot forecast`,
 * the dashboard's burn-down, /metrics, the policy threshold forecast_days).
 *
 * Design: the burn of a day is its net use, debits minus refunds, by ledger entry time.  The
 * history is the last n whole days up to now, n = min(window, whole days since the
 * allocation's start); day i (0 = the most recent) covers (now - (i+1) d, now - i d], d =
 * 86400 s, so an entry written at now counts, as it does in the balance.  The rate is the mean of
 * the n daily burns weighted toward recent days with linear weights w_i = n - i (the most recent
 * day counts n times the oldest): R = S1 / S0, S1 = sum w_i u_i, S0 = sum w_i, kept as that exact
 * fraction.  An allocation younger than a day has one partial day: R = its use since the start x d
 * / its age.  A negative R (refunds of older charges above the recent ones) counts as 0.  The band
 * is R - sigma .. R + sigma, sigma the weighted standard deviation of the daily burns (the lower
 * rate is at least 0).  The holds of running and pending jobs are already out of the available
 * balance (they are committed); the rate continues from there: available(t) = available(now) - R (t
 * - now) / d. Exact answers: the point estimate (exhaust_s, end_balance_sumin) is computed in exact
 * integer arithmetic (128-bit), rounded toward the earlier instant and the smaller balance;
 * the band is computed in double and rounded the same way.
 * Memory: none.  Thread rule: a struct forecast_burn belongs to one thread; reentrant.
 */
#ifndef ALLOT_LIBCORE_FORECAST_H
#define ALLOT_LIBCORE_FORECAST_H

#include <stdint.h>

#include "allot/error.h"
#include "libcore/model.h"

#define FORECAST_DAY_S 86400
#define FORECAST_WINDOW_DEFAULT 14 /* days of history */
#define FORECAST_WINDOW_MAX 366
#define FORECAST_NEVER INT64_MAX /* exhaust_s: not at this rate (a rate of 0) */

/* The daily burns of one allocation, gathered from its ledger. */
struct forecast_burn {
    int64_t now_s, start_s;
    int window;                             /* days asked for, 1..FORECAST_WINDOW_MAX */
    int days;                               /* whole days of history used: 0..window */
    int64_t from_s;                         /* entries at or after from_s and before now count */
    int64_t day_sumin[FORECAST_WINDOW_MAX]; /* day_sumin[i]: net use of day i */
    int64_t partial_sumin;                  /* days == 0: net use since the start */
};

/* What a forecast says.  Rates are SU-minutes per day. */
struct forecast {
    int days;                   /* whole days of history; 0: less than one (a partial day) */
    int64_t rate_num, rate_den; /* the rate R = rate_num / rate_den exactly; rate_den > 0 */
    int64_t rate_sumin;         /* R rounded down */
    int64_t rate_low_sumin, rate_high_sumin; /* the band's rates, rounded down */
    int64_t available_sumin;                 /* now */
    int64_t exhaust_s;         /* available reaches 0 at R; now when it is <= 0 already;
                                  FORECAST_NEVER when R <= 0 */
    int64_t exhaust_early_s;   /* at the band's high rate */
    int64_t exhaust_late_s;    /* at the band's low rate (FORECAST_NEVER when it is 0) */
    int before_end;            /* exhaust_s < the allocation's end */
    int64_t end_balance_sumin; /* available at the end at R (negative: the shortfall); the
                                  available balance now when the end is past */
    int64_t end_balance_low_sumin, end_balance_high_sumin; /* at the high and low rates */
};

/* Start gathering the burns of an allocation that started at start_s, as of now_s, over a
 * window of days.  Returns 0, or -1 with EINVAL (window out of 1..FORECAST_WINDOW_MAX). */
int forecast_burn_init(struct forecast_burn *b, int64_t start_s, int64_t now_s, int window,
                       struct allot_error *err);

/* Count ledger entry e: a debit adds its amount to its day's burn, a refund takes it off,
 * every other kind and every entry outside the history is ignored.  Returns 0, or -1 with
 * EINVAL when a day's burn would leave int64 (nothing changed). */
int forecast_burn_add(struct forecast_burn *b, const struct ledger_entry *e,
                      struct allot_error *err);

/* The forecast of an allocation ending at end_s whose available balance is available_sumin
 * now.  Returns 0, or -1 with EINVAL when the weighted sum leaves int64 (*f untouched). */
int forecast_compute(const struct forecast_burn *b, int64_t available_sumin, int64_t end_s,
                     struct forecast *f, struct allot_error *err);

/* Days from now to f->exhaust_s as a real number; INFINITY when FORECAST_NEVER. */
double forecast_days_left(const struct forecast *f, int64_t now_s);

#endif
