/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_qos.c - /v1/qos: Slurm QOS records (priority, flags, factors as decimal strings). */
#include <string.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libutil/xalloc.h"

static int on_qos(const struct qos *q, void *arg)
{
    json_array_append_new(arg, json_qos(q));
    return 0;
}

int api_qos_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    json_t *items = json_array();
    if (store_qos_list(st, on_qos, items, err) < 0) {
        json_decref(items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", items);
    return 0;
}

int api_qos_get(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct qos q;
    if (!st || model_check_name("name", r->param[0], 0, err) < 0 ||
        store_qos_get(st, r->param[0], &q, err) < 0)
        return -1;
    r->out = json_qos(&q);
    return 0;
}

/* adding: "name" is a body field; a PATCH names the QOS in its path. */
static int read_qos(json_t *in, struct qos *q, int adding, struct allot_error *err)
{
    struct jfield f[] = {
        {.name = "name", .type = JF_NAME, .required = 1, .dst = q->name},
        {.name = "priority", .type = JF_INT, .dst = &q->priority},
        {.name = "flags", .type = JF_TEXT, .dst = q->flags, .size = sizeof(q->flags)},
        {.name = "usage_factor", .type = JF_FACTOR, .dst = &q->usage_factor_ppm},
        {.name = "limit_factor", .type = JF_FACTOR, .dst = &q->limit_factor_ppm},
        {.name = "description",
         .type = JF_TEXT,
         .dst = q->description,
         .size = sizeof(q->description)},
    };
    size_t n = sizeof(f) / sizeof(f[0]);
    return adding ? json_read(in, f, n, err) : json_read(in, f + 1, n - 1, err);
}

struct qos_op {
    struct qos q;
    json_t *in; /* PATCH: borrowed from the request, which outlives the op */
    char name[ALLOT_NAME_MAX];
};

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    return store_qos_add(st, &((struct qos_op *)arg)->q, err);
}

/* PATCH merges inside the writer's transaction (see api_account.c). */
static int run_patch(store_t *st, void *arg, struct allot_error *err)
{
    struct qos_op *s = arg;
    if (store_qos_get(st, s->name, &s->q, err) < 0 || read_qos(s->in, &s->q, 0, err) < 0)
        return -1;
    return store_qos_modify(st, &s->q, err);
}

static int run_remove(store_t *st, void *arg, struct allot_error *err)
{
    return store_qos_remove(st, ((struct qos_op *)arg)->name, err);
}

static int finish(struct req *r, struct allot_error *err)
{
    r->out = json_qos(&((struct qos_op *)r->scratch)->q);
    return 0;
}

static int finish_add(struct req *r, struct allot_error *err)
{
    r->status = 201;
    return finish(r, err);
}

static int finish_remove(struct req *r, struct allot_error *err)
{
    r->out = json_pack("{s:s, s:b}", "name", ((struct qos_op *)r->scratch)->name, "removed", 1);
    return 0;
}

int api_qos_add(struct req *r, struct allot_error *err)
{
    struct qos_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    s->q.usage_factor_ppm = 1000000;
    s->q.limit_factor_ppm = -1;
    if (json_body(r, err) < 0 || read_qos(r->in, &s->q, 1, err) < 0)
        return -1;
    return req_defer_write(r, run_add, s, finish_add);
}

int api_qos_modify(struct req *r, struct allot_error *err)
{
    struct qos_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    store_t *st = req_reader(r, err);
    if (!st || model_copy_name(s->name, "name", r->param[0], 0, err) < 0 || json_body(r, err) < 0)
        return -1;
    s->in = r->in;
    if (store_qos_get(st, s->name, &s->q, err) < 0 || read_qos(s->in, &s->q, 0, err) < 0)
        return -1;
    return req_defer_write(r, run_patch, s, finish);
}

int api_qos_remove(struct req *r, struct allot_error *err)
{
    struct qos_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    if (model_copy_name(s->name, "name", r->param[0], 0, err) < 0)
        return -1;
    return req_defer_write(r, run_remove, s, finish_remove);
}
