/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sitefactor.h - HADM's allocation site factor for Slurm job priority.
 *
 * Design (doc/design.md §6.4, doc/slurm.md "Site factor"): for allocation i,
 *   f_credit   = 1 - used / granted                    (share of credit left)
 *   f_temporal = 1 - (dt_expire - min_j dt_expire) / max_j dt_expire   (closeness to expiry)
 * both clamped to [0, 1].  The allocations that end first get f_temporal = 1 and the last
 * min/max: shifted by the soonest end, so allocations that tie (one allocation alone, several
 * sharing an end date) get 1, not the 0 a plain 1 - dt/max gives the last to end, which made
 * their whole factor 0 under the product.  Combined either by the power rule f_c^Nc x f_t^Nt or by
 * the product of two sigmoids S(x) = ((e^{lx} - 1)(e^l + e^{l x0})) / ((e^l - 1)(e^{lx} + e^{l
 * x0})), which satisfies S(0) = 0 and S(1) = 1; as l -> 0 it tends to x, which is returned for |l|
 * below 1e-9.  For l > 0 the formula is evaluated scaled by e^{-l} so that no exponential
 * overflows. Floats are right here: this is priority, not money.  The result is scaled to Slurm's
 * integer site factor by sitefactor_to_slurm().
 * Thread rule: pure functions, reentrant.
 */
#ifndef ALLOT_LIBCORE_SITEFACTOR_H
#define ALLOT_LIBCORE_SITEFACTOR_H

#include <stdint.h>

/* 1 - used/granted clamped to [0, 1]; granted <= 0 gives 0 (nothing to spend). */
double sitefactor_credit(int64_t used_sumin, int64_t granted_sumin);

/* 1 - (dt - min_dt)/max_dt clamped to [0, 1], over the allocations compared (min_dt <= dt
 * <= max_dt): 1 for the soonest to end (and for all when they tie), min_dt/max_dt for the
 * last.  dt <= 0 (expired, or ending now) gives 1; max_dt_s <= 0 gives 1; min_dt_s < 0 is
 * taken as 0. */
double sitefactor_temporal(int64_t dt_expire_s, int64_t min_dt_expire_s, int64_t max_dt_expire_s);

/* Power rule f_c^nc x f_t^nt (inputs clamped to [0, 1], exponents >= 0; 0^0 = 1). */
double sitefactor_power(double f_credit, double f_temporal, double n_credit, double n_temporal);

/* Sigmoid S(x) with rate l and midpoint x0; x and x0 clamped to [0, 1]; NaN gives 0. */
double sitefactor_sigmoid(double x, double l, double x0);

/* Product of two sigmoids: S_c(f_c) x S_t(f_t). */
double sitefactor_sigmoid2(double f_credit, double l_credit, double x0_credit, double f_temporal,
                           double l_temporal, double x0_temporal);

/* round(sf x max) for sf clamped to [0, 1]; NaN gives 0. */
uint32_t sitefactor_to_slurm(double sf, uint32_t max);

#endif
