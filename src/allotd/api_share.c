/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_share.c - fair-share, usage and priority (doc/design.md §6): /v1/share, /v1/tree, /v1/usage,
 * /v1/usage/clear, /v1/priority/{cluster}/{job}.
 *
 * Design: each read builds the association tree of one cluster from the store (accounts with
 * their shares, user associations with theirs) and gives each node the usage of its
 * accumulators (store_usage_acc_list: kept by every settle in its transaction, decayed at
 * now, times the QOS UsageFactor, NoDecay QOS undecayed), then runs libcore's fair-share.
 * Cost is O(associations x log associations) per request, on the HTTP worker's own read
 * connection, whatever the number of jobs stored.  Usage clears are applied by the store
 * (store_usage_clear zeroes the accumulators they hide).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/json.h"
#include "libcore/decay.h"
#include "libcore/fairshare.h"
#include "libcore/priority.h"
#include "libcore/usage.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

/* ---- collecting the store's rows ------------------------------------------------------ */

struct vec {
    void *v;
    size_t n, cap, size;
};

static void *vec_push(struct vec *x)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 16;
        x->v = xrealloc(x->v, x->cap * x->size);
    }
    void *p = (char *)x->v + x->n * x->size;
    memset(p, 0, x->size);
    x->n++;
    return p;
}

static int on_account(const struct account *a, void *arg)
{
    *(struct account *)vec_push(arg) = *a;
    return 0;
}

static int on_assoc(const struct assoc *a, void *arg)
{
    if (a->user[0])
        *(struct assoc *)vec_push(arg) = *a;
    return 0;
}

/* ---- lookups by name ------------------------------------------------------------------
 * The tree is built and jobs are charged by (account, user) name.  Sorted arrays of keys and
 * bsearch keep each lookup O(log n): with linear scans a request cost O(jobs x associations)
 * and 100,000 jobs over 10,000 users took seconds.  user "" names an account. */

struct key {
    const char *account;
    const char *user;
    size_t pos; /* index in the array the key was made from */
};

static int key_cmp_name(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    int c = strcmp(x->account, y->account);
    return c ? c : strcmp(x->user, y->user);
}

/* By name, then by position: the first of equal names sorts first. */
static int key_cmp(const void *a, const void *b)
{
    int c = key_cmp_name(a, b);
    if (c)
        return c;
    size_t x = ((const struct key *)a)->pos, y = ((const struct key *)b)->pos;
    return (x > y) - (x < y);
}

/* Position of (account, user) in keys[n] sorted by key_cmp, or -1. */
static int64_t key_find(const struct key *keys, size_t n, const char *account, const char *user)
{
    struct key k = {account, user ? user : "", 0};
    const struct key *f = n ? bsearch(&k, keys, n, sizeof *keys, key_cmp_name) : NULL;
    return f ? (int64_t)f->pos : -1;
}

/* Per-partition associations of the same user and account share one usage node: keep the
 * first of each (account, user), in the store's order. */
static void assoc_dedupe(struct vec *x)
{
    struct assoc *v = x->v;
    struct key *keys = xcalloc(x->n + 1, sizeof *keys);
    unsigned char *keep = xcalloc(x->n + 1, 1);
    for (size_t i = 0; i < x->n; i++)
        keys[i] = (struct key){v[i].account, v[i].user, i};
    qsort(keys, x->n, sizeof *keys, key_cmp);
    for (size_t k = 0; k < x->n; k++)
        if (k == 0 || key_cmp_name(&keys[k - 1], &keys[k]))
            keep[keys[k].pos] = 1;
    size_t m = 0;
    for (size_t i = 0; i < x->n; i++)
        if (keep[i])
            v[m++] = v[i];
    x->n = m;
    free(keys);
    free(keep);
}

static int on_qos(const struct qos *q, void *arg)
{
    *(struct qos *)vec_push(arg) = *q;
    return 0;
}

/* ---- the tree ------------------------------------------------------------------------- */

