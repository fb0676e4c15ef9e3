/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sync.c - allot-agent's sync pass: compare, resolve by mode, read back, report (sync.h). */
#include "agent/sync.h"

#include <jansson.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/child.h"
#include "agent/sync_view.h"
#include "libcore/billing.h"
#include "libcore/model.h"
#include "libslurmtext/duration.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

#define DRIFTS_MAX 10000 /* allotd's bound on one report (STORE_SYNC_DRIFTS_MAX) */
#define TEXT_MAX 256

struct drift {
    char kind[16];
    char object[3 * SV_NAME_MAX];
    char field[32];
    char slurm[TEXT_MAX];
    char allot[TEXT_MAX];
    char status[16];
    char note[TEXT_MAX];
};
struct drifts {
    struct drift *v;
    size_t n, cap;
};

/* A change tried on one object, and its error ("" when it succeeded). */
struct attempt {
    char kind[16];
    char object[3 * SV_NAME_MAX];
    char error[TEXT_MAX];
};
struct attempts {
    struct attempt *v;
    size_t n, cap;
};

/* Text cut to fit on purpose (evidence and notes for allotd's one-line fields). */
__attribute__((format(printf, 3, 4))) static void textf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

int sync_mode_parse(const char *s, enum sync_mode *out)
{
    static const char *const names[] = {"report", "follow", "push"};
    static const enum sync_mode modes[] = {SYNC_REPORT, SYNC_FOLLOW, SYNC_PUSH};
    for (int i = 0; i < 3; i++)
        if (s && strcasecmp(s, names[i]) == 0) {
            *out = modes[i];
            return 0;
        }
    return -1;
}

const char *sync_mode_name(enum sync_mode m)
{
    return m == SYNC_FOLLOW   ? "follow"
           : m == SYNC_PUSH   ? "push"
           : m == SYNC_REPORT ? "report"
                              : "off";
}

static struct drift *add_drift(struct drifts *d, const char *kind, const char *object,
                               const char *field, const char *slurm, const char *allot)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 16;
        d->v = xrealloc(d->v, d->cap * sizeof *d->v);
    }
    struct drift *x = &d->v[d->n++];
    memset(x, 0, sizeof *x);
    text_copy(x->kind, sizeof x->kind, kind);
    text_copy(x->object, sizeof x->object, object);
    text_copy(x->field, sizeof x->field, field);
    text_copy(x->slurm, sizeof x->slurm, slurm);
    text_copy(x->allot, sizeof x->allot, allot);
    return x;
}

__attribute__((format(printf, 4, 5))) static void
add_attempt(struct attempts *a, const char *kind, const char *object, const char *fmt, ...)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = xrealloc(a->v, a->cap * sizeof *a->v);
    }
    struct attempt *x = &a->v[a->n++];
    memset(x, 0, sizeof *x);
    text_copy(x->kind, sizeof x->kind, kind);
    text_copy(x->object, sizeof x->object, object);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->error, sizeof x->error, fmt, ap);
    va_end(ap);
}

static const struct attempt *find_attempt(const struct attempts *a, const char *kind,
                                          const char *object)
{
    for (size_t i = a->n; i-- > 0;)
        if (!strcmp(a->v[i].kind, kind) && !strcmp(a->v[i].object, object))
            return &a->v[i];
    return NULL;
}

/* ---- comparing ------------------------------------------------------------------------ */

/* Weights as allot writes them (billing_weights_format), so "CPU=4" equals "cpu=4.0";
 * text allot cannot read is compared as it is. */
static void weights_canon(const char *w, char *out, size_t size)
{
    struct billing_weights bw;
    if (billing_weights_parse(w, 0, &bw, NULL) < 0 ||
        billing_weights_format(&bw, out, size, NULL) < 0)
        text_copy(out, size, w);
}

static void time_text(int64_t s, const char *none, char *buf, size_t size)
{
    struct slt_duration d = {.kind = SLT_DUR_VALUE, .ms = s * 1000};
    if (s < 0)
        text_copy(buf, size, none);
    else if (slt_duration_format(&d, buf, size, NULL) < 0)
        snprintf(buf, size, "%llds", (long long)s);
}

