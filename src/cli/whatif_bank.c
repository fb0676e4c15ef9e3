/* SPDX-License-Identifier: GPL-3.0-or-later */
/* whatif_bank.c - the bank's side of a what-if replay (whatif_bank.h): the history read from
 * the bank's replies, the change words, and the one JSON report of `allot --json whatif` and
 * POST /v1/whatif.  The replay itself is libcore's.  Memory: x* allocators; strings borrowed
 * from the replies, which live until whatif_bank_free.
 */
#include "cli/whatif_bank.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/money.h"
#include "libcore/numparse.h"
#include "libutil/xalloc.h"

#define WHATIF_PATH_MAX 1024

/* ---- names to indices ------------------------------------------------------------------ */

static void names_init(struct whatif_names *t, size_t most)
{
    t->cap = 16;
    while (t->cap < 2 * most + 2)
        t->cap *= 2;
    t->key = xcalloc(t->cap, sizeof *t->key);
    t->val = xcalloc(t->cap, sizeof *t->val);
}

static void names_fini(struct whatif_names *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->key[i]);
    free(t->key);
    free(t->val);
}

static size_t names_slot(const struct whatif_names *t, const char *a, size_t na, const char *b,
                         size_t nb)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < na; i++)
        h = (h ^ (unsigned char)a[i]) * 1099511628211ULL;
    h = (h ^ 0x1f) * 1099511628211ULL;
    for (size_t i = 0; i < nb; i++)
        h = (h ^ (unsigned char)b[i]) * 1099511628211ULL;
    size_t s = (size_t)h & (t->cap - 1);
    for (;; s = (s + 1) & (t->cap - 1)) {
        const char *k = t->key[s];
        if (!k || (strncmp(k, a, na) == 0 && k[na] == 0x1f && strncmp(k + na + 1, b, nb) == 0 &&
                   k[na + 1 + nb] == '\0'))
            return s;
    }
}

static uint32_t names_get(const struct whatif_names *t, const char *a, size_t na, const char *b,
                          size_t nb)
{
    size_t s = names_slot(t, a, na, b, nb);
    return t->key[s] ? t->val[s] : WHATIF_NONE;
}

static void names_put(struct whatif_names *t, const char *a, size_t na, const char *b, size_t nb,
                      uint32_t v)
{
    size_t s = names_slot(t, a, na, b, nb);
    if (!t->key[s]) {
        char *k = xmalloc(na + nb + 2);
        memcpy(k, a, na);
        k[na] = 0x1f;
        memcpy(k + na + 1, b, nb);
        k[na + 1 + nb] = '\0';
        t->key[s] = k;
    }
    t->val[s] = v;
}

/* ---- the history ------------------------------------------------------------------------ */

const char *whatif_bank_own(struct whatif_bank *h, const char *s, size_t n)
{
    if (h->nowned == h->cap_owned) {
        h->cap_owned = h->cap_owned ? 2 * h->cap_owned : 1024;
        h->owned = xrealloc(h->owned, h->cap_owned * sizeof *h->owned);
    }
    char *c = xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = '\0';
    h->owned[h->nowned++] = c;
    return c;
}

/* base?k=v&... of the NULL-ended pairs kv, values percent-encoded, into buf. */
static void query_path(char *buf, size_t len, const char *base, const char *const *kv)
{
    size_t n = (size_t)snprintf(buf, len, "%s", base);
    for (int i = 0; kv[i] && kv[i + 1] && n + 4 < len; i += 2) {
        n += (size_t)snprintf(buf + n, len - n, "%c%s=", i ? '&' : '?', kv[i]);
        for (const unsigned char *v = (const unsigned char *)kv[i + 1]; *v && n + 4 < len; v++)
            n += (size_t)(isalnum(*v) || strchr("-._~", *v)
                              ? snprintf(buf + n, len - n, "%c", *v)
                              : snprintf(buf + n, len - n, "%%%02X", *v));
    }
}