struct share {
    char cluster[ALLOT_NAME_MAX];
    enum fairshare_algo algo;
    struct decay_params decay;
    int billing; /* UsageSource=billing */
    usage_tree_t *t;
    struct fairshare_row *rows;
    double *own;      /* per node: own usage at now_s, summed over its accumulators */
    int64_t now_s;    /* evaluation time; a stored end after it counts as ending now */
    struct key *keys; /* the tree's nodes by (account, user), for find_node */
    struct vec qos;   /* struct qos */
};

static void share_fini(struct share *s)
{
    usage_tree_destroy(s->t);
    free(s->keys);
    free(s->rows);
    free(s->own);
    free(s->qos.v);
}

static int algo_parse(const char *s, enum fairshare_algo *out)
{
    if (!strcmp(s, "classic"))
        *out = FAIRSHARE_CLASSIC;
    else if (!strcmp(s, "fair_tree"))
        *out = FAIRSHARE_FAIR_TREE;
    else if (!strcmp(s, "flux"))
        *out = FAIRSHARE_FLUX;
    else
        return -1;
    return 0;
}

static const char *algo_name(enum fairshare_algo a)
{
    return a == FAIRSHARE_CLASSIC ? "classic" : a == FAIRSHARE_FLUX ? "flux" : "fair_tree";
}

static enum decay_reset reset_parse(const char *s)
{
    static const char *const names[] = {"NONE",    "DAILY",     "WEEKLY",
                                        "MONTHLY", "QUARTERLY", "YEARLY"};
    for (int i = 0; i < 6; i++)
        if (!strcasecmp(s, names[i]))
            return (enum decay_reset)i;
    return DECAY_RESET_NONE;
}

static int one_cluster(const char *name, void *arg)
{
    char *out = arg;
    if (out[0])
        return 2; /* more than one */
    text_copy(out, ALLOT_NAME_MAX, name);
    return 0;
}

/* The cluster a request is about: ?cluster=, else the only one the bank knows. */
static int pick_cluster(struct req *r, store_t *st, char *out, struct allot_error *err)
{
    const char *c;
    if (json_query_name(r, "cluster", &c, err) < 0)
        return -1;
    if (c) {
        if (api_cluster_check(st, c, err) < 0)
            return -1;
        text_copy(out, ALLOT_NAME_MAX, c);
        return 0;
    }
    out[0] = '\0';
    int rc = store_cluster_list(st, one_cluster, out, err);
    if (rc < 0)
        return -1;
    if (rc == 2 || !out[0])
        return allot_errorf(err, ALLOT_EINVAL, "cluster: required (the bank has %s clusters)",
                            rc == 2 ? "several" : "no");
    return 0;
}

struct build {
    struct share *s;
    const struct account *acc;
    size_t nacc;
    const struct assoc *as;
    size_t nas;
    struct usage_assoc_spec *spec;
    size_t n;
    /* Lists in the store's order, linked by index (SIZE_MAX ends one): each account's
     * sub-accounts (sub_head/sub_next) and user associations (as_head/as_next). */
    size_t *sub_head, *sub_tail, *sub_next;
    size_t *as_head, *as_tail, *as_next;
};

static void list_append(size_t *head, size_t *tail, size_t *next, size_t owner, size_t item)
{
    next[item] = SIZE_MAX;
    if (head[owner] == SIZE_MAX)
        head[owner] = item;
    else
        next[tail[owner]] = item;
    tail[owner] = item;
}