static void part_text(const struct sv_part *p, char *buf, size_t size)
{
    char mt[32], dt[32];
    time_text(p->max_time_s, "UNLIMITED", mt, sizeof mt);
    time_text(p->default_time_s, "NONE", dt, sizeof dt);
    textf(buf, size, "TRESBillingWeights=%s MaxTime=%s DefaultTime=%s",
          p->weights[0] ? p->weights : "(none)", mt, dt);
}

static void assoc_key(const struct sv_assoc *a, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s/%s", a->account, a->user, a->partition);
}

static void diff_parts(const struct sync_view *s, const struct sync_view *a, struct drifts *d)
{
    char x[TEXT_MAX], y[TEXT_MAX];
    for (size_t i = 0; i < s->nparts; i++) {
        const struct sv_part *sp = &s->parts[i], *ap = sv_find_part(a, sp->name);
        if (!ap) {
            part_text(sp, x, sizeof x);
            add_drift(d, "partition", sp->name, "exists", x, "");
            continue;
        }
        weights_canon(sp->weights, x, sizeof x);
        weights_canon(ap->weights, y, sizeof y);
        if (strcmp(x, y) != 0)
            add_drift(d, "partition", sp->name, "billing_weights", sp->weights, ap->weights);
        if (sp->max_time_s != ap->max_time_s) {
            time_text(sp->max_time_s, "UNLIMITED", x, sizeof x);
            time_text(ap->max_time_s, "UNLIMITED", y, sizeof y);
            add_drift(d, "partition", sp->name, "max_time", x, y);
        }
        if (sp->default_time_s != ap->default_time_s) {
            time_text(sp->default_time_s, "NONE", x, sizeof x);
            time_text(ap->default_time_s, "NONE", y, sizeof y);
            add_drift(d, "partition", sp->name, "default_time", x, y);
        }
    }
    for (size_t i = 0; i < a->nparts; i++)
        if (!sv_find_part(s, a->parts[i].name)) {
            part_text(&a->parts[i], y, sizeof y);
            add_drift(d, "partition", a->parts[i].name, "exists", "", y);
        }
}

static void diff_accounts(const struct sync_view *s, const struct sync_view *a, struct drifts *d)
{
    char x[TEXT_MAX];
    for (size_t i = 0; i < s->naccts; i++)
        if (!sv_find_acct(a, s->accts[i].name)) {
            snprintf(x, sizeof x, "parent=%s", s->accts[i].parent[0] ? s->accts[i].parent : "-");
            add_drift(d, "account", s->accts[i].name, "exists", x, "");
        }
    for (size_t i = 0; i < a->naccts; i++)
        if (!sv_find_acct(s, a->accts[i].name)) {
            snprintf(x, sizeof x, "parent=%s", a->accts[i].parent[0] ? a->accts[i].parent : "-");
            add_drift(d, "account", a->accts[i].name, "exists", "", x);
        }
}

static void diff_users(const struct sync_view *s, const struct sync_view *a, struct drifts *d)
{
    char x[TEXT_MAX];
    for (size_t i = 0; i < s->nusers; i++) {
        const struct sv_user *su = &s->users[i], *au = sv_find_user(a, su->name);
        if (!au) {
            snprintf(x, sizeof x, "default_account=%s", su->def);
            add_drift(d, "user", su->name, "exists", x, "");
        } else if (strcmp(su->def, au->def) != 0) {
            add_drift(d, "user", su->name, "default_account", su->def, au->def);
        }
    }
    for (size_t i = 0; i < a->nusers; i++)
        if (!sv_find_user(s, a->users[i].name)) {
            snprintf(x, sizeof x, "default_account=%s", a->users[i].def);
            add_drift(d, "user", a->users[i].name, "exists", "", x);
        }
}

