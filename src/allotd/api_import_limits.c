/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import_limits.c - the limits of an imported account, association or QOS: validated
 * into the bank's canonical values and made exactly the input's (api_import_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "allotd/api.h"
#include "allotd/api_import_int.h"
#include "libslurmtext/memory.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

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
int import_limits_sync(struct walk *w, enum limit_scope scope, const char *owner, const char *label,
                       const struct limset *want, struct allot_error *err)
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
            import_change(w, "~ limit %s %s: %s %s -> %s", label, owner, want->l[i].name, old,
                          want->l[i].value);
        else
            import_change(w, "+ limit %s %s: %s=%s", label, owner, want->l[i].name,
                          want->l[i].value);
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
        import_change(w, "- limit %s %s: %s=%s", label, owner, cur->l[j].name, cur->l[j].value);
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
            struct slt_memory m;
            if (slt_memory_parse(eq + 1, strlen(eq + 1), name, 1048576, &m, err) < 0)
                return -1;
            if (m.bytes % 1048576 != 0)
                return allot_errorf(err, ALLOT_EINVAL,
                                    "%s: mem=%s is not a whole number of "
                                    "MiB",
                                    name, eq + 1);
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

int import_limit_add(struct limset *s, enum limit_scope scope, const char *name, struct slt_span v,
                     struct allot_error *err)
{
    char key[ALLOT_NAME_MAX], value[ALLOT_TRES_MAX], canon[ALLOT_TRES_MAX];
    const struct limit_def *d = limits_find(scope, name);
    if (import_span_copy(value, sizeof value, name, v, err) < 0)
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
