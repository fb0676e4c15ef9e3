/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bank.c - cost and denial text (bank.h).  All arithmetic is libcore's (integer SU-minutes,
 * micro-unit billing); this file only wires the partition to it. */
#include "allotd/bank.h"

#include <stdio.h>
#include <string.h>

#include "allotd/partcache.h"
#include "libcore/billing.h"
#include "libcore/money.h"
#include "libcore/numparse.h"
#include "libcore/tres.h"
#include "libutil/text.h"

int bank_cost(struct partcache *pc, store_t *st, const struct bank_job *j,
              struct bank_cost *out, struct allot_error *err)
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
    if (tres_parse(tres ? tres : "", &t, err) < 0 || billing_compute(&w, &t, billing_micro, err) < 0)
        return name_tres_field(err, field);
    return 0;
}

void bank_denial(char *buf, size_t size, const struct bank_job *j, const struct bank_cost *c,
                 const struct allocation *alloc, const struct balance *bal)
{
    char cost[MONEY_FORMAT_MAX], avail[MONEY_FORMAT_MAX], held[MONEY_FORMAT_MAX];
    money_format_sumin(c->cost_sumin, cost, sizeof(cost));
    if (!alloc || alloc->id == 0) {
        snprintf(buf, size,
                 "account %s has no active %s allocation on cluster %s (nor has any parent "
                 "account); this job would cost up to %s SU. Ask your PI or the allocation "
                 "committee for an allocation, or submit with another account (-A).",
                 j->account, c->resource, j->cluster, cost);
        return;
    }
    char billing[48];
    if (numparse_format_fixed(c->billing_micro, 6, billing, sizeof(billing)) < 0)
        snprintf(billing, sizeof(billing), "?");
    money_format_sumin(bal->available_sumin, avail, sizeof(avail));
    money_format_sumin(bal->held_sumin, held, sizeof(held));
    char limit[48];
    if (money_format_limit(j->time_limit_s, limit, sizeof(limit)) < 0)
        snprintf(limit, sizeof(limit), "?");
    snprintf(buf, size,
             "account %s, allocation %lld (%s of account %s): available %s SU, but this job "
             "may cost up to %s SU (billing %s x time limit %s); running jobs "
             "hold %s SU. Lower the time limit (--time) or the resources, wait for running "
             "jobs to finish, or use another account.",
             j->account, (long long)alloc->id, alloc->resource, alloc->account, avail, cost,
             billing, limit, held);
}
