/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_whatif.c - `allot whatif`: replay a cluster's job history under a proposed change
 * (billing weights, MAX_TRES, allocation amounts, fair-share algorithm or half-life) and show,
 * per account, user and allocation, what the bank's settings give ("before") and what the
 * change gives ("after") (doc/whatif.md; the replay is libcore/whatif.c).
 *
 * Design: everything is read from the bank with GETs (accounts, associations, partitions,
 * balances, /v1/share's algorithm and half-life, and the settled jobs unless a `sacct -P`
 * file is given), so the bank is never written.  Names become indices here; the replay
 * itself is libcore's.  Memory: x* allocators; strings borrowed from the replies and the
 * listing, which live until the command ends.
 */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/model.h"
#include "libcore/money.h"
#include "libcore/numparse.h"
#include "libcore/whatif.h"
#include "libslurmtext/sacct_job.h"
#include "libutil/xalloc.h"

/* ---- names to indices ------------------------------------------------------------------ */

/* Open-addressing table of "a\x1fb" keys to indices; sized at twice its most entries. */
struct names {
    char **key;
    uint32_t *val;
    size_t cap;
};

static void names_init(struct names *t, size_t most)
{
    t->cap = 16;
    while (t->cap < 2 * most + 2)
        t->cap *= 2;
    t->key = xcalloc(t->cap, sizeof *t->key);
    t->val = xcalloc(t->cap, sizeof *t->val);
}

static void names_fini(struct names *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->key[i]);
    free(t->key);
    free(t->val);
}

static size_t names_slot(const struct names *t, const char *a, size_t na, const char *b, size_t nb)
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

static uint32_t names_get(const struct names *t, const char *a, size_t na, const char *b, size_t nb)
{
    size_t s = names_slot(t, a, na, b, nb);
    return t->key[s] ? t->val[s] : WHATIF_NONE;
}