static json_t *get_rows(struct whatif_bank *h, const char *path, struct allot_error *err)
{
    json_t *r = h->get(h->ctx, path, err);
    if (!r)
        return NULL;
    json_array_append_new(h->replies, r);
    json_t *rows = json_is_array(r) ? r : json_object_get(r, "items");
    if (!json_is_array(rows)) { /* a reply with no rows: an empty list, kept with the rest */
        rows = json_array();
        json_array_append_new(h->replies, rows);
    }
    return rows;
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int64_t num(json_t *o, const char *k)
{
    return (int64_t)json_integer_value(json_object_get(o, k));
}

static int64_t when(json_t *o, const char *k)
{
    int64_t t = 0;
    const char *s = json_string_value(json_object_get(o, k));
    if (s && *s && args_time(k, s, &t, NULL) < 0)
        t = 0;
    return t;
}

static uint32_t account_of(struct whatif_bank *h, const char *name)
{
    return names_get(&h->account_ix, name, strlen(name), "", 0);
}

static int load_accounts(struct whatif_bank *h, struct allot_error *err)
{
    json_t *rows = get_rows(h, "/v1/accounts", err);
    if (!rows)
        return -1;
    size_t n = json_array_size(rows);
    h->accounts = xcalloc(n ? n : 1, sizeof *h->accounts);
    names_init(&h->account_ix, n);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(rows, i);
        const char *name = str(r, "name");
        h->accounts[i] = (struct whatif_account){name, WHATIF_NONE, (uint32_t)num(r, "shares")};
        names_put(&h->account_ix, name, strlen(name), "", 0, (uint32_t)i);
    }
    h->naccounts = n;
    for (size_t i = 0; i < n; i++) {
        const char *parent = str(json_array_get(rows, i), "parent");
        if (*parent && (h->accounts[i].parent = account_of(h, parent)) == WHATIF_NONE)
            return allot_errorf(err, ALLOT_EINVAL, "account %s: parent %s not listed",
                                h->accounts[i].name, parent);
    }
    return 0;
}

/* The association (account, user), added with 1 share when the bank has none (a user of
 * the history who has left). */
static uint32_t user_of(struct whatif_bank *h, uint32_t account, const char *user, size_t n)
{
    const char *an = h->accounts[account].name;
    uint32_t u = names_get(&h->user_ix, an, strlen(an), user, n);
    if (u != WHATIF_NONE)
        return u;
    if (h->nusers == h->cap_users) {
        h->cap_users = h->cap_users ? 2 * h->cap_users : 64;
        h->users = xrealloc(h->users, h->cap_users * sizeof *h->users);
    }
    u = (uint32_t)h->nusers++;
    h->users[u] = (struct whatif_user){whatif_bank_own(h, user, n), account, 1};
    names_put(&h->user_ix, an, strlen(an), user, n, u);
    return u;
}

static int load_assocs(struct whatif_bank *h, struct allot_error *err)
{
    char p[WHATIF_PATH_MAX];
    query_path(p, sizeof p, "/v1/assocs", (const char *const[]){"cluster", h->cluster, NULL});
    json_t *rows = get_rows(h, p, err);
    if (!rows)
        return -1;
    names_init(&h->user_ix, json_array_size(rows) + 4096);
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *r = json_array_get(rows, i);
        const char *user = str(r, "user");
        uint32_t a = account_of(h, str(r, "account"));
        if (!*user || a == WHATIF_NONE)
            continue; /* account associations are the accounts themselves */
        uint32_t u = user_of(h, a, user, strlen(user));
        h->users[u].shares = (uint32_t)num(r, "shares"); /* per-partition ones: the last */
    }
    return 0;
}

static int load_partitions(struct whatif_bank *h, struct allot_error *err)
{
    char p[WHATIF_PATH_MAX];
    query_path(p, sizeof p, "/v1/partitions", (const char *const[]){"cluster", h->cluster, NULL});
    json_t *rows = get_rows(h, p, err);
    if (!rows)
        return -1;
    size_t n = json_array_size(rows);
    h->parts = xcalloc(n ? n : 1, sizeof *h->parts);
    h->w_before = xcalloc(n ? n : 1, sizeof *h->w_before);
    h->w_after = xcalloc(n ? n : 1, sizeof *h->w_after);
    names_init(&h->part_ix, n);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(rows, i);
        const char *name = str(r, "name");
        h->parts[i] = (struct whatif_partition){h->cluster, name, str(r, "resource")};
        if (billing_weights_parse(str(r, "billing_weights"),
                                  json_is_true(json_object_get(r, "max_tres")), &h->w_before[i],
                                  err) < 0)
            return allot_error_prefix(err, "partition %s", name);
        h->w_after[i] = h->w_before[i];
        names_put(&h->part_ix, name, strlen(name), "", 0, (uint32_t)i);
    }
    h->nparts = n;
    return 0;
}

