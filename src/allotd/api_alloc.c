/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_alloc.c - /v1/allocations, their credits, /v1/balances and /v1/ledger.
 * An allocation's initial grant is a separate credit entry written in the same savepoint,
 * so the allocation and its first credit appear together or not at all. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/json.h"
#include "allotd/tick.h"
#include "libcore/forecast.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

enum list_mode { LIST_ALLOC = 0, LIST_BALANCE, LIST_FORECAST };

struct list_arg {
    struct req *r;
    json_t *items;
    enum list_mode mode;
    struct allot_error *err;
    json_t *user_accounts;    /* user= filter: {account: true} of its associations; else NULL */
    const char *cluster;      /* cluster= filter: allocations its jobs may draw on; else NULL */
    struct alloc_pair *pairs; /* LIST_FORECAST: the visible allocations, forecast after */
    size_t npairs, cap;
};

static int on_user_assoc(const struct assoc *a, void *arg)
{
    json_object_set_new(arg, a->account, json_true());
    return 0;
}

static int on_alloc(const struct allocation *a, const struct balance *b, void *arg)
{
    struct list_arg *l = arg;
    if (l->user_accounts && !json_object_get(l->user_accounts, a->account))
        return 0;
    /* A job on the cluster may be paid by an allocation scoped to it or to every cluster
     * (the payer rule, store_payer); one scoped to another cluster never pays it. */
    if (l->cluster && a->cluster[0] && strcmp(a->cluster, l->cluster) != 0)
        return 0;
    int vis = auth_sees_account(l->r, a->account, l->err);
    if (vis < 0)
        return -1;
    if (!vis)
        return 0;
    if (l->mode == LIST_FORECAST) {
        /* The ledger is read after the list, not from inside its callback. */
        if (l->npairs == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 16;
            l->pairs = xrealloc(l->pairs, l->cap * sizeof(*l->pairs));
        }
        l->pairs[l->npairs++] = (struct alloc_pair){*a, *b};
        return 0;
    }
    json_array_append_new(l->items,
                          l->mode == LIST_BALANCE ? json_balance(a, b) : json_allocation(a, b));
    return 0;
}

/* Each collected allocation's forecast as of now. */
static int forecast_items(struct req *r, store_t *st, struct list_arg *l, struct allot_error *err)
{
    int window;
    if (api_forecast_window(r, &window, err) < 0)
        return -1;
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < l->npairs; i++) {
        struct forecast f;
        const struct alloc_pair *p = &l->pairs[i];
        if (store_alloc_forecast(st, &p->a, &p->b, now, window, &f, NULL, err) < 0)
            return -1;
        json_array_append_new(l->items, api_forecast_json(&p->a, &p->b, &f, now, window));
    }
    return 0;
}

