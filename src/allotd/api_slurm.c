/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_slurm.c - POST /v1/import/slurm and GET /v1/export/slurm: the bank's accounts, users,
 * associations and their limits from and to the file `sacctmgr dump` writes and
 * `sacctmgr load` reads.
 *
 * Import: body {"dump": text, "qos"?: text, "partitions"?: text, "priority_flags"?: text,
 * "cluster"?: name, "dry_run"?: bool}.  A dry
 * run walks on the reader and writes nothing; a real one is one write op (api_import.c).
 * Export: {"cluster", "dump": text}: Cluster line (root's shares, QOS and limits), then
 * the tree depth first: for each account a Parent line, the User lines of its associations
 * on the cluster (with Coordinator=, the accounts the user coordinates) and the Account
 * lines of its children, so every Parent names an account
 * already defined, as `sacctmgr load` needs.  Values are written as the dump writes them
 * (limits in their canonical text, Fairshare=parent as 2147483647).  Every account of the
 * bank is exported: the bank holds one tree for all its clusters.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/api_import.h"
#include "allotd/json.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

struct import_op {
    struct req *r; /* the reply is set on it from the writer thread (the request waits) */
    struct import_input in;
    char cluster[ALLOT_NAME_MAX];
};

static int run_import(store_t *st, void *arg, struct allot_error *err)
{
    struct import_op *op = arg;
    json_t *reply = NULL;
    if (import_slurm_walk(st, &op->in, 1, &reply, err) < 0)
        return -1;
    json_decref(op->r->out);
    op->r->out = reply;
    return 0;
}

static int finish_import(struct req *r, struct allot_error *err)
{
    (void)err;
    return 0;
}

int api_import_slurm(struct req *r, struct allot_error *err)
{
    struct import_op *op = xcalloc(1, sizeof *op);
    r->scratch = op;
    op->r = r;
    if (json_body(r, err) < 0)
        return -1;
    const char *key;
    json_t *v;
    int dry_run = 0;
    json_object_foreach(r->in, key, v)
    {
        if (strcmp(key, "dump") == 0 || strcmp(key, "qos") == 0 || strcmp(key, "partitions") == 0 ||
            strcmp(key, "priority_flags") == 0) {
            if (!json_is_string(v))
                return allot_errorf(err, ALLOT_EINVAL, "%s: must be a string", key);
            if (key[0] == 'd') {
                op->in.dump = json_string_value(v);
                op->in.dump_len = json_string_length(v);
            } else if (key[0] == 'q') {
                op->in.qos = json_string_value(v);
                op->in.qos_len = json_string_length(v);
            } else if (key[1] == 'a') {
                op->in.partitions = json_string_value(v);
                op->in.partitions_len = json_string_length(v);
            } else {
                op->in.priority_flags = json_string_value(v);
            }
        } else if (strcmp(key, "cluster") == 0) {
            if (!json_is_string(v) ||
                model_copy_name(op->cluster, "cluster", json_string_value(v), 0, err) < 0)
                return json_is_string(v)
                           ? -1
                           : allot_errorf(err, ALLOT_EINVAL, "cluster: must be a string");
            op->in.cluster = op->cluster;
        } else if (strcmp(key, "dry_run") == 0) {
            if (!json_is_boolean(v))
                return allot_errorf(err, ALLOT_EINVAL, "dry_run: must be true or false");
            dry_run = json_is_true(v);
        } else {
            return allot_errorf(err, ALLOT_EINVAL, "%s: unknown field", key);
        }
    }
    if (!op->in.dump)
        return allot_errorf(err, ALLOT_EINVAL, "dump: required");
    if (dry_run) {
        store_t *st = req_reader(r, err);
        if (!st)
            return -1;
        return import_slurm_walk(st, &op->in, 0, &r->out, err);
    }
    return req_defer_write(r, run_import, op, finish_import);
}

/* ---- export ------------------------------------------------------------------------- */

struct buf {
    char *p;
    size_t n, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (k > 0 ? (size_t)k : 0) + 256;
        b->p = xrealloc(b->p, b->cap);
    }
}

/* A quoted value as the dump writes it: Slurm keeps no quote inside (it stores ' and " as
 * a backtick), so neither does an export. */
static void put_quoted(struct buf *b, const char *key, const char *v)
{
    if (!v[0])
        return;
    put(b, ":%s='", key);
    for (const char *p = v; *p; p++)
        put(b, "%c", *p == '\'' || *p == '"' ? '`' : *p);
    put(b, "'");
}

static int on_limit_put(const struct limit_value *l, void *arg)
{
    put(arg, ":%s=%s", l->name, l->value);
    return 0;
}

