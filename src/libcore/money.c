/* SPDX-License-Identifier: GPL-3.0-or-later */
/* money.c - SU-minute parsing, formatting, checked arithmetic and charges (doc/design.md §3.3). */
#include "libcore/money.h"

#include <stdio.h>
#include <string.h>

#include "libcore/numparse.h"

#define FRAC_SCALE 18 /* hours' fraction digits read exactly; 1e18 = one hour */

static const int64_t frac_one = 1000000000000000000LL;

/* "<int>[.<frac>]" hours -> minutes, refusing fractions that are not whole minutes. */
static int hours_to_min(const char *s, size_t len, int64_t *out, struct allot_error *err)
{
    const char *dot = memchr(s, '.', len);
    size_t ilen = dot ? (size_t)(dot - s) : len;
    int64_t ip = 0, fp = 0, min;

    if (ilen > 0 && numparse_uint(s, ilen, &ip) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "amount: '%.*s' is not a number of hours", (int)len,
                            s);
    if (dot && numparse_fixed(dot, len - ilen, FRAC_SCALE, &fp) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "amount: '%.*s' is not a number of hours", (int)len,
                            s);
    if (!dot && ilen == 0)
        return allot_errorf(err, ALLOT_EINVAL, "amount: missing number");
    /* fp < 1e18, so fp * 60 fits in 128 bits; it must be a whole number of minutes. */
    __int128 fm = (__int128)fp * 60;
    if (fm % frac_one != 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "amount: '%.*s' hours is not a whole number of minutes", (int)len, s);
    if (__builtin_mul_overflow(ip, 60, &min) ||
        __builtin_add_overflow(min, (int64_t)(fm / frac_one), &min))
        return allot_errorf(err, ALLOT_EINVAL, "amount: '%.*s' is too large", (int)len, s);
    *out = min;
    return 0;
}

static int parse_unsigned(const char *s, int64_t *out, struct allot_error *err)
{
    size_t len = strlen(s);
    int64_t v, m;

    if (len == 0)
        return allot_errorf(err, ALLOT_EINVAL, "amount: empty");
    if (len > 64)
        return allot_errorf(err, ALLOT_EINVAL, "amount: too long");
    const char *h = memchr(s, 'h', len);
    if (s[len - 1] == 'm' && h) {
        /* "<H>h<M>m": whole hours and 0..59 minutes, as money_format_sumin prints. */
        if (numparse_uint(s, (size_t)(h - s), &v) < 0 ||
            numparse_uint(h + 1, len - (size_t)(h - s) - 2, &m) < 0)
            return allot_errorf(err, ALLOT_EINVAL,
                                "amount: '%s' is not <hours>h<minutes>m in whole numbers", s);
        if (m >= 60)
            return allot_errorf(err, ALLOT_EINVAL, "amount: '%s': minutes must be below 60", s);
        if (__builtin_mul_overflow(v, 60, &v) || __builtin_add_overflow(v, m, &v))
            return allot_errorf(err, ALLOT_EINVAL, "amount: '%s' is too large", s);
    } else if (s[len - 1] == 'm') {
        if (numparse_fixed(s, len - 1, 0, &v) < 0)
            return allot_errorf(err, ALLOT_EINVAL,
                                "amount: '%s' is not a whole number of minutes%s", s,
                                memchr(s, '.', len) ? " (no fractions of a minute)" : "");
    } else if (s[len - 1] == 'h') {
        if (hours_to_min(s, len - 1, &v, err) < 0)
            return -1;
    } else {
        /* A bare number is hours: SU are granted in SU-hours (doc/design.md §3.1). */
        if (hours_to_min(s, len, &v, err) < 0)
            return -1;
    }
    *out = v;
    return 0;
}

int money_parse_sumin(const char *s, int64_t *out, struct allot_error *err)
{
    if (!s)
        return allot_errorf(err, ALLOT_EINVAL, "amount: missing");
    if (s[0] == '-')
        return allot_errorf(err, ALLOT_EINVAL, "amount: '%s' is negative", s);
    return parse_unsigned(s, out, err);
}

