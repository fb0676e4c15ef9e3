/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * slurm_price.h - a job's exact billing under the TRESBillingWeights of slurmctld's own
 * partition record, as both plugins price jobs (doc/slurm.md "Prices come from Slurm").
 *
 * Design: allotd's partition copy may lag slurm.conf (a reconfigure, an edit never typed
 * into allot); the plugins read the weights Slurm will bill with and send allotd the exact
 * billing (allot's fixed point, libcore/billing.h), so the price follows Slurm's
 * configuration whatever allot's copy holds.  Slurm's own billing TRES is the same sum
 * truncated to an integer; allot keeps the fraction.
 * No Slurm headers: both plugins and the unit tests use it.
 * Threads: reentrant.
 */
#ifndef ALLOT_PLUGINS_COMMON_SLURM_PRICE_H
#define ALLOT_PLUGINS_COMMON_SLURM_PRICE_H

#include <stdint.h>

#include "allot/error.h"

/*
 * slurm_price_billing - billing in micro-units of TRES (Slurm syntax, "cpu=2,mem=4G,node=1")
 * under WEIGHTS (a partition's TRESBillingWeights text; NULL or "" = none: the CPU count,
 * as Slurm bills) with PriorityFlags=MAX_TRES when MAX_TRES is nonzero.  0 with
 * *BILLING_MICRO set, or -1 with ERR naming what could not be read (the weights or the
 * TRES); *BILLING_MICRO untouched then.  A billing of 0 (all weights 0) sent to allotd
 * means "not given": allotd then prices with its own copy.
 */
int slurm_price_billing(const char *weights, int max_tres, const char *tres, int64_t *billing_micro,
                        struct allot_error *err);

#endif