/* Link every account under its parent and every association under its account. */
static void build_lists(struct build *b)
{
    size_t na = b->nacc + 1, ns = b->nas + 1;
    b->sub_head = xmalloc(na * sizeof(size_t));
    b->sub_tail = xmalloc(na * sizeof(size_t));
    b->sub_next = xmalloc(na * sizeof(size_t));
    b->as_head = xmalloc(na * sizeof(size_t));
    b->as_tail = xmalloc(na * sizeof(size_t));
    b->as_next = xmalloc(ns * sizeof(size_t));
    for (size_t k = 0; k < na; k++)
        b->sub_head[k] = b->as_head[k] = SIZE_MAX;
    struct key *keys = xcalloc(na, sizeof *keys);
    for (size_t k = 0; k < b->nacc; k++)
        keys[k] = (struct key){b->acc[k].name, "", k};
    qsort(keys, b->nacc, sizeof *keys, key_cmp);
    for (size_t j = 0; j < b->nacc; j++) {
        int64_t p = b->acc[j].parent[0] ? key_find(keys, b->nacc, b->acc[j].parent, "") : -1;
        if (p >= 0)
            list_append(b->sub_head, b->sub_tail, b->sub_next, (size_t)p, j);
    }
    for (size_t i = 0; i < b->nas; i++) {
        int64_t k = key_find(keys, b->nacc, b->as[i].account, "");
        if (k >= 0)
            list_append(b->as_head, b->as_tail, b->as_next, (size_t)k, i);
    }
    free(keys);
}

static void build_fini(struct build *b)
{
    free(b->spec);
    free(b->sub_head);
    free(b->sub_tail);
    free(b->sub_next);
    free(b->as_head);
    free(b->as_tail);
    free(b->as_next);
}

/* Pre-order: account k, then its user associations, then its sub-accounts. */
static void add_account(struct build *b, size_t k, int64_t parent, int depth)
{
    if (depth > 64)
        return; /* the store refuses cycles; this bounds a corrupt tree */
    size_t me = b->n++;
    b->spec[me] = (struct usage_assoc_spec){
        .parent = parent, .shares = (uint32_t)b->acc[k].shares, .account = b->acc[k].name};
    for (size_t i = b->as_head[k]; i != SIZE_MAX; i = b->as_next[i])
        b->spec[b->n++] = (struct usage_assoc_spec){.parent = (int64_t)me,
                                                    .shares = (uint32_t)b->as[i].shares,
                                                    .account = b->as[i].account,
                                                    .user = b->as[i].user};
    for (size_t j = b->sub_head[k]; j != SIZE_MAX; j = b->sub_next[j])
        add_account(b, j, (int64_t)me, depth + 1);
}

/* Tree index of (account, user), user NULL or "" for the account's own node; -1 if none. */
static int find_node(const struct share *s, const char *account, const char *user)
{
    return (int)key_find(s->keys, usage_tree_count(s->t), account, user);
}

/* Usage params of the configuration (the accumulators must have been kept with them). */
static void share_params(const struct allot_conf *c, struct store_usage_params *p)
{
    memset(p, 0, sizeof *p);
    p->decay.halflife_s = c->decay_halflife_s;
    p->decay.reset = reset_parse(c->usage_reset);
    p->billing = !strcmp(c->usage_source, "billing");
}

void api_usage_params(const struct allot_conf *c, struct store_usage_params *p)
{
    share_params(c, p);
}

/* One accumulator into its node's own usage, times its QOS's UsageFactor (NoDecay QOS:
 * the undecayed part). */
static int on_acc(const struct usage_acc_row *u, const struct store_usage_params *p, void *arg)
{
    struct share *s = arg;
    int i = find_node(s, u->account, u->user);
    if (i < 0)
        i = find_node(s, u->account, NULL); /* association removed: count for its account */
    if (i < 0)
        return 0;
    double factor = 1.0;
    int nodecay = 0;
    for (size_t q = 0; q < s->qos.n; q++) {
        const struct qos *qq = (const struct qos *)s->qos.v + q;
        if (!strcmp(qq->name, u->qos)) {
            factor = (double)qq->usage_factor_ppm / 1e6;
            nodecay = strcasestr(qq->flags, "NoDecay") != NULL;
        }
    }
    double v = store_usage_acc_value(u, p, nodecay, s->now_s);
    if (!(factor >= 0.0) || !isfinite(v))
        return 0; /* a QOS the tree cannot take (factor < 0) is left out, not fatal */
    s->own[i] += factor == 1.0 ? v : v * factor;
    return 0;
}

