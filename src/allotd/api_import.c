/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import.c - POST /v1/import/slurm: a `sacctmgr dump` (with `sacctmgr show qos -P` and
 * `scontrol show partition -o` beside it) made the bank's cluster, account tree, users,
 * associations, QOS, partitions and their limits.  This file walks the dump; the limits,
 * the QOS text and the partitions are api_import_limits.c, _qos.c and _part.c.
 *
 * Design: one walk over the input does everything: it checks each record, compares it with
 * the bank and, unless it is a dry run, writes the difference at once.  The real import
 * runs as ONE write op (one savepoint of the writer's transaction), so the first record it
 * cannot take rolls back every write before it: nothing is half-imported.  A dry run is the
 * same walk on the reader without the writes.  Each change is a line of the reply's
 * "changes" ("+" added, "~" changed with old -> new, "-" limit cleared); what a dump holds
 * that the bank cannot keep (AdminLevel, WCKeys, association Priority, QOS preemption
 * settings) is a line of "notes", never dropped in silence.  Coordinator= on User lines
 * makes the accounts' coordinators (api_import_coord.c).
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
#include "allotd/api_import_int.h"
#include "libslurmtext/sacctmgr_dump.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

void import_change(struct walk *w, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(w->changes, json_string(buf));
}

static void note(struct walk *w, long line, const char *what, const char *who,
                 struct slt_dump_opt *o)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "line %ld: %s %s: %.*s='%.*s' is not kept (%s)", line,
             who[0] == 'u' ? "user" : "account", who + 1, (int)o->key.n, o->key.p,
             (int)(o->value.n > 200 ? 200 : o->value.n), o->value.p, what);
    json_array_append_new(w->notes, json_string(buf));
}

