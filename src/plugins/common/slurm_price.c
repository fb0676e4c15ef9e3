/* SPDX-License-Identifier: GPL-3.0-or-later */
/* slurm_price.c - exact billing under a Slurm partition's TRESBillingWeights (slurm_price.h). */
#include "plugins/common/slurm_price.h"

#include "libcore/billing.h"
#include "libcore/tres.h"

int slurm_price_billing(const char *weights, int max_tres, const char *tres, int64_t *billing_micro,
                        struct allot_error *err)
{
    struct billing_weights w;
    struct tres_list t;
    int64_t b;

    if (billing_weights_parse(weights ? weights : "", max_tres, &w, err) < 0)
        return allot_error_prefix(err, "Slurm's TRESBillingWeights \"%s\"", weights);
    if (tres_parse(tres ? tres : "", &t, err) < 0 || billing_compute(&w, &t, &b, err) < 0)
        return allot_error_prefix(err, "TRES \"%s\"", tres ? tres : "");
    *billing_micro = b;
    return 0;
}
