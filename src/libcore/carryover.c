/* SPDX-License-Identifier: GPL-3.0-or-later */
/* carryover.c - carryover, pushed limit and threshold flags, exactly (doc/design.md §5). */
#include "libcore/carryover.h"

#include <stddef.h>

typedef __int128 i128;

int carryover_total_sumin(int64_t base_sumin, int64_t prev_used_sumin, int64_t factor_ppm,
                          int64_t *total_sumin, int64_t *carry_sumin, struct allot_error *err)
{
    if (base_sumin < 0 || prev_used_sumin < 0 || factor_ppm < 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "carryover: base, previous use and factor must be >= 0");
    int64_t unused = base_sumin > prev_used_sumin ? base_sumin - prev_used_sumin : 0;
    i128 cap = (i128)base_sumin * factor_ppm / CARRYOVER_PPM; /* floor: both >= 0 */
    int64_t carry = (i128)unused < cap ? unused : (int64_t)cap;
    int64_t total;
    if (__builtin_add_overflow(base_sumin, carry, &total))
        return allot_errorf(err, ALLOT_EINVAL, "carryover: total overflows");
    if (total_sumin)
        *total_sumin = total;
    if (carry_sumin)
        *carry_sumin = carry;
    return 0;
}

int carryover_limit_tres_min(int64_t total_sumin, int64_t grace_ppm, int64_t *out,
                             struct allot_error *err)
{
    if (total_sumin < 0 || grace_ppm < 0)
        return allot_errorf(err, ALLOT_EINVAL, "carryover: total and grace must be >= 0");
    i128 v = (i128)total_sumin * ((i128)CARRYOVER_PPM + grace_ppm) / CARRYOVER_PPM;
    if (v > INT64_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "carryover: limit overflows");
    *out = (int64_t)v;
    return 0;
}

/* used >= total x ppm / 1e6, exactly. */
static int reached(int64_t used, int64_t total, int64_t ppm)
{
    return (i128)used * CARRYOVER_PPM >= (i128)total * ppm;
}

int carryover_flags(int64_t used_sumin, int64_t total_sumin, const struct carryover_thresholds *th,
                    unsigned *flags, struct allot_error *err)
{
    static const struct carryover_thresholds defaults = {
        CARRYOVER_DEFAULT_NOTIFY_PPM, CARRYOVER_DEFAULT_DOWNSCALE_PPM, CARRYOVER_DEFAULT_GRACE_PPM};
    if (!th)
        th = &defaults;
    if (used_sumin < 0 || total_sumin < 0 || th->notify_ppm < 0 || th->downscale_ppm < 0 ||
        th->grace_ppm < 0)
        return allot_errorf(err, ALLOT_EINVAL, "thresholds: negative usage, total or ratio");
    unsigned f = 0;
    if (reached(used_sumin, total_sumin, th->notify_ppm))
        f |= CARRYOVER_NOTIFY;
    if (reached(used_sumin, total_sumin, th->downscale_ppm))
        f |= CARRYOVER_DOWNSCALE;
    if (reached(used_sumin, total_sumin, CARRYOVER_PPM + th->grace_ppm))
        f |= CARRYOVER_PAUSE;
    *flags = f;
    return 0;
}

void carryover_flags_diff(unsigned before, unsigned after, unsigned *raised, unsigned *cleared)
{
    *raised = after & ~before;
    *cleared = before & ~after;
}