int import_span_copy(char *dst, size_t size, const char *field, struct slt_span v,
                     struct allot_error *err)
{
    if (v.n >= size)
        return allot_errorf(err, ALLOT_EINVAL, "%s: longer than %zu characters", field, size - 1);
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

int import_account_seen(struct walk *w, const char *name)
{
    return find_account(w, name) != NULL;
}

static struct seen_user *find_user(struct walk *w, const char *name)
{
    for (size_t i = 0; i < w->nusr; i++)
        if (strcmp(w->usr[i].name, name) == 0)
            return &w->usr[i];
    return NULL;
}

/* ---- QOS lists ---------------------------------------------------------------------- */

int import_qos_known(struct walk *w, const char *name, struct allot_error *err)
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
static int qos_list(struct walk *w, struct slt_span v, const char *parent_eff, char *out,
                    size_t size, struct allot_error *err)
{
    char in[ALLOT_TEXT_MAX], base[ALLOT_TEXT_MAX];
    char *items[64];
    int n = 0, deltas = -1;
    if (import_span_copy(in, sizeof in, "QOS", v, err) < 0)
        return -1;
    text_copy(base, sizeof base, parent_eff);
    char *save = NULL;
    for (char *t = strtok_r(in, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int d = t[0] == '+' || t[0] == '-';
        if (deltas >= 0 && d != deltas)
            return allot_errorf(err, ALLOT_EINVAL, "QOS: mixes names and +/- changes ('%.*s')",
                                (int)v.n, v.p);
        deltas = d;
        if (model_check_name("QOS", t + d, 0, err) < 0 || import_qos_known(w, t + d, err) < 0)
            return -1;
    }
    if (import_span_copy(in, sizeof in, "QOS", v, err) < 0)
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
        return allot_errorf(err, ALLOT_EINVAL,
                            "QOS: '%.*s' leaves no QOS, which the bank "
                            "cannot hold",
                            (int)v.n, v.p);
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

static int opt_is(const struct slt_dump_opt *o, const char *k)
{
    return slt_eq_nocase(o->key, k);
}

/* Read a record's options into t.  who is "a<name>" or "u<name>" (for notes). */
static int read_options(struct walk *w, const struct slt_dump_record *r, long line, const char *who,
                        const char *parent_eff, struct target *t, struct allot_error *err)
{
    enum limit_scope scope = r->kind == SLT_DUMP_USER ? LIMIT_SCOPE_ASSOC : LIMIT_SCOPE_ACCOUNT;
    for (size_t i = 0; i < r->n; i++) {
        const struct slt_dump_opt *o = &r->opt[i];
        char key[ALLOT_NAME_MAX];
        if (import_span_copy(key, sizeof key, "option", o->key, err) < 0)
            return -1;
        int is_user = r->kind == SLT_DUMP_USER, is_acct = r->kind == SLT_DUMP_ACCOUNT;
        if (opt_is(o, "Fairshare")) {
            uint64_t v;
            if (slt_eq_nocase(o->value, "parent"))
                v = SHARES_PARENT;
            else if (slt_uint(o->value.p, o->value.n, UINT32_MAX, &v) < 0)
                return slt_field_error(err, "Fairshare", "not a number 0..4294967295", o->value);
            t->shares = (int64_t)v;
            t->has_shares = 1;
        } else if (is_acct && opt_is(o, "Description")) {
            if (import_span_copy(t->description, sizeof t->description, key, o->value, err) < 0)
                return -1;
        } else if (is_acct && opt_is(o, "Organization")) {
            if (import_span_copy(t->organization, sizeof t->organization, key, o->value, err) < 0 ||
                model_check_name("Organization", t->organization, 1, err) < 0)
                return -1;
        } else if (opt_is(o, "QOS")) {
            if (qos_list(w, o->value, parent_eff, t->qos, sizeof t->qos, err) < 0)
                return -1;
        } else if (opt_is(o, "DefaultQOS")) {
            if (import_span_copy(t->default_qos, sizeof t->default_qos, key, o->value, err) < 0 ||
                model_check_name("DefaultQOS", t->default_qos, 0, err) < 0 ||
                import_qos_known(w, t->default_qos, err) < 0)
                return -1;
        } else if (is_user && opt_is(o, "DefaultAccount")) {
            if (import_span_copy(t->default_account, sizeof t->default_account, key, o->value,
                                 err) < 0 ||
                model_check_name("DefaultAccount", t->default_account, 0, err) < 0)
                return -1;
        } else if (is_user && opt_is(o, "Partition")) {
            if (import_span_copy(t->partition, sizeof t->partition, key, o->value, err) < 0 ||
                model_check_name("Partition", t->partition, 0, err) < 0)
                return -1;
        } else if (is_user && opt_is(o, "AdminLevel")) {
            if (!slt_eq_nocase(o->value, "None"))
                note(w, line, "the bank has no Slurm administrators", who,
                     (struct slt_dump_opt *)o);
        } else if (is_user && opt_is(o, "Coordinator")) {
            if (import_coord_note(w, who + 1, o->value, err) < 0)
                return -1;
        } else if (is_user && (opt_is(o, "DefaultWCKey") || opt_is(o, "WCKeys"))) {
            note(w, line, "the bank has no WCKeys", who, (struct slt_dump_opt *)o);
        } else if (opt_is(o, "Priority")) {
            note(w, line, "the bank has no association priority", who, (struct slt_dump_opt *)o);
        } else if (limits_find(scope, key)) {
            if (import_limit_add(&t->lim, scope, key, o->value, err) < 0)
                return -1;
        } else {
            return slt_field_error(err, slt_dump_kind_name(r->kind), "unknown option", o->key);
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
        import_change(w,
                      "+ account %s: parent=%s shares=%s description='%s' organization='%s' "
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
            import_change(w, "~ account %s:%s", name, diff);
            if (w->apply && store_account_modify(w->st, &a, err) < 0)
                return -1;
        }
    }
    return import_limits_sync(w, LIMIT_SCOPE_ACCOUNT, name, "account", &t->lim, err);
}

static int do_user_assoc(struct walk *w, const char *name, const char *account, struct target *t,
                         long line, struct allot_error *err)
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
            import_change(w, "+ user %s: default_account='%s'", name, t->default_account);
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
        import_change(w, "+ assoc %s: shares=%s qos='%s' default_qos='%s'", owner, sh, a.qos,
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
            import_change(w, "~ assoc %s:%s", owner, diff);
            a.id = cur.id;
            if (w->apply && store_assoc_modify(w->st, &a, err) < 0)
                return -1;
        }
    }
#undef DIFF
    w->counts[2]++;
    return import_limits_sync(w, LIMIT_SCOPE_ASSOC, owner, "assoc", &t->lim, err);
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
            import_change(w, "~ user %s: default_account '%s' -> '%s'", u->name,
                          cur.default_account, u->default_account);
        if (!w->apply)
            continue;
        text_copy(cur.default_account, sizeof cur.default_account, u->default_account);
        if (store_user_modify(w->st, &cur, err) < 0)
            return allot_error_prefix(err, "line %ld: user %s", u->line, u->name);
    }
    return 0;
}

/* ---- the walk ----------------------------------------------------------------------- */

static int do_record(struct walk *w, const struct slt_dump_record *r, struct slt_span parent_sp,
                     long line, const char *cluster_override, char *cluster_buf,
                     struct allot_error *err)
{
    char name[ALLOT_NAME_MAX], parent[ALLOT_NAME_MAX], who[ALLOT_NAME_MAX + 1];
    if (import_span_copy(name, sizeof name, slt_dump_kind_name(r->kind), r->name, err) < 0 ||
        model_check_name(slt_dump_kind_name(r->kind), name, 0, err) < 0 ||
        import_span_copy(parent, sizeof parent, "Parent", parent_sp, err) < 0)
        return -1;
    struct seen_account *pa = NULL;
    if (r->kind == SLT_DUMP_PARENT || r->kind == SLT_DUMP_ACCOUNT || r->kind == SLT_DUMP_USER) {
        pa = find_account(w, parent);
        if (!pa)
            return allot_errorf(err, ALLOT_EINVAL,
                                "Parent '%s' is not an account defined before it in the dump",
                                parent);
    }
    if (r->kind == SLT_DUMP_PARENT)
        return 0;
    struct target *t = xcalloc(1, sizeof *t);
    int rc = -1;
    snprintf(who, sizeof who, "%c%s", r->kind == SLT_DUMP_USER ? 'u' : 'a', name);
    if (r->kind == SLT_DUMP_CLUSTER) {
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
            import_change(w, "+ cluster %s", w->cluster);
            if (w->apply && store_cluster_add(w->st, w->cluster, err) < 0)
                goto out;
        }
        /* Partitions right after their cluster: associations may name them. */
        if (w->in->partitions && import_partitions(w, err) < 0) {
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
    } else if (r->kind == SLT_DUMP_ACCOUNT) {
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
    struct walk w = {
        .st = st, .apply = apply, .in = in, .changes = json_array(), .notes = json_array()};
    char cluster[ALLOT_NAME_MAX] = "";
    int rc = -1;
    if (in->qos && import_qos_text(&w, in->qos, in->qos_len, err) < 0)
        goto out;
    struct slt_dump_cursor c;
    slt_dump_cursor_init(&c, in->dump, in->dump_len);
    struct slt_dump_record *r = xmalloc(sizeof *r);
    struct slt_span parent;
    long line;
    int n;
    while ((n = slt_dump_next(&c, r, &line, &parent, err)) == 1) {
        int rr = do_record(&w, r, parent, line, in->cluster, cluster, err);
        if (rr < 0) {
            if (rr == -1)
                allot_error_prefix(err, "line %ld", line);
            n = -1;
            break;
        }
    }
    free(r);
    if (n != 0 || set_defaults(&w, err) < 0 || import_coords_apply(&w, err) < 0)
        goto out;
    *reply =
        json_pack("{s:s, s:b, s:I, s:O, s:O, s:{s:I, s:I, s:I, s:I, s:I}}", "cluster", cluster,
                  "dry_run", !apply, "changed", (json_int_t)json_array_size(w.changes), "changes",
                  w.changes, "notes", w.notes, "read", "accounts", (json_int_t)w.counts[0], "users",
                  (json_int_t)w.counts[1], "assocs", (json_int_t)w.counts[2], "qos",
                  (json_int_t)w.counts[3], "partitions", (json_int_t)w.counts[4]);
    rc = 0;
out:
    json_decref(w.changes);
    json_decref(w.notes);
    json_decref(w.coords);
    free(w.acc);
    free(w.usr);
    free(w.qos_names);
    free(w.part_names);
    return rc;
}
