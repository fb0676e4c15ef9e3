/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_assoc.c - /v1/assocs: (cluster, account, user, partition) memberships. */
#include <string.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libutil/xalloc.h"

struct list_arg {
    struct req *r;
    json_t *items;
    const char *partition; /* NULL = any */
};

static int on_assoc(const struct assoc *a, void *arg)
{
    struct list_arg *l = arg;
    /* Filtered here: an account's or user's associations are few. */
    if (l->partition && strcmp(a->partition, l->partition) != 0)
        return 0;
    json_array_append_new(l->items, json_assoc(a));
    return 0;
}

int api_assoc_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct assoc_filter f = {0};
    const char *partition = NULL;
    if (!st || api_query_cluster(r, st, &f.cluster, err) < 0 ||
        json_query_name(r, "account", &f.account, err) < 0 ||
        json_query_name(r, "user", &f.user, err) < 0 ||
        json_query_name(r, "partition", &partition, err) < 0)
        return -1;
    if (r->who.role == ROLE_USER) {
        if (f.user && strcmp(f.user, r->who.user) != 0)
            return allot_errorf(err, ALLOT_EPERM, "user: %s may read only its own associations",
                                r->who.user);
        f.user = r->who.user;
    }
    struct list_arg l = {r, json_array(), partition};
    if (store_assoc_list(st, &f, on_assoc, &l, err) < 0) {
        json_decref(l.items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", l.items);
    return 0;
}

struct assoc_op {
    struct assoc a;
};

/* Slurm keys an association by an optional partition of its cluster: one that is not
 * there would hold limits and shares no job can ever use.  The cluster is checked first
 * so an unknown one is named as such. */
static int check_partition(store_t *st, const struct assoc *a, struct allot_error *err)
{
    if (!a->partition[0])
        return 0;
    if (api_cluster_check(st, a->cluster, err) < 0)
        return -1;
    struct partition p;
    struct allot_error e;
    if (store_partition_get(st, a->cluster, a->partition, &p, &e) == 0)
        return 0;
    if (e.code != ALLOT_ENOENT) {
        if (err)
            *err = e;
        return -1;
    }
    return allot_errorf(err, ALLOT_EINVAL, "partition: '%s' does not exist on cluster %s",
                        a->partition, a->cluster);
}

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    struct assoc *a = &((struct assoc_op *)arg)->a;
    if (check_partition(st, a, err) < 0)
        return -1;
    return store_assoc_add(st, a, err);
}

static int run_remove(store_t *st, void *arg, struct allot_error *err)
{
    struct assoc *a = &((struct assoc_op *)arg)->a;
    return store_assoc_remove(st, a->cluster, a->account, a->user, a->partition, err);
}

static int finish_add(struct req *r, struct allot_error *err)
{
    r->status = 201;
    r->out = json_assoc(&((struct assoc_op *)r->scratch)->a);
    return 0;
}

static int finish_remove(struct req *r, struct allot_error *err)
{
    r->out = json_assoc(&((struct assoc_op *)r->scratch)->a);
    json_object_set_new(r->out, "removed", json_true());
    return 0;
}

static int read_assoc(struct req *r, struct assoc *a, int keys_only, struct allot_error *err)
{
    a->shares = 1;
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = a->cluster},
        {.name = "account", .type = JF_NAME, .required = 1, .dst = a->account},
        {.name = "user", .type = JF_NAME, .required = 1, .dst = a->user},
        {.name = "partition",
         .type = JF_NAME,
         .required = 0,
         .dst = a->partition,
         .allow_empty = 1},
        {.name = "shares", .type = JF_INT, .required = 0, .dst = &a->shares},
        {.name = "default_qos",
         .type = JF_NAME,
         .required = 0,
         .dst = a->default_qos,
         .allow_empty = 1},
        {.name = "qos", .type = JF_TEXT, .required = 0, .dst = a->qos, .size = sizeof(a->qos)},
    };
    size_t n = keys_only ? 4 : sizeof(f) / sizeof(f[0]);
    return json_body(r, err) < 0 ? -1 : json_read(r->in, f, n, err);
}

int api_assoc_add(struct req *r, struct allot_error *err)
{
    struct assoc_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    store_t *st = req_reader(r, err);
    if (!st || read_assoc(r, &s->a, 0, err) < 0 || check_partition(st, &s->a, err) < 0)
        return -1;
    return req_defer_write(r, run_add, s, finish_add);
}

/* PATCH: the body names the association by its four key fields and carries the changes;
 * merged inside the writer's transaction (see api_account.c). */
struct assoc_patch {
    struct assoc a;
    struct assoc key;
    json_t *in; /* borrowed from the request, which outlives the op */
};

static int read_patch(json_t *in, struct assoc *a, struct allot_error *err)
{
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = a->cluster},
        {.name = "account", .type = JF_NAME, .required = 1, .dst = a->account},
        {.name = "user", .type = JF_NAME, .required = 1, .dst = a->user},
        {.name = "partition", .type = JF_NAME, .dst = a->partition, .allow_empty = 1},
        {.name = "shares", .type = JF_INT, .dst = &a->shares},
        {.name = "default_qos", .type = JF_NAME, .dst = a->default_qos, .allow_empty = 1},
        {.name = "qos", .type = JF_TEXT, .dst = a->qos, .size = sizeof(a->qos)},
    };
    return json_read(in, f, sizeof(f) / sizeof(f[0]), err);
}

/* The association a PATCH names.  When there is none, a partition not on the cluster is
 * the reason given (400 naming it); an existing association is patched even if its
 * partition has gone since, as it is still the key. */
static int get_key(store_t *st, const struct assoc *k, struct assoc *out, struct allot_error *err)
{
    struct allot_error e;
    if (store_assoc_get(st, k->cluster, k->account, k->user, k->partition, out, &e) == 0)
        return 0;
    if (e.code == ALLOT_ENOENT && check_partition(st, k, err) < 0)
        return -1;
    if (err)
        *err = e;
    return -1;
}

static int run_patch(store_t *st, void *arg, struct allot_error *err)
{
    struct assoc_patch *s = arg;
    if (get_key(st, &s->key, &s->a, err) < 0 || read_patch(s->in, &s->a, err) < 0)
        return -1;
    return store_assoc_modify(st, &s->a, err);
}

static int finish_patch(struct req *r, struct allot_error *err)
{
    r->out = json_assoc(&((struct assoc_patch *)r->scratch)->a);
    return 0;
}

int api_assoc_modify(struct req *r, struct allot_error *err)
{
    struct assoc_patch *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    store_t *st = req_reader(r, err);
    if (!st || json_body(r, err) < 0 || read_patch(r->in, &s->key, err) < 0)
        return -1;
    s->in = r->in;
    if (get_key(st, &s->key, &s->a, err) < 0 || read_patch(r->in, &s->a, err) < 0)
        return -1;
    return req_defer_write(r, run_patch, s, finish_patch);
}

int api_assoc_remove(struct req *r, struct allot_error *err)
{
    struct assoc_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    if (read_assoc(r, &s->a, 1, err) < 0)
        return -1;
    return req_defer_write(r, run_remove, s, finish_remove);
}