static void diff_assocs(const struct sync_view *s, const struct sync_view *a, struct drifts *d)
{
    char k[3 * SV_NAME_MAX];
    for (size_t i = 0; i < s->nassocs; i++)
        if (!sv_find_assoc(a, &s->assocs[i])) {
            assoc_key(&s->assocs[i], k, sizeof k);
            add_drift(d, "assoc", k, "exists", "present", "");
        }
    for (size_t i = 0; i < a->nassocs; i++)
        if (!sv_find_assoc(s, &a->assocs[i])) {
            assoc_key(&a->assocs[i], k, sizeof k);
            add_drift(d, "assoc", k, "exists", "", "present");
        }
}

static void diff(const struct sync_view *s, const struct sync_view *a, struct drifts *d)
{
    diff_parts(s, a, d);
    diff_accounts(s, a, d);
    diff_users(s, a, d);
    diff_assocs(s, a, d);
}

/* ---- follow: change allot's copy through the API ---------------------------------------- */

static int api_call(allot_client_t *c, const char *method, const char *path, json_t *body,
                    char *why, size_t len)
{
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!text) {
        snprintf(why, len, "request body cannot be encoded");
        return -1;
    }
    struct allot_error err = {0};
    int rc = allot_request(c, method, path, text, NULL, NULL, &err);
    free(text);
    if (rc < 0)
        textf(why, len, "%s %s: %s", method, path, err.msg);
    return rc;
}

/* PATH = base + "/" + each segment, percent-encoded; -1 when a segment cannot be. */
static int make_path(char *buf, size_t size, const char *base, const char *s1, const char *s2)
{
    char *e1 = s1 ? allot_urlencode(s1, NULL) : NULL, *e2 = s2 ? allot_urlencode(s2, NULL) : NULL;
    int ok = (!s1 || e1) && (!s2 || e2);
    if (ok)
        ok = (size_t)snprintf(buf, size, "%s%s%s%s%s", base, e1 ? "/" : "", e1 ? e1 : "",
                              e2 ? "/" : "", e2 ? e2 : "") < size;
    free(e1);
    free(e2);
    return ok ? 0 : -1;
}