static int load_allocs(struct whatif_bank *h, struct allot_error *err)
{
    json_t *rows = get_rows(h, "/v1/balances", err);
    if (!rows)
        return -1;
    size_t n = json_array_size(rows);
    h->allocs = xcalloc(n ? n : 1, sizeof *h->allocs);
    h->amounts_after = xcalloc(n ? n : 1, sizeof *h->amounts_after);
    h->pol_before = xcalloc(n ? n : 1, sizeof *h->pol_before);
    h->pol_after = xcalloc(n ? n : 1, sizeof *h->pol_after);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(rows, i);
        const char *cluster = str(r, "cluster");
        uint32_t a = account_of(h, str(r, "account"));
        if ((*cluster && strcmp(cluster, h->cluster) != 0) || a == WHATIF_NONE)
            continue; /* another cluster's: no job here draws on it */
        struct whatif_alloc *al = &h->allocs[h->nallocs];
        *al = (struct whatif_alloc){num(r, "id"),           a,
                                    str(r, "resource"),     cluster,
                                    when(r, "start"),       when(r, "end"),
                                    num(r, "granted_sumin")};
        h->amounts_after[h->nallocs++] = al->granted_sumin;
    }
    return 0;
}

static size_t alloc_index(const struct whatif_bank *h, int64_t id)
{
    size_t i = 0;
    while (i < h->nallocs && h->allocs[i].id != id)
        i++;
    return i;
}

/* The bank's policies, as the "before" of the allocations they sit on. */
static int load_policies(struct whatif_bank *h, struct allot_error *err)
{
    json_t *reply = h->get(h->ctx, "/v1/policies", err);
    if (!reply)
        return -1;
    json_array_append_new(h->replies, reply);
    json_t *rows = json_object_get(reply, "policies"); /* {"policies":[...]} */
    for (size_t k = 0; k < json_array_size(rows); k++) {
        json_t *r = json_array_get(rows, k);
        size_t i = alloc_index(h, num(r, "alloc"));
        enum period_kind kind;
        if (i == h->nallocs || period_kind_parse(str(r, "period"), &kind) < 0)
            continue;
        h->pol_before[i] = (struct whatif_policy){
            .on = true,
            .kind = kind,
            .base_sumin = num(r, "base_sumin"),
            .factor_ppm =
                json_is_true(json_object_get(r, "carryover")) ? num(r, "carryover_factor_ppm") : 0,
            .th = {.notify_ppm = num(r, "notify_ppm"),
                   .downscale_ppm = num(r, "downscale_ppm"),
                   .grace_ppm = num(r, "grace_ppm")},
        };
        h->pol_after[i] = h->pol_before[i];
    }
    return 0;
}

/* The QOS's UsageFactor and NoDecay, which weigh a job's usage for fair-share as in the bank. */
static int load_qos(struct whatif_bank *h, struct allot_error *err)
{
    json_t *rows = get_rows(h, "/v1/qos", err);
    if (!rows)
        return -1;
    size_t n = json_array_size(rows);
    names_init(&h->qos_ix, n);
    h->qos_factor = xcalloc(n ? n : 1, sizeof *h->qos_factor);
    h->qos_nodecay = xcalloc(n ? n : 1, sizeof *h->qos_nodecay);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(rows, i);
        const char *name = str(r, "name"), *f = str(r, "usage_factor");
        int64_t ppm = 1000000;
        if (*f && numparse_fixed(f, strlen(f), 6, &ppm) < 0)
            return allot_errorf(err, ALLOT_EINVAL, "qos %s: usage_factor '%s'", name, f);
        h->qos_factor[i] = (double)ppm / 1e6;
        h->qos_nodecay[i] = strcasestr(str(r, "flags"), "NoDecay") != NULL;
        names_put(&h->qos_ix, name, strlen(name), "", 0, (uint32_t)i);
    }
    return 0;
}

