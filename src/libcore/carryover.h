/* SPDX-License-Identifier: GPL-3.0-or-later */
/* carryover.h - periodic policy arithmetic (doc/design.md §5.3).
 *
 * Design: all amounts are int64 SU-minutes; ratios are integers in parts per million
 * (`_ppm`: 50% = 500000, grace 0.2 = 200000), so every result is exact or rounded once by a
 * documented rule:
 *   unused = max(0, base - previous period's use)
 *   carry  = min(unused, floor(base x factor_ppm / 1e6))      (floor: never grant extra)
 *   total  = base + carry                                       (one period back only)
 *   limit  = floor(total x (1e6 + grace_ppm) / 1e6) TRES-minutes (floor: Slurm never allows
 *            more than total x (1 + grace)).  total is already in SU-minutes, which are
 *            billing-TRES-minutes, so this is "total x 60 x (1 + grace)" of doc/design.md §5.3 with
 * total counted in SU-hours. Thresholds: usage u against total T are compared exactly (u x 1e6 >= T
 * x ppm in 128 bits): notify at notify_ppm (80%), downscale at downscale_ppm (100%), pause at (1e6
 * + grace_ppm) (i.e. (1 + grace) x 100%).  The state is a pure function of (u, T), so a flag clears
 * by itself when usage drops below its threshold. Thread rule: pure functions, reentrant.
 */
#ifndef ALLOT_LIBCORE_CARRYOVER_H
#define ALLOT_LIBCORE_CARRYOVER_H

#include <stdint.h>

#include "allot/error.h"

#define CARRYOVER_PPM 1000000
#define CARRYOVER_DEFAULT_FACTOR_PPM 500000     /* carry at most 50% of base */
#define CARRYOVER_DEFAULT_GRACE_PPM 200000      /* grace ratio 0.2 */
#define CARRYOVER_DEFAULT_NOTIFY_PPM 800000     /* notify at 80% */
#define CARRYOVER_DEFAULT_DOWNSCALE_PPM 1000000 /* downscale at 100% */

/* This period's credit from base and the previous period's use (doc/design.md §5.3).
 * Inputs: base_sumin >= 0, prev_used_sumin >= 0 (the use in exactly the period before),
 * factor_ppm >= 0 (0 disables carryover; may exceed 1e6).  Outputs: *total_sumin and
 * *carry_sumin (either may be NULL).  Errors: ALLOT_EINVAL for negatives or overflow;
 * outputs untouched. */
int carryover_total_sumin(int64_t base_sumin, int64_t prev_used_sumin, int64_t factor_ppm,
                          int64_t *total_sumin, int64_t *carry_sumin, struct allot_error *err);

/* TRES-minutes to push as the Slurm limit (GrpTRESMins=billing=N): floor(total x (1 +
 * grace)); grace_ppm == 0 gives total.  Errors: ALLOT_EINVAL for negatives or overflow. */
int carryover_limit_tres_min(int64_t total_sumin, int64_t grace_ppm, int64_t *out,
                             struct allot_error *err);

/* Threshold flags, set when usage reaches their level. */
enum carryover_flag {
    CARRYOVER_NOTIFY = 1,
    CARRYOVER_DOWNSCALE = 2,
    CARRYOVER_PAUSE = 4,
    /* Not a usage threshold: a policy's forecast_days, set by store_policy_evaluate when the
     * exhaustion forecast (forecast.h) runs out within that many days; notify only. */
    CARRYOVER_FORECAST = 8,
};

struct carryover_thresholds {
    int64_t notify_ppm;    /* default 800000 */
    int64_t downscale_ppm; /* default 1000000 */
    int64_t grace_ppm;     /* pause at 1e6 + grace_ppm; default 200000 */
};

/* Flags (OR of enum carryover_flag) in force for used_sumin against total_sumin.  With
 * total 0 every threshold is reached (nothing may run).  A NULL th means the defaults.
 * Errors: ALLOT_EINVAL for negative inputs; *flags untouched. */
int carryover_flags(int64_t used_sumin, int64_t total_sumin, const struct carryover_thresholds *th,
                    unsigned *flags, struct allot_error *err);

/* What changed between two flag sets: *raised = flags newly set, *cleared = flags dropped.
 * The tick/settle code acts on raised (notify, move to slow QOS, pause) and undoes cleared. */
void carryover_flags_diff(unsigned before, unsigned after, unsigned *raised, unsigned *cleared);

#endif