static void follow(allot_client_t *c, const char *cluster, const struct sync_view *s,
                   const struct sync_view *a, struct attempts *at)
{
    char why[TEXT_MAX], path[512], key[3 * SV_NAME_MAX];
    /* Partitions first: an association may name one. */
    for (size_t i = 0; i < s->nparts; i++) {
        const struct sv_part *x = &s->parts[i], *y = sv_find_part(a, x->name);
        /* Weights, MaxTime and DefaultTime in one request: allotd checks them together
         * (a DefaultTime may not exceed the MaxTime). */
        json_t *b =
            json_pack("{s:s, s:I, s:I}", "billing_weights", x->weights, "max_time_s",
                      (json_int_t)x->max_time_s, "default_time_s", (json_int_t)x->default_time_s);
        int rc;
        if (!y) {
            json_object_set_new(b, "cluster", json_string(cluster));
            json_object_set_new(b, "name", json_string(x->name));
            rc = api_call(c, "POST", "/v1/partitions", b, why, sizeof why);
        } else {
            char w1[TEXT_MAX], w2[TEXT_MAX];
            weights_canon(x->weights, w1, sizeof w1);
            weights_canon(y->weights, w2, sizeof w2);
            if (!strcmp(w1, w2) && x->max_time_s == y->max_time_s &&
                x->default_time_s == y->default_time_s) {
                json_decref(b);
                continue;
            }
            rc = make_path(path, sizeof path, "/v1/partitions", cluster, x->name) < 0
                     ? (json_decref(b), snprintf(why, sizeof why, "name cannot be encoded"), -1)
                     : api_call(c, "PATCH", path, b, why, sizeof why);
        }
        if (rc < 0)
            add_attempt(at, "partition", x->name, "%s", why);
    }
    /* Accounts parent first: a pass creates those whose parent allot has; repeat while one
     * was made (a tree n deep takes n passes). */
    char *made = xcalloc(s->naccts ? s->naccts : 1, 1);
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < s->naccts; i++) {
            const struct sv_acct *x = &s->accts[i];
            if (made[i] || sv_find_acct(a, x->name))
                continue;
            const char *parent = x->parent[0] ? x->parent : "root";
            int parent_ok = sv_find_acct(a, parent) != NULL;
            for (size_t j = 0; !parent_ok && j < s->naccts; j++)
                parent_ok = made[j] == 1 && !strcmp(s->accts[j].name, parent);
            if (!parent_ok)
                continue;
            made[i] = 2; /* tried */
            json_t *b = json_pack("{s:s, s:s}", "name", x->name, "parent", parent);
            if (api_call(c, "POST", "/v1/accounts", b, why, sizeof why) < 0) {
                add_attempt(at, "account", x->name, "%s", why);
            } else {
                made[i] = 1;
                progress = 1;
            }
        }
    }
    free(made);
    for (size_t i = 0; i < s->nusers; i++) {
        const struct sv_user *x = &s->users[i];
        if (sv_find_user(a, x->name))
            continue;
        json_t *b = json_pack("{s:s}", "name", x->name);
        if (x->def[0])
            json_object_set_new(b, "default_account", json_string(x->def));
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwnam_r(x->name, &pw, buf, sizeof buf, &res) == 0 && res)
            json_object_set_new(b, "uid", json_integer(res->pw_uid));
        if (api_call(c, "POST", "/v1/users", b, why, sizeof why) < 0)
            add_attempt(at, "user", x->name, "%s", why);
    }
    for (size_t i = 0; i < s->nassocs; i++) {
        const struct sv_assoc *x = &s->assocs[i];
        if (sv_find_assoc(a, x))
            continue;
        json_t *b = json_pack("{s:s, s:s, s:s}", "cluster", cluster, "account", x->account, "user",
                              x->user);
        if (x->partition[0])
            json_object_set_new(b, "partition", json_string(x->partition));
        if (api_call(c, "POST", "/v1/assocs", b, why, sizeof why) < 0) {
            assoc_key(x, key, sizeof key);
            add_attempt(at, "assoc", key, "%s", why);
        }
    }
    for (size_t i = 0; i < s->nusers; i++) {
        const struct sv_user *x = &s->users[i], *y = sv_find_user(a, x->name);
        if (!y || !strcmp(x->def, y->def))
            continue;
        if (make_path(path, sizeof path, "/v1/users", x->name, NULL) < 0 ||
            api_call(c, "PATCH", path, json_pack("{s:s}", "default_account", x->def), why,
                     sizeof why) < 0)
            add_attempt(at, "user", x->name, "%s", why);
    }
}

/* ---- push: change Slurm with sacctmgr ------------------------------------------------- */

/* sacctmgr -i ARGS...; 0, or -1 with why.  Every name was checked by model_check_name, so
 * none can be read by sacctmgr as a second name or another option. */
static int sacctmgr(const struct agent_tools *t, char *const args[], char *why, size_t len)
{
    char *argv[16];
    size_t n = 0;
    argv[n++] = (char *)t->sacctmgr;
    argv[n++] = "-i";
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct child_out c;
    int rc = child_run(argv, NULL, t->timeout_s, 1024 * 1024, &c);
    if (rc != 0)
        textf(why, len, "sacctmgr %s %s: %s%s%s", args[0], args[1],
              rc < 0 ? "" : "exit status non-zero; ", c.errtext, c.out ? c.out : "");
    child_out_free(&c);
    return rc == 0 ? 0 : -1;
}

static int names_ok(const char *a, const char *b, const char *c3, char *why, size_t len)
{
    const char *v[3] = {a, b, c3};
    for (int i = 0; i < 3; i++)
        if (v[i] && v[i][0] && model_check_name("name", v[i], 0, NULL) < 0) {
            snprintf(why, len, "'%s' is not a name sacctmgr can be given safely", v[i]);
            return 0;
        }
    return 1;
}

