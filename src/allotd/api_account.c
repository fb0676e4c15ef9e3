/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_account.c - /v1/accounts: the account tree.  Users see the accounts they are in. */
#include <string.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/json.h"
#include "libutil/xalloc.h"

struct list_arg {
    struct req *r;
    json_t *items;
    struct allot_error *err;
};

static int on_account(const struct account *a, void *arg)
{
    struct list_arg *l = arg;
    int vis = auth_sees_account(l->r, a->name, l->err);
    if (vis < 0)
        return -1;
    if (vis)
        json_array_append_new(l->items, json_account(a));
    return 0;
}

int api_account_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct list_arg l = {r, json_array(), err};
    if (store_account_list(st, on_account, &l, err) < 0) {
        json_decref(l.items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", l.items);
    return 0;
}

int api_account_get(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct account a;
    if (!st || model_check_name("name", r->param[0], 0, err) < 0)
        return -1;
    int vis = auth_sees_account(r, r->param[0], err);
    if (vis < 0)
        return -1;
    if (!vis)
        return allot_errorf(err, ALLOT_EPERM, "account %s: %s has no association with it",
                            r->param[0], r->who.user);
    if (store_account_get(st, r->param[0], &a, err) < 0)
        return -1;
    r->out = json_account(&a);
    return 0;
}

struct account_op {
    struct account a;
};

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    return store_account_add(st, &((struct account_op *)arg)->a, err);
}

static int run_remove(store_t *st, void *arg, struct allot_error *err)
{
    return store_account_remove(st, ((struct account_op *)arg)->a.name, err);
}

static int finish(struct req *r, struct allot_error *err)
{
    r->out = json_account(&((struct account_op *)r->scratch)->a);
    return 0;
}

static int finish_add(struct req *r, struct allot_error *err)
{
    r->status = 201;
    return finish(r, err);
}

static int finish_remove(struct req *r, struct allot_error *err)
{
    r->out =
        json_pack("{s:s, s:b}", "name", ((struct account_op *)r->scratch)->a.name, "removed", 1);
    return 0;
}

static int read_account(json_t *in, struct account *a, int adding, struct allot_error *err)
{
    struct jfield f[] = {
        {.name = "name", .type = JF_NAME, .required = 1, .dst = a->name},
        {.name = "parent", .type = JF_NAME, .dst = a->parent},
        {.name = "shares", .type = JF_INT, .dst = &a->shares},
        {.name = "description",
         .type = JF_TEXT,
         .dst = a->description,
         .size = sizeof(a->description)},
        {.name = "organization", .type = JF_NAME, .dst = a->organization, .allow_empty = 1},
        {.name = "qos", .type = JF_TEXT, .dst = a->qos, .size = sizeof(a->qos)},
        {.name = "default_qos", .type = JF_NAME, .dst = a->default_qos, .allow_empty = 1},
        {.name = "coordinators",
         .type = JF_TEXT,
         .dst = a->coordinators,
         .size = sizeof(a->coordinators)},
    };
    size_t n = sizeof(f) / sizeof(f[0]);
    /* PATCH names the account in the path: "name" is not a field of its body. */
    return adding ? json_read(in, f, n, err) : json_read(in, f + 1, n - 1, err);
}

int api_account_add(struct req *r, struct allot_error *err)
{
    struct account_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    s->a.shares = 1;
    strcpy(s->a.parent, "root");
    if (json_body(r, err) < 0 || read_account(r->in, &s->a, 1, err) < 0)
        return -1;
    return req_defer_write(r, run_add, s, finish_add);
}

/* PATCH: the body is applied to the record read inside the writer's transaction, so two
 * concurrent PATCHes of different fields both take effect (no lost update). */
struct account_patch {
    struct account a; /* first: finish() reads it as an account_op */
    json_t *in;       /* borrowed from the request, which outlives the op */
    char name[ALLOT_NAME_MAX];
};

static int run_patch(store_t *st, void *arg, struct allot_error *err)
{
    struct account_patch *s = arg;
    if (store_account_get(st, s->name, &s->a, err) < 0 || read_account(s->in, &s->a, 0, err) < 0)
        return -1;
    return store_account_modify(st, &s->a, err);
}

int api_account_modify(struct req *r, struct allot_error *err)
{
    struct account_patch *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    store_t *st = req_reader(r, err);
    if (!st || model_copy_name(s->name, "name", r->param[0], 0, err) < 0 || json_body(r, err) < 0)
        return -1;
    s->in = r->in;
    /* Validate now against the current record so bad input never reaches the writer. */
    if (store_account_get(st, s->name, &s->a, err) < 0 || read_account(s->in, &s->a, 0, err) < 0)
        return -1;
    return req_defer_write(r, run_patch, s, finish);
}

int api_account_remove(struct req *r, struct allot_error *err)
{
    struct account_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    if (model_copy_name(s->a.name, "name", r->param[0], 0, err) < 0)
        return -1;
    return req_defer_write(r, run_remove, s, finish_remove);
}
