/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sync_view.c - read a cluster's accounts, users, associations and partitions from Slurm
 * or from allotd (sync_view.h). */
#include "agent/sync_view.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/child.h"
#include "libslurmtext/partition.h"
#include "libslurmtext/sacctmgr.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

/* A big site's association list is a few MB; beyond this it is refused, not read cut. */
#define VIEW_OUT_MAX (64 * 1024 * 1024)

__attribute__((format(printf, 3, 4))) static int fail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Append one zeroed element of size sz to *arr (n elements), returning it. */
static void *push(void *arr, size_t *n, size_t sz)
{
    void **a = arr;
    if ((*n & (*n - 1)) == 0) /* grow at powers of two */
        *a = xrealloc(*a, (*n ? *n * 2 : 1) * sz);
    char *e = (char *)*a + *n * sz;
    memset(e, 0, sz);
    (*n)++;
    return e;
}

static int cmp_part(const void *a, const void *b)
{
    return strcmp(((const struct sv_part *)a)->name, ((const struct sv_part *)b)->name);
}
static int cmp_acct(const void *a, const void *b)
{
    return strcmp(((const struct sv_acct *)a)->name, ((const struct sv_acct *)b)->name);
}
static int cmp_user(const void *a, const void *b)
{
    return strcmp(((const struct sv_user *)a)->name, ((const struct sv_user *)b)->name);
}
static int cmp_assoc(const void *a, const void *b)
{
    const struct sv_assoc *x = a, *y = b;
    int c = strcmp(x->account, y->account);
    if (!c)
        c = strcmp(x->user, y->user);
    return c ? c : strcmp(x->partition, y->partition);
}

static void sort_view(struct sync_view *v)
{
    if (v->nparts)
        qsort(v->parts, v->nparts, sizeof *v->parts, cmp_part);
    if (v->naccts)
        qsort(v->accts, v->naccts, sizeof *v->accts, cmp_acct);
    if (v->nusers)
        qsort(v->users, v->nusers, sizeof *v->users, cmp_user);
    if (v->nassocs)
        qsort(v->assocs, v->nassocs, sizeof *v->assocs, cmp_assoc);
}

void sync_view_free(struct sync_view *v)
{
    free(v->parts);
    free(v->accts);
    free(v->users);
    free(v->assocs);
    memset(v, 0, sizeof *v);
}

const struct sv_part *sv_find_part(const struct sync_view *v, const char *name)
{
    struct sv_part k;
    text_copy(k.name, sizeof k.name, name);
    return v->nparts ? bsearch(&k, v->parts, v->nparts, sizeof k, cmp_part) : NULL;
}
const struct sv_acct *sv_find_acct(const struct sync_view *v, const char *name)
{
    struct sv_acct k;
    text_copy(k.name, sizeof k.name, name);
    return v->naccts ? bsearch(&k, v->accts, v->naccts, sizeof k, cmp_acct) : NULL;
}
const struct sv_user *sv_find_user(const struct sync_view *v, const char *name)
{
    struct sv_user k;
    text_copy(k.name, sizeof k.name, name);
    return v->nusers ? bsearch(&k, v->users, v->nusers, sizeof k, cmp_user) : NULL;
}
const struct sv_assoc *sv_find_assoc(const struct sync_view *v, const struct sv_assoc *key)
{
    return v->nassocs ? bsearch(key, v->assocs, v->nassocs, sizeof *key, cmp_assoc) : NULL;
}

/* Copy span s into dst; -1 when it does not fit. */
static int span_copy(char *dst, size_t size, struct slt_span s)
{
    if (s.n >= size)
        return -1;
    memcpy(dst, s.p, s.n);
    dst[s.n] = '\0';
    return 0;
}

/* Run a Slurm tool; 0 with its whole stdout in *c, or -1 with why. */
static int run_tool(const struct agent_tools *t, char *const argv[], struct child_out *c, char *why,
                    size_t len)
{
    int rc = child_run(argv, NULL, t->timeout_s, VIEW_OUT_MAX, c);
    if (rc == 0 && !c->too_big)
        return 0;
    if (rc == 0)
        fail(why, len, "%s: output over %d bytes refused", argv[0], VIEW_OUT_MAX);
    else if (rc < 0)
        fail(why, len, "%s: %s", argv[0], c->errtext);
    else
        fail(why, len, "%s exit %d: %s", argv[0], rc, c->errtext);
    child_out_free(c);
    return -1;
}

