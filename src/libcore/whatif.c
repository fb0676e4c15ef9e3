/* SPDX-License-Identifier: GPL-3.0-or-later */
/* whatif.c - the what-if replay (whatif.h): price every job with the bank's functions, walk
 * starts and ends in time order against the allocations, then fair-share at the end. */
#include "libcore/whatif.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/money.h"
#include "libcore/tres.h"
#include "libcore/usage.h"

/* A job's state during a replay. */
enum { J_PENDING = 0, J_HELD, J_REFUSED, J_DONE };

#define NO_MATCH (WHATIF_NONE - 1)

struct replay {
    const struct whatif_input *in;
    const struct whatif_scenario *s;
    struct whatif_result *out;
    int64_t *hold, *charge; /* per job, SU-minutes */
    uint32_t *payer;        /* per job: the allocation holding it */
    uint8_t *state;         /* per job: J_* */
    uint32_t *by_start, *by_end;
    uint32_t *alloc_order; /* allocations grouped by account */
    size_t *acc_first;     /* naccounts + 1: alloc_order[acc_first[a] .. acc_first[a + 1]) */
    int64_t *held;         /* per allocation */
    int64_t *pused, *ptotal, *pend; /* per allocation: the period's use, total and end */
    struct period *period;          /* per allocation with a policy: the current period */
    /* Resource and cluster as small ids, so the payer lookup compares integers: a
     * partition's are the index of the first partition with the same text; an allocation's
     * the same, NO_MATCH when no partition has it, WHATIF_NONE for cluster "" (any). */
    uint32_t *part_res, *part_cl, *alloc_res, *alloc_cl;
    usage_tree_t *tree;
};

int whatif_input_check(const struct whatif_input *in, struct allot_error *err)
{
    size_t roots = 0;
    if (in->naccounts == 0 || in->naccounts >= WHATIF_NONE || in->nusers >= WHATIF_NONE ||
        in->njobs >= WHATIF_NONE || in->nallocs >= WHATIF_NONE || in->npartitions >= WHATIF_NONE ||
        in->naccounts + in->nusers > USAGE_TREE_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "whatif: no accounts, or too many items");
    for (size_t i = 0; i < in->naccounts; i++) {
        const struct whatif_account *a = &in->accounts[i];
        if (!a->name || !*a->name)
            return allot_errorf(err, ALLOT_EINVAL, "whatif: account %zu has no name", i);
        if (a->parent == WHATIF_NONE)
            roots++;
        else if (a->parent >= in->naccounts)
            return allot_errorf(err, ALLOT_EINVAL, "whatif: account %s: parent out of range",
                                a->name);
    }
    if (roots != 1)
        return allot_errorf(err, ALLOT_EINVAL, "whatif: %zu root accounts, expected one", roots);
    /* A chain longer than the account count is a cycle. */
    for (size_t i = 0; i < in->naccounts; i++) {
        size_t steps = 0;
        for (uint32_t a = (uint32_t)i; a != WHATIF_NONE; a = in->accounts[a].parent)
            if (++steps > in->naccounts)
                return allot_errorf(err, ALLOT_EINVAL, "whatif: account %s: parent cycle",
                                    in->accounts[i].name);
    }
    for (size_t i = 0; i < in->nusers; i++)
        if (!in->users[i].name || !*in->users[i].name || in->users[i].account >= in->naccounts)
            return allot_errorf(err, ALLOT_EINVAL, "whatif: user association %zu is invalid", i);
    for (size_t i = 0; i < in->npartitions; i++) {
        const struct whatif_partition *p = &in->partitions[i];
        if (!p->name || !p->cluster || !p->resource || !*p->resource)
            return allot_errorf(err, ALLOT_EINVAL, "whatif: partition %zu has no resource", i);
    }
    for (size_t i = 0; i < in->nallocs; i++) {
        const struct whatif_alloc *a = &in->allocs[i];
        if (a->account >= in->naccounts || !a->resource || !a->cluster || a->end_s <= a->start_s ||
            a->granted_sumin < 0)
            return allot_errorf(err, ALLOT_EINVAL, "whatif: allocation %lld is invalid",
                                (long long)a->id);
    }
    for (size_t i = 0; i < in->njobs; i++) {
        const struct whatif_job *j = &in->jobs[i];
        if (j->user >= in->nusers || j->partition >= in->npartitions || j->start_s < 0 ||
            j->end_s < j->start_s || j->elapsed_s < 0 || j->time_limit_s < 0 || !j->alloc_tres ||
            !(j->usage_factor >= 0) || !isfinite(j->usage_factor))
            return allot_errorf(err, ALLOT_EINVAL, "whatif: job %lld is invalid",
                                (long long)j->job_id);
    }
    return 0;
}