static int list(struct req *r, enum list_mode mode, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct alloc_filter f = {0};
    const char *active = req_query(r, "active");
    if (!st || json_query_name(r, "account", &f.account, err) < 0 ||
        json_query_name(r, "resource", &f.resource, err) < 0)
        return -1;
    if (active && strcmp(active, "1") && strcmp(active, "true") && strcmp(active, "0") &&
        strcmp(active, "false"))
        return allot_errorf(err, ALLOT_EINVAL, "active: must be true or false");
    if (active && (!strcmp(active, "1") || !strcmp(active, "true")))
        f.active_at_s = (int64_t)time(NULL);
    /* user=: the accounts the user has an association with, as a plain user sees its own
     * (auth_sees_account); a plain user may name only itself, as in GET /v1/assocs. */
    const char *user = NULL, *cluster = NULL;
    struct user u;
    if (json_query_name(r, "user", &user, err) < 0 || api_query_cluster(r, st, &cluster, err) < 0)
        return -1;
    if (user && r->who.role == ROLE_USER && strcmp(user, r->who.user) != 0)
        return allot_errorf(err, ALLOT_EPERM, "user: %s may read only its own balances",
                            r->who.user);
    if (user && store_user_get(st, user, &u, err) < 0)
        return allot_error_prefix(err, "user");
    struct list_arg l = {r,       json_array(), mode, err, user ? json_object() : NULL,
                         cluster, NULL,         0,    0};
    struct assoc_filter af = {.user = user};
    int rc = user ? store_assoc_list(st, &af, on_user_assoc, l.user_accounts, err) : 0;
    if (rc == 0)
        rc = store_alloc_list(st, &f, on_alloc, &l, err);
    if (rc == 0 && mode == LIST_FORECAST)
        rc = forecast_items(r, st, &l, err);
    json_decref(l.user_accounts);
    free(l.pairs);
    if (rc < 0) {
        json_decref(l.items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", l.items);
    return 0;
}

int api_alloc_list(struct req *r, struct allot_error *err)
{
    return list(r, LIST_ALLOC, err);
}

int api_balance_list(struct req *r, struct allot_error *err)
{
    return list(r, LIST_BALANCE, err);
}

int api_forecast_list(struct req *r, struct allot_error *err)
{
    return list(r, LIST_FORECAST, err);
}

int api_alloc_id(const char *s, int64_t *id, struct allot_error *err)
{
    char *end;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || x <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "id: '%s' is not an allocation id", s);
    *id = x;
    return 0;
}

int api_alloc_get(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct allocation a;
    struct balance b;
    if (!st || api_alloc_visible(r, st, &a, &b, err) < 0)
        return -1;
    r->out = json_allocation(&a, &b);
    return 0;
}

int api_alloc_visible(struct req *r, store_t *st, struct allocation *a, struct balance *b,
                      struct allot_error *err)
{
    int64_t id = 0;
    if (api_alloc_id(r->param[0], &id, err) < 0 || store_alloc_get(st, id, a, b, err) < 0)
        return -1;
    int vis = auth_sees_account(r, a->account, err);
    if (vis <= 0)
        return vis < 0
                   ? -1
                   : allot_errorf(err, ALLOT_EPERM, "allocation %lld: not yours", (long long)id);
    return 0;
}

struct alloc_op {
    struct allocation a;
    struct balance b;
    struct ledger_entry e;
    int replay;
    const char *amount_key; /* the request's key for e.amount_sumin: "su" or "amount_sumin" */
};

/* The store names a ledger amount "amount" or "amount_sumin" in its errors; the client
 * sent su or amount_sumin, and the error names what it sent.  Returns -1. */
static int name_amount(struct allot_error *err, const char *key)
{
    api_error_field(err, "amount_sumin", key);
    return api_error_field(err, "amount", key);
}

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    struct alloc_op *s = arg;
    if (store_alloc_add(st, &s->a, err) < 0)
        return -1;
    if (s->e.amount_sumin > 0) {
        s->e.alloc_id = s->a.id;
        if (store_credit(st, &s->e, &s->replay, err) < 0)
            return name_amount(err, s->amount_key);
    }
    return store_alloc_get(st, s->a.id, &s->a, &s->b, err);
}

static int finish_add(struct req *r, struct allot_error *err)
{
    struct alloc_op *s = r->scratch;
    r->status = 201;
    r->out = json_allocation(&s->a, &s->b);
    return 0;
}

/* Exactly one of su / amount_sumin; both absent is allowed when optional. */
static int one_amount(struct jfield *su, struct jfield *sumin, int required,
                      struct allot_error *err)
{
    if (su->seen && sumin->seen)
        return allot_errorf(err, ALLOT_EINVAL, "su: give su or amount_sumin, not both");
    if (required && !su->seen && !sumin->seen)
        return allot_errorf(err, ALLOT_EINVAL, "su: required (or amount_sumin)");
    return 0;
}

