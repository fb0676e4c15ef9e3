/* SPDX-License-Identifier: GPL-3.0-or-later */
/* field.c - line and field splitting of parsable Slurm output (see field.h).
 * The splitter uses memchr so the inner loop is the C library's vectorised scan. */
#include "libslurmtext/field.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

bool st_next_line(const char *buf, size_t len, size_t *pos, struct st_span *line)
{
    size_t at = *pos;
    if (at >= len)
        return false;
    const char *start = buf + at;
    const char *nl = memchr(start, '\n', len - at);
    size_t n = nl ? (size_t)(nl - start) : len - at;
    *pos = at + n + (nl ? 1 : 0);
    if (n > 0 && start[n - 1] == '\r')
        n--;
    line->p = start;
    line->n = n;
    return true;
}

int st_split(struct st_span line, char sep, struct st_span *fields, size_t max,
             size_t *nfields, struct allot_error *err)
{
    /* First pass counts, so a too-long line leaves fields[] untouched. */
    size_t count = 1;
    const char *p = line.p, *end = line.p + line.n;
    while (p < end && (p = memchr(p, sep, (size_t)(end - p))) != NULL) {
        count++;
        p++;
    }
    if (count > max)
        return allot_errorf(err, ALLOT_ETOOBIG, "line has %zu fields, at most %zu expected",
                            count, max);
    size_t i = 0;
    p = line.p;
    while (i + 1 < count) {
        const char *s = memchr(p, sep, (size_t)(end - p));
        fields[i].p = p;
        fields[i].n = (size_t)(s - p);
        p = s + 1;
        i++;
    }
    fields[i].p = p;
    fields[i].n = (size_t)(end - p);
    *nfields = count;
    return 0;
}

bool st_eq(struct st_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

bool st_eq_nocase(struct st_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && strncasecmp(s.p, lit, n) == 0;
}

int st_uint(const char *p, size_t n, uint64_t max, uint64_t *out)
{
    if (n == 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned char)p[i] - '0';
        if (d > 9)
            return -1;
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int st_field_error(struct allot_error *err, const char *field, const char *what,
                   struct st_span text)
{
    char quoted[ST_ERRTEXT_MAX + 4];
    size_t n = text.n < ST_ERRTEXT_MAX ? text.n : ST_ERRTEXT_MAX;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text.p[i];
        quoted[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (text.n > n) {
        memcpy(quoted + n, "...", 3);
        n += 3;
    }
    quoted[n] = '\0';
    return allot_errorf(err, ALLOT_EINVAL, "%s: %s '%s'", field ? field : "field", what, quoted);
}
