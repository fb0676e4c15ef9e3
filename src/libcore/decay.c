/* SPDX-License-Identifier: GPL-3.0-or-later */
/* decay.c - exact, cadence-independent half-life decay (design and error bound in decay.h). */
#include "libcore/decay.h"

#include <math.h>

#include "libcore/civil.h"

#define SECS_PER_DAY 86400

int64_t decay_reset_start(enum decay_reset reset, int64_t t_s)
{
    int64_t day = civil_floor_div(t_s, SECS_PER_DAY);
    int64_t y;
    int m, d;

    switch (reset) {
    case DECAY_RESET_DAILY:
        return day * SECS_PER_DAY;
    case DECAY_RESET_WEEKLY: {
        /* 1970-01-01 was a Thursday: weekday 4 when Sunday is 0. */
        int64_t wday = (day + 4) - civil_floor_div(day + 4, 7) * 7;
        return (day - wday) * SECS_PER_DAY;
    }
    case DECAY_RESET_MONTHLY:
        civil_date(day, &y, &m, &d);
        return civil_days(y, m, 1) * SECS_PER_DAY;
    case DECAY_RESET_QUARTERLY:
        civil_date(day, &y, &m, &d);
        return civil_days(y, ((m - 1) / 3) * 3 + 1, 1) * SECS_PER_DAY;
    case DECAY_RESET_YEARLY:
        civil_date(day, &y, &m, &d);
        return civil_days(y, 1, 1) * SECS_PER_DAY;
    case DECAY_RESET_NONE:
    default:
        return INT64_MIN;
    }
}

int decay_params_check(const struct decay_params *p, struct allot_error *err)
{
    if (p->halflife_s < 0 || p->halflife_s > DECAY_HALFLIFE_MAX_S)
        return allot_errorf(err, ALLOT_EINVAL,
                            "halflife: %lld s is outside 0..%lld (0 disables decay)",
                            (long long)p->halflife_s, (long long)DECAY_HALFLIFE_MAX_S);
    if ((int)p->reset < (int)DECAY_RESET_NONE || (int)p->reset > (int)DECAY_RESET_YEARLY)
        return allot_errorf(err, ALLOT_EINVAL, "reset: unknown period %d", (int)p->reset);
    return 0;
}

void decay_acc_init(decay_acc_t *a)
{
    a->ref_value = 0.0;
    a->nodecay_value = 0.0;
    a->ref_s = 0;
    a->period_start_s = INT64_MIN;
}

/* 2^(d/h) for d = t - ref with ref a multiple of h: the fraction 2^(r/h), r = t mod h, depends
 * on t alone, and the integer part is applied with ldexp, which is exact. */
static double pow2_split(int64_t d, int64_t h)
{
    int64_t q = civil_floor_div(d, h);
    int64_t r = d - q * h;
    double frac = exp2((double)r / (double)h);
    if (q > 4096)
        q = 4096; /* beyond double range either way; keeps the int conversion defined */
    if (q < -4096)
        q = -4096;
    return ldexp(frac, (int)q);
}

double decay_factor_exact(int64_t halflife_s, int64_t dt_s)
{
    if (halflife_s <= 0)
        return 1.0;
    /* 2^(-dt/h) = 2^(-(q+1)) * 2^((h-r)/h) keeps the same split as the accumulator. */
    return pow2_split(-dt_s, halflife_s);
}

int decay_acc_add(decay_acc_t *a, const struct decay_params *p, int64_t t_s, double usage,
                  double usage_factor, bool nodecay, struct allot_error *err)
{
    if (!isfinite(usage) || usage < 0.0)
        return allot_errorf(err, ALLOT_EINVAL, "usage: must be a finite non-negative number");
    if (!isfinite(usage_factor) || usage_factor < 0.0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "usage_factor: must be a finite non-negative number");

    int64_t period = decay_reset_start(p->reset, t_s);
    if (a->period_start_s != INT64_MIN && period < a->period_start_s)
        return 0; /* charged in a period that has been reset already */
    if (period > a->period_start_s) {
        a->ref_value = 0.0;
        a->nodecay_value = 0.0;
        a->period_start_s = period;
    }

    double amount = usage * usage_factor;
    if (nodecay) {
        a->nodecay_value += amount;
        return 0;
    }
    int64_t h = p->halflife_s;
    if (h == 0) {
        a->ref_value += amount;
        return 0;
    }
    int64_t span = (int64_t)DECAY_REBASE_HALFLIVES * h;
    int64_t want_ref = civil_floor_div(t_s, span) * span;
    if (want_ref > a->ref_s) {
        /* Exact: scaling by 2^-(k*32) commutes with every rounding done so far. */
        int64_t halvings = (want_ref - a->ref_s) / h;
        a->ref_value = ldexp(a->ref_value, halvings > 4096 ? -4096 : -(int)halvings);
        a->ref_s = want_ref;
    }
    a->ref_value += amount * pow2_split(t_s - a->ref_s, h);
    return 0;
}

double decay_acc_value(const decay_acc_t *a, const struct decay_params *p, int64_t now_s)
{
    if (decay_reset_start(p->reset, now_s) > a->period_start_s)
        return 0.0;
    double decayed = a->ref_value;
    if (p->halflife_s > 0 && decayed != 0.0)
        decayed *= pow2_split(a->ref_s - now_s, p->halflife_s);
    return decayed + a->nodecay_value;
}