static void names_put(struct names *t, const char *a, size_t na, const char *b, size_t nb,
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

struct hist {
    char cluster[ALLOT_NAME_MAX];
    json_t *replies; /* every reply kept alive: the input borrows its strings */
    struct whatif_account *accounts;
    struct whatif_user *users;
    struct whatif_partition *parts;
    struct whatif_alloc *allocs;
    struct whatif_job *jobs;
    size_t naccounts, nusers, nparts, nallocs, njobs, cap_users, cap_jobs;
    struct names account_ix, user_ix, part_ix, qos_ix;
    double *qos_factor; /* per QOS: UsageFactor */
    bool *qos_nodecay;  /* per QOS: the NoDecay flag */
    char **owned;       /* strings copied from the listing */
    size_t nowned, cap_owned;
    int64_t skipped; /* jobs the replay cannot price (no TRES) or outside the cluster */
    struct billing_weights *w_before, *w_after;
    int64_t *amounts_after;
    struct whatif_policy *pol_before, *pol_after; /* per allocation */
    struct decay_params decay_before, decay_after;
    struct fairshare_opts fs_before, fs_after;
    const char *algo_before, *algo_after;
    char halflife_after_text[32];
};

static const char *own(struct hist *h, const char *s, size_t n)
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

static json_t *get_rows(struct cli *cli, struct hist *h, const char *path, struct allot_error *err)
{
    json_t *r = cli_get_json(cli, path, err);
    if (!r)
        return NULL;
    json_array_append_new(h->replies, r);
    json_t *rows = cli_rows(r);
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

static uint32_t account_of(struct hist *h, const char *name)
{
    return names_get(&h->account_ix, name, strlen(name), "", 0);
}

static int load_accounts(struct cli *cli, struct hist *h, struct allot_error *err)
{
    json_t *rows = get_rows(cli, h, "/v1/accounts", err);
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
static uint32_t user_of(struct hist *h, uint32_t account, const char *user, size_t n)
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
    h->users[u] = (struct whatif_user){own(h, user, n), account, 1};
    names_put(&h->user_ix, an, strlen(an), user, n, u);
    return u;
}

static int load_assocs(struct cli *cli, struct hist *h, struct allot_error *err)
{
    struct path p;
    path_init(&p, "/v1/assocs");
    path_query(&p, "cluster", h->cluster);
    json_t *rows = get_rows(cli, h, p.s, err);
    path_fini(&p);
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

static int load_partitions(struct cli *cli, struct hist *h, struct allot_error *err)
{
    struct path p;
    path_init(&p, "/v1/partitions");
    path_query(&p, "cluster", h->cluster);
    json_t *rows = get_rows(cli, h, p.s, err);
    path_fini(&p);
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

static int load_allocs(struct cli *cli, struct hist *h, struct allot_error *err)
{
    json_t *rows = get_rows(cli, h, "/v1/balances", err);
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

static size_t alloc_index(const struct hist *h, int64_t id)
{
    size_t i = 0;
    while (i < h->nallocs && h->allocs[i].id != id)
        i++;
    return i;
}

/* The bank's policies, as the "before" of the allocations they sit on. */
static int load_policies(struct cli *cli, struct hist *h, struct allot_error *err)
{
    json_t *reply = cli_get_json(cli, "/v1/policies", err);
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
static int load_qos(struct cli *cli, struct hist *h, struct allot_error *err)
{
    json_t *rows = get_rows(cli, h, "/v1/qos", err);
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
static void job_qos(const struct hist *h, struct whatif_job *j, const char *qos, size_t n)
{
    uint32_t q = names_get(&h->qos_ix, qos, n, "", 0);
    j->usage_factor = q == WHATIF_NONE ? 1.0 : h->qos_factor[q];
    j->nodecay = q != WHATIF_NONE && h->qos_nodecay[q];
}

static void add_job(struct hist *h, const struct whatif_job *j)
{
    if (h->njobs == h->cap_jobs) {
        h->cap_jobs = h->cap_jobs ? 2 * h->cap_jobs : 1024;
        h->jobs = xrealloc(h->jobs, h->cap_jobs * sizeof *h->jobs);
    }
    h->jobs[h->njobs++] = *j;
}

/* One job of the history; account and user spans need not be NUL-terminated. */
static int history_job(struct hist *h, const char *what, int64_t id, const char *acct, size_t na,
                       const char *user, size_t nu, const char *part, size_t np,
                       struct whatif_job *j, struct allot_error *err)
{
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

static int load_bank_jobs(struct cli *cli, struct hist *h, const char *since,
                          struct allot_error *err)
{
    struct path p;
    path_init(&p, "/v1/jobs");
    path_query(&p, "cluster", h->cluster);
    path_query(&p, "status", "settled");
    if (since)
        path_query(&p, "since", since);
    json_t *rows = get_rows(cli, h, p.s, err);
    path_fini(&p);
    if (!rows)
        return -1;
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
        job_qos(h, &j, qos, strlen(qos));
        /* A run settled without a start (never held) started elapsed before its end; one
         * without an end ended elapsed after its start. */
        if (!j.start_s && j.end_s >= j.elapsed_s)
            j.start_s = j.end_s - j.elapsed_s;
        if (j.end_s < j.start_s)
            j.end_s = j.start_s + j.elapsed_s;
        if (history_job(h, "bank", num(r, "job_id"), acct, strlen(acct), user, strlen(user), part,
                        strlen(part), &j, err) < 0)
            return -1;
    }
    return 0;
}

static int load_sacct(struct hist *h, const char *file, struct cli_listing *l,
                      struct allot_error *err)
{
    if (cli_listing_read(file, l, err) < 0)
        return -1;
    size_t pos = 0, nline = 0;
    struct slt_span line;
    struct slt_sacct_header hd;
    int have_header = 0;
    while (slt_next_line(l->p, l->len, &pos, &line)) {
        nline++;
        if (line.n == 0)
            continue;
        struct allot_error le = {0};
        if (!have_header) {
            if (slt_sacct_header_parse(line, &hd, &le) < 0)
                return allot_errorf(err, ALLOT_EINVAL, "%s:%zu: %s", file, nline, le.msg);
            have_header = 1;
            continue;
        }
        struct slt_sacct_job s;
        int k = slt_sacct_job_parse(&hd, line, &s, &le);
        if (k < 0)
            return allot_errorf(err, ALLOT_EINVAL, "%s:%zu: %s", file, nline, le.msg);
        if (k == 0)
            continue;
        if (s.cluster.n && (s.cluster.n != strlen(h->cluster) ||
                            strncmp(s.cluster.p, h->cluster, s.cluster.n) != 0)) {
            h->skipped++;
            continue;
        }
        struct whatif_job j = {
            .start_s = s.start_s,
            .end_s = s.end_s,
            .elapsed_s = s.elapsed_s,
            .time_limit_s = s.time_limit_s,
            .alloc_tres = own(h, s.alloc_tres.p, s.alloc_tres.n),
            .node_fail = money_state_free(s.state),
        };
        job_qos(h, &j, s.qos.p, s.qos.n);
        char where[64];
        snprintf(where, sizeof where, "%s:%zu", file, nline);
        if (history_job(h, where, s.job_id, s.account.p, s.account.n, s.user.p, s.user.n,
                        s.partition.p, s.partition.n, &j, err) < 0)
            return -1;
    }
    if (!have_header)
        return allot_errorf(err, ALLOT_EINVAL, "%s: no sacct header line", file);
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
static int apply_change(struct hist *h, struct kvlist *kvs, const char *what,
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

static int apply_file(struct hist *h, const char *file, struct allot_error *err)
{
    struct cli_listing l = {0};
    if (cli_listing_read(file, &l, err) < 0)
        return -1;
    size_t pos = 0, nline = 0;
    struct slt_span line;
    int rc = 0;
    while (rc == 0 && slt_next_line(l.p, l.len, &pos, &line)) {
        nline++;
        char buf[4096], *words[ARGS_MAX_KV + 1];
        int n = 0;
        if (line.n >= sizeof buf) {
            rc = allot_errorf(err, ALLOT_EINVAL, "%s:%zu: line too long", file, nline);
            break;
        }
        memcpy(buf, line.p, line.n);
        buf[line.n] = '\0';
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0'; /* comments */
        for (char *save = NULL, *w = strtok_r(buf, " \t\r", &save); w && n <= ARGS_MAX_KV;
             w = strtok_r(NULL, " \t\r", &save))
            words[n++] = w;
        if (n == 0)
            continue;
        char what[64];
        snprintf(what, sizeof what, "%s:%zu", file, nline);
        struct kvlist kvs;
        int npos = 0;
        if (args_split(n, words, NULL, 0, &npos, &kvs, err) < 0 ||
            apply_change(h, &kvs, what, err) < 0 || args_check_used(&kvs, what, err) < 0) {
            if (strncmp(err->msg, what, strlen(what)) != 0)
                allot_error_prefix(err, "%s", what);
            rc = -1;
        }
    }
    cli_listing_free(&l);
    return rc;
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

static json_t *refusals(const struct hist *h, const struct whatif_result *r, const char *scenario)
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

static json_t *report(const struct hist *h, const struct whatif_result *b,
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

static const struct column account_cols[] = {
    {"Account", "account", C_STR},
    {"Jobs", "jobs_before", C_INT},
    {"JobsAfter", "jobs_after", C_INT},
    {"Charged", "charged_before_sumin", C_SUMIN},
    {"ChargedAfter", "charged_after_sumin", C_SUMIN},
    {"Change", "change_sumin", C_SUMIN},
    {"Refused", "refused_before", C_INT},
    {"RefusedAfter", "refused_after", C_INT},
    {0},
};

static const struct column user_cols[] = {
    {"Account", "account", C_STR},
    {"User", "user", C_STR},
    {"Charged", "charged_before_sumin", C_SUMIN},
    {"ChargedAfter", "charged_after_sumin", C_SUMIN},
    {"Change", "change_sumin", C_SUMIN},
    {"RefusedAfter", "refused_after", C_INT},
    {"FairShare", "fs_before", C_STR},
    {"FairShareAfter", "fs_after", C_STR},
    {"Rank", "rank_before", C_INT},
    {"RankAfter", "rank_after", C_INT},
    {0},
};

static const struct column alloc_cols[] = {
    {"Allocation", "id", C_INT},
    {"Account", "account", C_STR},
    {"Resource", "resource", C_STR},
    {"Granted", "granted_before_sumin", C_SUMIN},
    {"GrantedAfter", "granted_after_sumin", C_SUMIN},
    {"Used", "used_before_sumin", C_SUMIN},
    {"UsedAfter", "used_after_sumin", C_SUMIN},
    {"RunsOut", "exhausted_before", C_TIME},
    {"RunsOutAfter", "exhausted_after", C_TIME},
    {"NotifyAfter", "notify_after", C_TIME},
    {"PauseAfter", "pause_after", C_TIME},
    {0},
};

static const struct column refusal_cols[] = {
    {"Scenario", "scenario", C_STR},
    {"JobID", "job_id", C_INT},
    {"Account", "account", C_STR},
    {"User", "user", C_STR},
    {"Partition", "partition", C_STR},
    {"Time", "time", C_TIME},
    {"Allocation", "alloc_id", C_INT},
    {"Needed", "needed_sumin", C_SUMIN},
    {"Available", "available_sumin", C_SUMIN},
    {0},
};

/* Fair-share factors with 6 decimals for the table ("-": none, an account's in Fair Tree). */
static void fix_users(json_t *rows)
{
    static const char *const k[][2] = {{"fairshare_before", "fs_before"},
                                       {"fairshare_after", "fs_after"}};
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *r = json_array_get(rows, i);
        for (int j = 0; j < 2; j++) {
            json_t *v = json_object_get(r, k[j][0]);
            char buf[32];
            snprintf(buf, sizeof buf, "%.6f", json_number_value(v));
            json_object_set_new(r, k[j][1], json_string(json_is_number(v) ? buf : "-"));
        }
    }
}

static void print_tables(struct cli *cli, json_t *rep)
{
    const struct {
        const char *key;
        const struct column *cols;
    } t[] = {{"accounts", account_cols},
             {"users", user_cols},
             {"allocations", alloc_cols},
             {"refusals", refusal_cols}};
    fix_users(json_object_get(rep, "users"));
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        json_t *rows = json_object_get(rep, t[i].key);
        if (i == 3 && json_array_size(rows) == 0)
            continue; /* no refusals: no table */
        if (i > 0 && !cli->parsable)
            printf("\n");
        cli_print_table(cli, rows, t[i].cols);
    }
}

/* ---- the command ------------------------------------------------------------------------ */

static void hist_free(struct hist *h)
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

static int load_share(struct cli *cli, struct hist *h, struct allot_error *err)
{
    struct path p;
    path_init(&p, "/v1/share");
    path_query(&p, "cluster", h->cluster);
    json_t *r = cli_get_json(cli, p.s, err);
    path_fini(&p);
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

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    struct kvlist kvs;
    int npos = 0, rc = -1;
    struct hist h = {.replies = json_array()};
    struct cli_listing l = {0};
    struct whatif_result b = {0}, a = {0};
    (void)verb;
    if (args_split(argc, argv, NULL, 0, &npos, &kvs, err) < 0)
        goto out;
    const char *cluster = args_get(&kvs, "cluster"), *sacct = args_get(&kvs, "sacct");
    const char *since = args_get(&kvs, "since"), *at = args_get(&kvs, "at");
    const char *changes = args_get(&kvs, "changes");
    int64_t at_s = 0, since_s = 0;
    if ((at && args_time("at", at, &at_s, err) < 0) ||
        (since && args_time("since", since, &since_s, err) < 0))
        goto out;
    if (cluster)
        snprintf(h.cluster, sizeof h.cluster, "%s", cluster);
    else if (cli_default_cluster(cli, h.cluster, sizeof h.cluster, err) < 0)
        goto out;
    if (load_accounts(cli, &h, err) < 0 || load_assocs(cli, &h, err) < 0 ||
        load_partitions(cli, &h, err) < 0 || load_allocs(cli, &h, err) < 0 ||
        load_policies(cli, &h, err) < 0 || load_qos(cli, &h, err) < 0 ||
        load_share(cli, &h, err) < 0)
        goto out;
    if (apply_change(&h, &kvs, "whatif", err) < 0 || args_check_used(&kvs, "whatif", err) < 0 ||
        (changes && apply_file(&h, changes, err) < 0))
        goto out;
    if (sacct ? load_sacct(&h, sacct, &l, err) < 0 : load_bank_jobs(cli, &h, since, err) < 0)
        goto out;
    if (sacct && since) { /* the bank filters its own jobs by end; a listing here */
        size_t k = 0;
        for (size_t i = 0; i < h.njobs; i++)
            if (h.jobs[i].end_s >= since_s)
                h.jobs[k++] = h.jobs[i];
        h.njobs = k;
    }
    struct whatif_input in = {
        .accounts = h.accounts,
        .naccounts = h.naccounts,
        .users = h.users,
        .nusers = h.nusers,
        .partitions = h.parts,
        .npartitions = h.nparts,
        .allocs = h.allocs,
        .nallocs = h.nallocs,
        .jobs = h.jobs,
        .njobs = h.njobs,
        .at_s = at_s,
    };
    struct whatif_scenario sb = {.weights = h.w_before,
                                 .policies = h.pol_before,
                                 .decay = h.decay_before,
                                 .fairshare = h.fs_before},
                           sa = {.weights = h.w_after,
                                 .amounts_sumin = h.amounts_after,
                                 .policies = h.pol_after,
                                 .decay = h.decay_after,
                                 .fairshare = h.fs_after};
    if (whatif_run(&in, &sb, &b, err) < 0 || whatif_run(&in, &sa, &a, err) < 0)
        goto out;
    json_t *rep = report(&h, &b, &a, sacct ? sacct : "bank");
    if (cli->json) {
        char *text = json_dumps(rep, JSON_COMPACT);
        cli_print_json_text(text);
        free(text);
    } else {
        print_tables(cli, rep);
    }
    json_decref(rep);
    rc = 0;
out:
    whatif_result_free(&b);
    whatif_result_free(&a);
    if (l.p)
        cli_listing_free(&l);
    hist_free(&h);
    return rc;
}

const struct cli_command cmd_whatif = {
    .noun = "whatif",
    .summary = "replay the job history under a proposed price, amount or fair-share change",
    .help = "usage: allot whatif [cluster=C] [sacct=FILE] [since=DATE] [at=DATE]\n"
            "                    [partition=P weights=TRESBillingWeights] [partition=P "
            "max_tres=yes|no]\n"
            "                    [alloc=ID amount=AMOUNT] [algo=classic|fair_tree|flux]\n"
            "                    [alloc=ID policy=month|quarter|year|total|none base=AMOUNT\n"
            "                     carryover=F notify=F downscale=F grace=F]\n"
            "                    [halflife=DURATION|0] [changes=FILE]\n"
            "\n"
            "Replays the cluster's settled jobs (or the finished jobs of FILE, what `sacct -P`\n"
            "printed) twice in memory: under the bank's settings and under the change.  Each job\n"
            "is priced as the bank prices it (billing from its AllocTRES and its partition's\n"
            "weights; a hold of billing x time limit at its start; a charge of billing x elapsed\n"
            "at its end) against the allocations' amounts as the balance evolves; a job whose\n"
            "hold the balance cannot cover is refused.  Shows per account and user the SU\n"
            "charged before and after, the refusals, the fair-share factor at the end (at=,\n"
            "default the last job's end), and when each allocation runs out.  Nothing in the\n"
            "bank changes.  A policy= on an allocation replaces its amount by a base each period\n"
            "(UTC) with carryover, and shows when its use first reaches notify and pause; the\n"
            "bank's policies are the before.  changes=FILE holds more changes, one set of words a "
            "line (# starts a\n"
            "comment).  Jobs start when they started: the queue is not simulated (doc/whatif.md).\n"
            "\n"
            "examples:\n"
            "  allot whatif partition=gpu weights=CPU=1.0,GRES/gpu=8.0\n"
            "  allot whatif sacct=jobs.txt partition=batch max_tres=yes\n"
            "  allot --json whatif alloc=3 amount=5000h halflife=7-0\n",
    .run = run,
    .needs_verb = 0,
};
