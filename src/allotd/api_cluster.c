/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_cluster.c - /v1/clusters: the Slurm clusters the bank knows. */
#include <string.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libutil/xalloc.h"

static int on_cluster(const char *name, void *arg)
{
    json_array_append_new(arg, json_pack("{s:s}", "name", name));
    return 0;
}

struct find_arg {
    const char *name;
};

static int on_find(const char *name, void *arg)
{
    return strcmp(name, ((struct find_arg *)arg)->name) == 0; /* 1 stops the scan */
}

int api_cluster_check(store_t *st, const char *name, struct allot_error *err)
{
    struct find_arg f = {name};
    int rc = store_cluster_list(st, on_find, &f, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_ENOENT, "cluster: '%s' does not exist", name);
    return 0;
}

int api_query_cluster(struct req *r, store_t *st, const char **out, struct allot_error *err)
{
    if (json_query_name(r, "cluster", out, err) < 0)
        return -1;
    return *out ? api_cluster_check(st, *out, err) : 0;
}

int api_cluster_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    json_t *items = json_array();
    if (store_cluster_list(st, on_cluster, items, err) < 0) {
        json_decref(items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", items);
    return 0;
}

struct cluster_op {
    char name[ALLOT_NAME_MAX];
};

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    return store_cluster_add(st, ((struct cluster_op *)arg)->name, err);
}

static int run_remove(store_t *st, void *arg, struct allot_error *err)
{
    return store_cluster_remove(st, ((struct cluster_op *)arg)->name, err);
}

static int finish(struct req *r, struct allot_error *err)
{
    struct cluster_op *op = r->scratch;
    r->out = json_pack("{s:s}", "name", op->name);
    return 0;
}

static int finish_add(struct req *r, struct allot_error *err)
{
    r->status = 201;
    return finish(r, err);
}

int api_cluster_add(struct req *r, struct allot_error *err)
{
    struct cluster_op op = {{0}};
    struct jfield f[] = {{.name = "name", .type = JF_NAME, .required = 1, .dst = op.name}};
    if (json_body(r, err) < 0 || json_read(r->in, f, 1, err) < 0)
        return -1;
    struct cluster_op *s = xmalloc(sizeof(*s));
    *s = op;
    return req_defer_write(r, run_add, s, finish_add);
}

int api_cluster_remove(struct req *r, struct allot_error *err)
{
    struct cluster_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    if (model_copy_name(s->name, "name", r->param[0], 0, err) < 0)
        return -1;
    return req_defer_write(r, run_remove, s, finish);
}