int api_alloc_add(struct req *r, struct allot_error *err)
{
    struct alloc_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    struct allocation *a = &s->a;
    strcpy(a->resource, "cpu");
    char comment[ALLOT_TEXT_MAX] = "";
    struct jfield f[] = {
        {.name = "account", .type = JF_NAME, .required = 1, .dst = a->account},
        {.name = "resource", .type = JF_NAME, .required = 0, .dst = a->resource},
        {.name = "cluster", .type = JF_NAME, .required = 0, .dst = a->cluster, .allow_empty = 1},
        {.name = "start", .type = JF_TIME, .required = 1, .dst = &a->start_s},
        {.name = "end", .type = JF_TIME, .required = 1, .dst = &a->end_s},
        {.name = "category", .type = JF_NAME, .required = 0, .dst = a->category, .allow_empty = 1},
        {.name = "comment",
         .type = JF_TEXT,
         .required = 0,
         .dst = comment,
         .size = sizeof(comment)},
        /* 0 is an empty allocation, as when the amount is left out. */
        {.name = "su", .type = JF_SU, .required = 0, .dst = &s->e.amount_sumin, .allow_empty = 1},
        {.name = "amount_sumin",
         .type = JF_SUMIN,
         .required = 0,
         .dst = &s->e.amount_sumin,
         .allow_empty = 1},
    };
    if (json_body(r, err) < 0 || json_read(r->in, f, sizeof(f) / sizeof(f[0]), err) < 0 ||
        one_amount(&f[7], &f[8], 0, err) < 0)
        return -1;
    s->amount_key = f[7].seen ? "su" : "amount_sumin";
    if (a->end_s <= a->start_s)
        return allot_errorf(err, ALLOT_EINVAL, "end: must be after start");
    memcpy(a->comment, comment, sizeof(comment));
    s->e.kind = LEDGER_CREDIT;
    text_copy(s->e.actor, sizeof(s->e.actor), r->who.user);
    s->e.time_s = (int64_t)time(NULL);
    snprintf(s->e.comment, sizeof(s->e.comment), "initial grant");
    return req_defer_write(r, run_add, s, finish_add);
}

/* PATCH: start, end, category, comment; merged inside the writer's transaction (see
 * api_account.c).  Account, resource and cluster are fixed (unknown fields here). */
struct alloc_patch {
    struct allocation a;
    struct balance b;
    json_t *in;
    int64_t id;
};

static int read_patch(json_t *in, struct allocation *a, struct allot_error *err)
{
    struct jfield f[] = {
        {.name = "start", .type = JF_TIME, .dst = &a->start_s},
        {.name = "end", .type = JF_TIME, .dst = &a->end_s},
        {.name = "category", .type = JF_NAME, .dst = a->category, .allow_empty = 1},
        {.name = "comment", .type = JF_TEXT, .dst = a->comment, .size = sizeof(a->comment)},
    };
    if (json_read(in, f, sizeof(f) / sizeof(f[0]), err) < 0)
        return -1;
    if (a->end_s <= a->start_s)
        return allot_errorf(err, ALLOT_EINVAL, "end: must be after start");
    return 0;
}

static int run_patch(store_t *st, void *arg, struct allot_error *err)
{
    struct alloc_patch *s = arg;
    if (store_alloc_get(st, s->id, &s->a, &s->b, err) < 0 || read_patch(s->in, &s->a, err) < 0 ||
        store_alloc_modify(st, &s->a, err) < 0)
        return -1;
    return store_alloc_get(st, s->id, &s->a, &s->b, err);
}

static int finish_patch(struct req *r, struct allot_error *err)
{
    struct alloc_patch *s = r->scratch;
    r->out = json_allocation(&s->a, &s->b);
    return 0;
}

int api_alloc_modify(struct req *r, struct allot_error *err)
{
    struct alloc_patch *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    store_t *st = req_reader(r, err);
    if (!st || api_alloc_id(r->param[0], &s->id, err) < 0 || json_body(r, err) < 0)
        return -1;
    s->in = r->in;
    if (store_alloc_get(st, s->id, &s->a, &s->b, err) < 0 || read_patch(s->in, &s->a, err) < 0)
        return -1;
    return req_defer_write(r, run_patch, s, finish_patch);
}

static int run_remove(store_t *st, void *arg, struct allot_error *err)
{
    return store_alloc_remove(st, ((struct alloc_op *)arg)->a.id, err);
}

static int finish_remove(struct req *r, struct allot_error *err)
{
    r->out = json_pack("{s:I, s:b}", "id", (json_int_t)((struct alloc_op *)r->scratch)->a.id,
                       "removed", 1);
    return 0;
}

int api_alloc_remove(struct req *r, struct allot_error *err)
{
    struct alloc_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    if (api_alloc_id(r->param[0], &s->a.id, err) < 0)
        return -1;
    return req_defer_write(r, run_remove, s, finish_remove);
}