/* ---- ordering ------------------------------------------------------------------------- */

/* Indices of the jobs in order of their start (or end) time, ties in index order: a stable
 * LSD radix sort on the time less the earliest, 11 bits a pass (a million jobs sort in a few
 * passes over memory, several times faster than a comparison sort). */
static int sort_jobs(const struct whatif_input *in, int by_end, uint32_t *order,
                     struct allot_error *err)
{
    size_t n = in->njobs;
    if (n == 0)
        return 0;
    uint64_t *key = malloc(2 * n * sizeof *key);
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (!key || !tmp) {
        free(key);
        free(tmp);
        return allot_errorf(err, ALLOT_ENOMEM, "whatif: out of memory for %zu jobs", n);
    }
    int64_t lo = INT64_MAX;
    uint64_t hi = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t t = by_end ? in->jobs[i].end_s : in->jobs[i].start_s;
        lo = t < lo ? t : lo;
    }
    for (size_t i = 0; i < n; i++) {
        key[i] = (uint64_t)((by_end ? in->jobs[i].end_s : in->jobs[i].start_s) - lo);
        hi = key[i] > hi ? key[i] : hi;
        order[i] = (uint32_t)i;
    }
    /* Keys travel with their indices, so each pass reads memory in order. */
    uint64_t *ks = key, *kd = key + n;
    uint32_t *src = order, *dst = tmp;
    for (int shift = 0; shift < 64 && (hi >> shift) != 0; shift += 11) {
        size_t count[2049] = {0};
        for (size_t i = 0; i < n; i++)
            count[((ks[i] >> shift) & 2047) + 1]++;
        for (size_t b = 0; b < 2048; b++)
            count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) {
            size_t d = count[(ks[i] >> shift) & 2047]++;
            dst[d] = src[i];
            kd[d] = ks[i];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
        uint64_t *u = ks;
        ks = kd;
        kd = u;
    }
    if (src != order)
        memcpy(order, src, n * sizeof *order);
    free(key);
    free(tmp);
    return 0;
}

/* The id of text among the partitions' resources (cluster 0) or clusters (1). */
static uint32_t text_id(const struct whatif_input *in, const char *text, int cluster)
{
    for (size_t p = 0; p < in->npartitions; p++)
        if (strcmp(cluster ? in->partitions[p].cluster : in->partitions[p].resource, text) == 0)
            return (uint32_t)p;
    return NO_MATCH;
}

static int index_allocs(struct replay *r, struct allot_error *err)
{
    const struct whatif_input *in = r->in;
    for (size_t p = 0; p < in->npartitions; p++) {
        r->part_res[p] = text_id(in, in->partitions[p].resource, 0);
        r->part_cl[p] = text_id(in, in->partitions[p].cluster, 1);
    }
    for (size_t i = 0; i < in->nallocs; i++) {
        r->alloc_res[i] = text_id(in, in->allocs[i].resource, 0);
        r->alloc_cl[i] =
            *in->allocs[i].cluster ? text_id(in, in->allocs[i].cluster, 1) : WHATIF_NONE;
    }
    for (size_t i = 0; i < in->nallocs; i++)
        r->acc_first[in->allocs[i].account + 1]++;
    for (size_t a = 0; a < in->naccounts; a++)
        r->acc_first[a + 1] += r->acc_first[a];
    size_t *fill = malloc((in->naccounts + 1) * sizeof *fill);
    if (!fill)
        return allot_errorf(err, ALLOT_ENOMEM, "whatif: out of memory");
    memcpy(fill, r->acc_first, (in->naccounts + 1) * sizeof *fill);
    for (size_t i = 0; i < in->nallocs; i++)
        r->alloc_order[fill[in->allocs[i].account]++] = (uint32_t)i;
    free(fill);
    return 0;
}

