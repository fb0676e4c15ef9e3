/* SPDX-License-Identifier: GPL-3.0-or-later */
/* denial.c - the refusal text of a job that its allocation cannot pay for (denial.h). */
#include "libcore/denial.h"

#include <stdio.h>

#include "libcore/civil.h"
#include "libcore/money.h"
#include "libcore/numparse.h"

/* Who holds the credit: under HoldMode=submit a pending job holds its price from sbatch on,
 * so "running jobs hold" alone would blame jobs that may not exist.  held is the total,
 * pending its part held at submit; both are named when both hold some. */
static void holds_format(char *buf, size_t size, int64_t held, int64_t pending)
{
    char r[MONEY_FORMAT_MAX], p[MONEY_FORMAT_MAX];
    if (pending < 0 || pending > held)
        pending = pending < 0 ? 0 : held;
    if (money_format_sumin(held - pending, r, sizeof r) < 0)
        snprintf(r, sizeof r, "?");
    if (money_format_sumin(pending, p, sizeof p) < 0)
        snprintf(p, sizeof p, "?");
    if (pending == 0)
        snprintf(buf, size, "running jobs hold %s SU", r);
    else if (pending == held)
        snprintf(buf, size, "pending jobs hold %s SU (held at submit)", p);
    else
        snprintf(buf, size, "running jobs hold %s SU and pending jobs %s SU (held at submit)", r,
                 p);
}

void denial_format(char *buf, size_t size, const struct denial *d)
{
    if (size == 0)
        return;
    char job[64] = "";
    if (d->job_id > 0)
        snprintf(job, sizeof job, "job %lld run %d: ", (long long)d->job_id, d->run);
    /* The buffers hold any int64 (MONEY_FORMAT_MAX, 6 decimals, minutes), so the "?" are
     * for a caller's impossible value, never a truncation. */
    char cost[MONEY_FORMAT_MAX], billing[48], limit[48];
    if (money_format_sumin(d->cost_sumin, cost, sizeof cost) < 0)
        snprintf(cost, sizeof cost, "?");
    if (numparse_format_fixed(d->billing_micro, 6, billing, sizeof billing) < 0)
        snprintf(billing, sizeof billing, "?");
    if (money_format_limit(d->time_limit_s, limit, sizeof limit) < 0)
        snprintf(limit, sizeof limit, "?");

    if (d->alloc_id <= 0) {
        char at[CIVIL_UTC_LEN + 1];
        if (civil_format_utc(d->at_s, at) == 0)
            snprintf(at, sizeof at, "?");
        snprintf(buf, size,
                 "%saccount %s has no %s allocation on cluster %s active at %s, nor has any "
                 "parent account; this job may cost up to %s SU (billing %s x time limit %s). "
                 "Ask your PI or the allocation committee for an allocation, or use another "
                 "account (-A).",
                 job, d->account, d->resource, d->cluster, at, cost, billing, limit);
        return;
    }
    /* What the whole submission may cost: an array's tasks x one task's cost, a het
     * component's cost on top of its other components' (doc/money.md "Admission"). */
    char what[4 * MONEY_FORMAT_MAX + 256];
    int64_t total = d->cost_sumin;
    char totals[MONEY_FORMAT_MAX], extra[MONEY_FORMAT_MAX];
    if (d->tasks > 1 && money_mul(d->cost_sumin, d->tasks, &total) == 0 &&
        money_add(total, d->extra_sumin > 0 ? d->extra_sumin : 0, &total) == 0 &&
        money_format_sumin(total, totals, sizeof totals) == 0)
        snprintf(what, sizeof what,
                 "this job array may cost up to %s SU (%lld tasks x %s SU, billing %s x time "
                 "limit %s)",
                 totals, (long long)d->tasks, cost, billing, limit);
    else if (d->extra_sumin > 0 && money_add(d->cost_sumin, d->extra_sumin, &total) == 0 &&
             money_format_sumin(total, totals, sizeof totals) == 0 &&
             money_format_sumin(d->extra_sumin, extra, sizeof extra) == 0)
        snprintf(what, sizeof what,
                 "this heterogeneous job may cost up to %s SU (this component %s SU, billing "
                 "%s x time limit %s, and its other components %s SU)",
                 totals, cost, billing, limit, extra);
    else
        snprintf(what, sizeof what, "this job may cost up to %s SU (billing %s x time limit %s)",
                 cost, billing, limit);
    char avail[MONEY_FORMAT_MAX], holds[2 * MONEY_FORMAT_MAX + 64];
    if (money_format_sumin(d->available_sumin, avail, sizeof avail) < 0)
        snprintf(avail, sizeof avail, "?");
    holds_format(holds, sizeof holds, d->held_sumin, d->held_pending_sumin);
    snprintf(buf, size,
             "%saccount %s, allocation %lld (%s of account %s): available %s SU, but %s; %s. "
             "Lower the time limit (--time) or the resources, wait for %s, ask your PI for "
             "more credit, or use another account (-A).",
             job, d->account, (long long)d->alloc_id, d->resource, d->payer_account, avail, what,
             holds,
             d->held_pending_sumin > 0 && d->held_sumin <= d->held_pending_sumin
                 ? "pending jobs to run and finish"
                 : "running jobs to finish");
}
