/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_user.c - /v1/users.  Plain users may read only themselves. */
#include <string.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libutil/xalloc.h"

static int on_user(const struct user *u, void *arg)
{
    json_array_append_new(arg, json_user(u));
    return 0;
}

int api_user_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    json_t *items = json_array();
    if (store_user_list(st, on_user, items, err) < 0) {
        json_decref(items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", items);
    return 0;
}

int api_user_get(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct user u;
    if (!st || model_check_name("name", r->param[0], 0, err) < 0)
        return -1;
    if (r->who.role == ROLE_USER && strcmp(r->param[0], r->who.user) != 0)
        return allot_errorf(err, ALLOT_EPERM, "user %s: %s may read only itself", r->param[0],
                            r->who.user);
    if (store_user_get(st, r->param[0], &u, err) < 0)
        return -1;
    r->out = json_user(&u);
    return 0;
}

struct user_op {
    struct user u;
};

/* The reply is the stored record, as the other POST replies are: the store fills what the
 * request did not say (created). */
static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    struct user *u = &((struct user_op *)arg)->u;
    if (store_user_add(st, u, err) < 0)
        return -1;
    return store_user_get(st, u->name, u, err);
}

static int run_remove(store_t *st, void *arg, struct allot_error *err)
{
    return store_user_remove(st, ((struct user_op *)arg)->u.name, err);
}

static int finish_add(struct req *r, struct allot_error *err)
{
    r->status = 201;
    r->out = json_user(&((struct user_op *)r->scratch)->u);
    return 0;
}

static int finish_remove(struct req *r, struct allot_error *err)
{
    r->out = json_pack("{s:s, s:b}", "name", ((struct user_op *)r->scratch)->u.name, "removed", 1);
    return 0;
}

/* adding: "name" is a body field; a PATCH names the user in its path. */
static int read_user(json_t *in, struct user *u, int adding, struct allot_error *err)
{
    struct jfield f[] = {
        {.name = "name", .type = JF_NAME, .required = 1, .dst = u->name},
        {.name = "uid", .type = JF_INT, .dst = &u->uid, .min = -1},
        {.name = "default_account", .type = JF_NAME, .dst = u->default_account, .allow_empty = 1},
    };
    return adding ? json_read(in, f, 3, err) : json_read(in, f + 1, 2, err);
}

int api_user_add(struct req *r, struct allot_error *err)
{
    struct user_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    s->u.uid = -1;
    if (json_body(r, err) < 0 || read_user(r->in, &s->u, 1, err) < 0)
        return -1;
    return req_defer_write(r, run_add, s, finish_add);
}

/* PATCH merges inside the writer's transaction (see api_account.c). */
struct user_patch {
    struct user u;
    json_t *in;
    char name[ALLOT_NAME_MAX];
};

static int run_patch(store_t *st, void *arg, struct allot_error *err)
{
    struct user_patch *s = arg;
    if (store_user_get(st, s->name, &s->u, err) < 0 || read_user(s->in, &s->u, 0, err) < 0)
        return -1;
    return store_user_modify(st, &s->u, err);
}

static int finish_patch(struct req *r, struct allot_error *err)
{
    r->out = json_user(&((struct user_patch *)r->scratch)->u);
    return 0;
}

int api_user_modify(struct req *r, struct allot_error *err)
{
    struct user_patch *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    store_t *st = req_reader(r, err);
    if (!st || model_copy_name(s->name, "name", r->param[0], 0, err) < 0 || json_body(r, err) < 0)
        return -1;
    s->in = r->in;
    if (store_user_get(st, s->name, &s->u, err) < 0 || read_user(s->in, &s->u, 0, err) < 0)
        return -1;
    return req_defer_write(r, run_patch, s, finish_patch);
}

int api_user_remove(struct req *r, struct allot_error *err)
{
    struct user_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    if (model_copy_name(s->u.name, "name", r->param[0], 0, err) < 0)
        return -1;
    return req_defer_write(r, run_remove, s, finish_remove);
}