/* Build and evaluate the cluster's tree at now_s.  algo_text NULL = the configured one. */
static int share_build(struct req *r, store_t *st, const char *cluster, const char *algo_text,
                       int64_t now_s, struct share *s, struct allot_error *err)
{
    memset(s, 0, sizeof *s);
    s->qos.size = sizeof(struct qos);
    if (algo_parse(algo_text ? algo_text : r->conf->fairshare_algo, &s->algo) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "algo: '%s' is not classic, fair_tree or flux",
                            algo_text);
    s->decay.halflife_s = r->conf->decay_halflife_s;
    s->decay.reset = reset_parse(r->conf->usage_reset);
    s->billing = !strcmp(r->conf->usage_source, "billing");
    s->now_s = now_s;
    if (cluster)
        text_copy(s->cluster, sizeof s->cluster, cluster);
    else if (pick_cluster(r, st, s->cluster, err) < 0)
        return -1;
    int rc = -1;
    struct vec acc = {.size = sizeof(struct account)};
    struct vec as = {.size = sizeof(struct assoc)};
    struct build b = {0};
    struct assoc_filter af = {.cluster = s->cluster};
    if (store_account_list(st, on_account, &acc, err) < 0 ||
        store_assoc_list(st, &af, on_assoc, &as, err) < 0 ||
        store_qos_list(st, on_qos, &s->qos, err) < 0)
        goto out;
    assoc_dedupe(&as);
    b = (struct build){.s = s, .acc = acc.v, .nacc = acc.n, .as = as.v, .nas = as.n};
    b.spec = xcalloc(acc.n + as.n + 1, sizeof *b.spec);
    build_lists(&b);
    size_t root = acc.n;
    for (size_t k = 0; k < acc.n; k++)
        if (!b.acc[k].parent[0])
            root = k;
    if (root == acc.n) {
        allot_errorf(err, ALLOT_EINTERNAL, "account tree has no root");
        goto out;
    }
    add_account(&b, root, -1, 0);
    s->t = usage_tree_create(b.spec, b.n, err);
    if (!s->t)
        goto out;
    size_t n = usage_tree_count(s->t);
    s->keys = xcalloc(n, sizeof *s->keys);
    for (size_t i = 0; i < n; i++) {
        const char *u = usage_tree_user(s->t, i);
        s->keys[i] = (struct key){usage_tree_account(s->t, i), u ? u : "", i};
    }
    qsort(s->keys, n, sizeof *s->keys, key_cmp);
    s->own = xcalloc(n, sizeof *s->own);
    struct store_usage_params want;
    share_params(r->conf, &want);
    if (store_usage_acc_list(st, s->cluster, &want, now_s, on_acc, s, err) < 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (usage_tree_set_usage(s->t, i, s->own[i], err) < 0)
            goto out;
    s->rows = xcalloc(n, sizeof *s->rows);
    struct fairshare_opts o = {.algo = s->algo, .dampening = (uint32_t)r->conf->fs_dampening};
    if (fairshare_compute(s->t, &o, s->rows, err) < 0)
        goto out;
    rc = 0;
out:
    free(acc.v);
    free(as.v);
    build_fini(&b);
    if (rc < 0)
        share_fini(s);
    return rc;
}

/* Replies carry finite numbers only.  A value Slurm leaves blank (NAN) is left out of the
 * row.  level_fs above FAIRSHARE_LEVEL_MAX (FAIR_TREE's +inf for an association with no usage,
 * or a level overflowing against a huge stored usage) is shown as that cap, as flux shows an
 * association with no usage, so /v1/share and /v1/tree answer alike.  Other values are finite
 * by construction (usage is bounded per job and decays from the past). */
static void put_num(json_t *o, const char *key, double v, double cap)
{
    if (v > cap)
        v = cap;
    if (isfinite(v))
        json_object_set_new(o, key, json_real(v));
}

static json_t *share_row(const struct share *s, size_t i)
{
    const struct fairshare_row *w = &s->rows[i];
    const char *u = usage_tree_user(s->t, i);
    json_t *o = json_pack("{s:s}", "account", usage_tree_account(s->t, i));
    if (u) /* an account's row has no user (no null either) */
        json_object_set_new(o, "user", json_string(u));
    json_object_set_new(o, "depth", json_integer((json_int_t)usage_tree_depth(s->t, i)));
    json_object_set_new(o, "raw_shares", json_integer((json_int_t)usage_tree_shares(s->t, i)));
    put_num(o, "norm_shares", w->norm_shares, HUGE_VAL);
    put_num(o, "raw_usage", w->raw_usage, HUGE_VAL);
    put_num(o, "norm_usage", w->norm_usage, HUGE_VAL);
    put_num(o, "effectv_usage", w->effectv_usage, HUGE_VAL);
    put_num(o, "fairshare", w->fairshare, HUGE_VAL);
    put_num(o, "level_fs", w->level_fs, FAIRSHARE_LEVEL_MAX);
    json_object_set_new(o, "rank", json_integer((json_int_t)w->rank));
    return o;
}

/* doc/design.md §8.3: a plain user sees the rows of the accounts it is in (the account's and its
 * users', as GET /v1/jobs shows those accounts' jobs); seen is auth_account_set's.  The
 * tree is computed whole, so the numbers shown are the same for everyone. */
static int share_visible(const struct share *s, const json_t *seen, size_t i)
{
    return auth_set_sees(seen, usage_tree_account(s->t, i));
}

/* GET /v1/share?cluster=&algo=: sshare -a -l -P rows, in sshare's order, plus its text. */
int api_share_get(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct share s;
    if (share_build(r, st, NULL, req_query(r, "algo"), (int64_t)time(NULL), &s, err) < 0)
        return -1;
    size_t n = usage_tree_count(s.t);
    uint32_t *order = xcalloc(n, sizeof *order);
    json_t *items = json_array(), *lines = json_array();
    json_t *seen = NULL;
    int rc = auth_account_set(r, &seen, err);
    if (rc == 0)
        rc = usage_tree_display_order(s.t, order, err);
    char buf[1024];
    json_array_append_new(lines, json_string(fairshare_sshare_header(s.algo)));
    for (size_t k = 0; rc == 0 && k < n; k++) {
        if (!share_visible(&s, seen, order[k]))
            continue;
        json_array_append_new(items, share_row(&s, order[k]));
        if (fairshare_format_sshare(s.t, s.rows, s.algo, order[k], NULL, NULL, buf, sizeof buf,
                                    err) < 0)
            rc = -1;
        else
            json_array_append_new(lines, json_string(buf));
    }
    if (rc == 0)
        r->out = json_pack("{s:s,s:s,s:I,s:o,s:o}", "cluster", s.cluster, "algo", algo_name(s.algo),
                           "halflife_s", (json_int_t)s.decay.halflife_s, "items", items, "sshare",
                           lines);
    else {
        json_decref(items);
        json_decref(lines);
    }
    json_decref(seen);
    free(order);
    share_fini(&s);
    return rc;
}

/* GET /v1/tree?cluster=: flux account view-bank -t (always the flux weighted tree). */
int api_share_tree(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct share s;
    if (share_build(r, st, NULL, "flux", (int64_t)time(NULL), &s, err) < 0)
        return -1;
    size_t n = usage_tree_count(s.t);
    uint32_t *order = xcalloc(n, sizeof *order);
    json_t *items = json_array(), *lines = json_array();
    json_t *seen = NULL;
    int rc = auth_account_set(r, &seen, err);
    if (rc == 0)
        rc = usage_tree_display_order(s.t, order, err);
    char buf[1024];
    json_array_append_new(lines, json_string(fairshare_flux_header()));
    for (size_t k = 0; rc == 0 && k < n; k++) {
        if (!share_visible(&s, seen, order[k]))
            continue;
        json_array_append_new(items, share_row(&s, order[k]));
        if (fairshare_format_flux(s.t, s.rows, order[k], buf, sizeof buf, err) < 0)
            rc = -1;
        else
            json_array_append_new(lines, json_string(buf));
    }
    if (rc == 0)
        r->out = json_pack("{s:s,s:o,s:o}", "cluster", s.cluster, "items", items, "tree", lines);
    else {
        json_decref(items);
        json_decref(lines);
    }
    json_decref(seen);
    free(order);
    share_fini(&s);
    return rc;
}

/* ---- usage reports -------------------------------------------------------------------- */

struct usage_sum {
    json_t *groups; /* "cluster/account/user" -> row object */
    json_t *items;
    struct req *r; /* a plain user sees only its own jobs and its accounts' (as job lists) */
    struct allot_error *err;
};

/* 1: the caller may see a job of user on account, 0: not, -1: storage error. */
static int sees_job(struct req *r, const char *user, const char *account, struct allot_error *err)
{
    if (r->who.role != ROLE_USER || strcmp(user, r->who.user) == 0)
        return 1;
    return auth_sees_account(r, account, err);
}

static void add_int(json_t *o, const char *k, int64_t v)
{
    json_object_set_new(o, k, json_integer(json_integer_value(json_object_get(o, k)) + v));
}

static int on_usage(const struct usage_job *u, void *arg)
{
    struct usage_sum *x = arg;
    int vis = sees_job(x->r, u->user, u->account, x->err);
    if (vis <= 0)
        return vis;
    char key[3 * ALLOT_NAME_MAX + 4];
    snprintf(key, sizeof key, "%s/%s/%s", u->cluster, u->account, u->user);
    json_t *row = json_object_get(x->groups, key);
    if (!row) {
        row = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i}", "cluster", u->cluster, "account",
                        u->account, "user", u->user, "jobs", 0, "charge_sumin", 0, "elapsed_s", 0,
                        "billing_s", 0);
        json_object_set_new(x->groups, key, row);
        json_array_append(x->items, row);
    }
    add_int(row, "jobs", 1);
    add_int(row, "charge_sumin", u->charge_sumin);
    add_int(row, "elapsed_s", u->elapsed_s);
    /* billing-seconds, rounded down: a report, not money */
    add_int(row, "billing_s", (int64_t)((double)u->billing_micro / 1e6 * (double)u->elapsed_s));
    return 0;
}