static int slurm_parts(const struct agent_tools *t, struct sync_view *v, char *why, size_t len)
{
    char *argv[] = {(char *)t->scontrol, "show", "partition", "-o", NULL};
    struct child_out c;
    if (run_tool(t, argv, &c, why, len) < 0)
        return -1;
    size_t pos = 0, lineno = 0;
    struct slt_span line;
    int rc = 0;
    while (c.out && slt_next_line(c.out, c.n, &pos, &line)) {
        lineno++;
        if (line.n == 0)
            continue;
        struct slt_partition p;
        struct allot_error e = {0};
        if (slt_partition_parse(line, &p, &e) < 0) {
            rc = fail(why, len, "scontrol show partition line %zu: %s", lineno, e.msg);
            break;
        }
        struct sv_part *o = push(&v->parts, &v->nparts, sizeof *o);
        text_copy(o->name, sizeof o->name, p.name);
        text_copy(o->weights, sizeof o->weights, p.billing_weights);
        o->max_time_s = p.max_time_s;
        o->default_time_s = p.default_time_s;
    }
    child_out_free(&c);
    return rc;
}

/* `sacctmgr -P -n show ARGS... format=COLS`, each row to cb; 0 or -1 with why. */
typedef int (*mgr_row_f)(const struct slt_mgr_row *row, struct sync_view *v, char *why, size_t len);
static int sacctmgr_rows(const struct agent_tools *t, char *const args[], const char *cols,
                         mgr_row_f cb, struct sync_view *v, char *why, size_t len)
{
    char *argv[16], fmt[160];
    size_t n = 0;
    argv[n++] = (char *)t->sacctmgr;
    argv[n++] = "-P";
    argv[n++] = "-n";
    argv[n++] = "show";
    for (size_t i = 0; args[i] && n < 13; i++)
        argv[n++] = args[i];
    snprintf(fmt, sizeof fmt, "format=%s", cols);
    argv[n++] = fmt;
    argv[n] = NULL;
    struct slt_mgr_format mf;
    struct allot_error e = {0};
    if (slt_mgr_format_parse(cols, &mf, &e) < 0)
        return fail(why, len, "%s", e.msg);
    struct child_out c;
    if (run_tool(t, argv, &c, why, len) < 0)
        return -1;
    size_t pos = 0, lineno = 0;
    struct slt_span line;
    int rc = 0;
    while (c.out && slt_next_line(c.out, c.n, &pos, &line)) {
        lineno++;
        if (line.n == 0)
            continue;
        struct slt_mgr_row row;
        if (slt_mgr_row_parse(&mf, line, &row, &e) < 0) {
            rc = fail(why, len, "sacctmgr show %s line %zu: %s", args[0], lineno, e.msg);
            break;
        }
        if (cb(&row, v, why, len) < 0) {
            char inner[256];
            text_copy(inner, sizeof inner, why);
            rc = fail(why, len, "sacctmgr show %s line %zu: %s", args[0], lineno, inner);
            break;
        }
    }
    child_out_free(&c);
    return rc;
}

static int get_name(const struct slt_mgr_row *row, const char *col, char *dst, size_t size,
                    char *why, size_t len)
{
    struct slt_span s = {"", 0};
    if (!slt_mgr_get(row, col, &s) || span_copy(dst, size, s) < 0)
        return fail(why, len, "%s: missing or longer than %zu characters", col, size - 1);
    return 0;
}

static int on_assoc_row(const struct slt_mgr_row *row, struct sync_view *v, char *why, size_t len)
{
    char acct[SV_NAME_MAX], user[SV_NAME_MAX], part[SV_NAME_MAX], parent[SV_NAME_MAX];
    if (get_name(row, "Account", acct, sizeof acct, why, len) < 0 ||
        get_name(row, "User", user, sizeof user, why, len) < 0 ||
        get_name(row, "Partition", part, sizeof part, why, len) < 0 ||
        get_name(row, "ParentName", parent, sizeof parent, why, len) < 0)
        return -1;
    if (!user[0]) {
        struct sv_acct *a = push(&v->accts, &v->naccts, sizeof *a);
        text_copy(a->name, sizeof a->name, acct);
        text_copy(a->parent, sizeof a->parent, parent);
    } else {
        struct sv_assoc *a = push(&v->assocs, &v->nassocs, sizeof *a);
        text_copy(a->account, sizeof a->account, acct);
        text_copy(a->user, sizeof a->user, user);
        text_copy(a->partition, sizeof a->partition, part);
    }
    return 0;
}

static int on_user_row(const struct slt_mgr_row *row, struct sync_view *v, char *why, size_t len)
{
    struct sv_user *u = push(&v->users, &v->nusers, sizeof *u);
    return get_name(row, "User", u->name, sizeof u->name, why, len) < 0 ||
                   get_name(row, "DefaultAccount", u->def, sizeof u->def, why, len) < 0
               ? -1
               : 0;
}