static void push(const struct agent_tools *t, const char *cluster, const struct sync_view *s,
                 const struct sync_view *a, struct attempts *at)
{
    char why[TEXT_MAX], w1[160], w2[160], w3[160], w4[160], key[3 * SV_NAME_MAX];
    snprintf(w3, sizeof w3, "cluster=%s", cluster);
    char *made = xcalloc(a->naccts ? a->naccts : 1, 1);
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < a->naccts; i++) {
            const struct sv_acct *x = &a->accts[i];
            if (made[i] || sv_find_acct(s, x->name))
                continue;
            const char *parent = x->parent[0] ? x->parent : "root";
            int parent_ok = sv_find_acct(s, parent) != NULL;
            for (size_t j = 0; !parent_ok && j < a->naccts; j++)
                parent_ok = made[j] == 1 && !strcmp(a->accts[j].name, parent);
            if (!parent_ok)
                continue;
            made[i] = 2;
            snprintf(w1, sizeof w1, "name=%s", x->name);
            snprintf(w2, sizeof w2, "parent=%s", parent);
            char *args[] = {"add", "account", w1, w2, w3, NULL};
            if (!names_ok(x->name, parent, NULL, why, sizeof why) ||
                sacctmgr(t, args, why, sizeof why) < 0) {
                add_attempt(at, "account", x->name, "%s", why);
            } else {
                made[i] = 1;
                progress = 1;
            }
        }
    }
    free(made);
    for (size_t i = 0; i < a->nassocs; i++) {
        const struct sv_assoc *x = &a->assocs[i];
        if (sv_find_assoc(s, x))
            continue;
        snprintf(w1, sizeof w1, "name=%s", x->user);
        snprintf(w2, sizeof w2, "account=%s", x->account);
        snprintf(w4, sizeof w4, "partition=%s", x->partition);
        char *args[] = {"add", "user", w1, w2, w3, x->partition[0] ? w4 : NULL, NULL};
        if (!names_ok(x->user, x->account, x->partition, why, sizeof why) ||
            sacctmgr(t, args, why, sizeof why) < 0) {
            assoc_key(x, key, sizeof key);
            add_attempt(at, "assoc", key, "%s", why);
        }
    }
    for (size_t i = 0; i < a->nusers; i++) {
        const struct sv_user *x = &a->users[i], *y = sv_find_user(s, x->name);
        if (y && !strcmp(x->def, y->def))
            continue;
        if (!x->def[0]) {
            if (!y)
                add_attempt(at, "user", x->name,
                            "allot's user has no default account: Slurm cannot add a user "
                            "without one");
            continue;
        }
        snprintf(w1, sizeof w1, "name=%s", x->name);
        snprintf(w2, sizeof w2, "account=%s", x->def);
        snprintf(w4, sizeof w4, "defaultaccount=%s", x->def);
        char *add[] = {"add", "user", w1, w2, w3, NULL};
        char *mod[] = {"modify", "user", "where", w1, "set", w4, NULL};
        if (!names_ok(x->name, x->def, NULL, why, sizeof why) ||
            sacctmgr(t, y ? mod : add, why, sizeof why) < 0)
            add_attempt(at, "user", x->name, "%s", why);
    }
}

/* ---- the pass ------------------------------------------------------------------------- */

static int has_key(const struct drifts *d, const struct drift *x)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->v[i].kind, x->kind) && !strcmp(d->v[i].object, x->object) &&
            !strcmp(d->v[i].field, x->field))
            return 1;
    return 0;
}

/* What the mode made of drift x still there after the pass. */
static void settle_status(struct drift *x, enum sync_mode m, const struct attempts *at)
{
    const struct attempt *a = find_attempt(at, x->kind, x->object);
    int only_allot = !x->slurm[0] && x->allot[0], only_slurm = x->slurm[0] && !x->allot[0];
    text_copy(x->status, sizeof x->status, "reported");
    if (a && a->error[0]) {
        text_copy(x->status, sizeof x->status, "failed");
        text_copy(x->note, sizeof x->note, a->error);
    } else if (m == SYNC_FOLLOW && only_allot && !strcmp(x->field, "exists")) {
        text_copy(x->note, sizeof x->note,
                  "follow never removes from allot (its history stays); remove it with allot "
                  "if Slurm dropped it for good");
    } else if (m == SYNC_PUSH && !strcmp(x->kind, "partition")) {
        text_copy(x->status, sizeof x->status, "unresolvable");
        text_copy(x->note, sizeof x->note,
                  "sacctmgr cannot change a partition: edit slurm.conf and run scontrol "
                  "reconfigure, or change allot's copy with allot partition modify");
    } else if (m == SYNC_PUSH && only_slurm && !strcmp(x->field, "exists")) {
        text_copy(x->note, sizeof x->note, "push never removes from Slurm");
    }
}