/* ---- pricing -------------------------------------------------------------------------- */

/* The bank's hold and settle charge of job i under the scenario's weights. */
static int price(struct replay *r, size_t i, struct allot_error *err)
{
    const struct whatif_job *j = &r->in->jobs[i];
    struct tres_list t;
    int64_t billing, hold, charge;
    if (tres_parse(j->alloc_tres, &t, err) < 0 ||
        billing_compute(&r->s->weights[j->partition], &t, &billing, err) < 0 ||
        money_hold_sumin(billing, j->time_limit_s > 0 ? j->time_limit_s : j->elapsed_s, &hold,
                         err) < 0 ||
        money_charge_sumin(billing, j->elapsed_s, &charge, err) < 0)
        return allot_error_prefix(err, "whatif: job %lld", (long long)j->job_id);
    r->hold[i] = hold;
    r->charge[i] = j->node_fail ? 0 : charge < hold ? charge : hold;
    return 0;
}

/* ---- the replay ----------------------------------------------------------------------- */

static int64_t granted(const struct replay *r, uint32_t a)
{
    return r->s->amounts_sumin ? r->s->amounts_sumin[a] : r->in->allocs[a].granted_sumin;
}

/* The allocation that pays job j at its start, as the bank finds it; WHATIF_NONE if none. */
static uint32_t payer_of(const struct replay *r, const struct whatif_job *j)
{
    const struct whatif_input *in = r->in;
    uint32_t res = r->part_res[j->partition], cl = r->part_cl[j->partition];
    for (uint32_t a = in->users[j->user].account; a != WHATIF_NONE; a = in->accounts[a].parent)
        for (size_t k = r->acc_first[a]; k < r->acc_first[a + 1]; k++) {
            uint32_t x = r->alloc_order[k];
            const struct whatif_alloc *al = &in->allocs[x];
            if (r->alloc_res[x] == res && (r->alloc_cl[x] == WHATIF_NONE || r->alloc_cl[x] == cl) &&
                al->start_s <= j->start_s && j->start_s < al->end_s)
                return x;
        }
    return WHATIF_NONE;
}

static int refuse(struct replay *r, uint32_t i, uint32_t a, int64_t available,
                  struct allot_error *err)
{
    struct whatif_result *o = r->out;
    const struct whatif_job *j = &r->in->jobs[i];
    /* Refusals are rare next to jobs: grow by doubling. */
    if ((o->nrefusals & (o->nrefusals - 1)) == 0) {
        size_t cap = o->nrefusals ? 2 * o->nrefusals : 1;
        struct whatif_refusal *n = realloc(o->refusals, cap * sizeof *n);
        if (!n)
            return allot_errorf(err, ALLOT_ENOMEM, "whatif: out of memory");
        o->refusals = n;
    }
    o->refusals[o->nrefusals++] = (struct whatif_refusal){
        .job = i,
        .alloc = a,
        .time_s = j->start_s,
        .needed_sumin = r->hold[i],
        .available_sumin = available,
    };
    r->state[i] = J_REFUSED;
    uint32_t acct = r->in->users[j->user].account;
    o->total.refused++;
    o->accounts[acct].refused++;
    o->users[j->user].t.refused++;
    if (a != WHATIF_NONE) {
        o->allocs[a].refused++;
        if (!o->allocs[a].exhausted_s)
            o->allocs[a].exhausted_s = j->start_s;
    }
    return 0;
}

static int add(int64_t *sum, int64_t v, struct allot_error *err)
{
    if (money_add(*sum, v, sum) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "whatif: a total leaves int64");
    return 0;
}

/* Move allocation a's policy to the period holding t: each new period's total is the base
 * plus the carry of the last one's unused part (carryover.h); nothing for an allocation
 * without a policy (its period never ends). */
