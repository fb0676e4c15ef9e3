/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * submit_token.c - making, finding and replacing hold-at-submit tokens (submit_token.h).
 * A "word" is a maximal run of non-space characters; only a word that starts with
 * "allot_token=" is ours, so "xallot_token=1" or a token inside another word is left alone.
 */
#include "plugins/common/submit_token.h"

#include <stdio.h>
#include <string.h>

int64_t submit_token_next(int64_t *last, int64_t now_s, int64_t now_us)
{
    if (now_us < 0 || now_us > 999999)
        now_us = 0;
    int64_t t = (now_s << 20) | now_us;
    if (t <= *last)
        t = *last + 1;
    if (t < SUBMIT_TOKEN_MIN)
        t = SUBMIT_TOKEN_MIN;
    *last = t;
    return t;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int is_ours(const char *w, size_t n)
{
    size_t k = sizeof(SUBMIT_TOKEN_KEY) - 1;
    return n >= k && memcmp(w, SUBMIT_TOKEN_KEY, k) == 0;
}

/* The next blank-separated word at *pp (length *len, 0 at the end); *pp moves past it. */
static const char *next_word(const char **pp, size_t *len)
{
    const char *p = *pp;
    while (*p && is_space(*p))
        p++;
    const char *w = p;
    while (*p && !is_space(*p))
        p++;
    *len = (size_t)(p - w);
    *pp = p;
    return w;
}

int submit_token_parse(const char *text, int64_t *token)
{
    const size_t k = sizeof(SUBMIT_TOKEN_KEY) - 1;
    int found = 0;
    int64_t v = 0;

    for (const char *p = text; p && *p;) {
        size_t n;
        const char *w = next_word(&p, &n);
        if (!is_ours(w, n))
            continue;
        if (found++ || n == k || n - k > 19)
            return -1;
        v = 0;
        for (size_t i = k; i < n; i++) {
            if (w[i] < '0' || w[i] > '9')
                return -1;
            int d = w[i] - '0';
            if (v > (SUBMIT_TOKEN_MAX - d) / 10) /* checked before it could overflow */
                return -1;
            v = v * 10 + d;
        }
        if (v < SUBMIT_TOKEN_MIN)
            return -1;
    }
    if (found)
        *token = v;
    return found ? 1 : 0;
}

int submit_token_annotate(const char *text, int64_t token, char *out, size_t size)
{
    size_t len = 0;

    if (size == 0)
        return -1;
    out[0] = '\0';
    for (const char *p = text; p && *p;) {
        size_t n;
        const char *w = next_word(&p, &n);
        if (n == 0 || is_ours(w, n))
            continue;
        if (len + (len ? 1 : 0) + n >= size)
            goto toolong;
        if (len)
            out[len++] = ' ';
        memcpy(out + len, w, n);
        len += n;
        out[len] = '\0';
    }
    if (token) {
        int m = snprintf(out + len, size - len, "%s%s%lld", len ? " " : "", SUBMIT_TOKEN_KEY,
                         (long long)token);
        if (m < 0 || (size_t)m >= size - len)
            goto toolong;
        len += (size_t)m;
    }
    return (int)len;
toolong:
    out[0] = '\0';
    return -1;
}
