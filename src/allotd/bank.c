/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bank.c - a job's resource, billing and maximum cost (bank.h).  All arithmetic is
 * libcore's (integer SU-minutes, micro-unit billing); this file only wires the partition
 * to it. */
#include "allotd/bank.h"

#include <string.h>

#include "allotd/partcache.h"
#include "libcore/billing.h"
#include "libcore/money.h"
#include "libcore/tres.h"
#include "libutil/text.h"

int bank_cost(struct partcache *pc, store_t *st, const struct bank_job *j, struct bank_cost *out,
              struct allot_error *err)
{
    struct partition p;
    if (partcache_get(pc, st, j->cluster, j->partition, &p, err) < 0)
        return allot_error_prefix(err, "partition");
    if (j->time_limit_s <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "time_limit_s: must be positive");
    int64_t billing = j->billing_micro;
    const char *field = j->tres_field ? j->tres_field : "tres";
    /* No TRES and no billing would price the job at 0 and admit anything. */
    if (billing <= 0 && (!j->tres || !*j->tres))
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: required unless billing is given (the job's TRES, e.g. "
                            "cpu=4,mem=8G,node=1)",
                            field);
    if (billing <= 0 && bank_billing(&p, field, j->tres, &billing, err) < 0)
        return -1;
    int64_t cost;
    if (money_hold_sumin(billing, j->time_limit_s, &cost, err) < 0)
        return allot_error_prefix(err, "time_limit_s");
    text_copy(out->resource, sizeof(out->resource), p.resource);
    out->billing_micro = billing;
    out->cost_sumin = cost;
    return 0;
}

/* Make err name the request's key once.  tres_parse already starts its messages with
 * "tres:", its own name for the string; prefixing the key as well said "tres: tres: cpu: ..."
 * (or "alloc_tres: tres: ...").  billing_compute's messages ("billing: ...") get the key in
 * front.  The error code is kept (ETOOBIG stays ETOOBIG).  Returns -1. */
static int name_tres_field(struct allot_error *err, const char *field)
{
    static const char own[] = "tres:";
    if (!err || strncmp(err->msg, own, sizeof(own) - 1) != 0)
        return allot_error_prefix(err, "%s", field);
    char rest[sizeof(err->msg)];
    text_copy(rest, sizeof(rest), err->msg + sizeof(own) - 1);
    return allot_errorf(err, err->code, "%s:%s", field, rest);
}

int bank_billing(const struct partition *p, const char *field, const char *tres,
                 int64_t *billing_micro, struct allot_error *err)
{
    struct billing_weights w;
    struct tres_list t;
    if (billing_weights_parse(p->billing_weights, p->max_tres, &w, err) < 0)
        return allot_error_prefix(err, "billing_weights of partition %s", p->name);
    if (tres_parse(tres ? tres : "", &t, err) < 0 ||
        billing_compute(&w, &t, billing_micro, err) < 0)
        return name_tres_field(err, field);
    return 0;
}