static int run_credit(store_t *st, void *arg, struct allot_error *err)
{
    struct alloc_op *s = arg;
    /* A top-up made after midnight, before the tick ran, is the new period's: its boundary
     * first.  Then the thresholds, on the total the credit raised (store_credit): a project
     * back under them gets its downscale or pause lifted with the credit. */
    tick_after_write(st, s->e.alloc_id, s->e.time_s, "credit", 1);
    if (store_credit(st, &s->e, &s->replay, err) < 0)
        return name_amount(err, s->amount_key);
    if (!s->replay)
        tick_after_write(st, s->e.alloc_id, s->e.time_s, "credit", 0);
    return store_alloc_get(st, s->e.alloc_id, &s->a, &s->b, err);
}

static int finish_credit(struct req *r, struct allot_error *err)
{
    struct alloc_op *s = r->scratch;
    r->status = s->replay ? 200 : 201;
    r->out = json_ledger(&s->e);
    json_object_set_new(r->out, "replay", json_boolean(s->replay));
    json_object_set_new(r->out, "balance", json_balance(&s->a, &s->b));
    return 0;
}

int api_alloc_credit(struct req *r, struct allot_error *err)
{
    struct alloc_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    struct ledger_entry *e = &s->e;
    char kind[ALLOT_NAME_MAX] = "credit";
    if (api_alloc_id(r->param[0], &e->alloc_id, err) < 0)
        return -1;
    struct jfield f[] = {
        {.name = "kind", .type = JF_NAME, .required = 0, .dst = kind},
        {.name = "su", .type = JF_SU, .required = 0, .dst = &e->amount_sumin, .min = -1},
        {.name = "amount_sumin",
         .type = JF_SUMIN,
         .required = 0,
         .dst = &e->amount_sumin,
         .min = -1},
        {.name = "comment",
         .type = JF_TEXT,
         .required = 0,
         .dst = e->comment,
         .size = sizeof(e->comment)},
        {.name = "idempotency_key",
         .type = JF_TEXT,
         .required = 0,
         .dst = e->idem_key,
         .size = sizeof(e->idem_key)},
    };
    if (json_body(r, err) < 0 || json_read(r->in, f, sizeof(f) / sizeof(f[0]), err) < 0 ||
        one_amount(&f[1], &f[2], 1, err) < 0)
        return -1;
    s->amount_key = f[1].seen ? "su" : "amount_sumin";
    if (model_ledger_kind_parse(kind, &e->kind) < 0 ||
        (e->kind != LEDGER_CREDIT && e->kind != LEDGER_ADJUSTMENT && e->kind != LEDGER_REFUND))
        return allot_errorf(err, ALLOT_EINVAL, "kind: must be credit, adjustment or refund");
    if (e->kind != LEDGER_ADJUSTMENT && e->amount_sumin <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: must be positive", s->amount_key);
    if (e->amount_sumin == 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: must not be zero", s->amount_key);
    text_copy(e->actor, sizeof(e->actor), r->who.user);
    e->time_s = (int64_t)time(NULL);
    r->op.idempotent = e->idem_key[0] != '\0'; /* the key's entry is found again */
    return req_defer_write(r, run_credit, s, finish_credit);
}

struct ledger_arg {
    json_t *items;
    int64_t limit; /* 0: all */
    int64_t last_id;
    int more; /* an entry beyond the limit exists */
};

/* The store reads one entry past the limit, so that next_after promises a next page only
 * when there is one. */
static int on_ledger(const struct ledger_entry *e, void *arg)
{
    struct ledger_arg *l = arg;
    if (l->limit && (int64_t)json_array_size(l->items) == l->limit) {
        l->more = 1;
        return 1;
    }
    json_array_append_new(l->items, json_ledger(e));
    l->last_id = e->id;
    return 0;
}

struct job_seen {
    struct req *r;
    int runs, hidden;
    struct allot_error *err;
};

/* A run of the job is the user's if the user ran it or sees its account (GET /v1/jobs). */
static int on_job_run(const struct job *j, void *arg)
{
    struct job_seen *s = arg;
    s->runs++;
    if (strcmp(j->user, s->r->who.user) == 0)
        return 0;
    int vis = auth_sees_account(s->r, j->account, s->err);
    if (vis < 0)
        return -1;
    s->hidden += !vis;
    return 0;
}

/* The ledger a plain user may read: that of an account it has an association with
 * (account=), of one allocation of such an account (alloc=, as `allot ledger alloc=ID`
 * asks), or of one of its jobs (cluster= and job=, every run its own or on such an
 * account).  The store ANDs the filters, so one allowed filter bounds the whole answer.
 * Without any of them the user would read everyone's ledger.  0 = allowed, else -1 with
 * EPERM, ENOENT (the allocation or job named does not exist) or a storage error. */
static int user_may_read_ledger(struct req *r, store_t *st, const struct ledger_filter *f,
                                struct allot_error *err)
{
    if (f->account) {
        int vis = auth_sees_account(r, f->account, err);
        if (vis < 0)
            return -1;
        if (!vis)
            return allot_errorf(err, ALLOT_EPERM, "account %s: %s has no association with it",
                                f->account, r->who.user);
        return 0;
    }
    if (f->alloc_id) {
        struct allocation a;
        struct balance b;
        if (store_alloc_get(st, f->alloc_id, &a, &b, err) < 0)
            return allot_error_prefix(err, "alloc");
        int vis = auth_sees_account(r, a.account, err);
        if (vis < 0)
            return -1;
        if (!vis)
            return allot_errorf(err, ALLOT_EPERM,
                                "alloc: allocation %lld is of account %s, and %s has no "
                                "association with it",
                                (long long)a.id, a.account, r->who.user);
        return 0;
    }
    if (f->job_id) {
        /* A job id is unique only within its cluster. */
        if (!f->cluster)
            return allot_errorf(err, ALLOT_EPERM,
                                "cluster: required with job= for users (a job id is per "
                                "cluster)");
        struct job_filter jf = {.cluster = f->cluster, .job_id = f->job_id, .status = -1};
        struct job_seen s = {r, 0, 0, err};
        if (store_job_list(st, &jf, on_job_run, &s, err) < 0)
            return -1;
        if (s.runs == 0)
            return allot_errorf(err, ALLOT_ENOENT, "job: no job %s/%lld", f->cluster,
                                (long long)f->job_id);
        if (s.hidden)
            return allot_errorf(err, ALLOT_EPERM,
                                "job: job %s/%lld is neither %s's nor of an account %s has an "
                                "association with",
                                f->cluster, (long long)f->job_id, r->who.user, r->who.user);
        return 0;
    }
    return allot_errorf(err, ALLOT_EPERM,
                        "account: required for users (or alloc=ID, or cluster= and job=)");
}

int api_ledger_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct ledger_filter f = {0};
    int64_t limit = 0;
    if (!st || json_query_name(r, "account", &f.account, err) < 0 ||
        api_query_history_cluster(r, st, STORE_HISTORY_LEDGER, "ledger entry", &f.cluster, err) <
            0 ||
        json_query_int(r, "alloc", 1, &f.alloc_id, err) < 0 ||
        json_query_int(r, "job", 1, &f.job_id, err) < 0 ||
        json_query_time(r, "since", &f.since_s, err) < 0 ||
        json_query_int(r, "after", 0, &f.after_id, err) < 0 ||
        json_query_int(r, "limit", 1, &limit, err) < 0)
        return -1;
    if (limit > 100000)
        limit = 100000;
    f.limit = limit ? (int)limit + 1 : 0;
    if (r->who.role == ROLE_USER && user_may_read_ledger(r, st, &f, err) < 0)
        return -1;
    struct ledger_arg l = {json_array(), limit, 0, 0};
    if (store_ledger_list(st, &f, on_ledger, &l, err) < 0 ||
        (json_array_size(l.items) == 0 &&
         api_empty_listing_names(r, st, f.account, NULL, "ledger entry", err) < 0)) {
        json_decref(l.items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", l.items);
    if (l.more)
        json_object_set_new(r->out, "next_after", json_integer(l.last_id));
    return 0;
}