/* Weigh job j's usage by its QOS (name qos, n bytes); none or unknown: 1, decaying. */
static void job_qos(const struct whatif_bank *h, struct whatif_job *j, const char *qos, size_t n)
{
    uint32_t q = names_get(&h->qos_ix, qos, n, "", 0);
    j->usage_factor = q == WHATIF_NONE ? 1.0 : h->qos_factor[q];
    j->nodecay = q != WHATIF_NONE && h->qos_nodecay[q];
}

static void add_job(struct whatif_bank *h, const struct whatif_job *j)
{
    if (h->njobs == h->cap_jobs) {
        h->cap_jobs = h->cap_jobs ? 2 * h->cap_jobs : 1024;
        h->jobs = xrealloc(h->jobs, h->cap_jobs * sizeof *h->jobs);
    }
    h->jobs[h->njobs++] = *j;
}

int whatif_bank_job(struct whatif_bank *h, const char *what, int64_t id, const char *acct,
                    size_t na, const char *user, size_t nu, const char *part, size_t np,
                    const char *qos, size_t nq, struct whatif_job *j, struct allot_error *err)
{
    job_qos(h, j, qos, nq);
    uint32_t a = names_get(&h->account_ix, acct, na, "", 0);
    j->partition = names_get(&h->part_ix, part, np, "", 0);
    if (a == WHATIF_NONE)
        return allot_errorf(err, ALLOT_EINVAL, "%s: job %lld: account '%.*s' is not in the bank",
                            what, (long long)id, (int)na, acct);
    if (j->partition == WHATIF_NONE)
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: job %lld: partition '%.*s' is not one of cluster %s's", what,
                            (long long)id, (int)np, part, h->cluster);
    j->job_id = id;
    j->user = user_of(h, a, user, nu);
    if (!*j->alloc_tres) {
        h->skipped++; /* nothing to price it by */
        return 0;
    }
    add_job(h, j);
    return 0;
}

int whatif_bank_jobs(struct whatif_bank *h, const char *since, int64_t max_jobs,
                     struct allot_error *err)
{
    char p[WHATIF_PATH_MAX], limit[32], since_text[32];
    int64_t since_s = 0;
    if (since && args_time("since", since, &since_s, err) < 0)
        return -1;
    if (since) /* as allotd reads a time: a date, or ISO in UTC */
        args_format_time(since_s, since_text, sizeof since_text);
    /* Bounded: ask for one more than allowed, to tell "exactly the bound" from "over". */
    snprintf(limit, sizeof limit, "%lld", (long long)max_jobs + 1);
    const char *kv[10] = {"cluster", h->cluster, "status", "settled"};
    int k = 4;
    if (since) {
        kv[k++] = "since";
        kv[k++] = since_text;
    }
    if (max_jobs > 0) {
        kv[k++] = "limit";
        kv[k++] = limit;
    }
    query_path(p, sizeof p, "/v1/jobs", kv);
    json_t *rows = get_rows(h, p, err);
    if (!rows)
        return -1;
    if (max_jobs > 0 && (int64_t)json_array_size(rows) > max_jobs)
        return allot_errorf(err, ALLOT_ETOOBIG,
                            "whatif: the history has more than %lld settled jobs (the bound of "
                            "one replay); give since=",
                            (long long)max_jobs);
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *r = json_array_get(rows, i);
        const char *acct = str(r, "account"), *user = str(r, "user"), *part = str(r, "partition");
        const char *tres = str(r, "alloc_tres");
        struct whatif_job j = {
            .start_s = when(r, "start"),
            .end_s = when(r, "end"),
            .elapsed_s = num(r, "elapsed_s"),
            .time_limit_s = num(r, "time_limit_s"),
            .alloc_tres = *tres ? tres : str(r, "tres"),
            .node_fail = money_state_free(str(r, "state")),
        };
        const char *qos = str(r, "qos");
        /* A run settled without a start (never held) started elapsed before its end; one
         * without an end ended elapsed after its start. */
        if (!j.start_s && j.end_s >= j.elapsed_s)
            j.start_s = j.end_s - j.elapsed_s;
        if (j.end_s < j.start_s)
            j.end_s = j.start_s + j.elapsed_s;
        /* /v1/jobs's since= is the record's last change, which is at or after the end: the
         * runs that ended before since are dropped here, as from a listing. */
        if (since && j.end_s < since_s)
            continue;
        if (whatif_bank_job(h, "bank", num(r, "job_id"), acct, strlen(acct), user, strlen(user),
                            part, strlen(part), qos, strlen(qos), &j, err) < 0)
            return -1;
    }
    return 0;
}