static int put_limits(store_t *st, struct buf *b, enum limit_scope scope, const char *owner,
                      struct allot_error *err)
{
    return store_limit_list(st, scope, owner, on_limit_put, b, err);
}

struct accounts {
    struct account *a;
    size_t n, cap;
};

static int on_account(const struct account *a, void *arg)
{
    struct accounts *l = arg;
    if (l->n == l->cap)
        l->a = xrealloc(l->a, (l->cap = l->cap ? l->cap * 2 : 64) * sizeof *l->a);
    l->a[l->n++] = *a;
    return 0;
}

struct users_ctx {
    store_t *st;
    struct buf *b;
    const struct accounts *acc;
    struct allot_error *err;
};

/* Coordinator='a,b': the accounts user coordinates, as sacctmgr dump writes them on the
 * user's lines (a coordinator with no association on the cluster has no line to carry it). */
static void put_coordinator(struct buf *b, const struct accounts *acc, const char *user)
{
    int n = 0;
    for (size_t i = 0; i < acc->n; i++)
        if (conf_list_contains(acc->a[i].coordinators, user))
            put(b, "%s%s", n++ ? "," : ":Coordinator='", acc->a[i].name);
    if (n)
        put(b, "'");
}

static int on_assoc_put(const struct assoc *a, void *arg)
{
    struct users_ctx *u = arg;
    struct user usr;
    if (store_user_get(u->st, a->user, &usr, u->err) < 0)
        return -1;
    put(u->b, "User - '%s'", a->user);
    put_quoted(u->b, "DefaultAccount", usr.default_account);
    put_quoted(u->b, "DefaultQOS", a->default_qos);
    put(u->b, ":Fairshare=%lld", (long long)a->shares);
    put_quoted(u->b, "Partition", a->partition);
    put_quoted(u->b, "QOS", a->qos);
    put_coordinator(u->b, u->acc, a->user);
    char owner[4 * ALLOT_NAME_MAX];
    snprintf(owner, sizeof owner, "%s:%s:%s:%s", a->cluster, a->account, a->user, a->partition);
    if (put_limits(u->st, u->b, LIMIT_SCOPE_ASSOC, owner, u->err) < 0)
        return -1;
    put(u->b, "\n");
    return 0;
}

static void put_account_opts(struct buf *b, const struct account *a)
{
    put_quoted(b, "DefaultQOS", a->default_qos);
    put(b, ":Fairshare=%lld", (long long)a->shares);
    put_quoted(b, "QOS", a->qos);
}

int api_export_slurm(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    const char *cluster;
    if (!st || api_query_cluster(r, st, &cluster, err) < 0)
        return -1;
    if (!cluster)
        return allot_errorf(err, ALLOT_EINVAL, "cluster: required");
    struct accounts acc = {0};
    struct buf b = {xmalloc(4096), 0, 4096};
    b.p[0] = '\0';
    int rc = -1;
    if (store_account_list(st, on_account, &acc, err) < 0)
        goto out;
    put(&b, "# allot export slurm: cluster %s; load it with `sacctmgr load file=F`\n", cluster);
    for (size_t i = 0; i < acc.n; i++) {
        if (strcmp(acc.a[i].name, "root") != 0)
            continue;
        put(&b, "Cluster - '%s'", cluster);
        put_account_opts(&b, &acc.a[i]);
        if (put_limits(st, &b, LIMIT_SCOPE_ACCOUNT, "root", err) < 0)
            goto out;
        put(&b, "\n");
    }
    struct users_ctx u = {st, &b, &acc, err};
    for (size_t i = 0; i < acc.n; i++) {
        const struct account *p = &acc.a[i];
        put(&b, "Parent - '%s'\n", p->name);
        struct assoc_filter f = {.cluster = cluster, .account = p->name};
        if (store_assoc_list(st, &f, on_assoc_put, &u, err) < 0)
            goto out;
        for (size_t j = 0; j < acc.n; j++) {
            const struct account *c = &acc.a[j];
            if (strcmp(c->parent, p->name) != 0 || strcmp(c->name, "root") == 0)
                continue;
            put(&b, "Account - '%s'", c->name);
            put_quoted(&b, "Description", c->description);
            put_quoted(&b, "Organization", c->organization);
            put_account_opts(&b, c);
            if (put_limits(st, &b, LIMIT_SCOPE_ACCOUNT, c->name, err) < 0)
                goto out;
            put(&b, "\n");
        }
    }
    r->out = json_pack("{s:s, s:s%}", "cluster", cluster, "dump", b.p, b.n);
    rc = 0;
out:
    free(acc.a);
    free(b.p);
    return rc;
}