/* GET /v1/usage?cluster=&account=&user=&since=&until=: settled usage per association, like
 * sreport's cluster AccountUtilizationByUser. */
int api_usage_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct usage_filter f = {0};
    if (api_query_history_cluster(r, st, STORE_HISTORY_JOBS, "job", &f.cluster, err) < 0 ||
        json_query_name(r, "account", &f.account, err) < 0 ||
        json_query_name(r, "user", &f.user, err) < 0 ||
        json_query_time(r, "since", &f.since_s, err) < 0 ||
        json_query_time(r, "until", &f.until_s, err) < 0)
        return -1;
    if (f.until_s && f.until_s <= f.since_s)
        return allot_errorf(err, ALLOT_EINVAL, "until: must be after since");
    struct usage_sum x = {json_object(), json_array(), r, err};
    int rc = store_usage_jobs(st, &f, on_usage, &x, err);
    json_decref(x.groups);
    if (rc < 0) {
        json_decref(x.items);
        return -1;
    }
    r->out = json_pack("{s:o,s:o,s:o}", "since", json_time(f.since_s), "until",
                       json_time(f.until_s), "items", x.items);
    return 0;
}

struct clear_op {
    char cluster[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char user[ALLOT_NAME_MAX];
    int64_t now_s;
};

static int run_clear(store_t *st, void *arg, struct allot_error *err)
{
    struct clear_op *op = arg;
    return store_usage_clear(st, op->cluster, op->account, op->user, op->now_s, err);
}

static int finish_clear(struct req *r, struct allot_error *err)
{
    (void)err;
    struct clear_op *op = r->scratch;
    r->out = json_pack("{s:s,s:s,s:s,s:o}", "cluster", op->cluster, "account", op->account, "user",
                       op->user, "cleared", json_time(op->now_s));
    return 0;
}

/* POST /v1/usage/clear {cluster, account, user?}: Slurm's `set RawUsage=0`. */
int api_usage_clear(struct req *r, struct allot_error *err)
{
    struct clear_op op;
    memset(&op, 0, sizeof op);
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = op.cluster},
        {.name = "account", .type = JF_NAME, .required = 1, .dst = op.account},
        {.name = "user", .type = JF_NAME, .dst = op.user, .allow_empty = 1},
    };
    if (json_body(r, err) < 0 || json_read(r->in, f, 3, err) < 0)
        return -1;
    op.now_s = (int64_t)time(NULL);
    struct clear_op *s = xmalloc(sizeof *s);
    *s = op;
    return req_defer_write(r, run_clear, s, finish_clear);
}

