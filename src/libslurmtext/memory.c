/* SPDX-License-Identifier: GPL-3.0-or-later */
/* memory.c - parse and format Slurm memory sizes (see memory.h).
 * Fractions are computed in 128-bit integers so "1.999999999P" neither overflows nor drifts;
 * no floating point is involved anywhere. */
#include "libslurmtext/memory.h"

#include <stdio.h>
#include <string.h>

#include "libslurmtext/field.h"

static int64_t suffix_mult(char c)
{
    switch (c) {
    case 'K':
        return 1LL << 10;
    case 'M':
        return 1LL << 20;
    case 'G':
        return 1LL << 30;
    case 'T':
        return 1LL << 40;
    case 'P':
        return 1LL << 50;
    default:
        return 0;
    }
}

int slt_memory_parse(const char *text, size_t n, const char *field, int64_t bare_unit_bytes,
                     struct slt_memory *out, struct allot_error *err)
{
    struct slt_span s = {text, n};
    struct slt_memory m = {true, 0, SLT_MEM_TOTAL};
    if (n == 0) {
        out->has = false;
        out->bytes = 0;
        out->scope = SLT_MEM_TOTAL;
        return 0;
    }
    if (bare_unit_bytes <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: bad unit %lld", field ? field : "memory",
                            (long long)bare_unit_bytes);
    size_t end = n;
    if (text[end - 1] == 'n' || text[end - 1] == 'c') {
        m.scope = text[end - 1] == 'n' ? SLT_MEM_PER_NODE : SLT_MEM_PER_CPU;
        end--;
    }
    int64_t mult = bare_unit_bytes;
    if (end > 0 && suffix_mult(text[end - 1])) {
        mult = suffix_mult(text[end - 1]);
        end--;
    }
    size_t dot = 0;
    while (dot < end && text[dot] != '.')
        dot++;
    uint64_t whole, frac = 0;
    size_t frac_digits = 0;
    if (slt_uint(text, dot, UINT64_MAX, &whole) < 0)
        goto bad;
    if (dot < end) {
        frac_digits = end - dot - 1;
        if (frac_digits == 0 || frac_digits > 9 ||
            slt_uint(text + dot + 1, frac_digits, UINT64_MAX, &frac) < 0)
            goto bad;
    }
    unsigned __int128 pow10 = 1;
    for (size_t i = 0; i < frac_digits; i++)
        pow10 *= 10;
    unsigned __int128 total = (unsigned __int128)whole * (uint64_t)mult;
    total += ((unsigned __int128)frac * (uint64_t)mult + pow10 / 2) / pow10;
    if (total > INT64_MAX)
        return slt_field_error(err, field, "memory size too large", s);
    m.bytes = (int64_t)total;
    *out = m;
    return 0;
bad:
    return slt_field_error(err, field, "invalid memory size", s);
}

int slt_memory_format(const struct slt_memory *m, char *buf, size_t len, struct allot_error *err)
{
    char tmp[40];
    int n = 0;
    if (m->has) {
        static const char units[] = "PTGMK";
        if (m->bytes < 0)
            return allot_errorf(err, ALLOT_EINVAL, "memory: negative size %lld",
                                (long long)m->bytes);
        char unit = 0;
        int64_t v = m->bytes;
        for (int i = 0; units[i] && v != 0; i++) {
            int64_t mult = suffix_mult(units[i]);
            if (v % mult == 0) {
                v /= mult;
                unit = units[i];
                break;
            }
        }
        n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
        if (unit)
            tmp[n++] = unit;
        if (m->scope == SLT_MEM_PER_NODE)
            tmp[n++] = 'n';
        else if (m->scope == SLT_MEM_PER_CPU)
            tmp[n++] = 'c';
        tmp[n] = '\0';
    } else {
        tmp[0] = '\0';
    }
    if ((size_t)n >= len)
        return allot_errorf(err, ALLOT_ETOOBIG, "memory: buffer of %zu bytes too small", len);
    memcpy(buf, tmp, (size_t)n + 1);
    return n;
}
