/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import.c - POST /v1/import/slurm: a `sacctmgr dump` (and optionally `sacctmgr show qos
 * -P`) made the bank's cluster, account tree, users, associations, QOS and their limits.
 *
 * Design: one walk over the input does everything: it checks each record, compares it with
 * the bank and, unless it is a dry run, writes the difference at once.  The real import
 * runs as ONE write op (one savepoint of the writer's transaction), so the first record it
 * cannot take rolls back every write before it: nothing is half-imported.  A dry run is the
 * same walk on the reader without the writes.  Each change is a line of the reply's
 * "changes" ("+" added, "~" changed with old -> new, "-" limit cleared); what a dump holds
 * that the bank cannot keep (AdminLevel, Coordinator, WCKeys, association Priority, QOS
 * preemption settings) is a line of "notes", never dropped in silence.
 * Import creates and updates; it removes no account, user or association the dump lacks
 * (the bank may serve other clusters), but an imported object's limits are exactly the
 * dump's afterwards (a limit the dump does not set is cleared).
 * Slurm's conventions handled here: Fairshare=parent is 2147483647 in a dump and is kept as
 * that number; a QOS list of +name/-name deltas is applied to the parent's effective list;
 * MaxWallDurationPerJob and GrpWall are minutes (limits_validate's bare number).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "allotd/api.h"
#include "allotd/api_import.h"
#include "allotd/json.h"
#include "libcore/limits.h"
#include "libcore/numparse.h"
#include "libslurmtext/memory.h"
#include "libslurmtext/partition.h"
#include "libslurmtext/sacctmgr.h"
#include "libslurmtext/sacctmgr_dump.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

#define LIMITS_PER_OWNER 64
#define SHARES_PARENT 2147483647 /* Slurm's Fairshare=parent */

struct lim {
    char name[ALLOT_NAME_MAX];
    char value[ALLOT_TRES_MAX];
};

struct limset {
    int n;
    struct lim l[LIMITS_PER_OWNER];
};

/* Accounts and users the walk has met, for parents, QOS deltas and default accounts. */
struct seen_account {
    char name[ALLOT_NAME_MAX];
    char eff_qos[ALLOT_TEXT_MAX]; /* its QOS list, or its parent's when it sets none */
};
struct seen_user {
    char name[ALLOT_NAME_MAX];
    char default_account[ALLOT_NAME_MAX];
    long line;
    int is_new;
};

struct walk {
    store_t *st;
    int apply;
    const char *cluster;
    json_t *changes, *notes;
    struct seen_account *acc;
    size_t nacc, capacc;
    struct seen_user *usr;
    size_t nusr, capusr;
    char (*qos_names)[ALLOT_NAME_MAX]; /* QOS the qos text defines */
    size_t nqos, capqos;
    char (*part_names)[ALLOT_NAME_MAX]; /* partitions the partitions text defines */
    size_t npart, cappart;
    const struct import_input *in;
    long counts[5]; /* accounts, users, assocs, qos, partitions */
};

static void change(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void change(struct walk *w, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(w->changes, json_string(buf));
}

static void note(struct walk *w, long line, const char *what, const char *who,
                 struct st_dump_opt *o)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "line %ld: %s %s: %.*s='%.*s' is not kept (%s)", line,
             who[0] == 'u' ? "user" : "account", who + 1, (int)o->key.n, o->key.p,
             (int)(o->value.n > 200 ? 200 : o->value.n), o->value.p, what);
    json_array_append_new(w->notes, json_string(buf));
}

static int span_copy(char *dst, size_t size, const char *field, struct st_span v,
                     struct allot_error *err)
{
    if (v.n >= size)
        return allot_errorf(err, ALLOT_EINVAL, "%s: longer than %zu characters", field,
                            size - 1);
    memcpy(dst, v.p, v.n);
    dst[v.n] = '\0';
    if (strlen(dst) != v.n)
        return allot_errorf(err, ALLOT_EINVAL, "%s: contains a NUL byte", field);
    return 0;
}

static struct seen_account *find_account(struct walk *w, const char *name)
{
    for (size_t i = 0; i < w->nacc; i++)
        if (strcmp(w->acc[i].name, name) == 0)
            return &w->acc[i];
    return NULL;
}

static struct seen_user *find_user(struct walk *w, const char *name)
{
    for (size_t i = 0; i < w->nusr; i++)
        if (strcmp(w->usr[i].name, name) == 0)
            return &w->usr[i];
    return NULL;
}

/* ---- QOS lists ---------------------------------------------------------------------- */

static int qos_known(struct walk *w, const char *name, struct allot_error *err)
{
    for (size_t i = 0; i < w->nqos; i++)
        if (strcmp(w->qos_names[i], name) == 0)
            return 0;
    struct qos q;
    struct allot_error e;
    if (store_qos_get(w->st, name, &q, &e) == 0)
        return 0;
    if (e.code != ALLOT_ENOENT) {
        *err = e;
        return -1;
    }
    return allot_errorf(err, ALLOT_EINVAL,
                        "QOS '%s' is neither in the bank nor in the QOS list given beside the "
                        "dump (`sacctmgr show qos -P`)",
                        name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The QOS list of an association: v itself, or v's +x/-y deltas applied to the parent's
 * effective list; sorted by name, as sacctmgr prints it. */
static int qos_list(struct walk *w, struct st_span v, const char *parent_eff, char *out,
                    size_t size, struct allot_error *err)
{
    char in[ALLOT_TEXT_MAX], base[ALLOT_TEXT_MAX];
    char *items[64];
    int n = 0, deltas = -1;
    if (span_copy(in, sizeof in, "QOS", v, err) < 0)
        return -1;
    text_copy(base, sizeof base, parent_eff);
    char *save = NULL;
    for (char *t = strtok_r(in, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int d = t[0] == '+' || t[0] == '-';
        if (deltas >= 0 && d != deltas)
            return allot_errorf(err, ALLOT_EINVAL,
                                "QOS: mixes names and +/- changes ('%.*s')", (int)v.n, v.p);
        deltas = d;
        if (model_check_name("QOS", t + d, 0, err) < 0 || qos_known(w, t + d, err) < 0)
            return -1;
    }
    if (span_copy(in, sizeof in, "QOS", v, err) < 0)
        return -1;
    if (deltas == 1) { /* the parent's list, then each change */
        char *s2 = NULL;
        for (char *t = strtok_r(base, ",", &s2); t && n < 64; t = strtok_r(NULL, ",", &s2))
            items[n++] = t;
    }
    for (char *t = strtok_r(in, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const char *name = deltas == 1 ? t + 1 : t;
        int at = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(items[i], name) == 0)
                at = i;
        if (deltas == 1 && t[0] == '-') {
            if (at >= 0)
                items[at] = items[--n];
        } else if (at < 0) {
            if (n == 64)
                return allot_errorf(err, ALLOT_EINVAL, "QOS: more than 64 names");
            items[n++] = (char *)name;
        }
    }
    if (n == 0) /* the bank's "" means inherited, which is not what an emptied list means */
        return allot_errorf(err, ALLOT_EINVAL, "QOS: '%.*s' leaves no QOS, which the bank "
                                               "cannot hold", (int)v.n, v.p);
    qsort(items, (size_t)n, sizeof items[0], cmp_str);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        int k = snprintf(out + len, size - len, "%s%s", i ? "," : "", items[i]);
        if (k < 0 || (size_t)k >= size - len)
            return allot_errorf(err, ALLOT_EINVAL, "QOS: list longer than %zu characters",
                                size - 1);
        len += (size_t)k;
    }
    return 0;
}

/* ---- limits ------------------------------------------------------------------------- */

static int on_limit(const struct limit_value *l, void *arg)
{
    struct limset *s = arg;
    if (s->n == LIMITS_PER_OWNER)
        return 0;
    text_copy(s->l[s->n].name, sizeof s->l[0].name, l->name);
    text_copy(s->l[s->n].value, sizeof s->l[0].value, l->value);
    s->n++;
    return 0;
}

/* Make the bank's limits of (scope, owner) exactly `want`. */
static int limits_sync(struct walk *w, enum limit_scope scope, const char *owner,
                       const char *label, const struct limset *want, struct allot_error *err)
{
    struct limset *cur = xcalloc(1, sizeof *cur);
    int rc = -1;
    if (store_limit_list(w->st, scope, owner, on_limit, cur, err) < 0)
        goto out;
    for (int i = 0; i < want->n; i++) {
        const char *old = NULL;
        for (int j = 0; j < cur->n; j++)
            if (strcmp(cur->l[j].name, want->l[i].name) == 0)
                old = cur->l[j].value;
        if (old && strcmp(old, want->l[i].value) == 0)
            continue;
        if (old)
            change(w, "~ limit %s %s: %s %s -> %s", label, owner, want->l[i].name, old,
                   want->l[i].value);
        else
            change(w, "+ limit %s %s: %s=%s", label, owner, want->l[i].name, want->l[i].value);
        if (w->apply &&
            store_limit_set(w->st, scope, owner, want->l[i].name, want->l[i].value, err) < 0)
            goto out;
    }
    for (int j = 0; j < cur->n; j++) {
        int kept = 0;
        for (int i = 0; i < want->n; i++)
            kept |= strcmp(cur->l[j].name, want->l[i].name) == 0;
        if (kept)
            continue;
        change(w, "- limit %s %s: %s=%s", label, owner, cur->l[j].name, cur->l[j].value);
        if (w->apply && store_limit_set(w->st, scope, owner, cur->l[j].name, NULL, err) < 0)
            goto out;
    }
    rc = 0;
out:
    free(cur);
    return rc;
}

/* A dump writes memory with two decimals in the largest unit that keeps it exact
 * ("mem=2187.50G" for 2240000M); the bank's TRES lists take integers: such a mem item
 * becomes whole MiB ("mem=2240000M"), and one that is not whole MiB is refused. */
static int mem_decimals(char *value, size_t size, const char *name, struct allot_error *err)
{
    if (!strchr(value, '.'))
        return 0;
    char out[ALLOT_TRES_MAX];
    size_t len = 0;
    out[0] = '\0';
    char *save = NULL;
    for (char *it = strtok_r(value, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '=');
        int k;
        if (eq && strncmp(it, "mem=", 4) == 0 && strchr(eq, '.')) {
            struct st_memory m;
            if (st_memory_parse(eq + 1, strlen(eq + 1), name, 1048576, &m, err) < 0)
                return -1;
            if (m.bytes % 1048576 != 0)
                return allot_errorf(err, ALLOT_EINVAL, "%s: mem=%s is not a whole number of "
                                                       "MiB", name, eq + 1);
            k = snprintf(out + len, sizeof out - len, "%smem=%lldM", len ? "," : "",
                         (long long)(m.bytes / 1048576));
        } else {
            k = snprintf(out + len, sizeof out - len, "%s%s", len ? "," : "", it);
        }
        if (k < 0 || (size_t)k >= sizeof out - len)
            return allot_errorf(err, ALLOT_EINVAL, "%s: value too long", name);
        len += (size_t)k;
    }
    text_copy(value, size, out);
    return 0;
}

static int limit_add(struct limset *s, enum limit_scope scope, const char *name,
                     struct st_span v, struct allot_error *err)
{
    char key[ALLOT_NAME_MAX], value[ALLOT_TRES_MAX], canon[ALLOT_TRES_MAX];
    const struct limit_def *d = limits_find(scope, name);
    if (span_copy(value, sizeof value, name, v, err) < 0)
        return -1;
    if (d && (d->type == LIMIT_TRES || d->type == LIMIT_TRES_MINUTES) &&
        mem_decimals(value, sizeof value, name, err) < 0)
        return -1;
    if (!d || limits_validate(scope, name, value, canon, sizeof canon, err) < 0)
        return -1;
    text_copy(key, sizeof key, d->name);
    if (strcmp(canon, "-1") == 0) /* cleared: as absent */
        return 0;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->l[i].name, key) == 0)
            return allot_errorf(err, ALLOT_EINVAL, "%s: the limit %s is given twice", name, key);
    if (s->n == LIMITS_PER_OWNER)
        return allot_errorf(err, ALLOT_EINVAL, "more than %d limits", LIMITS_PER_OWNER);
    text_copy(s->l[s->n].name, sizeof s->l[0].name, key);
    text_copy(s->l[s->n].value, sizeof s->l[0].value, canon);
    s->n++;
    return 0;
}

/* ---- one record's options ----------------------------------------------------------- */

struct target {
    int64_t shares;
    int has_shares;
    char description[ALLOT_TEXT_MAX];
    char organization[ALLOT_NAME_MAX];
    char qos[ALLOT_TEXT_MAX];
    char default_qos[ALLOT_NAME_MAX];
    char default_account[ALLOT_NAME_MAX];
    char partition[ALLOT_NAME_MAX];
    struct limset lim;
};

static int opt_is(const struct st_dump_opt *o, const char *k)
{
    return st_eq_nocase(o->key, k);
}

/* Read a record's options into t.  who is "a<name>" or "u<name>" (for notes). */
static int read_options(struct walk *w, const struct st_dump_record *r, long line,
                        const char *who, const char *parent_eff, struct target *t,
                        struct allot_error *err)
{
    enum limit_scope scope = r->kind == ST_DUMP_USER ? LIMIT_SCOPE_ASSOC : LIMIT_SCOPE_ACCOUNT;
    for (size_t i = 0; i < r->n; i++) {
        const struct st_dump_opt *o = &r->opt[i];
        char key[ALLOT_NAME_MAX];
        if (span_copy(key, sizeof key, "option", o->key, err) < 0)
            return -1;
        int is_user = r->kind == ST_DUMP_USER, is_acct = r->kind == ST_DUMP_ACCOUNT;
        if (opt_is(o, "Fairshare")) {
            uint64_t v;
            if (st_eq_nocase(o->value, "parent"))
                v = SHARES_PARENT;
            else if (st_uint(o->value.p, o->value.n, UINT32_MAX, &v) < 0)
                return st_field_error(err, "Fairshare", "not a number 0..4294967295",
                                      o->value);
            t->shares = (int64_t)v;
            t->has_shares = 1;
        } else if (is_acct && opt_is(o, "Description")) {
            if (span_copy(t->description, sizeof t->description, key, o->value, err) < 0)
                return -1;
        } else if (is_acct && opt_is(o, "Organization")) {
            if (span_copy(t->organization, sizeof t->organization, key, o->value, err) < 0 ||
                model_check_name("Organization", t->organization, 1, err) < 0)
                return -1;
        } else if (opt_is(o, "QOS")) {
            if (qos_list(w, o->value, parent_eff, t->qos, sizeof t->qos, err) < 0)
                return -1;
        } else if (opt_is(o, "DefaultQOS")) {
            if (span_copy(t->default_qos, sizeof t->default_qos, key, o->value, err) < 0 ||
                model_check_name("DefaultQOS", t->default_qos, 0, err) < 0 ||
                qos_known(w, t->default_qos, err) < 0)
                return -1;
        } else if (is_user && opt_is(o, "DefaultAccount")) {
            if (span_copy(t->default_account, sizeof t->default_account, key, o->value, err) <
                    0 ||
                model_check_name("DefaultAccount", t->default_account, 0, err) < 0)
                return -1;
        } else if (is_user && opt_is(o, "Partition")) {
            if (span_copy(t->partition, sizeof t->partition, key, o->value, err) < 0 ||
                model_check_name("Partition", t->partition, 0, err) < 0)
                return -1;
        } else if (is_user && opt_is(o, "AdminLevel")) {
            if (!st_eq_nocase(o->value, "None"))
                note(w, line, "the bank has no Slurm administrators", who,
                     (struct st_dump_opt *)o);
        } else if (is_user && (opt_is(o, "Coordinator") || opt_is(o, "DefaultWCKey") ||
                               opt_is(o, "WCKeys"))) {
            note(w, line, "the bank has no coordinators or WCKeys", who,
                 (struct st_dump_opt *)o);
        } else if (opt_is(o, "Priority")) {
            note(w, line, "the bank has no association priority", who, (struct st_dump_opt *)o);
        } else if (limits_find(scope, key)) {
            if (limit_add(&t->lim, scope, key, o->value, err) < 0)
                return -1;
        } else {
            return st_field_error(err, st_dump_kind_name(r->kind), "unknown option", o->key);
        }
    }
    if (t->default_qos[0] && t->qos[0]) {
        char probe[ALLOT_TEXT_MAX + 2];
        snprintf(probe, sizeof probe, ",%s,", t->qos);
        char want[ALLOT_NAME_MAX + 2];
        snprintf(want, sizeof want, ",%s,", t->default_qos);
        if (!strstr(probe, want))
            return allot_errorf(err, ALLOT_EINVAL, "DefaultQOS: '%s' is not in QOS '%s'",
                                t->default_qos, t->qos);
    }
    return 0;
}

/* ---- records ------------------------------------------------------------------------ */

static void fmt_shares(int64_t s, char *buf, size_t n)
{
    if (s == SHARES_PARENT)
        snprintf(buf, n, "parent");
    else
        snprintf(buf, n, "%lld", (long long)s);
}

/* Account (or root from the Cluster line): create or update, then its limits. */
static int do_account(struct walk *w, const char *name, const char *parent, struct target *t,
                      int has_desc_org, struct allot_error *err)
{
    struct account cur, a;
    struct allot_error e;
    int exists = store_account_get(w->st, name, &cur, &e) == 0;
    if (!exists && e.code != ALLOT_ENOENT) {
        *err = e;
        return -1;
    }
    if (exists)
        a = cur;
    else
        memset(&a, 0, sizeof a);
    text_copy(a.name, sizeof a.name, name);
    text_copy(a.parent, sizeof a.parent, parent);
    a.shares = t->has_shares ? t->shares : 1;
    if (has_desc_org) {
        text_copy(a.description, sizeof a.description, t->description);
        text_copy(a.organization, sizeof a.organization, t->organization);
    }
    text_copy(a.qos, sizeof a.qos, t->qos);
    text_copy(a.default_qos, sizeof a.default_qos, t->default_qos);
    char sh[32], osh[32];
    fmt_shares(a.shares, sh, sizeof sh);
    if (!exists) {
        change(w, "+ account %s: parent=%s shares=%s description='%s' organization='%s' "
                  "qos='%s' default_qos='%s'",
               name, parent, sh, a.description, a.organization, a.qos, a.default_qos);
        if (w->apply && store_account_add(w->st, &a, err) < 0)
            return -1;
    } else {
        char diff[1536] = "";
        size_t l = 0;
        fmt_shares(cur.shares, osh, sizeof osh);
#define DIFF(field, old, new)                                                                      \
    if (strcmp(old, new) != 0 && l < sizeof diff)                                                  \
        l += (size_t)snprintf(diff + l, sizeof diff - l, " %s '%s' -> '%s'", field, old, new);
        DIFF("parent", cur.parent, a.parent)
        DIFF("shares", osh, sh)
        DIFF("description", cur.description, a.description)
        DIFF("organization", cur.organization, a.organization)
        DIFF("qos", cur.qos, a.qos)
        DIFF("default_qos", cur.default_qos, a.default_qos)
        if (l) {
            change(w, "~ account %s:%s", name, diff);
            if (w->apply && store_account_modify(w->st, &a, err) < 0)
                return -1;
        }
    }
    return limits_sync(w, LIMIT_SCOPE_ACCOUNT, name, "account", &t->lim, err);
}

static int do_user_assoc(struct walk *w, const char *name, const char *account,
                         struct target *t, long line, struct allot_error *err)
{
    struct seen_user *u = find_user(w, name);
    struct allot_error e;
    if (!u) {
        if (w->nusr == w->capusr) {
            w->capusr = w->capusr ? w->capusr * 2 : 256;
            w->usr = xrealloc(w->usr, w->capusr * sizeof *w->usr);
        }
        u = &w->usr[w->nusr++];
        memset(u, 0, sizeof *u);
        text_copy(u->name, sizeof u->name, name);
        text_copy(u->default_account, sizeof u->default_account, t->default_account);
        u->line = line;
        struct user cur;
        if (store_user_get(w->st, name, &cur, &e) < 0) {
            if (e.code != ALLOT_ENOENT) {
                *err = e;
                return -1;
            }
            u->is_new = 1;
            change(w, "+ user %s: default_account='%s'", name, t->default_account);
            struct user nu = {.uid = -1};
            text_copy(nu.name, sizeof nu.name, name);
            if (w->apply && store_user_add(w->st, &nu, err) < 0)
                return -1;
        }
        w->counts[1]++;
    } else if (strcmp(u->default_account, t->default_account) != 0) {
        return allot_errorf(err, ALLOT_EINVAL,
                            "DefaultAccount: '%s' here, '%s' on line %ld for the same user",
                            t->default_account, u->default_account, u->line);
    }
    int in_text = 0;
    for (size_t i = 0; i < w->npart; i++)
        in_text |= strcmp(w->part_names[i], t->partition) == 0;
    if (t->partition[0] && !in_text) {
        struct partition p;
        if (store_partition_get(w->st, w->cluster, t->partition, &p, &e) < 0)
            return allot_errorf(err, ALLOT_EINVAL,
                                "Partition: '%s' is not a partition of cluster %s in the bank "
                                "(allot partition add)",
                                t->partition, w->cluster);
    }
    struct assoc cur, a = {0};
    text_copy(a.cluster, sizeof a.cluster, w->cluster);
    text_copy(a.account, sizeof a.account, account);
    text_copy(a.user, sizeof a.user, name);
    text_copy(a.partition, sizeof a.partition, t->partition);
    a.shares = t->has_shares ? t->shares : 1;
    text_copy(a.qos, sizeof a.qos, t->qos);
    text_copy(a.default_qos, sizeof a.default_qos, t->default_qos);
    char owner[4 * ALLOT_NAME_MAX], sh[32], osh[32];
    snprintf(owner, sizeof owner, "%s:%s:%s:%s", a.cluster, a.account, a.user, a.partition);
    fmt_shares(a.shares, sh, sizeof sh);
    int exists = store_assoc_get(w->st, a.cluster, a.account, a.user, a.partition, &cur, &e) == 0;
    if (!exists && e.code != ALLOT_ENOENT) {
        *err = e;
        return -1;
    }
    if (!exists) {
        change(w, "+ assoc %s: shares=%s qos='%s' default_qos='%s'", owner, sh, a.qos,
               a.default_qos);
        if (w->apply && store_assoc_add(w->st, &a, err) < 0)
            return -1;
    } else {
        char diff[1024] = "";
        size_t l = 0;
        fmt_shares(cur.shares, osh, sizeof osh);
        DIFF("shares", osh, sh)
        DIFF("qos", cur.qos, a.qos)
        DIFF("default_qos", cur.default_qos, a.default_qos)
        if (l) {
            change(w, "~ assoc %s:%s", owner, diff);
            a.id = cur.id;
            if (w->apply && store_assoc_modify(w->st, &a, err) < 0)
                return -1;
        }
    }
#undef DIFF
    w->counts[2]++;
    return limits_sync(w, LIMIT_SCOPE_ASSOC, owner, "assoc", &t->lim, err);
}

/* Every user's default account, once its associations are in. */
static int set_defaults(struct walk *w, struct allot_error *err)
{
    for (size_t i = 0; i < w->nusr; i++) {
        struct seen_user *u = &w->usr[i];
        struct user cur = {.uid = -1};
        struct allot_error e;
        if (!u->is_new || w->apply) {
            if (store_user_get(w->st, u->name, &cur, &e) < 0) {
                if (e.code != ALLOT_ENOENT) {
                    *err = e;
                    return -1;
                }
            }
        }
        if (strcmp(cur.default_account, u->default_account) == 0)
            continue;
        if (!u->is_new)
            change(w, "~ user %s: default_account '%s' -> '%s'", u->name, cur.default_account,
                   u->default_account);
        if (!w->apply)
            continue;
        text_copy(cur.default_account, sizeof cur.default_account, u->default_account);
        if (store_user_modify(w->st, &cur, err) < 0)
            return allot_error_prefix(err, "line %ld: user %s", u->line, u->name);
    }
    return 0;
}

/* ---- QOS definitions (`sacctmgr show qos -P`, header line first) ---------------------- */

static const char *qos_limit_name(const char *col)
{
    /* show qos's column names that are not spellings limits_find knows */
    if (strcasecmp(col, "GrpSubmit") == 0)
        return "GrpSubmitJobs";
    return col;
}

static int do_qos_text(struct walk *w, const char *text, size_t len, struct allot_error *err)
{
    size_t pos = 0;
    struct st_span line;
    long ln = 0;
    char *header = NULL;
    struct st_mgr_format fmt;
    int rc = -1;
    while (st_next_line(text, len, &pos, &line)) {
        ln++;
        if (line.n == 0)
            continue;
        if (!header) {
            /* st_mgr_format_parse reads a format= list: the header's '|' become ',' */
            header = xmalloc(line.n + 1);
            memcpy(header, line.p, line.n);
            header[line.n] = '\0';
            for (char *c = header; *c; c++)
                if (*c == '|')
                    *c = ',';
                else if (*c == ',')
                    *c = ' ';
            if (st_mgr_format_parse(header, &fmt, err) < 0)
                goto fail;
            struct st_span nm;
            struct st_mgr_row hr = {.fmt = &fmt, .n = fmt.n};
            memcpy(hr.v, fmt.name, fmt.n * sizeof fmt.name[0]);
            if (!st_mgr_get(&hr, "Name", &nm)) {
                allot_errorf(err, ALLOT_EINVAL, "the header has no Name column (use "
                                                "`sacctmgr show qos -P`, with its header)");
                goto fail;
            }
            continue;
        }
        struct st_mgr_row row;
        if (st_mgr_row_parse(&fmt, line, &row, err) < 0)
            goto fail;
        struct qos q = {.usage_factor_ppm = 1000000, .limit_factor_ppm = -1}, cur;
        struct limset *lim = xcalloc(1, sizeof *lim);
        int bad = 0;
        for (size_t c = 0; c < fmt.n && !bad; c++) {
            char col[ALLOT_NAME_MAX];
            struct st_span v = row.v[c];
            if (span_copy(col, sizeof col, "column", fmt.name[c], err) < 0) {
                bad = 1;
                break;
            }
            if (strcasecmp(col, "Name") == 0) {
                bad = span_copy(q.name, sizeof q.name, "Name", v, err) < 0 ||
                      model_check_name("Name", q.name, 0, err) < 0;
            } else if (strcasecmp(col, "Priority") == 0) {
                uint64_t p = 0;
                if (v.n && st_uint(v.p, v.n, INT32_MAX, &p) < 0)
                    bad = st_field_error(err, "Priority", "not a number", v) < 0;
                q.priority = (int64_t)p;
            } else if (strcasecmp(col, "Flags") == 0) {
                bad = span_copy(q.flags, sizeof q.flags, "Flags", v, err) < 0;
            } else if (strcasecmp(col, "Description") == 0) {
                bad = span_copy(q.description, sizeof q.description, "Description", v, err) < 0;
            } else if (strcasecmp(col, "UsageFactor") == 0 || strcasecmp(col, "LimitFactor") == 0) {
                int64_t ppm;
                if (v.n == 0)
                    continue;
                if (numparse_fixed(v.p, v.n, 6, &ppm) < 0) {
                    bad = st_field_error(err, col, "not a decimal", v) < 0;
                    break;
                }
                if (strcasecmp(col, "UsageFactor") == 0)
                    q.usage_factor_ppm = ppm;
                else
                    q.limit_factor_ppm = ppm;
            } else if (strcasecmp(col, "GraceTime") == 0) {
                if (v.n && !st_eq(v, "00:00:00") && !st_eq(v, "0"))
                    bad = limit_add(lim, LIMIT_SCOPE_QOS, "GraceTime", v, err) < 0;
            } else if (strcasecmp(col, "PreemptMode") == 0 || strcasecmp(col, "Preempt") == 0 ||
                       strcasecmp(col, "PreemptExemptTime") == 0 ||
                       strcasecmp(col, "UsageThres") == 0) {
                if (v.n && !(strcasecmp(col, "PreemptMode") == 0 && st_eq_nocase(v, "cluster"))) {
                    char buf[512];
                    snprintf(buf, sizeof buf, "qos line %ld: QOS %s: %s='%.*s' is not kept (the "
                                              "bank has no preemption)",
                             ln, q.name, col, (int)(v.n > 200 ? 200 : v.n), v.p);
                    json_array_append_new(w->notes, json_string(buf));
                }
            } else if (limits_find(LIMIT_SCOPE_QOS, qos_limit_name(col))) {
                if (v.n)
                    bad = limit_add(lim, LIMIT_SCOPE_QOS, qos_limit_name(col), v, err) < 0;
            } else if (v.n) {
                char buf[512];
                snprintf(buf, sizeof buf, "qos line %ld: QOS %s: column %s='%.*s' is not kept",
                         ln, q.name, col, (int)(v.n > 200 ? 200 : v.n), v.p);
                json_array_append_new(w->notes, json_string(buf));
            }
        }
        if (bad) {
            free(lim);
            allot_error_prefix(err, "qos line %ld", ln);
            goto fail;
        }
        struct allot_error e;
        int exists = store_qos_get(w->st, q.name, &cur, &e) == 0;
        int r2 = 0;
        if (!exists && e.code != ALLOT_ENOENT) {
            *err = e;
            r2 = -1;
        } else if (!exists) {
            change(w, "+ qos %s: priority=%lld flags='%s' usage_factor_ppm=%lld", q.name,
                   (long long)q.priority, q.flags, (long long)q.usage_factor_ppm);
            if (w->apply)
                r2 = store_qos_add(w->st, &q, err);
        } else {
            text_copy(q.description, sizeof q.description, cur.description);
            if (cur.priority != q.priority || strcmp(cur.flags, q.flags) != 0 ||
                cur.usage_factor_ppm != q.usage_factor_ppm ||
                cur.limit_factor_ppm != q.limit_factor_ppm) {
                change(w, "~ qos %s: priority %lld -> %lld, flags '%s' -> '%s', "
                          "usage_factor_ppm %lld -> %lld, limit_factor_ppm %lld -> %lld",
                       q.name, (long long)cur.priority, (long long)q.priority, cur.flags,
                       q.flags, (long long)cur.usage_factor_ppm, (long long)q.usage_factor_ppm,
                       (long long)cur.limit_factor_ppm, (long long)q.limit_factor_ppm);
                if (w->apply)
                    r2 = store_qos_modify(w->st, &q, err);
            }
        }
        if (r2 == 0)
            r2 = limits_sync(w, LIMIT_SCOPE_QOS, q.name, "qos", lim, err);
        free(lim);
        if (r2 < 0) {
            allot_error_prefix(err, "qos line %ld", ln);
            goto fail;
        }
        if (w->nqos == w->capqos) {
            w->capqos = w->capqos ? w->capqos * 2 : 32;
            w->qos_names = xrealloc(w->qos_names, w->capqos * sizeof *w->qos_names);
        }
        text_copy(w->qos_names[w->nqos++], ALLOT_NAME_MAX, q.name);
        w->counts[3]++;
    }
    rc = 0;
fail:
    free(header);
    return rc;
}

/* ---- partitions (`scontrol show partition -o`, one a line) ------------------------------ */

static void fmt_time(int64_t s, char *buf, size_t n)
{
    if (s < 0)
        snprintf(buf, n, "none");
    else
        snprintf(buf, n, "%llds", (long long)s);
}

/* Create or update the cluster's partitions: weights, MaxTime, DefaultTime, QOS, and MAX_TRES
 * from PriorityFlags; a new partition bills resource "cpu", an existing one keeps its own. */
static int do_partitions(struct walk *w, struct allot_error *err)
{
    const char *text = w->in->partitions;
    size_t len = w->in->partitions_len, pos = 0;
    struct st_span line;
    long ln = 0;
    int max_tres = 0;
    if (w->in->priority_flags) {
        char flags[ALLOT_TEXT_MAX], *save = NULL;
        text_copy(flags, sizeof flags, w->in->priority_flags);
        for (char *f = strtok_r(flags, ", ", &save); f; f = strtok_r(NULL, ", ", &save))
            max_tres |= strcasecmp(f, "MAX_TRES") == 0;
    }
    while (st_next_line(text, len, &pos, &line)) {
        ln++;
        if (line.n == 0)
            continue;
        struct st_partition sp;
        struct partition cur, p = {0};
        struct allot_error e;
        if (st_partition_parse(line, &sp, err) < 0 ||
            model_check_name("PartitionName", sp.name, 0, err) < 0 ||
            (sp.qos[0] && qos_known(w, sp.qos, err) < 0))
            return allot_error_prefix(err, "partition line %ld", ln);
        int exists = store_partition_get(w->st, w->cluster, sp.name, &cur, &e) == 0;
        if (!exists && e.code != ALLOT_ENOENT) {
            *err = e;
            return -1;
        }
        if (exists)
            p = cur;
        else
            text_copy(p.resource, sizeof p.resource, "cpu");
        text_copy(p.cluster, sizeof p.cluster, w->cluster);
        text_copy(p.name, sizeof p.name, sp.name);
        text_copy(p.billing_weights, sizeof p.billing_weights, sp.billing_weights);
        text_copy(p.qos, sizeof p.qos, sp.qos);
        if (w->in->priority_flags) /* without them, an existing partition keeps its own */
            p.max_tres = max_tres;
        p.max_time_s = sp.max_time_s;
        p.default_time_s = sp.default_time_s;
        char mt[32], dt[32], omt[32], odt[32];
        fmt_time(p.max_time_s, mt, sizeof mt);
        fmt_time(p.default_time_s, dt, sizeof dt);
        int rc = 0;
        if (!exists) {
            change(w, "+ partition %s:%s: resource=%s billing_weights='%s' max_tres=%d qos='%s' "
                      "max_time=%s default_time=%s",
                   w->cluster, p.name, p.resource, p.billing_weights, p.max_tres, p.qos, mt, dt);
            if (w->apply)
                rc = store_partition_add(w->st, &p, err);
        } else {
            fmt_time(cur.max_time_s, omt, sizeof omt);
            fmt_time(cur.default_time_s, odt, sizeof odt);
            char diff[1024] = "", otr[8], ntr[8];
            size_t l = 0;
            snprintf(otr, sizeof otr, "%d", cur.max_tres);
            snprintf(ntr, sizeof ntr, "%d", p.max_tres);
#define PDIFF(field, old, new)                                                                     \
    if (strcmp(old, new) != 0 && l < sizeof diff)                                                  \
        l += (size_t)snprintf(diff + l, sizeof diff - l, " %s '%s' -> '%s'", field, old, new);
            PDIFF("billing_weights", cur.billing_weights, p.billing_weights)
            PDIFF("max_tres", otr, ntr)
            PDIFF("qos", cur.qos, p.qos)
            PDIFF("max_time", omt, mt)
            PDIFF("default_time", odt, dt)
#undef PDIFF
            if (l) {
                change(w, "~ partition %s:%s:%s", w->cluster, p.name, diff);
                if (w->apply)
                    rc = store_partition_modify(w->st, &p, err);
            }
        }
        if (rc < 0)
            return allot_error_prefix(err, "partition line %ld", ln);
        if (w->npart == w->cappart) {
            w->cappart = w->cappart ? w->cappart * 2 : 16;
            w->part_names = xrealloc(w->part_names, w->cappart * sizeof *w->part_names);
        }
        text_copy(w->part_names[w->npart++], ALLOT_NAME_MAX, p.name);
        w->counts[4]++;
    }
    return 0;
}

/* ---- the walk ----------------------------------------------------------------------- */

static int do_record(struct walk *w, const struct st_dump_record *r, struct st_span parent_sp,
                     long line, const char *cluster_override, char *cluster_buf,
                     struct allot_error *err)
{
    char name[ALLOT_NAME_MAX], parent[ALLOT_NAME_MAX], who[ALLOT_NAME_MAX + 1];
    if (span_copy(name, sizeof name, st_dump_kind_name(r->kind), r->name, err) < 0 ||
        model_check_name(st_dump_kind_name(r->kind), name, 0, err) < 0 ||
        span_copy(parent, sizeof parent, "Parent", parent_sp, err) < 0)
        return -1;
    struct seen_account *pa = NULL;
    if (r->kind == ST_DUMP_PARENT || r->kind == ST_DUMP_ACCOUNT || r->kind == ST_DUMP_USER) {
        pa = find_account(w, parent);
        if (!pa)
            return allot_errorf(err, ALLOT_EINVAL,
                                "Parent '%s' is not an account defined before it in the dump",
                                parent);
    }
    if (r->kind == ST_DUMP_PARENT)
        return 0;
    struct target *t = xcalloc(1, sizeof *t);
    int rc = -1;
    snprintf(who, sizeof who, "%c%s", r->kind == ST_DUMP_USER ? 'u' : 'a', name);
    if (r->kind == ST_DUMP_CLUSTER) {
        text_copy(cluster_buf, ALLOT_NAME_MAX, cluster_override ? cluster_override : name);
        w->cluster = cluster_buf;
        who[0] = 'a';
        text_copy(who + 1, sizeof who - 1, "root");
        if (read_options(w, r, line, who, "", t, err) < 0)
            goto out;
        struct allot_error e;
        if (api_cluster_check(w->st, w->cluster, &e) < 0) {
            if (e.code != ALLOT_ENOENT) {
                *err = e;
                goto out;
            }
            change(w, "+ cluster %s", w->cluster);
            if (w->apply && store_cluster_add(w->st, w->cluster, err) < 0)
                goto out;
        }
        /* Partitions right after their cluster: associations may name them. */
        if (w->in->partitions && do_partitions(w, err) < 0) {
            rc = -2; /* its error names the partition line, not the dump's */
            goto out;
        }
        struct account root;
        if (store_account_get(w->st, "root", &root, err) < 0)
            goto out;
        if (do_account(w, "root", "", t, 0, err) < 0)
            goto out;
        w->acc = xrealloc(w->acc, (w->capacc = 64) * sizeof *w->acc);
        w->nacc = 1;
        text_copy(w->acc[0].name, ALLOT_NAME_MAX, "root");
        text_copy(w->acc[0].eff_qos, ALLOT_TEXT_MAX, t->qos);
        w->counts[0]++;
    } else if (r->kind == ST_DUMP_ACCOUNT) {
        if (find_account(w, name)) {
            allot_errorf(err, ALLOT_EINVAL, "account '%s' is defined twice", name);
            goto out;
        }
        if (read_options(w, r, line, who, pa->eff_qos, t, err) < 0 ||
            do_account(w, name, parent, t, 1, err) < 0)
            goto out;
        char eff[ALLOT_TEXT_MAX];
        text_copy(eff, sizeof eff, t->qos[0] ? t->qos : pa->eff_qos);
        if (w->nacc == w->capacc)
            w->acc = xrealloc(w->acc, (w->capacc *= 2) * sizeof *w->acc);
        text_copy(w->acc[w->nacc].name, ALLOT_NAME_MAX, name);
        text_copy(w->acc[w->nacc].eff_qos, ALLOT_TEXT_MAX, eff);
        w->nacc++;
        w->counts[0]++;
    } else {
        if (read_options(w, r, line, who, pa->eff_qos, t, err) < 0 ||
            do_user_assoc(w, name, parent, t, line, err) < 0)
            goto out;
    }
    rc = 0;
out:
    free(t);
    return rc;
}

int import_slurm_walk(store_t *st, const struct import_input *in, int apply, json_t **reply,
                      struct allot_error *err)
{
    struct walk w = {.st = st, .apply = apply, .in = in, .changes = json_array(),
                     .notes = json_array()};
    char cluster[ALLOT_NAME_MAX] = "";
    int rc = -1;
    if (in->qos && do_qos_text(&w, in->qos, in->qos_len, err) < 0)
        goto out;
    struct st_dump_cursor c;
    st_dump_cursor_init(&c, in->dump, in->dump_len);
    struct st_dump_record *r = xmalloc(sizeof *r);
    struct st_span parent;
    long line;
    int n;
    while ((n = st_dump_next(&c, r, &line, &parent, err)) == 1) {
        int rr = do_record(&w, r, parent, line, in->cluster, cluster, err);
        if (rr < 0) {
            if (rr == -1)
                allot_error_prefix(err, "line %ld", line);
            n = -1;
            break;
        }
    }
    free(r);
    if (n != 0 || set_defaults(&w, err) < 0)
        goto out;
    *reply = json_pack("{s:s, s:b, s:I, s:O, s:O, s:{s:I, s:I, s:I, s:I, s:I}}", "cluster",
                       cluster, "dry_run", !apply, "changed",
                       (json_int_t)json_array_size(w.changes), "changes", w.changes, "notes",
                       w.notes, "read", "accounts", (json_int_t)w.counts[0], "users",
                       (json_int_t)w.counts[1], "assocs", (json_int_t)w.counts[2], "qos",
                       (json_int_t)w.counts[3], "partitions", (json_int_t)w.counts[4]);
    rc = 0;
out:
    json_decref(w.changes);
    json_decref(w.notes);
    free(w.acc);
    free(w.usr);
    free(w.qos_names);
    free(w.part_names);
    return rc;
}
