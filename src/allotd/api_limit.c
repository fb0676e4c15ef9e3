/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_limit.c - /v1/limits: stored limits (list, set) and the effective limits of a
 * (cluster, user, account, partition, QOS) with where each came from (doc/design.md §4.2).
 *
 * The effective view builds Slurm's chain from the store (partition QOS, job QOS, user
 * association, the account's associations up the tree, root, partition) and hands it to
 * libcore's limits_resolve, which owns the precedence rules and their exceptions. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/json.h"
#include "libcore/limits.h"
#include "libcore/numparse.h"
#include "libcore/tres.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

#define LEVEL_PAIRS_MAX 64

struct level_buf {
    char owner[4 * ALLOT_NAME_MAX];
    int n;
    struct limit_pair pairs[LEVEL_PAIRS_MAX];
    char names[LEVEL_PAIRS_MAX][ALLOT_NAME_MAX];
    char values[LEVEL_PAIRS_MAX][ALLOT_TRES_MAX];
};

struct list_arg {
    json_t *items;
    const json_t *seen; /* auth_account_set: NULL = the caller sees every account */
    const char *user;   /* the effective user */
};

/* doc/design.md §8.3: a plain user sees the limits of the accounts it is in and of the associations
 * of those accounts (as GET /v1/jobs shows their jobs); QOS and partition limits are the
 * cluster's configuration, as their records are, and visible to all. */
static int limit_visible(const struct list_arg *l, enum limit_scope scope, const char *owner)
{
    if (!l->seen)
        return 1;
    if (scope == LIMIT_SCOPE_ACCOUNT)
        return auth_set_sees(l->seen, owner);
    if (scope != LIMIT_SCOPE_ASSOC)
        return 1;
    /* owner is "cluster:account:user:partition" */
    char account[ALLOT_NAME_MAX], user[ALLOT_NAME_MAX];
    const char *a = strchr(owner, ':');
    const char *u = a ? strchr(a + 1, ':') : NULL;
    const char *p = u ? strchr(u + 1, ':') : NULL;
    if (!p || (size_t)(u - a - 1) >= sizeof(account) || (size_t)(p - u - 1) >= sizeof(user))
        return 0;
    memcpy(account, a + 1, (size_t)(u - a - 1));
    account[u - a - 1] = '\0';
    memcpy(user, u + 1, (size_t)(p - u - 1));
    user[p - u - 1] = '\0';
    return strcmp(user, l->user) == 0 || auth_set_sees(l->seen, account);
}

static int on_limit_json(const struct limit_value *l, void *arg)
{
    struct list_arg *la = arg;
    if (!limit_visible(la, l->scope, l->owner))
        return 0;
    json_array_append_new(la->items, json_pack("{s:s, s:s, s:s, s:s}", "scope",
                                               model_limit_scope_name(l->scope), "owner", l->owner,
                                               "name", l->name, "value", l->value));
    return 0;
}