/* ---- the change ------------------------------------------------------------------------- */

static int algo_parse(const char *s, enum fairshare_algo *out)
{
    static const char *const names[] = {"classic", "fair_tree", "flux"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (enum fairshare_algo)i;
            return 0;
        }
    return -1;
}

static const char *algo_name(enum fairshare_algo a)
{
    return a == FAIRSHARE_CLASSIC ? "classic" : a == FAIRSHARE_FLUX ? "flux" : "fair_tree";
}

/* A ratio typed as a decimal ("0.5") into parts per million. */
static int ratio_ppm(const char *key, const char *s, int64_t *ppm, struct allot_error *err)
{
    if (numparse_fixed(s, strlen(s), 6, ppm) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is not a decimal ratio (0.5)", key, s);
    return 0;
}

/* policy=month|quarter|year|total base=AMOUNT [carryover=F] [notify=F] [downscale=F]
 * [grace=F], or policy=none; unset ratios take the defaults of `allot policy add`. */
static int apply_policy(struct whatif_policy *p, const char *kind, struct kvlist *kvs,
                        struct allot_error *err)
{
    const char *base = args_get(kvs, "base"), *carry = args_get(kvs, "carryover");
    const char *notify = args_get(kvs, "notify"), *down = args_get(kvs, "downscale");
    const char *grace = args_get(kvs, "grace");
    if (strcmp(kind, "none") == 0) {
        *p = (struct whatif_policy){0};
        return 0;
    }
    struct whatif_policy n = {
        .on = true,
        .factor_ppm = CARRYOVER_DEFAULT_FACTOR_PPM,
        .th = {CARRYOVER_DEFAULT_NOTIFY_PPM, CARRYOVER_DEFAULT_DOWNSCALE_PPM,
               CARRYOVER_DEFAULT_GRACE_PPM},
    };
    if (period_kind_parse(kind, &n.kind) < 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "policy: '%s' is not month, quarter, year, total or none", kind);
    if (!base)
        return allot_errorf(err, ALLOT_EINVAL, "policy: needs base= (SU each period)");
    if (args_amount("base", base, 0, &n.base_sumin, err) < 0 ||
        (carry && ratio_ppm("carryover", carry, &n.factor_ppm, err) < 0) ||
        (notify && ratio_ppm("notify", notify, &n.th.notify_ppm, err) < 0) ||
        (down && ratio_ppm("downscale", down, &n.th.downscale_ppm, err) < 0) ||
        (grace && ratio_ppm("grace", grace, &n.th.grace_ppm, err) < 0))
        return -1;
    if (n.factor_ppm > CARRYOVER_PPM)
        return allot_errorf(err, ALLOT_EINVAL, "carryover: at most 1");
    *p = n;
    return 0;
}

/* One set of change words (the command line, or a line of changes=FILE) onto h's "after". */
int whatif_bank_change(struct whatif_bank *h, struct kvlist *kvs, const char *what,
                       struct allot_error *err)
{
    const char *part = args_get(kvs, "partition"), *weights = args_get(kvs, "weights");
    const char *max_tres = args_get(kvs, "max_tres"), *alloc = args_get(kvs, "alloc");
    const char *amount = args_get(kvs, "amount"), *algo = args_get(kvs, "algo");
    const char *halflife = args_get(kvs, "halflife");
    if ((weights || max_tres) && !part)
        return allot_errorf(err, ALLOT_EINVAL, "%s: weights= and max_tres= need partition=", what);
    if (part) {
        uint32_t i = names_get(&h->part_ix, part, strlen(part), "", 0);
        if (i == WHATIF_NONE)
            return allot_errorf(err, ALLOT_EINVAL, "%s: partition: '%s' is not one of cluster %s's",
                                what, part, h->cluster);
        if (!weights && !max_tres)
            return allot_errorf(err, ALLOT_EINVAL,
                                "%s: partition= needs weights= or max_tres=", what);
        int mt = h->w_after[i].max_tres;
        if (max_tres && args_bool("max_tres", max_tres, &mt, err) < 0)
            return -1;
        struct billing_weights w = h->w_after[i];
        if (weights && billing_weights_parse(weights, mt, &w, err) < 0)
            return allot_error_prefix(err, "%s: weights", what);
        w.max_tres = mt != 0;
        h->w_after[i] = w;
    }
    const char *policy = args_get(kvs, "policy");
    if (!alloc != !(amount || policy))
        return allot_errorf(err, ALLOT_EINVAL, "%s: alloc= goes with amount= or policy=", what);
    if (alloc) {
        int64_t id, sumin;
        if (args_uint("alloc", alloc, &id, err) < 0)
            return -1;
        size_t i = alloc_index(h, id);
        if (i == h->nallocs)
            return allot_errorf(err, ALLOT_EINVAL,
                                "%s: alloc: %lld is not an allocation cluster %s draws on", what,
                                (long long)id, h->cluster);
        if (amount) {
            if (args_amount("amount", amount, 0, &sumin, err) < 0)
                return -1;
            h->amounts_after[i] = sumin;
        }
        if (policy && apply_policy(&h->pol_after[i], policy, kvs, err) < 0)
            return allot_error_prefix(err, "%s", what);
    }
    if (algo) {
        if (algo_parse(algo, &h->fs_after.algo) < 0)
            return allot_errorf(err, ALLOT_EINVAL, "algo: '%s' is not classic, fair_tree or flux",
                                algo);
        h->algo_after = algo_name(h->fs_after.algo);
    }
    if (halflife) {
        int64_t s = 0;
        if (strcmp(halflife, "0") != 0 && args_duration("halflife", halflife, &s, err) < 0)
            return -1;
        h->decay_after.halflife_s = s;
    }
    return 0;
}

/* ---- output ----------------------------------------------------------------------------- */

static json_t *time_or_null(int64_t t)
{
    char buf[32];
    if (!t)
        return json_null();
    args_format_time(t, buf, sizeof buf);
    return json_string(buf);
}

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *refusals(const struct whatif_bank *h, const struct whatif_result *r,
                        const char *scenario)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->nrefusals; i++) {
        const struct whatif_refusal *f = &r->refusals[i];
        const struct whatif_job *j = &h->jobs[f->job];
        const struct whatif_user *u = &h->users[j->user];
        json_array_append_new(
            a, json_pack("{s:s,s:s,s:I,s:s,s:s,s:s,s:o,s:I,s:I,s:I}", "scenario", scenario,
                         "cluster", h->cluster, "job_id", (json_int_t)j->job_id, "account",
                         h->accounts[u->account].name, "user", u->name, "partition",
                         h->parts[j->partition].name, "time", time_or_null(f->time_s), "alloc_id",
                         (json_int_t)(f->alloc == WHATIF_NONE ? 0 : h->allocs[f->alloc].id),
                         "needed_sumin", (json_int_t)f->needed_sumin, "available_sumin",
                         (json_int_t)f->available_sumin));
    }
    return a;
}

