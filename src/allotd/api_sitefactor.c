/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_sitefactor.c - GET /v1/sitefactors?cluster=C: HADM's per-allocation site factor
 * (doc/design.md §6.4, libcore/sitefactor.h) and, for every account and partition of the cluster,
 * the Slurm site factor its pending jobs should carry.
 *
 * Design: computed on each read from the books, nothing cached (the agent asks every few
 * seconds at most).  For each allocation active now whose scope includes C:
 *   f_credit   = 1 - (used + held) / granted   (credit held by running jobs is spoken for)
 *   f_temporal = 1 - ((end - now) - min) / max, min and max over those allocations of
 *                (end - now): 1 for the first to end and for allocations that tie
 * combined by SiteFactorRule and scaled to [0, SiteFactorMax] (sitefactor_to_slurm).  The
 * mapping (account, partition) -> paying allocation is store_find_payer, the same rule that
 * charges the job, so the factor a job gets is its payer's.  Pairs with no payer are left
 * out (the agent leaves such jobs alone).  SiteFactorMax=0 serves the numbers with
 * "enabled": false so an operator can look before switching the push on.
 * Cost: O(allocations + accounts x partitions x payer lookup) on the worker's read store.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libconf/conf.h"
#include "libcore/sitefactor.h"
#include "libutil/xalloc.h"

struct sf_alloc {
    struct allocation a;
    struct balance b;
    double f_credit, f_temporal, sf;
    uint32_t slurm;
};

struct sf_ctx {
    const char *cluster;
    int64_t now_s;
    struct sf_alloc *v;
    size_t n, cap;
    char (*accounts)[ALLOT_NAME_MAX];
    size_t nacc, capacc;
    struct partition *parts;
    size_t npart, cappart;
};

static int on_alloc(const struct allocation *a, const struct balance *b, void *arg)
{
    struct sf_ctx *x = arg;
    if (a->cluster[0] && strcmp(a->cluster, x->cluster) != 0)
        return 0;
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 16;
        x->v = xrealloc(x->v, x->cap * sizeof *x->v);
    }
    x->v[x->n++] = (struct sf_alloc){.a = *a, .b = *b};
    return 0;
}

static int on_account(const struct account *a, void *arg)
{
    struct sf_ctx *x = arg;
    if (x->nacc == x->capacc) {
        x->capacc = x->capacc ? 2 * x->capacc : 16;
        x->accounts = xrealloc(x->accounts, x->capacc * sizeof *x->accounts);
    }
    memcpy(x->accounts[x->nacc++], a->name, ALLOT_NAME_MAX);
    return 0;
}

static int on_partition(const struct partition *p, void *arg)
{
    struct sf_ctx *x = arg;
    if (x->npart == x->cappart) {
        x->cappart = x->cappart ? 2 * x->cappart : 8;
        x->parts = xrealloc(x->parts, x->cappart * sizeof *x->parts);
    }
    x->parts[x->npart++] = *p;
    return 0;
}

static void sf_compute(struct sf_ctx *x, const struct allot_conf *c)
{
    int64_t max_dt = 0, min_dt = 0;
    for (size_t i = 0; i < x->n; i++) {
        int64_t dt = x->v[i].a.end_s - x->now_s;
        if (dt > max_dt)
            max_dt = dt;
        if (i == 0 || dt < min_dt)
            min_dt = dt;
    }
    /* conf_load checked these are finite numbers in range. */
    double nc = strtod(c->sf_nc, NULL), nt = strtod(c->sf_nt, NULL);
    double lc = strtod(c->sf_lc, NULL), lt = strtod(c->sf_lt, NULL);
    double x0c = strtod(c->sf_x0c, NULL), x0t = strtod(c->sf_x0t, NULL);
    int sigmoid = !strcmp(c->sf_rule, "sigmoid");
    for (size_t i = 0; i < x->n; i++) {
        struct sf_alloc *s = &x->v[i];
        s->f_credit = sitefactor_credit(s->b.used_sumin + s->b.held_sumin, s->b.granted_sumin);
        s->f_temporal = sitefactor_temporal(s->a.end_s - x->now_s, min_dt, max_dt);
        s->sf = sigmoid ? sitefactor_sigmoid2(s->f_credit, lc, x0c, s->f_temporal, lt, x0t)
                        : sitefactor_power(s->f_credit, s->f_temporal, nc, nt);
        s->slurm = sitefactor_to_slurm(s->sf, (uint32_t)c->sf_max);
    }
}

static const struct sf_alloc *sf_find(const struct sf_ctx *x, int64_t id)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].a.id == id)
            return &x->v[i];
    return NULL;
}

static void sf_fini(struct sf_ctx *x)
{
    free(x->v);
    free(x->accounts);
    free(x->parts);
}

int api_sitefactor_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct sf_ctx x = {.now_s = (int64_t)time(NULL)};
    if (!st || api_query_cluster(r, st, &x.cluster, err) < 0)
        return -1;
    if (!x.cluster)
        return allot_errorf(err, ALLOT_EINVAL, "cluster: required");
    struct alloc_filter f = {.active_at_s = x.now_s};
    if (store_alloc_list(st, &f, on_alloc, &x, err) < 0 ||
        store_account_list(st, on_account, &x, err) < 0 ||
        store_partition_list(st, x.cluster, on_partition, &x, err) < 0) {
        sf_fini(&x);
        return -1;
    }
    sf_compute(&x, r->conf);
    json_t *allocs = json_array(), *pairs = json_array();
    for (size_t i = 0; i < x.n; i++) {
        const struct sf_alloc *s = &x.v[i];
        json_array_append_new(
            allocs,
            json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:I}", "id", (json_int_t)s->a.id,
                      "account", s->a.account, "resource", s->a.resource, "end",
                      (json_int_t)s->a.end_s, "granted_sumin", (json_int_t)s->b.granted_sumin,
                      "used_sumin", (json_int_t)s->b.used_sumin, "held_sumin",
                      (json_int_t)s->b.held_sumin, "f_credit", s->f_credit, "f_temporal",
                      s->f_temporal, "factor", s->sf, "site_factor", (json_int_t)s->slurm));
    }
    for (size_t k = 0; k < x.nacc; k++) {
        for (size_t p = 0; p < x.npart; p++) {
            struct allocation a;
            struct balance b;
            struct allot_error e2 = {0};
            if (store_find_payer(st, x.accounts[k], x.parts[p].resource, x.cluster, x.now_s, &a, &b,
                                 &e2) < 0) {
                if (e2.code == ALLOT_ENOENT)
                    continue;
                *err = e2;
                json_decref(allocs);
                json_decref(pairs);
                sf_fini(&x);
                return -1;
            }
            const struct sf_alloc *s = sf_find(&x, a.id);
            if (!s)
                continue; /* the payer is scoped elsewhere; cannot happen for an active one */
            json_array_append_new(pairs,
                                  json_pack("{s:s,s:s,s:I,s:I}", "account", x.accounts[k],
                                            "partition", x.parts[p].name, "allocation",
                                            (json_int_t)a.id, "site_factor", (json_int_t)s->slurm));
        }
    }
    r->out =
        json_pack("{s:s,s:I,s:s,s:I,s:b,s:o,s:o}", "cluster", x.cluster, "time",
                  (json_int_t)x.now_s, "rule", r->conf->sf_rule, "max", (json_int_t)r->conf->sf_max,
                  "enabled", r->conf->sf_max > 0, "allocations", allocs, "jobs", pairs);
    sf_fini(&x);
    return r->out ? 0 : allot_errorf(err, ALLOT_ENOMEM, "sitefactors: out of memory");
}