int money_parse_signed_sumin(const char *s, int64_t *out, struct allot_error *err)
{
    int64_t v = 0; /* set by parse_unsigned; initialised for -O3 flow analysis */

    if (!s)
        return allot_errorf(err, ALLOT_EINVAL, "amount: missing");
    int neg = s[0] == '-';
    if (s[0] == '-' || s[0] == '+')
        s++;
    if (s[0] == '-' || s[0] == '+')
        return allot_errorf(err, ALLOT_EINVAL, "amount: two signs");
    if (parse_unsigned(s, &v, err) < 0)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

int money_format_sumin(int64_t sumin, char *buf, size_t len)
{
    char tmp[MONEY_FORMAT_MAX];
    /* Magnitude in unsigned so INT64_MIN prints too. */
    uint64_t mag = sumin < 0 ? (uint64_t)0 - (uint64_t)sumin : (uint64_t)sumin;
    uint64_t h = mag / 60, m = mag % 60;
    int n;

    if (h && m)
        n = snprintf(tmp, sizeof(tmp), "%s%lluh%llum", sumin < 0 ? "-" : "", (unsigned long long)h,
                     (unsigned long long)m);
    else if (m)
        n = snprintf(tmp, sizeof(tmp), "%s%llum", sumin < 0 ? "-" : "", (unsigned long long)m);
    else
        n = snprintf(tmp, sizeof(tmp), "%s%lluh", sumin < 0 ? "-" : "", (unsigned long long)h);
    if (n < 0 || (size_t)n >= len)
        return -1;
    memcpy(buf, tmp, (size_t)n + 1);
    return 0;
}

int money_add(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return -1;
    *out = r;
    return 0;
}

int money_sub(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return -1;
    *out = r;
    return 0;
}

int money_mul(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return -1;
    *out = r;
    return 0;
}

/* ceil(billing_micro * seconds / (60 * 1e6)); both factors < 2^63 so the product fits in
 * an unsigned 128-bit integer. */
static int charge(const char *what, int64_t billing_micro, int64_t secs, int64_t *out,
                  struct allot_error *err)
{
    if (billing_micro < 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: billing %lld is negative", what,
                            (long long)billing_micro);
    if (secs < 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: %lld seconds is negative", what,
                            (long long)secs);
    const unsigned __int128 den = 60000000u;
    unsigned __int128 p = (unsigned __int128)billing_micro * (unsigned __int128)secs;
    unsigned __int128 q = p / den + (p % den != 0);
    if (q > (unsigned __int128)INT64_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "%s: amount overflows", what);
    *out = (int64_t)q;
    return 0;
}

int money_charge_sumin(int64_t billing_micro, int64_t elapsed_s, int64_t *out,
                       struct allot_error *err)
{
    return charge("charge", billing_micro, elapsed_s, out, err);
}

int money_format_limit(int64_t seconds, char *buf, size_t len)
{
    char tmp[48];
    if (seconds < 0)
        return -1;
    int n = seconds % 60 ? snprintf(tmp, sizeof tmp, "%lld min %lld s", (long long)(seconds / 60),
                                    (long long)(seconds % 60))
                         : snprintf(tmp, sizeof tmp, "%lld min", (long long)(seconds / 60));
    if (n < 0 || (size_t)n >= len)
        return -1;
    memcpy(buf, tmp, (size_t)n + 1);
    return 0;
}

int money_hold_sumin(int64_t billing_micro, int64_t time_limit_s, int64_t *out,
                     struct allot_error *err)
{
    return charge("hold", billing_micro, time_limit_s, out, err);
}

int money_state_free(const char *slurm_state)
{
    return strncmp(slurm_state, "NODE_FAIL", 9) == 0 &&
           (slurm_state[9] == '\0' || slurm_state[9] == ' ');
}
