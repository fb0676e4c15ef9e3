/* SPDX-License-Identifier: GPL-3.0-or-later */
/* duration.c - parse and format Slurm durations (see duration.h).
 * Parsing is a single left-to-right scan into at most four numeric components; no
 * allocation, no locale, no strtol (which would accept signs and spaces). */
#include "libslurmtext/duration.h"

#include <stdio.h>
#include <string.h>

#include "libslurmtext/field.h"

/* The first component can be large (days, or minutes of a bare number); 1e9 days keeps the
 * millisecond total far below INT64_MAX. */
#define FIRST_MAX 1000000000ULL

/* Read ".d{1,6}" fraction at p[0..n) into ms (truncating).  Returns 0 or -1. */
static int parse_fraction_ms(const char *p, size_t n, int64_t *ms)
{
    if (n < 2 || n > 7 || p[0] != '.')
        return -1;
    uint64_t v;
    if (slt_uint(p + 1, n - 1, 999999, &v) < 0)
        return -1;
    for (size_t digits = n - 1; digits < 3; digits++)
        v *= 10;
    for (size_t digits = n - 1; digits > 3; digits--)
        v /= 10;
    *ms = (int64_t)v;
    return 0;
}

int slt_duration_parse(const char *text, size_t n, const char *field, struct slt_duration *out,
                       struct allot_error *err)
{
    struct slt_span s = {text, n};
    struct slt_duration d = {SLT_DUR_VALUE, 0};
    if (n == 0) {
        out->kind = SLT_DUR_NONE;
        out->ms = 0;
        return 0;
    }
    /* Words first only when the text does not start with a digit: the common case pays
     * nothing for them. */
    if ((unsigned char)text[0] - '0' <= 9)
        goto numeric;
    if (slt_eq_nocase(s, "UNLIMITED") || slt_eq_nocase(s, "INFINITE")) {
        d.kind = SLT_DUR_UNLIMITED;
        goto done;
    }
    if (slt_eq(s, "Partition_Limit")) {
        d.kind = SLT_DUR_PARTITION_LIMIT;
        goto done;
    }
    if (slt_eq(s, "INVALID")) {
        d.kind = SLT_DUR_INVALID;
        goto done;
    }
    goto bad;
numeric:;

    const char *p = text, *end = text + n;
    uint64_t days = 0;
    int has_days = 0;
    const char *dash = memchr(p, '-', n);
    if (dash) {
        if (slt_uint(p, (size_t)(dash - p), FIRST_MAX, &days) < 0)
            goto bad;
        has_days = 1;
        p = dash + 1;
    }
    /* Split the rest at ':' into up to 3 components; a '.' fraction may end the last. */
    uint64_t comp[3];
    int ncomp = 0;
    int64_t frac_ms = 0;
    while (1) {
        const char *q = p;
        while (q < end && *q != ':' && *q != '.')
            q++;
        if (ncomp == 3)
            goto bad;
        uint64_t max = (ncomp == 0 && !has_days) ? FIRST_MAX : 59;
        if (ncomp == 0 && has_days)
            max = 23;
        if (slt_uint(p, (size_t)(q - p), max, &comp[ncomp]) < 0)
            goto bad;
        ncomp++;
        if (q == end)
            break;
        if (*q == '.') {
            if (parse_fraction_ms(q, (size_t)(end - q), &frac_ms) < 0)
                goto bad;
            break;
        }
        p = q + 1;
    }
    int64_t total_s;
    int has_fraction = frac_ms > 0 || memchr(text, '.', n) != NULL;
    if (has_days) {
        /* D-HH, D-HH:MM, D-HH:MM:SS; a fraction only on seconds. */
        if (has_fraction && ncomp != 3)
            goto bad;
        total_s = (int64_t)days * 86400 + (int64_t)comp[0] * 3600;
        if (ncomp > 1)
            total_s += (int64_t)comp[1] * 60;
        if (ncomp > 2)
            total_s += (int64_t)comp[2];
    } else if (ncomp == 1) {
        /* Bare minutes: Slurm's input convention; no fraction. */
        if (has_fraction)
            goto bad;
        total_s = (int64_t)comp[0] * 60;
    } else if (ncomp == 2) {
        total_s = (int64_t)comp[0] * 60 + (int64_t)comp[1]; /* MM:SS[.mmm] */
    } else {
        total_s = (int64_t)comp[0] * 3600 + (int64_t)comp[1] * 60 + (int64_t)comp[2];
    }
    d.ms = total_s * 1000 + frac_ms;
done:
    *out = d;
    return 0;
bad:
    return slt_field_error(err, field, "invalid duration", s);
}

int slt_duration_format(const struct slt_duration *d, char *buf, size_t len,
                        struct allot_error *err)
{
    char tmp[48];
    int n;
    switch (d->kind) {
    case SLT_DUR_NONE:
        n = 0;
        tmp[0] = '\0';
        break;
    case SLT_DUR_UNLIMITED:
        n = snprintf(tmp, sizeof(tmp), "UNLIMITED");
        break;
    case SLT_DUR_PARTITION_LIMIT:
        n = snprintf(tmp, sizeof(tmp), "Partition_Limit");
        break;
    case SLT_DUR_INVALID:
        n = snprintf(tmp, sizeof(tmp), "INVALID");
        break;
    case SLT_DUR_VALUE: {
        if (d->ms < 0)
            return allot_errorf(err, ALLOT_EINVAL, "duration: negative value %lld",
                                (long long)d->ms);
        int64_t s = d->ms / 1000, ms = d->ms % 1000;
        int64_t days = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
        if (days > 0)
            n = snprintf(tmp, sizeof(tmp), "%lld-%02lld:%02lld:%02lld", (long long)days,
                         (long long)h, (long long)m, (long long)sec);
        else
            n = snprintf(tmp, sizeof(tmp), "%02lld:%02lld:%02lld", (long long)h, (long long)m,
                         (long long)sec);
        if (ms)
            n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, ".%03lld", (long long)ms);
        break;
    }
    default:
        return allot_errorf(err, ALLOT_EINVAL, "duration: unknown kind %d", (int)d->kind);
    }
    if ((size_t)n >= len)
        return allot_errorf(err, ALLOT_ETOOBIG, "duration: buffer of %zu bytes too small", len);
    memcpy(buf, tmp, (size_t)n + 1);
    return n;
}

int64_t slt_duration_s(const struct slt_duration *d)
{
    return d->kind == SLT_DUR_VALUE ? d->ms / 1000 : -1;
}