static int advance(struct replay *r, uint32_t a, int64_t t, struct allot_error *err)
{
    const struct whatif_policy *p = r->s->policies ? &r->s->policies[a] : NULL;
    while (t >= r->pend[a]) {
        int64_t total;
        if (period_next(&r->period[a], &r->period[a], err) < 0 ||
            period_end_utc(&r->period[a], NULL, &r->pend[a], err) < 0 ||
            carryover_total_sumin(p->base_sumin, r->pused[a], p->factor_ppm, &total, NULL, err) <
                0 ||
            add(&r->out->allocs[a].granted_sumin, total, err) < 0)
            return allot_error_prefix(err, "whatif: allocation %lld",
                                      (long long)r->in->allocs[a].id);
        r->ptotal[a] = total;
        r->pused[a] = 0;
        r->out->allocs[a].periods++;
    }
    return 0;
}

static int start(struct replay *r, uint32_t i, struct allot_error *err)
{
    const struct whatif_job *j = &r->in->jobs[i];
    uint32_t a = payer_of(r, j);
    if (a == WHATIF_NONE)
        return refuse(r, i, a, 0, err);
    if (advance(r, a, j->start_s, err) < 0)
        return -1;
    int64_t avail = r->ptotal[a] - r->pused[a] - r->held[a];
    if (avail < r->hold[i])
        return refuse(r, i, a, avail, err);
    r->held[a] += r->hold[i]; /* held <= total - used: no overflow */
    r->payer[i] = a;
    r->state[i] = J_HELD;
    return 0;
}

static int end(struct replay *r, uint32_t i, struct allot_error *err)
{
    const struct whatif_job *j = &r->in->jobs[i];
    struct whatif_result *o = r->out;
    uint32_t a = r->payer[i], acct = r->in->users[j->user].account;
    int64_t c = r->charge[i];
    if (advance(r, a, j->end_s, err) < 0)
        return -1;
    r->held[a] -= r->hold[i];
    r->pused[a] += c; /* c <= the hold, which the balance covered */
    if (add(&o->allocs[a].used_sumin, c, err) < 0)
        return -1;
    if (!o->allocs[a].exhausted_s && r->pused[a] >= r->ptotal[a])
        o->allocs[a].exhausted_s = j->end_s;
    if (r->s->policies && r->s->policies[a].on) {
        unsigned flags;
        if (carryover_flags(r->pused[a], r->ptotal[a], &r->s->policies[a].th, &flags, err) < 0)
            return -1;
        int64_t *first[] = {&o->allocs[a].notify_s, &o->allocs[a].downscale_s,
                            &o->allocs[a].pause_s};
        const unsigned bit[] = {CARRYOVER_NOTIFY, CARRYOVER_DOWNSCALE, CARRYOVER_PAUSE};
        for (int k = 0; k < 3; k++)
            if ((flags & bit[k]) && !*first[k])
                *first[k] = j->end_s;
    }
    r->state[i] = J_DONE;
    if (add(&o->total.charged_sumin, c, err) < 0 ||
        add(&o->accounts[acct].charged_sumin, c, err) < 0 ||
        add(&o->users[j->user].t.charged_sumin, c, err) < 0)
        return -1;
    o->total.jobs++;
    o->accounts[acct].jobs++;
    o->users[j->user].t.jobs++;
    size_t node = r->in->naccounts + j->user;
    return usage_tree_charge(r->tree, node, &r->s->decay, j->end_s, (double)c, j->usage_factor,
                             j->nodecay, err);
}

/* Starts and ends in time order, ends first at one instant; a job that ends at the instant
 * it starts is started first. */
static int walk(struct replay *r, struct allot_error *err)
{
    const struct whatif_job *jobs = r->in->jobs;
    size_t n = r->in->njobs, s = 0, e = 0;
    while (e < n) {
        if (s < n && jobs[r->by_start[s]].start_s < jobs[r->by_end[e]].end_s) {
            uint32_t i = r->by_start[s++];
            if (r->state[i] == J_PENDING && start(r, i, err) < 0)
                return -1;
            continue;
        }
        uint32_t i = r->by_end[e++];
        if (r->state[i] == J_PENDING && start(r, i, err) < 0)
            return -1;
        if (r->state[i] == J_HELD && end(r, i, err) < 0)
            return -1;
    }
    return 0;
}

