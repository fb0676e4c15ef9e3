/* SPDX-License-Identifier: GPL-3.0-or-later */
/* field.c - line and field splitting of parsable Slurm output (see field.h).
 * The splitter uses memchr so the inner loop is the C library's vectorised scan. */
#include "libslurmtext/field.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "slt_split assumes a little-endian machine"
#endif

#include <stdio.h>
#include <string.h>
#include <strings.h>

bool slt_next_line(const char *buf, size_t len, size_t *pos, struct slt_span *line)
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

/* Bit mask with the top bit set in the lowest byte of w equal to the byte in pat (every byte
 * of pat the same).  Bits above the first match may be false positives (borrows), so
 * callers only trust the lowest set bit and rescan from just after it. */
static inline uint64_t match_bytes(uint64_t w, uint64_t pat)
{
    uint64_t x = w ^ pat;
    return (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
}

int slt_split(struct slt_span line, char sep, struct slt_span *fields, size_t max, size_t *nfields,
              struct allot_error *err)
{
    /* Eight bytes per step (SWAR): fields are short, so a memchr call per field would cost
     * more than the scan.  Little-endian: the lowest set bit is the first byte. */
    size_t count = 0;
    const char *p = line.p, *start = line.p, *end = line.p + line.n;
    const uint64_t pat = 0x0101010101010101ULL * (unsigned char)sep;
    while (p < end) {
        const char *hit;
        if (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t m = match_bytes(w, pat);
            if (m == 0) {
                p += 8;
                continue;
            }
            hit = p + (__builtin_ctzll(m) >> 3);
        } else if (*p == sep) {
            hit = p;
        } else {
            p++;
            continue;
        }
        if (count + 1 >= max)
            goto too_many;
        fields[count].p = start;
        fields[count].n = (size_t)(hit - start);
        count++;
        start = hit + 1;
        p = hit + 1;
    }
    if (count >= max)
        goto too_many;
    fields[count].p = start;
    fields[count].n = (size_t)(end - start);
    *nfields = count + 1;
    return 0;
too_many:
    return allot_errorf(err, ALLOT_ETOOBIG, "line has more than %zu fields", max);
}

bool slt_eq(struct slt_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

bool slt_eq_nocase(struct slt_span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && strncasecmp(s.p, lit, n) == 0;
}

int slt_uint(const char *p, size_t n, uint64_t max, uint64_t *out)
{
    if (n == 0 || n > 20)
        return -1;
    uint64_t v = 0;
    if (n <= 19) {
        /* 19 digits cannot overflow 64 bits: check the digits, then the bound once. */
        for (size_t i = 0; i < n; i++) {
            unsigned d = (unsigned char)p[i] - '0';
            if (d > 9)
                return -1;
            v = v * 10 + d;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            unsigned d = (unsigned char)p[i] - '0';
            if (d > 9 || v > (UINT64_MAX - d) / 10)
                return -1;
            v = v * 10 + d;
        }
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

int slt_field_error(struct allot_error *err, const char *field, const char *what,
                    struct slt_span text)
{
    char quoted[SLT_ERRTEXT_MAX + 4];
    size_t n = text.n < SLT_ERRTEXT_MAX ? text.n : SLT_ERRTEXT_MAX;
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