struct rebuild_op {
    struct store_usage_params p;
    int64_t now_s;
    int64_t rows;
};

static int run_rebuild(store_t *st, void *arg, struct allot_error *err)
{
    struct rebuild_op *op = arg;
    return store_usage_rebuild(st, &op->p, op->now_s, &op->rows, err);
}

static int finish_rebuild(struct req *r, struct allot_error *err)
{
    (void)err;
    struct rebuild_op *op = r->scratch;
    r->out = json_pack("{s:I,s:o}", "accumulators", (json_int_t)op->rows, "rebuilt",
                       json_time(op->now_s));
    return 0;
}

/* POST /v1/usage/rebuild: every usage accumulator again from the settled runs (store.h). */
int api_usage_rebuild(struct req *r, struct allot_error *err)
{
    (void)err;
    struct rebuild_op *op = xcalloc(1, sizeof *op);
    share_params(r->conf, &op->p);
    op->now_s = (int64_t)time(NULL);
    return req_defer_write(r, run_rebuild, op, finish_rebuild);
}

/* ---- priority ------------------------------------------------------------------------- */

static int newest_run(const struct job *j, void *arg)
{
    struct job *out = arg;
    if (!out->cluster[0] || j->run > out->run)
        *out = *j;
    return 0;
}

/* Value of key in a TRES list "cpu=4,mem=100M,node=1"; 0 when absent. */
static uint32_t tres_count(const char *tres, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = tres; p && *p;) {
        if (!strncmp(p, key, k) && p[k] == '=')
            return (uint32_t)strtoul(p + k + 1, NULL, 10);
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return 0;
}