static int build_tree(struct replay *r, struct allot_error *err)
{
    const struct whatif_input *in = r->in;
    size_t n = in->naccounts + in->nusers;
    struct usage_assoc_spec *spec = calloc(n, sizeof *spec);
    if (!spec)
        return allot_errorf(err, ALLOT_ENOMEM, "whatif: out of memory");
    for (size_t a = 0; a < in->naccounts; a++)
        spec[a] = (struct usage_assoc_spec){
            .parent = in->accounts[a].parent == WHATIF_NONE ? -1 : (int64_t)in->accounts[a].parent,
            .shares = in->accounts[a].shares,
            .account = in->accounts[a].name,
        };
    for (size_t u = 0; u < in->nusers; u++)
        spec[in->naccounts + u] = (struct usage_assoc_spec){
            .parent = in->users[u].account,
            .shares = in->users[u].shares,
            .account = in->accounts[in->users[u].account].name,
            .user = in->users[u].name,
        };
    r->tree = usage_tree_create(spec, n, err);
    free(spec);
    return r->tree ? 0 : -1;
}

static int fair_share(struct replay *r, struct allot_error *err)
{
    const struct whatif_input *in = r->in;
    struct whatif_result *o = r->out;
    size_t n = in->naccounts + in->nusers;
    o->at_s = in->at_s;
    for (size_t i = 0; !in->at_s && i < in->njobs; i++)
        if (in->jobs[i].end_s > o->at_s)
            o->at_s = in->jobs[i].end_s;
    usage_tree_evaluate(r->tree, &r->s->decay, o->at_s);
    struct fairshare_row *rows = malloc(n * sizeof *rows);
    if (!rows)
        return allot_errorf(err, ALLOT_ENOMEM, "whatif: out of memory");
    if (fairshare_compute(r->tree, &r->s->fairshare, rows, err) < 0) {
        free(rows);
        return -1;
    }
    for (size_t a = 0; a < in->naccounts; a++)
        o->account_usage[a] = rows[a].raw_usage;
    for (size_t u = 0; u < in->nusers; u++) {
        o->users[u].fairshare = rows[in->naccounts + u].fairshare;
        o->users[u].level_fs = rows[in->naccounts + u].level_fs;
        o->users[u].rank = rows[in->naccounts + u].rank;
    }
    free(rows);
    return 0;
}

static void replay_free(struct replay *r)
{
    free(r->hold);
    free(r->charge);
    free(r->payer);
    free(r->state);
    free(r->by_start);
    free(r->by_end);
    free(r->alloc_order);
    free(r->acc_first);
    free(r->held);
    free(r->pused);
    free(r->ptotal);
    free(r->pend);
    free(r->period);
    free(r->part_res);
    free(r->part_cl);
    free(r->alloc_res);
    free(r->alloc_cl);
    usage_tree_destroy(r->tree);
}

void whatif_result_free(struct whatif_result *r)
{
    free(r->accounts);
    free(r->users);
    free(r->allocs);
    free(r->refusals);
    free(r->account_usage);
    memset(r, 0, sizeof *r);
}

/* Allocation a's first period: its whole amount, or its policy's base for the period (UTC)
 * holding its start (not prorated, as the bank does). */