/* periods_<when>, notify_<when>, downscale_<when>, pause_<when> of an allocation's row. */
static void alloc_policy_members(json_t *row, const struct whatif_alloc_result *r, const char *when)
{
    const struct {
        const char *name;
        int64_t t;
    } m[] = {{"notify", r->notify_s}, {"downscale", r->downscale_s}, {"pause", r->pause_s}};
    char key[32];
    snprintf(key, sizeof key, "periods_%s", when);
    json_object_set_new(row, key, json_integer(r->periods));
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        snprintf(key, sizeof key, "%s_%s", m[k].name, when);
        json_object_set_new(row, key, time_or_null(m[k].t));
    }
}

static json_t *report(const struct whatif_bank *h, const struct whatif_result *b,
                      const struct whatif_result *a, const char *source)
{
    json_t *accts = json_array(), *users = json_array(), *allocs = json_array();
    for (size_t i = 0; i < h->naccounts; i++) {
        const struct whatif_total *x = &b->accounts[i], *y = &a->accounts[i];
        if (!x->jobs && !x->refused && !y->jobs && !y->refused)
            continue;
        json_array_append_new(
            accts,
            json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "account", h->accounts[i].name,
                      "jobs_before", (json_int_t)x->jobs, "jobs_after", (json_int_t)y->jobs,
                      "charged_before_sumin", (json_int_t)x->charged_sumin, "charged_after_sumin",
                      (json_int_t)y->charged_sumin, "change_sumin",
                      (json_int_t)(y->charged_sumin - x->charged_sumin), "refused_before",
                      (json_int_t)x->refused, "refused_after", (json_int_t)y->refused,
                      "usage_before", real_or_null(b->account_usage[i]), "usage_after",
                      real_or_null(a->account_usage[i])));
    }
    for (size_t i = 0; i < h->nusers; i++) {
        const struct whatif_user_result *x = &b->users[i], *y = &a->users[i];
        json_array_append_new(
            users,
            json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:I,s:I}", "account",
                      h->accounts[h->users[i].account].name, "user", h->users[i].name,
                      "jobs_before", (json_int_t)x->t.jobs, "jobs_after", (json_int_t)y->t.jobs,
                      "charged_before_sumin", (json_int_t)x->t.charged_sumin, "charged_after_sumin",
                      (json_int_t)y->t.charged_sumin, "change_sumin",
                      (json_int_t)(y->t.charged_sumin - x->t.charged_sumin), "refused_before",
                      (json_int_t)x->t.refused, "refused_after", (json_int_t)y->t.refused,
                      "fairshare_before", real_or_null(x->fairshare), "fairshare_after",
                      real_or_null(y->fairshare), "rank_before", (json_int_t)x->rank, "rank_after",
                      (json_int_t)y->rank));
    }
    for (size_t i = 0; i < h->nallocs; i++) {
        const struct whatif_alloc_result *x = &b->allocs[i], *y = &a->allocs[i];
        const struct whatif_alloc *al = &h->allocs[i];
        json_array_append_new(
            allocs,
            json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:I,s:I}", "id", (json_int_t)al->id,
                      "account", h->accounts[al->account].name, "resource", al->resource,
                      "granted_before_sumin", (json_int_t)x->granted_sumin, "granted_after_sumin",
                      (json_int_t)y->granted_sumin, "used_before_sumin", (json_int_t)x->used_sumin,
                      "used_after_sumin", (json_int_t)y->used_sumin, "exhausted_before",
                      time_or_null(x->exhausted_s), "exhausted_after", time_or_null(y->exhausted_s),
                      "refused_before", (json_int_t)x->refused, "refused_after",
                      (json_int_t)y->refused));
        alloc_policy_members(json_array_get(allocs, json_array_size(allocs) - 1), x, "before");
        alloc_policy_members(json_array_get(allocs, json_array_size(allocs) - 1), y, "after");
    }
    json_t *refused = refusals(h, b, "before"), *more = refusals(h, a, "after");
    json_array_extend(refused, more);
    json_decref(more);
    json_t *changed = json_array();
    for (size_t i = 0; i < h->nparts; i++) {
        if (!memcmp(&h->w_before[i], &h->w_after[i], sizeof h->w_after[i]))
            continue;
        char wb[ALLOT_TRES_MAX], wa[ALLOT_TRES_MAX];
        if (billing_weights_format(&h->w_before[i], wb, sizeof wb, NULL) < 0 ||
            billing_weights_format(&h->w_after[i], wa, sizeof wa, NULL) < 0)
            snprintf(wa, sizeof wa, "?");
        json_array_append_new(
            changed, json_pack("{s:s,s:s,s:s,s:b,s:b}", "partition", h->parts[i].name,
                               "weights_before", wb, "weights_after", wa, "max_tres_before",
                               h->w_before[i].max_tres, "max_tres_after", h->w_after[i].max_tres));
    }
    return json_pack("{s:s,s:s,s:I,s:I,s:o,s:{s:s,s:I},s:{s:s,s:I},s:{s:I,s:I},s:o,s:o,s:o,s:o,"
                     "s:o}",
                     "cluster", h->cluster, "source", source, "jobs", (json_int_t)h->njobs,
                     "skipped", (json_int_t)h->skipped, "at", time_or_null(a->at_s), "before",
                     "algo", h->algo_before, "halflife_s", (json_int_t)h->decay_before.halflife_s,
                     "after", "algo", h->algo_after, "halflife_s",
                     (json_int_t)h->decay_after.halflife_s, "total", "before_sumin",
                     (json_int_t)b->total.charged_sumin, "after_sumin",
                     (json_int_t)a->total.charged_sumin, "partitions", changed, "accounts", accts,
                     "users", users, "allocations", allocs, "refusals", refused);
}

