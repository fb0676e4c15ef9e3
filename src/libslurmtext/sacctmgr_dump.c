/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacctmgr_dump.c - lines of a `sacctmgr dump` file (see sacctmgr_dump.h). */
#include "libslurmtext/sacctmgr_dump.h"

#include <string.h>
#include <strings.h>

#define LINE_MAX_BYTES (64 * 1024)

static const char *const kinds[] = {"Cluster", "Parent", "Account", "User"};

const char *slt_dump_kind_name(enum slt_dump_kind k)
{
    return (unsigned)k < sizeof(kinds) / sizeof(kinds[0]) ? kinds[k] : "?";
}

static void skip_blanks(const char **p, const char *end)
{
    while (*p < end && (**p == ' ' || **p == '\t'))
        (*p)++;
}

/* A quoted value at *p ('...' or "..."): the span inside the quotes; *p past the close. */
static int quoted(const char **p, const char *end, struct slt_span *out, const char *what,
                  struct allot_error *err)
{
    char q = **p;
    const char *close = memchr(*p + 1, q, (size_t)(end - *p - 1));
    if (!close)
        return allot_errorf(err, ALLOT_EINVAL, "%s: unterminated quote %c", what, q);
    *out = (struct slt_span){*p + 1, (size_t)(close - *p - 1)};
    *p = close + 1;
    return 0;
}

int slt_dump_line_parse(struct slt_span line, struct slt_dump_record *out, struct allot_error *err)
{
    const char *p = line.p, *end = line.p + line.n;
    skip_blanks(&p, end);
    if (p == end || *p == '#')
        return 0;
    struct slt_dump_record r;
    r.n = 0;
    size_t k;
    for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        size_t kl = strlen(kinds[k]);
        if ((size_t)(end - p) >= kl && strncasecmp(p, kinds[k], kl) == 0 &&
            (p + kl == end || p[kl] == ' ' || p[kl] == '\t' || p[kl] == '-')) {
            p += kl;
            break;
        }
    }
    if (k == sizeof(kinds) / sizeof(kinds[0]))
        return slt_field_error(err, "record", "not Cluster, Parent, Account or User:",
                               (struct slt_span){p, (size_t)(end - p)});
    r.kind = (enum slt_dump_kind)k;
    skip_blanks(&p, end);
    if (p == end || *p != '-')
        return allot_errorf(err, ALLOT_EINVAL, "%s: '-' expected after the kind", kinds[k]);
    p++;
    skip_blanks(&p, end);
    if (p == end || (*p != '\'' && *p != '"'))
        return allot_errorf(err, ALLOT_EINVAL, "%s: quoted name expected after '-'", kinds[k]);
    if (quoted(&p, end, &r.name, kinds[k], err) < 0)
        return -1;
    if (r.name.n == 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: empty name", kinds[k]);
    while (p < end) {
        skip_blanks(&p, end);
        if (p == end)
            break;
        if (*p != ':')
            return slt_field_error(err, kinds[k], "':' expected before",
                                   (struct slt_span){p, (size_t)(end - p)});
        p++;
        const char *key = p;
        while (p < end && *p != '=' && *p != ':')
            p++;
        struct slt_span ks = {key, (size_t)(p - key)};
        if (ks.n == 0)
            return allot_errorf(err, ALLOT_EINVAL, "%s: empty option name", kinds[k]);
        if (p == end || *p != '=')
            return slt_field_error(err, kinds[k], "option without '=':", ks);
        p++;
        struct slt_span v;
        if (p < end && (*p == '\'' || *p == '"')) {
            if (quoted(&p, end, &v, kinds[k], err) < 0)
                return -1;
        } else {
            const char *s = p;
            while (p < end && *p != ':')
                p++;
            v = (struct slt_span){s, (size_t)(p - s)};
            while (v.n > 0 && (v.p[v.n - 1] == ' ' || v.p[v.n - 1] == '\t'))
                v.n--;
        }
        for (size_t i = 0; i < r.n; i++)
            if (r.opt[i].key.n == ks.n && strncasecmp(r.opt[i].key.p, ks.p, ks.n) == 0)
                return slt_field_error(err, kinds[k], "option given twice:", ks);
        if (r.n == SLT_DUMP_OPTS_MAX)
            return allot_errorf(err, ALLOT_EINVAL, "%s: more than %d options", kinds[k],
                                SLT_DUMP_OPTS_MAX);
        r.opt[r.n++] = (struct slt_dump_opt){ks, v};
    }
    if (r.kind == SLT_DUMP_PARENT && r.n > 0)
        return allot_errorf(err, ALLOT_EINVAL, "Parent: takes no options");
    *out = r;
    return 1;
}

void slt_dump_cursor_init(struct slt_dump_cursor *c, const char *buf, size_t len)
{
    *c = (struct slt_dump_cursor){.buf = buf, .len = len};
}

int slt_dump_next(struct slt_dump_cursor *c, struct slt_dump_record *out, long *line,
                  struct slt_span *parent, struct allot_error *err)
{
    struct slt_span l;
    while (slt_next_line(c->buf, c->len, &c->pos, &l)) {
        c->line++;
        struct slt_dump_record r;
        if (l.n > LINE_MAX_BYTES)
            return allot_errorf(err, ALLOT_EINVAL, "line %ld: longer than %d bytes", c->line,
                                LINE_MAX_BYTES);
        if (memchr(l.p, '\0', l.n))
            return allot_errorf(err, ALLOT_EINVAL, "line %ld: contains a NUL byte", c->line);
        int rc = slt_dump_line_parse(l, &r, err);
        if (rc < 0)
            return allot_error_prefix(err, "line %ld", c->line);
        if (rc == 0)
            continue;
        if (r.kind == SLT_DUMP_CLUSTER) {
            if (c->seen_cluster)
                return allot_errorf(err, ALLOT_EINVAL, "line %ld: a second Cluster line", c->line);
            c->seen_cluster = 1;
        } else if (!c->seen_cluster) {
            return allot_errorf(err, ALLOT_EINVAL, "line %ld: %s line before the Cluster line",
                                c->line, kinds[r.kind]);
        }
        if (r.kind == SLT_DUMP_PARENT)
            c->parent = r.name;
        else if (r.kind != SLT_DUMP_CLUSTER && c->parent.n == 0)
            return allot_errorf(err, ALLOT_EINVAL, "line %ld: %s line before any Parent line",
                                c->line, kinds[r.kind]);
        *out = r;
        *line = c->line;
        *parent = r.kind == SLT_DUMP_CLUSTER ? (struct slt_span){"", 0} : c->parent;
        return 1;
    }
    if (!c->seen_cluster)
        return allot_errorf(err, ALLOT_EINVAL, "no Cluster line in the dump (%ld lines read)",
                            c->line);
    return 0;
}