int api_limit_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    const char *scope_s = req_query(r, "scope"), *owner = req_query(r, "owner");
    if (!st)
        return -1;
    enum limit_scope scope = LIMIT_SCOPE_ASSOC;
    if (scope_s && model_limit_scope_parse(scope_s, &scope) < 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "scope: '%s' is not assoc, account, qos or partition", scope_s);
    if (owner && !scope_s)
        return allot_errorf(err, ALLOT_EINVAL, "scope: required with owner");
    json_t *seen;
    if (auth_account_set(r, &seen, err) < 0)
        return -1;
    struct list_arg l = {json_array(), seen, r->who.user};
    /* Naming an owner one may not see is refused, as GET /v1/accounts/NAME is. */
    if (owner && !limit_visible(&l, scope, owner)) {
        json_decref(l.items);
        json_decref(seen);
        return allot_errorf(err, ALLOT_EPERM, "owner: %s may not read the limits of %s %s",
                            r->who.user, model_limit_scope_name(scope), owner);
    }
    int rc = 0;
    for (int s = 0; s <= LIMIT_SCOPE_PARTITION && rc == 0; s++) {
        if (scope_s && s != (int)scope)
            continue;
        rc = store_limit_list(st, (enum limit_scope)s, owner, on_limit_json, &l, err);
    }
    json_decref(seen);
    if (rc < 0) {
        json_decref(l.items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", l.items);
    return 0;
}

struct limit_op {
    enum limit_scope scope;
    char owner[4 * ALLOT_NAME_MAX];
    char name[ALLOT_NAME_MAX];
    char value[ALLOT_TRES_MAX]; /* canonical; "" clears */
};

/* A partition's MaxTime limit may not fall below its default_time_s: Slurm refuses a
 * DefaultTime above MaxTime (slurm.conf), and every job left at the default would be over
 * its own limit.  Run after store_limit_set, which has checked the owner. */
static int check_max_time(store_t *st, const struct limit_op *s, struct allot_error *err)
{
    if (s->scope != LIMIT_SCOPE_PARTITION || strcmp(s->name, "MaxTime") != 0 || !s->value[0] ||
        strcmp(s->value, "-1") == 0)
        return 0;
    char cluster[ALLOT_NAME_MAX];
    const char *colon = strchr(s->owner, ':');
    if (!colon || (size_t)(colon - s->owner) >= sizeof(cluster))
        return 0;
    memcpy(cluster, s->owner, (size_t)(colon - s->owner));
    cluster[colon - s->owner] = '\0';
    struct partition p;
    if (store_partition_get(st, cluster, colon + 1, &p, err) < 0)
        return -1;
    long long max_min = strtoll(s->value, NULL, 10); /* canonical: whole minutes */
    char max[API_DURATION_MAX], def[API_DURATION_MAX];
    if (p.default_time_s > 0 && p.default_time_s > max_min * 60)
        return allot_errorf(err, ALLOT_EINVAL,
                            "value: MaxTime %s is less than the default_time_s %s of partition "
                            "%s; a DefaultTime may not exceed MaxTime",
                            api_duration(max_min, 60, max, sizeof(max)),
                            api_duration(p.default_time_s, 1, def, sizeof(def)), s->owner);
    return 0;
}

static int run_set(store_t *st, void *arg, struct allot_error *err)
{
    struct limit_op *s = arg;
    if (store_limit_set(st, s->scope, s->owner, s->name, s->value, err) < 0)
        return -1;
    return check_max_time(st, s, err); /* a failure rolls the set back (writer.h) */
}

static int finish_set(struct req *r, struct allot_error *err)
{
    struct limit_op *s = r->scratch;
    r->out = json_pack("{s:s, s:s, s:s, s:s}", "scope", model_limit_scope_name(s->scope), "owner",
                       s->owner, "name", s->name, "value", s->value);
    return 0;
}

int api_limit_set(struct req *r, struct allot_error *err)
{
    struct limit_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    char scope[ALLOT_NAME_MAX] = "", value[ALLOT_TRES_MAX] = "";
    struct jfield f[] = {
        {.name = "scope", .type = JF_NAME, .required = 1, .dst = scope},
        {.name = "owner",
         .type = JF_TEXT,
         .required = 1,
         .dst = s->owner,
         .size = sizeof(s->owner)},
        {.name = "name", .type = JF_NAME, .required = 1, .dst = s->name},
        {.name = "value", .type = JF_TEXT, .required = 1, .dst = value, .size = sizeof(value)},
    };
    if (json_body(r, err) < 0 || json_read(r->in, f, sizeof(f) / sizeof(f[0]), err) < 0)
        return -1;
    if (model_limit_scope_parse(scope, &s->scope) < 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "scope: '%s' is not assoc, account, qos or partition", scope);
    /* The name first: an unknown one is the name's fault, not the value's. */
    const struct limit_def *d = limits_find(s->scope, s->name);
    if (!d)
        return allot_errorf(err, ALLOT_EINVAL, "name: limit '%s' does not exist for %s", s->name,
                            model_limit_scope_name(s->scope));
    if (value[0] && limits_validate(s->scope, s->name, value, s->value, sizeof(s->value), err) < 0)
        return allot_error_prefix(err, "value");
    /* The QOS record holds the factors (PATCH /v1/qos/NAME): one stored value each. */
    if (d->type == LIMIT_FACTOR)
        return allot_errorf(err, ALLOT_EINVAL,
                            "name: %s is a field of the QOS record: set %s with PATCH "
                            "/v1/qos/%s (allot qos modify %s %s=)",
                            d->name,
                            strcmp(d->name, "LimitFactor") == 0 ? "limit_factor" : "usage_factor",
                            s->owner, s->owner,
                            strcmp(d->name, "LimitFactor") == 0 ? "limitfactor" : "usagefactor");
    /* Aliases (MaxWall, max_active_jobs, max_cores...) are stored under the Slurm name, so
     * one row holds each limit and a later set replaces an earlier one. */
    text_copy(s->name, sizeof(s->name), d->name);
    return req_defer_write(r, run_set, s, finish_set);
}

/* ---- effective limits ---------------------------------------------------------------- */

struct collect {
    struct level_buf *b;
    struct allot_error *err;
};

static int on_limit_collect(const struct limit_value *l, void *arg)
{
    struct collect *c = arg;
    struct level_buf *b = c->b;
    if (b->n >= LEVEL_PAIRS_MAX)
        return allot_errorf(c->err, ALLOT_EINTERNAL, "%s: more than %d limits", b->owner,
                            LEVEL_PAIRS_MAX);
    text_copy(b->names[b->n], sizeof(b->names[0]), l->name);
    text_copy(b->values[b->n], sizeof(b->values[0]), l->value);
    b->pairs[b->n] = (struct limit_pair){b->names[b->n], b->values[b->n]};
    b->n++;
    return 0;
}

/* Append one level to the chain, with the limits stored under (scope, owner). */
static int add_level(store_t *st, struct limit_chain *chain, struct level_buf *bufs,
                     enum limit_level_kind kind, enum limit_scope scope, const char *owner,
                     unsigned qos_flags, struct allot_error *err)
{
    if (chain->n >= LIMIT_CHAIN_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "account: tree deeper than %d levels",
                            LIMIT_CHAIN_MAX - 4);
    struct level_buf *b = &bufs[chain->n];
    text_copy(b->owner, sizeof(b->owner), owner);
    b->n = 0;
    struct collect c = {b, err};
    int rc = store_limit_list(st, scope, owner, on_limit_collect, &c, err);
    if (rc != 0)
        return -1;
    chain->level[chain->n++] = (struct limit_level){kind, b->owner, b->pairs, b->n, qos_flags};
    return 0;
}

/* The partition's own MaxTime (a partition attribute, not a stored limit) joins its level
 * unless a stored MaxTime overrides it. */
static int add_partition_max_time(struct level_buf *b, struct limit_level *lv, int64_t max_time_s,
                                  struct allot_error *err)
{
    for (int i = 0; i < b->n; i++)
        if (strcasecmp(b->names[i], "MaxTime") == 0)
            return 0;
    if (b->n >= LEVEL_PAIRS_MAX)
        return allot_errorf(err, ALLOT_EINTERNAL, "%s: more than %d limits", b->owner,
                            LEVEL_PAIRS_MAX);
    char minutes[32];
    snprintf(minutes, sizeof(minutes), "%lld", (long long)((max_time_s + 59) / 60));
    if (limits_validate(LIMIT_SCOPE_PARTITION, "MaxTime", minutes, b->values[b->n],
                        sizeof(b->values[0]), err) < 0)
        return allot_error_prefix(err, "partition max_time_s");
    snprintf(b->names[b->n], sizeof(b->names[0]), "MaxTime");
    b->pairs[b->n] = (struct limit_pair){b->names[b->n], b->values[b->n]};
    b->n++;
    lv->n = b->n;
    return 0;
}

/* A QOS level: its stored limits plus LimitFactor from the QOS record's limit_factor, the
 * one place it is kept (a LimitFactor row stored before that rule is ignored). */
static int add_qos_level(store_t *st, struct limit_chain *chain, struct level_buf *bufs,
                         enum limit_level_kind kind, const char *name, struct allot_error *err)
{
    struct qos q;
    if (store_qos_get(st, name, &q, err) < 0)
        return allot_error_prefix(err, "qos");
    if (add_level(st, chain, bufs, kind, LIMIT_SCOPE_QOS, name, limits_qos_flags(q.flags), err) < 0)
        return -1;
    struct level_buf *b = &bufs[chain->n - 1];
    int k = 0;
    for (int i = 0; i < b->n; i++) {
        const struct limit_def *d = limits_find(LIMIT_SCOPE_QOS, b->names[i]);
        if (d && d->type == LIMIT_FACTOR && strcmp(d->name, "LimitFactor") == 0)
            continue;
        if (k != i) {
            memcpy(b->names[k], b->names[i], sizeof(b->names[0]));
            memcpy(b->values[k], b->values[i], sizeof(b->values[0]));
        }
        b->pairs[k] = (struct limit_pair){b->names[k], b->values[k]};
        k++;
    }
    b->n = k;
    if (q.limit_factor_ppm > 0) {
        if (b->n >= LEVEL_PAIRS_MAX)
            return allot_errorf(err, ALLOT_EINTERNAL, "%s: more than %d limits", b->owner,
                                LEVEL_PAIRS_MAX);
        if (numparse_format_fixed(q.limit_factor_ppm, 6, b->values[b->n], sizeof(b->values[0])) < 0)
            return allot_errorf(err, ALLOT_EINTERNAL, "qos %s: limit_factor out of range", name);
        snprintf(b->names[b->n], sizeof(b->names[0]), "LimitFactor");
        b->pairs[b->n] = (struct limit_pair){b->names[b->n], b->values[b->n]};
        b->n++;
    }
    chain->level[chain->n - 1].n = b->n;
    return 0;
}

/* Effective-limit chain for (cluster, user, account, partition, qos); account NULL = the
 * user's default; partition/qos NULL = none given. */
static int build_chain(store_t *st, const char *cluster, const char *user, const char *account,
                       const char *partition, const char *qos, struct limit_chain *chain,
                       struct level_buf *bufs, struct allot_error *err)
{
    struct user u;
    if (!account) {
        if (store_user_get(st, user, &u, err) < 0)
            return -1;
        if (!u.default_account[0])
            return allot_errorf(err, ALLOT_EINVAL, "account: required (%s has no default)", user);
        account = u.default_account;
    }
    struct partition p = {.qos = ""};
    if (partition && store_partition_get(st, cluster, partition, &p, err) < 0)
        return allot_error_prefix(err, "partition");
    struct assoc a;
    if (store_assoc_of_job(st, cluster, account, user, partition ? partition : "", &a, err) < 0)
        return -1;
    chain->n = 0;
    if (p.qos[0] && add_qos_level(st, chain, bufs, LIMIT_LEVEL_PARTITION_QOS, p.qos, err) < 0)
        return -1;
    const char *job_qos = qos ? qos : (a.default_qos[0] ? a.default_qos : NULL);
    if (job_qos && add_qos_level(st, chain, bufs, LIMIT_LEVEL_JOB_QOS, job_qos, err) < 0)
        return -1;
    char owner[4 * ALLOT_NAME_MAX];
    snprintf(owner, sizeof(owner), "%s:%s:%s:%s", a.cluster, a.account, a.user, a.partition);
    if (add_level(st, chain, bufs, LIMIT_LEVEL_USER_ASSOC, LIMIT_SCOPE_ASSOC, owner, 0, err) < 0)
        return -1;
    struct account anc[LIMIT_CHAIN_MAX];
    int n = 0;
    if (store_account_ancestors(st, account, anc, LIMIT_CHAIN_MAX - 4, &n, err) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int root = strcmp(anc[i].name, "root") == 0;
        if (add_level(st, chain, bufs, root ? LIMIT_LEVEL_ROOT_ASSOC : LIMIT_LEVEL_ACCOUNT_ASSOC,
                      LIMIT_SCOPE_ACCOUNT, anc[i].name, 0, err) < 0)
            return -1;
    }
    if (partition) {
        snprintf(owner, sizeof(owner), "%s:%s", cluster, partition);
        if (add_level(st, chain, bufs, LIMIT_LEVEL_PARTITION, LIMIT_SCOPE_PARTITION, owner, 0,
                      err) < 0)
            return -1;
        if (p.max_time_s >= 0 &&
            add_partition_max_time(&bufs[chain->n - 1], &chain->level[chain->n - 1], p.max_time_s,
                                   err) < 0)
            return -1;
    }
    return 0;
}

/* One row of limits_format_row ("NAME\tVALUE\tLEVEL\tOWNER") as a JSON item. */
static json_t *row_json(const char *row)
{
    char buf[1024];
    text_copy(buf, sizeof(buf), row);
    char *f[4] = {buf, "", "", ""};
    for (int i = 1; i < 4; i++) {
        char *tab = strchr(f[i - 1], '\t');
        if (!tab)
            break;
        *tab = '\0';
        f[i] = tab + 1;
    }
    return json_pack("{s:s, s:s, s:s, s:s}", "name", f[0], "value", f[1], "source_scope", f[2],
                     "source_owner", f[3]);
}

int api_limit_effective(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct level_buf *bufs = xcalloc(LIMIT_CHAIN_MAX, sizeof(*bufs));
    struct limit_chain *chain = xcalloc(1, sizeof(*chain));
    struct limit_effective *eff = xcalloc(1, sizeof(*eff));
    int rc = -1;
    const char *cluster, *user, *account, *partition, *qos;
    if (json_query_name(r, "cluster", &cluster, err) < 0 ||
        json_query_name(r, "user", &user, err) < 0 ||
        json_query_name(r, "account", &account, err) < 0 ||
        json_query_name(r, "partition", &partition, err) < 0 ||
        json_query_name(r, "qos", &qos, err) < 0)
        goto out;
    if (!cluster || !user) {
        allot_errorf(err, ALLOT_EINVAL, "%s: required", cluster ? "user" : "cluster");
        goto out;
    }
    if (api_cluster_check(st, cluster, err) < 0)
        goto out;
    if (r->who.role == ROLE_USER && strcmp(user, r->who.user) != 0) {
        allot_errorf(err, ALLOT_EPERM, "user: %s may read only its own limits", r->who.user);
        goto out;
    }
    if (build_chain(st, cluster, user, account, partition, qos, chain, bufs, err) < 0 ||
        limits_resolve(chain, eff, err) < 0)
        goto out;
    json_t *items = json_array();
    char row[1024];
    for (int i = 0; i < eff->n; i++) {
        const struct limit_resolved *x = &eff->r[i];
        if (x->type == LIMIT_TRES || x->type == LIMIT_TRES_MINUTES) {
            for (int k = 0; k < x->tres.n; k++)
                if (x->tres_src[k].level >= 0 && limits_format_row(x, k, row, sizeof(row)) == 0)
                    json_array_append_new(items, row_json(row));
        } else if (x->src.level >= 0 && limits_format_row(x, 0, row, sizeof(row)) == 0) {
            json_array_append_new(items, row_json(row));
        }
    }
    r->out = json_pack("{s:o}", "items", items);
    rc = 0;
out:
    free(eff);
    free(chain);
    free(bufs);
    return rc;
}

/* ---- submit-time check for admission (doc/design.md §4.3) ------------------------------------ */

/* Admission's working set (about 200 KB: the chain's level buffers and the effective
 * limits), kept per MHD thread and reused.  Zeroing it per request (calloc) cost more than
 * the rest of an admit put together; nothing needs it zeroed: build_chain sets each level it
 * uses and limits_resolve clears each entry it adds. */
struct admit_scratch {
    struct level_buf bufs[LIMIT_CHAIN_MAX];
    struct limit_chain chain;
    struct limit_effective eff;
};

static pthread_key_t admit_key;
static pthread_once_t admit_once = PTHREAD_ONCE_INIT;

static void admit_key_make(void)
{
    if (pthread_key_create(&admit_key, free) != 0) {
        fputs("allotd: cannot create a thread key\n", stderr);
        abort();
    }
}

static struct admit_scratch *admit_scratch(void)
{
    pthread_once(&admit_once, admit_key_make);
    struct admit_scratch *s = pthread_getspecific(admit_key);
    if (!s) {
        s = xmalloc(sizeof(*s));
        if (pthread_setspecific(admit_key, s) != 0) {
            fputs("allotd: cannot set a thread key\n", stderr);
            abort();
        }
    }
    return s;
}

static int is_qos_level(enum limit_level_kind k)
{
    return k == LIMIT_LEVEL_PARTITION_QOS || k == LIMIT_LEVEL_JOB_QOS;
}

/* Held runs stand for the jobs Slurm counts against the submit limits; each limit counts
 * the group of the level that set it (reference): a QOS's jobs, the user's in its
 * association, an account association's whole subtree.  Only set limits are counted. */
static int submit_counts(store_t *st, const char *cluster, const char *user,
                         const struct limit_chain *chain, const struct limit_effective *eff,
                         struct submit_counts *c, struct allot_error *err)
{
    const char *account = NULL; /* the job's: the first account level (build_chain) */
    for (int i = 0; i < chain->n && !account; i++)
        if (chain->level[i].kind == LIMIT_LEVEL_ACCOUNT_ASSOC ||
            chain->level[i].kind == LIMIT_LEVEL_ROOT_ASSOC)
            account = chain->level[i].owner;
    if (!account)
        return allot_errorf(err, ALLOT_EINTERNAL, "limits: no account level in the chain");
    const struct limit_resolved *r;
    if ((r = limits_get(eff, "MaxSubmitJobs")) && r->src.level >= 0) {
        int qos = is_qos_level(r->src.kind);
        if ((qos ? store_job_count_held_qos(st, cluster, r->src.owner, user, NULL, &c->user_jobs,
                                            err)
                 : store_job_count_held(st, cluster, account, user, &c->user_jobs, err)) < 0)
            return -1;
    }
    if ((r = limits_get(eff, "MaxSubmitJobsPerAccount")) && r->src.level >= 0 &&
        store_job_count_held_qos(st, cluster, r->src.owner, NULL, account, &c->account_jobs, err) <
            0)
        return -1;
    if (!(r = limits_get(eff, "GrpSubmitJobs")))
        return 0;
    for (int i = 0; i < chain->n; i++) {
        const struct limit_level *lv = &chain->level[i];
        int rc = 0;
        if (r->level_value[i] < 0)
            continue;
        if (is_qos_level(lv->kind))
            rc = store_job_count_held_qos(st, cluster, lv->owner, NULL, NULL, &c->level_jobs[i],
                                          err);
        else if (lv->kind == LIMIT_LEVEL_USER_ASSOC)
            rc = store_job_count_held(st, cluster, account, user, &c->level_jobs[i], err);
        else
            rc = store_job_count_held_subtree(st, cluster, lv->owner, &c->level_jobs[i], err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int limit_check_admit(store_t *st, const char *cluster, const char *user, const char *account,
                      const char *partition, const char *qos, int64_t time_limit_s,
                      const char *tres, char *msg, size_t msgsz, struct allot_error *err)
{
    struct admit_scratch *sc = admit_scratch();
    struct level_buf *bufs = sc->bufs;
    struct limit_chain *chain = &sc->chain;
    struct limit_effective *eff = &sc->eff;
    struct job_request job = {.time_limit_s = time_limit_s};
    struct submit_counts counts = {0};
    struct limit_violation v;
    int rc = -1;
    if (build_chain(st, cluster, user, account, partition, qos && *qos ? qos : NULL, chain, bufs,
                    err) < 0 ||
        limits_resolve(chain, eff, err) < 0)
        goto out;
    if (tres_parse(tres ? tres : "", &job.tres, err) < 0) {
        allot_error_prefix(err, "tres");
        goto out;
    }
    if (submit_counts(st, cluster, user, chain, eff, &counts, err) < 0)
        goto out;
    rc = 0;
    enum limit_check chk = limits_check_submit(eff, &job, &counts, &v);
    if (chk != LIMIT_CHECK_OK) {
        limits_violation_format(&v, msg, msgsz);
        rc = chk == LIMIT_CHECK_DENY ? 1 : 2;
    }
out:
    return rc;
}