void whatif_bank_free(struct whatif_bank *h)
{
    json_decref(h->replies);
    free(h->accounts);
    free(h->users);
    free(h->parts);
    free(h->allocs);
    free(h->jobs);
    free(h->w_before);
    free(h->w_after);
    free(h->amounts_after);
    free(h->pol_before);
    free(h->pol_after);
    names_fini(&h->account_ix);
    names_fini(&h->user_ix);
    names_fini(&h->part_ix);
    names_fini(&h->qos_ix);
    free(h->qos_factor);
    free(h->qos_nodecay);
    for (size_t i = 0; i < h->nowned; i++)
        free(h->owned[i]);
    free(h->owned);
}

static int load_share(struct whatif_bank *h, struct allot_error *err)
{
    char p[WHATIF_PATH_MAX];
    query_path(p, sizeof p, "/v1/share", (const char *const[]){"cluster", h->cluster, NULL});
    json_t *r = h->get(h->ctx, p, err);
    if (!r)
        return -1;
    json_array_append_new(h->replies, r);
    if (algo_parse(str(r, "algo"), &h->fs_before.algo) < 0)
        h->fs_before.algo = FAIRSHARE_FAIR_TREE;
    h->algo_before = h->algo_after = algo_name(h->fs_before.algo);
    h->decay_before.halflife_s = num(r, "halflife_s");
    h->fs_after = h->fs_before;
    h->decay_after = h->decay_before;
    return 0;
}

