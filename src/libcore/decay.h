/* SPDX-License-Identifier: GPL-3.0-or-later */
/* decay.h - half-life decay of usage, exact and independent of how often it is computed.
 *
 * Usage U decays as U * 2^(-dt/halflife) (doc/design.md §6.1, Slurm's PriorityDecayHalfLife).  A
 * decay_acc_t stores the decaying part as its value at a reference epoch ref_s,
 *     ref_value = sum_i charge_i * 2^((t_i - ref_s) / h),
 * so "applying decay" is only evaluating value(now) = ref_value * 2^(-(now - ref_s)/h): nothing is
 * multiplied per tick and evaluating every minute, every hour or once gives the same bits.
 * Exactness rests on two invariants:
 *   - ref_s is always a multiple of DECAY_REBASE_HALFLIVES * h, so moving it (to keep the
 *     weights below 2^(DECAY_REBASE_HALFLIVES+1)) multiplies ref_value by an exact power of two;
 *   - every exponent (t - ref_s)/h is split in integer seconds into q half-lives and a remainder
 *     r = t mod h, the fraction 2^(r/h) depends on t only and the 2^q part is an exact ldexp.
 * Hence the result does not depend on ref_s, on rebasing, or on the evaluation cadence; its
 * error against exact arithmetic is at most (n + 3) * 2^-52 relative for n charges (all terms
 * are non-negative), until values fall below 2^-1022 (about 1000 half-lives) where they round
 * towards zero.  See doc/fairshare.md for the comparison with Slurm's 1 - ln2/h factor.
 * Usage carries the caller's unit (SU-minutes or TRES-seconds); it is a double because decayed
 * usage is fractional.  It is never money: balances stay int64 SU-minutes elsewhere.
 * Threads: pure functions; a decay_acc_t belongs to one thread at a time.
 */
#ifndef ALLOT_LIBCORE_DECAY_H
#define ALLOT_LIBCORE_DECAY_H

#include <stdbool.h>
#include <stdint.h>

#include "allot/error.h"

/* ref_s moves in steps of this many half-lives: weights stay below 2^33. */
#define DECAY_REBASE_HALFLIVES 32
/* Largest accepted half-life (about 34,000 years): keeps 32 * h far from int64 overflow. */
#define DECAY_HALFLIFE_MAX_S ((int64_t)1 << 40)

/* Slurm's PriorityUsageResetPeriod values (NOW is an operator action, not a period). */
enum decay_reset {
    DECAY_RESET_NONE = 0,
    DECAY_RESET_DAILY,
    DECAY_RESET_WEEKLY, /* weeks start Sunday 00:00 UTC, as Slurm's tm_wday arithmetic */
    DECAY_RESET_MONTHLY,
    DECAY_RESET_QUARTERLY,
    DECAY_RESET_YEARLY,
};

struct decay_params {
    int64_t halflife_s;     /* PriorityDecayHalfLife in seconds; 0 = no decay */
    enum decay_reset reset; /* usage restarts from 0 at each period start (UTC) */
};

typedef struct decay_acc {
    double ref_value;       /* decaying usage expressed at ref_s (caller's unit) */
    double nodecay_value;   /* usage charged under a NoDecay QOS: only resets clear it */
    int64_t ref_s;          /* epoch seconds, a multiple of DECAY_REBASE_HALFLIVES * h */
    int64_t period_start_s; /* reset period of the newest charge; INT64_MIN before any */
} decay_acc_t;

/* Check p: halflife in [0, DECAY_HALFLIFE_MAX_S], reset a known value.
 * Returns 0, or -1 with ALLOT_EINVAL naming the field. */
int decay_params_check(const struct decay_params *p, struct allot_error *err);

/* Empty accumulator (value 0 at any time). */
void decay_acc_init(decay_acc_t *a);

/* Add usage * usage_factor charged at t_s (a job's end time).  usage_factor is the QOS
 * UsageFactor (1.0 if none); nodecay puts the charge in the never-decaying part (QOS flag
 * NoDecay).  A charge older than the accumulator's reset period is dropped (it belongs to a
 * period already reset); a charge in a newer period first clears the accumulator.
 * p must have passed decay_params_check().  Errors: ALLOT_EINVAL if usage or usage_factor is
 * negative or not finite; then *a is untouched.  Returns 0 / -1. */
int decay_acc_add(decay_acc_t *a, const struct decay_params *p, int64_t t_s, double usage,
                  double usage_factor, bool nodecay, struct allot_error *err);

/* Usage of a at now_s (decayed part at now_s plus the NoDecay part); 0 when now_s lies in a
 * later reset period than a's newest charge.  now_s should not precede the newest charge
 * (a charge in the future counts for more than its amount, as the formula says). */
double decay_acc_value(const decay_acc_t *a, const struct decay_params *p, int64_t now_s);

/* Start (epoch seconds, UTC) of the reset period that contains t_s; INT64_MIN for NONE. */
int64_t decay_reset_start(enum decay_reset reset, int64_t t_s);

/* Exact factor 2^(-dt_s/h), computed the same split way as the accumulator. 1 if h == 0. */
double decay_factor_exact(int64_t halflife_s, int64_t dt_s);

#endif