static int report(allot_client_t *c, const char *cluster, enum sync_mode m, const struct drifts *d,
                  int resolved, struct allot_error *err)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < d->n && i < DRIFTS_MAX; i++) {
        const struct drift *x = &d->v[i];
        json_array_append_new(arr,
                              json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "kind", x->kind,
                                        "object", x->object, "field", x->field, "slurm", x->slurm,
                                        "allot", x->allot, "status", x->status, "note", x->note));
    }
    json_t *body = json_pack("{s:s, s:i, s:o}", "mode", sync_mode_name(m), "resolved", resolved,
                             "drifts", arr);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char path[256];
    if (!text || make_path(path, sizeof path, "/v1/sync", cluster, NULL) < 0) {
        free(text);
        return allot_errorf(err, ALLOT_EINTERNAL, "sync report cannot be encoded");
    }
    int rc = allot_request(c, "PUT", path, text, NULL, NULL, err);
    free(text);
    return rc;
}

/* Both sides; 0, or -1 with err. */
static int read_both(allot_client_t *c, const struct agent_tools *t, const char *cluster,
                     struct sync_view *s, struct sync_view *a, struct allot_error *err)
{
    char why[512];
    if (sync_view_slurm(t, cluster, s, why, sizeof why) < 0)
        return allot_errorf(err, ALLOT_EUNAVAIL, "reading Slurm: %s", why);
    if (sync_view_allot(c, cluster, a, why, sizeof why) < 0) {
        sync_view_free(s);
        return allot_errorf(err, ALLOT_EUNAVAIL, "reading allot: %s", why);
    }
    return 0;
}

int sync_pass(allot_client_t *c, const struct agent_tools *t, const char *cluster, enum sync_mode m,
              sync_log_f log, struct sync_stats *st, struct allot_error *err)
{
    struct sync_view s, a;
    struct drifts first = {0}, last = {0};
    struct attempts at = {0};
    memset(st, 0, sizeof *st);
    if (read_both(c, t, cluster, &s, &a, err) < 0)
        return -1;
    diff(&s, &a, &first);
    st->found = (int)first.n;
    for (size_t i = 0; i < first.n; i++)
        log("sync: drift %s %s %s: slurm '%s' allot '%s'", first.v[i].kind, first.v[i].object,
            first.v[i].field, first.v[i].slurm, first.v[i].allot);
    int rc = 0;
    if (first.n && (m == SYNC_FOLLOW || m == SYNC_PUSH)) {
        if (m == SYNC_FOLLOW)
            follow(c, cluster, &s, &a, &at);
        else
            push(t, cluster, &s, &a, &at);
        sync_view_free(&s);
        sync_view_free(&a);
        if (read_both(c, t, cluster, &s, &a, err) < 0) {
            rc = -1;
            goto out;
        }
        diff(&s, &a, &last);
    } else {
        last = first; /* nothing was changed: what was found is what is left */
        first = (struct drifts){0};
    }
    for (size_t i = 0; i < first.n; i++)
        st->resolved += !has_key(&last, &first.v[i]);
    for (size_t i = 0; i < last.n; i++) {
        settle_status(&last.v[i], m, &at);
        st->failed += !strcmp(last.v[i].status, "failed");
        if (!strcmp(last.v[i].status, "failed"))
            log("sync: %s %s %s not resolved: %s", last.v[i].kind, last.v[i].object,
                last.v[i].field, last.v[i].note);
    }
    st->left = (int)last.n;
    if (last.n > DRIFTS_MAX)
        log("sync: %zu drifts; the first %d reported", last.n, DRIFTS_MAX);
    rc = report(c, cluster, m, &last, st->resolved, err);
    sync_view_free(&s);
    sync_view_free(&a);
out:
    free(first.v);
    free(last.v);
    free(at.v);
    return rc;
}