int whatif_bank_load(struct whatif_bank *h, whatif_get_f get, void *ctx, struct allot_error *err)
{
    h->get = get;
    h->ctx = ctx;
    h->replies = json_array();
    if (load_accounts(h, err) < 0 || load_assocs(h, err) < 0 || load_partitions(h, err) < 0 ||
        load_allocs(h, err) < 0 || load_policies(h, err) < 0 || load_qos(h, err) < 0 ||
        load_share(h, err) < 0)
        return -1;
    return 0;
}

json_t *whatif_bank_report(struct whatif_bank *h, int64_t at_s, const char *source,
                           struct allot_error *err)
{
    struct whatif_result b = {0}, a = {0};
    struct whatif_input in = {
        .accounts = h->accounts,
        .naccounts = h->naccounts,
        .users = h->users,
        .nusers = h->nusers,
        .partitions = h->parts,
        .npartitions = h->nparts,
        .allocs = h->allocs,
        .nallocs = h->nallocs,
        .jobs = h->jobs,
        .njobs = h->njobs,
        .at_s = at_s,
    };
    struct whatif_scenario sb = {.weights = h->w_before,
                                 .policies = h->pol_before,
                                 .decay = h->decay_before,
                                 .fairshare = h->fs_before},
                           sa = {.weights = h->w_after,
                                 .amounts_sumin = h->amounts_after,
                                 .policies = h->pol_after,
                                 .decay = h->decay_after,
                                 .fairshare = h->fs_after};
    json_t *rep = NULL;
    if (whatif_run(&in, &sb, &b, err) == 0 && whatif_run(&in, &sa, &a, err) == 0)
        rep = report(h, &b, &a, source);
    whatif_result_free(&b);
    whatif_result_free(&a);
    return rep;
}
