/* SPDX-License-Identifier: GPL-3.0-or-later */
/* billing.h - Slurm TRESBillingWeights and a job's billing, in exact fixed point (doc/design.md
 * §3.2).
 *
 * Design: a weight is kept as an integer count of 1e-9 units (`weight_nano`) plus the unit
 * suffix it was written with; the suffix divides by a power of 1024 exactly as Slurm 22.05
 * does (src/common/slurm_protocol_api.c _tres_weight_item + get_convert_unit_val): for mem
 * (and bb), whose base unit is the MiB, K and M divide by 1, G by 1024, T by 1024^2, P by
 * 1024^3 ("Mem=0.25G" is 0.25 per GiB); for every other TRES K divides by 1024, M by 1024^2,
 * and so on.  billing_compute() sums the weighted counts as one exact rational in 128 bits
 * and rounds once, up, to micro-units, so Mem=0.03125G on 1 GiB gives exactly 31250.
 *
 * Slurm's rule (src/common/assoc_mgr.c assoc_mgr_tres_weighted, 22.05.8): without weights
 * the billing is the allocated CPU count (job_mgr.c calc_job_billable_tres); with weights it
 * is the sum of weight x count over every TRES but billing itself; with PriorityFlags=MAX_TRES
 * it is MAX over the weighted cpu, mem, node and gres/<x> counts PLUS the sum of the others
 * (licenses, fs, bb, energy, ...).  Note: 22.05 takes the whole-job counts in that MAX, not
 * per-node counts, whatever the man page's "on a node" suggests; allot follows the code, so
 * allot's billing equals Slurm's.  Slurm stores the job's billing TRES as the double cast
 * to uint64 (job_mgr.c: tres_alloc_cnt[TRES_ARRAY_BILLING] = calc_job_billable_tres()), i.e.
 * truncated: see billing_slurm_units().
 * Negative weights (Slurm allows them) are refused: a charge is never negative.
 * Thread rule: plain data; functions are reentrant.
 */
#ifndef ALLOT_LIBCORE_BILLING_H
#define ALLOT_LIBCORE_BILLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libcore/tres.h"

#define BILLING_WEIGHTS_MAX TRES_LIST_MAX
#define BILLING_WEIGHT_MAX_NANO 1000000000000000000LL /* weights up to 1e9 per unit */

struct billing_weight {
    char name[TRES_NAME_MAX]; /* canonical lowercase TRES name ("cpu", "gres/gpu") */
    int64_t weight_nano;      /* the number written, x 1e9 (0.0625 -> 62500000) */
    char suffix;              /* unit written after it: 0, 'K', 'M', 'G', 'T' or 'P' */
    int div_exp;              /* the weight applies per 1024^div_exp of the base unit */
};

struct billing_weights {
    int n;         /* 0 = no weights: billing = allocated CPUs */
    bool max_tres; /* PriorityFlags=MAX_TRES */
    struct billing_weight w[BILLING_WEIGHTS_MAX];
};

/* Parse Slurm's TRESBillingWeights syntax ("CPU=1.0,Mem=0.25G,GRES/gpu=4.0"): names are
 * case-insensitive TRES names (tres.h), values non-negative decimals with at most 9 fraction
 * digits and at most 1e9, optionally followed by one of K, M, G, T, P (case-insensitive).
 * "" gives no weights.  max_tres: nonzero for PriorityFlags=MAX_TRES.
 * Errors: ALLOT_EINVAL naming the item (syntax, name, duplicate, negative, too precise,
 * too large); ALLOT_ETOOBIG over BILLING_WEIGHTS_MAX items.  *out untouched on error. */
int billing_weights_parse(const char *s, int max_tres, struct billing_weights *out,
                          struct allot_error *err);

/* Write w in Slurm syntax with Slurm's spelling (CPU, Mem, Node, Energy, GRES/gpu,
 * License/foo, FS/disk, BB/x, IC/x, VMem, Pages, Billing), shortest exact decimals and the
 * suffix as written: billing_weights_parse(format(w)) == w.  The MAX_TRES flag is not part
 * of the text.  Errors: ALLOT_ETOOBIG when buf (len bytes) is too small; buf untouched. */
int billing_weights_format(const struct billing_weights *w, char *buf, size_t len,
                           struct allot_error *err);

/* Billing of a job with TRES counts tres (mem in MiB) under weights w, in micro-units,
 * rounded up to the next micro-unit when not exact.  A TRES without a weight counts 0; the
 * billing TRES itself is ignored.  Errors: ALLOT_EINVAL on overflow (counts so large that
 * the result exceeds INT64_MAX micro-units); *billing_micro untouched on error. */
int billing_compute(const struct billing_weights *w, const struct tres_list *tres,
                    int64_t *billing_micro, struct allot_error *err);

/* The integer Slurm shows as the job's billing TRES for this billing: truncated toward
 * zero, as Slurm casts its double to uint64.  (Equal to Slurm's value except when the exact
 * billing lies within 1e-6 below an integer, where Slurm's own double rounding decides.) */
int64_t billing_slurm_units(int64_t billing_micro);

#endif
