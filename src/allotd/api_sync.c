/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_sync.c - drift between allot's copy of a cluster and Slurm (doc/api.md "Sync"):
 * allot-agent's sync pass puts what it found (PUT /v1/sync/<cluster>), `allot sync status`
 * and the dashboard read it (GET /v1/sync).  The set replaces the cluster's previous one
 * in one write (store_sync_replace); /metrics counts it (metrics.c). */
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

/* The drifts live in the same block as the op: the request frees its scratch with one
 * free(), whether or not the write ran (request.h). */
struct sync_op {
    char cluster[ALLOT_NAME_MAX];
    char mode[16];
    int64_t now_s, resolved;
    int n;
    struct sync_drift d[];
};

static int run_sync(store_t *st, void *arg, struct allot_error *err)
{
    struct sync_op *o = arg;
    return store_sync_replace(st, o->cluster, o->mode, o->now_s, o->d, o->n, o->resolved, err);
}

static int finish_sync(struct req *r, struct allot_error *err)
{
    (void)err;
    struct sync_op *o = r->scratch;
    r->out = json_pack("{s:s, s:s, s:I, s:I}", "cluster", o->cluster, "mode", o->mode, "drifts",
                       (json_int_t)o->n, "resolved", (json_int_t)o->resolved);
    log_info("msg=\"sync report\" req=%llu cluster=%s mode=%s drifts=%d resolved=%lld",
             (unsigned long long)r->id, o->cluster, o->mode, o->n, (long long)o->resolved);
    return 0;
}

/* Read drift i of the request into d. */
static int read_drift(json_t *v, int i, struct sync_drift *d, struct allot_error *err)
{
    struct jfield f[] = {
        {.name = "kind", .type = JF_TEXT, .required = 1, .dst = d->kind, .size = sizeof d->kind},
        {.name = "object",
         .type = JF_TEXT,
         .required = 1,
         .dst = d->object,
         .size = sizeof d->object},
        {.name = "field", .type = JF_TEXT, .required = 1, .dst = d->field, .size = sizeof d->field},
        {.name = "slurm", .type = JF_TEXT, .dst = d->slurm_value, .size = sizeof d->slurm_value},
        {.name = "allot", .type = JF_TEXT, .dst = d->allot_value, .size = sizeof d->allot_value},
        {.name = "status",
         .type = JF_TEXT,
         .required = 1,
         .dst = d->status,
         .size = sizeof d->status},
        {.name = "note", .type = JF_TEXT, .dst = d->note, .size = sizeof d->note},
    };
    if (!json_is_object(v))
        return allot_errorf(err, ALLOT_EINVAL, "drifts[%d]: must be an object", i);
    if (json_read(v, f, sizeof f / sizeof f[0], err) < 0)
        return allot_error_prefix(err, "drifts[%d]", i);
    return 0;
}

int api_sync_put(struct req *r, struct allot_error *err)
{
    char mode[16] = "";
    int64_t resolved = 0;
    struct jfield f[] = {
        {.name = "mode", .type = JF_TEXT, .required = 1, .dst = mode, .size = sizeof mode},
        {.name = "resolved", .type = JF_INT, .dst = &resolved, .min = 0},
    };
    if (model_check_name("cluster", r->param[0], 0, err) < 0 || json_body(r, err) < 0)
        return -1;
    json_t *arr = json_object_get(r->in, "drifts");
    if (!json_is_array(arr))
        return allot_errorf(err, ALLOT_EINVAL, "drifts: required, an array of objects");
    /* The flat fields are read strictly (an unknown one is refused); drifts one by one. */
    json_t *rest = json_copy(r->in);
    json_object_del(rest, "drifts");
    int rc = json_read(rest, f, sizeof f / sizeof f[0], err);
    json_decref(rest);
    if (rc < 0)
        return -1;
    size_t n = json_array_size(arr);
    if (n > STORE_SYNC_DRIFTS_MAX)
        return allot_errorf(err, ALLOT_ETOOBIG, "drifts: at most %d", STORE_SYNC_DRIFTS_MAX);
    struct sync_op *o = xcalloc(1, sizeof *o + n * sizeof o->d[0]);
    r->scratch = o;
    text_copy(o->cluster, sizeof o->cluster, r->param[0]);
    text_copy(o->mode, sizeof o->mode, mode);
    o->resolved = resolved;
    o->n = (int)n;
    for (size_t i = 0; i < n; i++)
        if (read_drift(json_array_get(arr, i), (int)i, &o->d[i], err) < 0)
            return -1;
    o->now_s = (int64_t)time(NULL);
    return req_defer_write(r, run_sync, o, finish_sync);
}

static int on_state(const struct sync_state *s, void *arg)
{
    json_array_append_new(arg, json_pack("{s:s, s:s, s:o, s:I, s:I, s:I}", "cluster", s->cluster,
                                         "mode", s->mode, "synced", json_time(s->synced_s),
                                         "drifts", (json_int_t)s->drifts, "found_total",
                                         (json_int_t)s->found_total, "resolved_total",
                                         (json_int_t)s->resolved_total));
    return 0;
}

static int on_drift(const struct sync_drift *d, void *arg)
{
    json_array_append_new(arg, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o}",
                                         "cluster", d->cluster, "kind", d->kind, "object",
                                         d->object, "field", d->field, "slurm", d->slurm_value,
                                         "allot", d->allot_value, "status", d->status, "note",
                                         d->note, "first_seen", json_time(d->first_seen_s),
                                         "last_seen", json_time(d->last_seen_s)));
    return 0;
}

int api_sync_get(struct req *r, struct allot_error *err)
{
    const char *cluster = NULL;
    store_t *st = req_reader(r, err);
    if (!st || api_query_cluster(r, st, &cluster, err) < 0)
        return -1;
    json_t *states = json_array(), *items = json_array();
    if (store_sync_states(st, cluster, on_state, states, err) < 0 ||
        store_sync_drifts(st, cluster, on_drift, items, err) < 0) {
        json_decref(states);
        json_decref(items);
        return -1;
    }
    r->out = json_pack("{s:o, s:o}", "clusters", states, "items", items);
    return 0;
}
