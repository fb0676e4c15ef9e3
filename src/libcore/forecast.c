/* SPDX-License-Identifier: GPL-3.0-or-later */
/* forecast.c - an allocation's exhaustion forecast from its recent daily burn (forecast.h). */
#include "libcore/forecast.h"

#include <math.h>
#include <string.h>

typedef __int128 i128;

#define I64_MAX_AS_DOUBLE 9.2e18 /* below INT64_MAX: a double beyond it is "never" */

static i128 floor_div(i128 a, i128 b) /* b > 0 */
{
    i128 q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static i128 ceil_div(i128 a, i128 b) /* b > 0 */
{
    return -floor_div(-a, b);
}

int forecast_burn_init(struct forecast_burn *b, int64_t start_s, int64_t now_s, int window,
                       struct allot_error *err)
{
    if (window < 1 || window > FORECAST_WINDOW_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "window: %d days, must be 1..%d", window,
                            FORECAST_WINDOW_MAX);
    memset(b, 0, sizeof(*b));
    b->now_s = now_s;
    b->start_s = start_s;
    b->window = window;
    int64_t age = now_s > start_s ? now_s - start_s : 0;
    b->days = age / FORECAST_DAY_S < window ? (int)(age / FORECAST_DAY_S) : window;
    b->from_s = b->days ? now_s - (int64_t)b->days * FORECAST_DAY_S : start_s;
    return 0;
}

int forecast_burn_add(struct forecast_burn *b, const struct ledger_entry *e,
                      struct allot_error *err)
{
    int64_t sign;
    if (e->kind == LEDGER_DEBIT)
        sign = 1;
    else if (e->kind == LEDGER_REFUND)
        sign = -1;
    else
        return 0;
    if (e->time_s <= b->from_s || e->time_s > b->now_s)
        return 0;
    int64_t *slot =
        b->days ? &b->day_sumin[(b->now_s - e->time_s) / FORECAST_DAY_S] : &b->partial_sumin;
    int64_t v;
    if (__builtin_mul_overflow(e->amount_sumin, sign, &v) || __builtin_add_overflow(*slot, v, &v))
        return allot_errorf(err, ALLOT_EINVAL, "forecast: a day's burn leaves int64");
    *slot = v;
    return 0;
}

/* now + floor(available x d / rate) for a real rate > 0, or FORECAST_NEVER. */
static int64_t exhaust_at(int64_t now_s, int64_t available_sumin, double rate)
{
    if (available_sumin <= 0)
        return now_s;
    if (!(rate > 0))
        return FORECAST_NEVER;
    double dt = floor((double)available_sumin * FORECAST_DAY_S / rate);
    if (dt >= I64_MAX_AS_DOUBLE - (double)now_s)
        return FORECAST_NEVER;
    return now_s + (int64_t)dt;
}

/* available - rate x span / d for a real rate, rounded down and kept within int64. */
static int64_t balance_at(int64_t available_sumin, double rate, int64_t span_s)
{
    double v = floor((double)available_sumin - rate * (double)span_s / FORECAST_DAY_S);
    if (v <= -I64_MAX_AS_DOUBLE)
        return -INT64_MAX;
    if (v >= I64_MAX_AS_DOUBLE)
        return INT64_MAX;
    return (int64_t)v;
}

int forecast_compute(const struct forecast_burn *b, int64_t available_sumin, int64_t end_s,
                     struct forecast *f, struct allot_error *err)
{
    struct forecast r = {.days = b->days, .available_sumin = available_sumin};
    i128 num = 0, den = 1;
    double sigma = 0.0;
    if (b->days > 0) {
        int64_t n = b->days;
        den = n * (n + 1) / 2;
        for (int64_t i = 0; i < n; i++)
            num += (i128)(n - i) * b->day_sumin[i];
        double mean = (double)num / (double)den, var = 0.0;
        for (int64_t i = 0; i < n; i++) {
            double dev = (double)b->day_sumin[i] - mean;
            var += (double)(n - i) * dev * dev;
        }
        sigma = sqrt(var / (double)den);
    } else if (b->now_s > b->start_s) {
        num = (i128)b->partial_sumin * FORECAST_DAY_S;
        den = b->now_s - b->start_s;
    }
    if (num > INT64_MAX || num < -INT64_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "forecast: the weighted burn leaves int64");
    if (num < 0)
        num = 0; /* refunds of older debits above the window's debits: they do not recur */
    r.rate_num = (int64_t)num;
    r.rate_den = (int64_t)den;
    r.rate_sumin = (int64_t)floor_div(num, den);
    double rate = (double)num / (double)den;
    double lo = rate - sigma > 0 ? rate - sigma : 0.0, hi = rate + sigma;
    r.rate_low_sumin = (int64_t)floor(lo);
    r.rate_high_sumin = (int64_t)floor(hi);

    /* The point estimate, exactly: now + floor(available x d x den / num). */
    if (available_sumin <= 0) {
        r.exhaust_s = b->now_s;
    } else if (num <= 0) {
        r.exhaust_s = FORECAST_NEVER;
    } else {
        i128 dt = (i128)available_sumin * FORECAST_DAY_S * den / num;
        r.exhaust_s = dt > (i128)INT64_MAX - b->now_s ? FORECAST_NEVER : b->now_s + (int64_t)dt;
    }
    r.exhaust_early_s = exhaust_at(b->now_s, available_sumin, hi);
    r.exhaust_late_s = exhaust_at(b->now_s, available_sumin, lo);
    if (sigma == 0.0) /* no spread: the band is the point, not its rounding in double */
        r.exhaust_early_s = r.exhaust_late_s = r.exhaust_s;
    if (r.exhaust_early_s > r.exhaust_s)
        r.exhaust_early_s = r.exhaust_s;
    if (r.exhaust_late_s < r.exhaust_s)
        r.exhaust_late_s = r.exhaust_s;
    r.before_end = r.exhaust_s < end_s;

    if (b->now_s >= end_s) {
        r.end_balance_sumin = r.end_balance_low_sumin = r.end_balance_high_sumin = available_sumin;
    } else {
        int64_t span = end_s - b->now_s;
        /* The use until the end, rounded up: available - ceil(num x span / (den x d)). */
        i128 use = ceil_div((i128)num * span, den * FORECAST_DAY_S);
        i128 bal = (i128)available_sumin - use;
        if (bal > INT64_MAX || bal < -INT64_MAX)
            return allot_errorf(err, ALLOT_EINVAL, "forecast: the balance at the end leaves int64");
        r.end_balance_sumin = (int64_t)bal;
        r.end_balance_low_sumin = balance_at(available_sumin, hi, span);
        r.end_balance_high_sumin = balance_at(available_sumin, lo, span);
        if (sigma == 0.0)
            r.end_balance_low_sumin = r.end_balance_high_sumin = r.end_balance_sumin;
        if (r.end_balance_low_sumin > r.end_balance_sumin)
            r.end_balance_low_sumin = r.end_balance_sumin;
        if (r.end_balance_high_sumin < r.end_balance_sumin)
            r.end_balance_high_sumin = r.end_balance_sumin;
    }
    *f = r;
    return 0;
}

double forecast_days_left(const struct forecast *f, int64_t now_s)
{
    if (f->exhaust_s == FORECAST_NEVER)
        return INFINITY;
    return (double)(f->exhaust_s - now_s) / FORECAST_DAY_S;
}