static int qos_max(const struct qos *q, void *arg)
{
    int64_t *m = arg;
    if (q->priority > *m)
        *m = q->priority;
    return 0;
}

/* GET /v1/priority/{cluster}/{job}?cluster_cpus=&cluster_nodes=: the job's priority with
 * the configured formula, term by term like sprio -l. */
int api_priority_get(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    char *end;
    long long id = strtoll(r->param[1], &end, 10);
    if (*end || id <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "job: '%s' is not a job id", r->param[1]);
    struct job j;
    memset(&j, 0, sizeof j);
    struct job_filter jf = {.cluster = r->param[0], .job_id = id, .status = -1};
    if (store_job_list(st, &jf, newest_run, &j, err) < 0)
        return -1;
    int vis = j.cluster[0] ? sees_job(r, j.user, j.account, err) : 0;
    if (vis < 0)
        return -1;
    if (!vis) /* another account's job: not found, as GET /v1/jobs answers */
        return allot_errorf(err, ALLOT_ENOENT, "job: no job %s/%lld", r->param[0], id);
    int64_t cpus_total = 0, nodes_total = 0;
    if (json_query_int(r, "cluster_cpus", 0, &cpus_total, err) < 0 ||
        json_query_int(r, "cluster_nodes", 0, &nodes_total, err) < 0)
        return -1;
    const struct allot_conf *c = r->conf;
    if (c->pw_jobsize > 0 && (cpus_total <= 0 || nodes_total <= 0))
        return allot_errorf(err, ALLOT_EINVAL,
                            "cluster_cpus: cluster_cpus and cluster_nodes are needed when "
                            "PriorityWeightJobSize > 0");
    struct share s;
    int64_t now_s = (int64_t)time(NULL);
    if (share_build(r, st, j.cluster, !strcmp(c->priority_type, "flux") ? "flux" : NULL, now_s, &s,
                    err) < 0)
        return -1;
    int i = find_node(&s, j.account, j.user);
    double fs = i >= 0 && isfinite(s.rows[i].fairshare) ? s.rows[i].fairshare : 0.0;
    share_fini(&s);
    struct qos q = {.priority = 0};
    int64_t qmax = 0;
    if (j.qos[0] && store_qos_get(st, j.qos, &q, err) < 0)
        return -1;
    if (store_qos_list(st, qos_max, &qmax, err) < 0)
        return -1;
    const char *tres = j.alloc_tres[0] ? j.alloc_tres : j.req_tres;
    char line[512];
    if (!strcmp(c->priority_type, "flux")) {
        struct priority_flux_weights w = {c->fw_fairshare, c->fw_queue, c->fw_bank, c->fw_urgency};
        struct priority_flux_breakdown b;
        if (priority_flux(&w, fs, 0.0, 0.0, 16, &b, err) < 0)
            return -1;
        r->out = json_pack("{s:s,s:I,s:s,s:s,s:s,s:f,s:I,s:f,s:f,s:f,s:f}", "formula", "flux",
                           "job_id", (json_int_t)j.job_id, "cluster", j.cluster, "user", j.user,
                           "account", j.account, "fairshare_factor", fs, "priority",
                           (json_int_t)b.priority, "fairshare", b.fairshare, "queue", b.queue,
                           "bank", b.bank, "urgency", b.urgency);
        return 0;
    }
    struct priority_slurm_weights w = {
        .age = (uint32_t)c->pw_age,
        .fairshare = (uint32_t)c->pw_fairshare,
        .jobsize = (uint32_t)c->pw_jobsize,
        .partition = (uint32_t)c->pw_partition,
        .qos = (uint32_t)c->pw_qos,
        .max_age_s = (uint32_t)c->priority_max_age_s,
    };
    struct priority_slurm_job pj = {
        .now_s = now_s,
        .eligible_s = j.submit_s,
        .fairshare = fs,
        .min_nodes = tres_count(tres, "node"),
        .cpus = tres_count(tres, "cpu"),
        .time_limit_min = (uint32_t)(j.time_limit_s / 60),
        .cluster_nodes = (uint32_t)(nodes_total > 0 ? nodes_total : 1),
        .cluster_cpus = (uint32_t)(cpus_total > 0 ? cpus_total : 1),
        .qos_priority = (uint32_t)(q.priority > 0 ? q.priority : 0),
        .qos_max_priority = (uint32_t)qmax,
    };
    if (pj.min_nodes > pj.cluster_nodes)
        pj.min_nodes = pj.cluster_nodes;
    if (pj.cpus > pj.cluster_cpus)
        pj.cpus = pj.cluster_cpus;
    struct priority_breakdown b;
    if (priority_slurm(&w, &pj, &b, err) < 0 ||
        priority_format_sprio((uint64_t)j.job_id, j.partition, j.user, j.account, &b, line,
                              sizeof line, err) < 0)
        return -1;
    r->out = json_pack("{s:s,s:I,s:s,s:s,s:s,s:s,s:f,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i,"
                       "s:[s,s]}",
                       "formula", "slurm", "job_id", (json_int_t)j.job_id, "cluster", j.cluster,
                       "partition", j.partition, "user", j.user, "account", j.account,
                       "fairshare_factor", fs, "priority", (json_int_t)b.priority, "site", b.site,
                       "age", b.age, "assoc", b.assoc, "fairshare", b.fairshare, "jobsize",
                       b.jobsize, "partition_term", b.partition, "qos", b.qos, "tres", b.tres,
                       "nice", (int)b.nice, "sprio", priority_sprio_header(), line);
    return 0;
}