static int open_alloc(struct replay *r, uint32_t a, struct allot_error *err)
{
    const struct whatif_alloc *al = &r->in->allocs[a];
    const struct whatif_policy *p = r->s->policies ? &r->s->policies[a] : NULL;
    struct whatif_alloc_result *o = &r->out->allocs[a];
    r->pend[a] = INT64_MAX;
    if (p && p->on) {
        unsigned flags;
        if (p->base_sumin < 0 || p->factor_ppm < 0 ||
            carryover_flags(0, 1, &p->th, &flags, err) < 0 ||
            period_of(p->kind, al->start_s, NULL, &r->period[a], err) < 0 ||
            period_end_utc(&r->period[a], NULL, &r->pend[a], err) < 0)
            return allot_errorf(err, ALLOT_EINVAL, "whatif: allocation %lld: a bad policy",
                                (long long)al->id);
        o->granted_sumin = p->base_sumin;
        o->periods = 1;
    } else {
        o->granted_sumin = granted(r, a);
    }
    if (o->granted_sumin < 0)
        return allot_errorf(err, ALLOT_EINVAL, "whatif: allocation %lld: negative amount",
                            (long long)al->id);
    r->ptotal[a] = o->granted_sumin;
    return 0;
}

static int replay(struct replay *r, struct allot_error *err)
{
    const struct whatif_input *in = r->in;
    struct whatif_result *o = r->out;
    size_t nj = in->njobs ? in->njobs : 1, na = in->nallocs ? in->nallocs : 1;
    r->hold = malloc(nj * sizeof *r->hold);
    r->charge = malloc(nj * sizeof *r->charge);
    r->payer = malloc(nj * sizeof *r->payer);
    r->state = calloc(nj, 1);
    r->by_start = malloc(nj * sizeof *r->by_start);
    r->by_end = malloc(nj * sizeof *r->by_end);
    r->alloc_order = malloc(na * sizeof *r->alloc_order);
    r->acc_first = calloc(in->naccounts + 1, sizeof *r->acc_first);
    r->held = calloc(na, sizeof *r->held);
    r->pused = calloc(na, sizeof *r->pused);
    r->ptotal = calloc(na, sizeof *r->ptotal);
    r->pend = calloc(na, sizeof *r->pend);
    r->period = calloc(na, sizeof *r->period);
    size_t np = in->npartitions ? in->npartitions : 1;
    r->part_res = malloc(np * sizeof *r->part_res);
    r->part_cl = malloc(np * sizeof *r->part_cl);
    r->alloc_res = malloc(na * sizeof *r->alloc_res);
    r->alloc_cl = malloc(na * sizeof *r->alloc_cl);
    o->accounts = calloc(in->naccounts, sizeof *o->accounts);
    o->users = calloc(in->nusers ? in->nusers : 1, sizeof *o->users);
    o->allocs = calloc(na, sizeof *o->allocs);
    o->account_usage = calloc(in->naccounts, sizeof *o->account_usage);
    if (!r->hold || !r->charge || !r->payer || !r->state || !r->by_start || !r->by_end ||
        !r->alloc_order || !r->acc_first || !r->held || !r->part_res || !r->part_cl ||
        !r->alloc_res || !r->alloc_cl || !r->pused || !r->ptotal || !r->pend || !r->period ||
        !o->accounts || !o->users || !o->allocs || !o->account_usage)
        return allot_errorf(err, ALLOT_ENOMEM, "whatif: out of memory for %zu jobs", in->njobs);
    for (size_t a = 0; a < in->nallocs; a++)
        if (open_alloc(r, (uint32_t)a, err) < 0)
            return -1;
    for (size_t i = 0; i < in->njobs; i++)
        if (price(r, i, err) < 0)
            return -1;
    if (index_allocs(r, err) < 0 || sort_jobs(in, 0, r->by_start, err) < 0 ||
        sort_jobs(in, 1, r->by_end, err) < 0 || build_tree(r, err) < 0 || walk(r, err) < 0)
        return -1;
    return fair_share(r, err);
}

int whatif_run(const struct whatif_input *in, const struct whatif_scenario *s,
               struct whatif_result *out, struct allot_error *err)
{
    memset(out, 0, sizeof *out);
    if (whatif_input_check(in, err) < 0 || decay_params_check(&s->decay, err) < 0)
        return -1;
    if (!s->weights && in->npartitions)
        return allot_errorf(err, ALLOT_EINVAL, "whatif: no billing weights");
    struct replay r = {.in = in, .s = s, .out = out};
    int rc = replay(&r, err);
    replay_free(&r);
    if (rc < 0)
        whatif_result_free(out);
    return rc;
}
