/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_partition.c - /v1/partitions: resource type and TRES billing weights per partition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "allotd/partcache.h"
#include "libcore/billing.h"
#include "libutil/xalloc.h"

static int on_partition(const struct partition *p, void *arg)
{
    json_array_append_new(arg, json_partition(p));
    return 0;
}

int api_partition_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    const char *cluster;
    if (!st || api_query_cluster(r, st, &cluster, err) < 0)
        return -1;
    json_t *items = json_array();
    if (store_partition_list(st, cluster, on_partition, items, err) < 0) {
        json_decref(items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", items);
    return 0;
}

int api_partition_get(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct partition p;
    if (!st || model_check_name("cluster", r->param[0], 0, err) < 0 ||
        model_check_name("name", r->param[1], 0, err) < 0 ||
        store_partition_get(st, r->param[0], r->param[1], &p, err) < 0)
        return -1;
    r->out = json_partition(&p);
    return 0;
}

struct partition_op {
    struct partition p;
};

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    return store_partition_add(st, &((struct partition_op *)arg)->p, err);
}

static int run_remove(store_t *st, void *arg, struct allot_error *err)
{
    struct partition *p = &((struct partition_op *)arg)->p;
    return store_partition_remove(st, p->cluster, p->name, err);
}

/* Each finish runs after the commit, before the reply: the client's next job is priced
 * from what it just wrote (partcache.h). */
static int finish_add(struct req *r, struct allot_error *err)
{
    partcache_changed(r->d->partcache);
    r->status = 201;
    r->out = json_partition(&((struct partition_op *)r->scratch)->p);
    return 0;
}

static int finish_remove(struct req *r, struct allot_error *err)
{
    struct partition *p = &((struct partition_op *)r->scratch)->p;
    partcache_changed(r->d->partcache);
    r->out = json_pack("{s:s, s:s, s:b}", "cluster", p->cluster, "name", p->name, "removed", 1);
    return 0;
}

static int on_max_time(const struct limit_value *l, void *arg)
{
    if (strcmp(l->name, "MaxTime") != 0)
        return 0;
    *(long long *)arg = strtoll(l->value, NULL, 10); /* canonical: minutes, -1 = none */
    return 1;
}

/* Slurm refuses a DefaultTime above MaxTime (slurm.conf): a job left at the default would
 * be over its own limit.  The partition's MaxTime is max_time_s, or a stored MaxTime limit
 * (PUT /v1/limits), which overrides it; both must hold the default. */
static int check_times(store_t *st, const struct partition *p, struct allot_error *err)
{
    if (p->default_time_s <= 0)
        return 0;
    char def[API_DURATION_MAX], max[API_DURATION_MAX];
    api_duration(p->default_time_s, 1, def, sizeof(def));
    if (p->max_time_s >= 0 && p->default_time_s > p->max_time_s)
        return allot_errorf(err, ALLOT_EINVAL,
                            "default_time_s: %s is more than max_time_s %s; a DefaultTime may "
                            "not exceed MaxTime",
                            def, api_duration(p->max_time_s, 1, max, sizeof(max)));
    char owner[2 * ALLOT_NAME_MAX];
    long long max_min = -1;
    snprintf(owner, sizeof(owner), "%s:%s", p->cluster, p->name);
    if (store_limit_list(st, LIMIT_SCOPE_PARTITION, owner, on_max_time, &max_min, err) < 0)
        return -1;
    if (max_min >= 0 && p->default_time_s > max_min * 60)
        return allot_errorf(err, ALLOT_EINVAL,
                            "default_time_s: %s is more than the partition's MaxTime limit of "
                            "%s; a DefaultTime may not exceed MaxTime",
                            def, api_duration(max_min, 60, max, sizeof(max)));
    return 0;
}

/* adding: cluster and name are body fields; a PATCH names them in its path. */
static int read_partition(json_t *in, struct partition *p, int adding, struct allot_error *err)
{
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = p->cluster},
        {.name = "name", .type = JF_NAME, .required = 1, .dst = p->name},
        {.name = "resource", .type = JF_NAME, .dst = p->resource},
        {.name = "billing_weights",
         .type = JF_TEXT,
         .dst = p->billing_weights,
         .size = sizeof(p->billing_weights)},
        {.name = "max_tres", .type = JF_BOOL, .dst = &p->max_tres},
        {.name = "qos", .type = JF_NAME, .dst = p->qos, .allow_empty = 1},
        {.name = "default_time_s", .type = JF_INT, .dst = &p->default_time_s, .min = -1},
        {.name = "max_time_s", .type = JF_INT, .dst = &p->max_time_s, .min = -1},
    };
    size_t n = sizeof(f) / sizeof(f[0]);
    if ((adding ? json_read(in, f, n, err) : json_read(in, f + 2, n - 2, err)) < 0)
        return -1;
    /* Weights are checked here so a partition never holds weights billing cannot use. */
    struct billing_weights w;
    if (billing_weights_parse(p->billing_weights, p->max_tres, &w, err) < 0)
        return allot_error_prefix(err, "billing_weights");
    return 0;
}

int api_partition_add(struct req *r, struct allot_error *err)
{
    struct partition_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    struct partition *p = &s->p;
    strcpy(p->resource, "cpu");
    p->default_time_s = -1;
    p->max_time_s = -1;
    store_t *st = req_reader(r, err);
    if (!st || json_body(r, err) < 0 || read_partition(r->in, p, 1, err) < 0 ||
        check_times(st, p, err) < 0)
        return -1;
    return req_defer_write(r, run_add, s, finish_add);
}

/* PATCH merges inside the writer's transaction (see api_account.c). */
struct partition_patch {
    struct partition p;
    json_t *in;
    char cluster[ALLOT_NAME_MAX], name[ALLOT_NAME_MAX];
};

static int run_patch(store_t *st, void *arg, struct allot_error *err)
{
    struct partition_patch *s = arg;
    if (store_partition_get(st, s->cluster, s->name, &s->p, err) < 0 ||
        read_partition(s->in, &s->p, 0, err) < 0 || check_times(st, &s->p, err) < 0)
        return -1;
    return store_partition_modify(st, &s->p, err);
}

static int finish_patch(struct req *r, struct allot_error *err)
{
    partcache_changed(r->d->partcache);
    r->out = json_partition(&((struct partition_patch *)r->scratch)->p);
    return 0;
}

int api_partition_modify(struct req *r, struct allot_error *err)
{
    struct partition_patch *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    store_t *st = req_reader(r, err);
    if (!st || model_copy_name(s->cluster, "cluster", r->param[0], 0, err) < 0 ||
        model_copy_name(s->name, "name", r->param[1], 0, err) < 0 || json_body(r, err) < 0)
        return -1;
    s->in = r->in;
    if (store_partition_get(st, s->cluster, s->name, &s->p, err) < 0 ||
        read_partition(s->in, &s->p, 0, err) < 0 || check_times(st, &s->p, err) < 0)
        return -1;
    return req_defer_write(r, run_patch, s, finish_patch);
}

int api_partition_remove(struct req *r, struct allot_error *err)
{
    struct partition_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    if (model_copy_name(s->p.cluster, "cluster", r->param[0], 0, err) < 0 ||
        model_copy_name(s->p.name, "name", r->param[1], 0, err) < 0)
        return -1;
    return req_defer_write(r, run_remove, s, finish_remove);
}
