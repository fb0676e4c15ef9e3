/* SPDX-License-Identifier: GPL-3.0-or-later */
/* numparse.c - exact decimal scanning and printing for libcore (see numparse.h). */
#include "libcore/numparse.h"

#include <stdio.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int numparse_uint(const char *s, size_t len, int64_t *out)
{
    int64_t v = 0;

    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return -1;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
            return -1;
    }
    *out = v;
    return 0;
}

int numparse_fixed(const char *s, size_t len, int scale, int64_t *out)
{
    size_t dot = len;
    int64_t ip = 0, fp = 0;
    int nfrac = 0;

    if (scale < 0 || scale > 18 || len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            dot = i;
            break;
        }
    }
    /* Integer part: may be empty only when a fraction follows (".5"). */
    if (dot > 0 && numparse_uint(s, dot, &ip) < 0)
        return -1;
    if (dot < len) {
        size_t flen = len - dot - 1;
        if (dot == 0 && flen == 0)
            return -1;
        for (size_t i = 0; i < flen; i++) {
            char c = s[dot + 1 + i];
            if (!is_digit(c))
                return -1;
            if (nfrac < scale) {
                fp = fp * 10 + (c - '0');
                nfrac++;
            } else if (c != '0') {
                return -1; /* more precision than the fixed point holds: refuse, never round */
            }
        }
    }
    for (; nfrac < scale; nfrac++)
        fp *= 10;
    int64_t mult = 1;
    for (int i = 0; i < scale; i++)
        mult *= 10;
    int64_t v;
    if (__builtin_mul_overflow(ip, mult, &v) || __builtin_add_overflow(v, fp, &v))
        return -1;
    *out = v;
    return 0;
}

int numparse_format_fixed(int64_t v, int scale, char *buf, size_t len)
{
    int64_t mult = 1;
    int n;

    if (len > 0)
        buf[0] = '\0';
    if (v < 0 || scale < 0 || scale > 18)
        return -1;
    for (int i = 0; i < scale; i++)
        mult *= 10;
    int64_t ip = v / mult, fp = v % mult;
    if (fp == 0) {
        n = snprintf(buf, len, "%lld", (long long)ip);
    } else {
        int digits = scale;
        while (fp % 10 == 0) {
            fp /= 10;
            digits--;
        }
        n = snprintf(buf, len, "%lld.%0*lld", (long long)ip, digits, (long long)fp);
    }
    if (n < 0 || (size_t)n >= len) {
        if (len > 0)
            buf[0] = '\0';
        return -1;
    }
    return n;
}