int sync_view_slurm(const struct agent_tools *t, const char *cluster, struct sync_view *v,
                    char *why, size_t len)
{
    char where[160];
    snprintf(where, sizeof where, "cluster=%s", cluster);
    char *assoc_args[] = {"assoc", "where", where, NULL};
    char *user_args[] = {"user", NULL};
    memset(v, 0, sizeof *v);
    if (slurm_parts(t, v, why, len) < 0 ||
        sacctmgr_rows(t, assoc_args, "Account,User,Partition,ParentName", on_assoc_row, v, why,
                      len) < 0 ||
        sacctmgr_rows(t, user_args, "User,DefaultAccount", on_user_row, v, why, len) < 0) {
        sync_view_free(v);
        return -1;
    }
    sort_view(v);
    return 0;
}

/* GET path; its "items" array (a new reference in *doc), or NULL with why. */
static json_t *get_items(allot_client_t *c, const char *path, json_t **doc, char *why, size_t len)
{
    struct allot_error err = {0};
    char *reply = NULL;
    *doc = NULL;
    if (allot_request(c, "GET", path, NULL, NULL, &reply, &err) < 0) {
        free(reply);
        fail(why, len, "GET %s: %s", path, err.msg);
        return NULL;
    }
    json_error_t jerr;
    *doc = json_loads(reply, 0, &jerr);
    free(reply);
    json_t *items = json_object_get(*doc, "items");
    if (!json_is_array(items)) {
        json_decref(*doc);
        *doc = NULL;
        fail(why, len, "GET %s: answer not understood (no items array)", path);
        return NULL;
    }
    return items;
}

static void copy_member(char *dst, size_t size, json_t *o, const char *key)
{
    text_copy(dst, size, json_string_value(json_object_get(o, key)));
}

static int64_t int_member(json_t *o, const char *key, int64_t dflt)
{
    json_t *x = json_object_get(o, key);
    return json_is_integer(x) ? (int64_t)json_integer_value(x) : dflt;
}

int sync_view_allot(allot_client_t *c, const char *cluster, struct sync_view *v, char *why,
                    size_t len)
{
    char path[256];
    json_t *doc, *items, *o;
    size_t i;
    memset(v, 0, sizeof *v);
    char *enc = allot_urlencode(cluster, NULL);
    if (!enc)
        return fail(why, len, "cluster name cannot be encoded");
    snprintf(path, sizeof path, "/v1/partitions?cluster=%s", enc);
    if (!(items = get_items(c, path, &doc, why, len)))
        goto bad;
    json_array_foreach(items, i, o)
    {
        struct sv_part *p = push(&v->parts, &v->nparts, sizeof *p);
        copy_member(p->name, sizeof p->name, o, "name");
        copy_member(p->weights, sizeof p->weights, o, "billing_weights");
        p->max_time_s = int_member(o, "max_time_s", -1);
        p->default_time_s = int_member(o, "default_time_s", -1);
    }
    json_decref(doc);
    if (!(items = get_items(c, "/v1/accounts", &doc, why, len)))
        goto bad;
    json_array_foreach(items, i, o)
    {
        struct sv_acct *a = push(&v->accts, &v->naccts, sizeof *a);
        copy_member(a->name, sizeof a->name, o, "name");
        copy_member(a->parent, sizeof a->parent, o, "parent");
    }
    json_decref(doc);
    if (!(items = get_items(c, "/v1/users", &doc, why, len)))
        goto bad;
    json_array_foreach(items, i, o)
    {
        struct sv_user *u = push(&v->users, &v->nusers, sizeof *u);
        copy_member(u->name, sizeof u->name, o, "name");
        copy_member(u->def, sizeof u->def, o, "default_account");
    }
    json_decref(doc);
    snprintf(path, sizeof path, "/v1/assocs?cluster=%s", enc);
    if (!(items = get_items(c, path, &doc, why, len)))
        goto bad;
    json_array_foreach(items, i, o)
    {
        struct sv_assoc *a = push(&v->assocs, &v->nassocs, sizeof *a);
        copy_member(a->account, sizeof a->account, o, "account");
        copy_member(a->user, sizeof a->user, o, "user");
        copy_member(a->partition, sizeof a->partition, o, "partition");
    }
    json_decref(doc);
    free(enc);
    sort_view(v);
    return 0;
bad:
    free(enc);
    sync_view_free(v);
    return -1;
}
