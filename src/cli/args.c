/* SPDX-License-Identifier: GPL-3.0-or-later */
/* args.c - key=value words and typed values of the CLI (args.h).
 *
 * Amounts are parsed by libcore's money module (the one SU syntax shared with allotd);
 * dates are read field by field and checked against the calendar (2026-02-30 is refused)
 * by converting with timegm and comparing back.
 */
#include "cli/args.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "libcore/civil.h"
#include "libcore/money.h"

static int key_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

int args_split(int argc, char **argv, const char **pos, int max_pos, int *npos, struct kvlist *kvs,
               struct allot_error *err)
{
    int np = 0;
    struct kvlist out = {.n = 0};

    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        const char *eq = strchr(w, '=');
        size_t klen = eq ? (size_t)(eq - w) : 0;
        int is_kv = eq != NULL;

        for (size_t j = 0; is_kv && j < klen; j++)
            if (!key_char(w[j]))
                is_kv = 0;
        if (is_kv && klen == 0)
            return allot_errorf(err, ALLOT_EINVAL, "'%s': missing key before '='", w);
        if (!is_kv) {
            if (np >= max_pos)
                return allot_errorf(err, ALLOT_EINVAL, "unexpected argument '%s'", w);
            pos[np++] = w;
            continue;
        }
        if (klen >= sizeof(out.kv[0].key))
            return allot_errorf(err, ALLOT_EINVAL, "'%.*s': key too long", (int)klen, w);
        if (out.n >= ARGS_MAX_KV)
            return allot_errorf(err, ALLOT_EINVAL, "more than %d key=value arguments", ARGS_MAX_KV);
        struct kv *kv = &out.kv[out.n];
        for (size_t j = 0; j < klen; j++)
            kv->key[j] = (char)tolower((unsigned char)w[j]);
        kv->key[klen] = '\0';
        kv->value = eq + 1;
        kv->used = 0;
        for (int j = 0; j < out.n; j++)
            if (strcmp(out.kv[j].key, kv->key) == 0)
                return allot_errorf(err, ALLOT_EINVAL, "%s: given twice", kv->key);
        out.n++;
    }
    *npos = np;
    *kvs = out;
    return 0;
}

const char *args_get(struct kvlist *kvs, const char *key)
{
    for (int i = 0; i < kvs->n; i++) {
        if (strcmp(kvs->kv[i].key, key) == 0) {
            kvs->kv[i].used = 1;
            return kvs->kv[i].value;
        }
    }
    return NULL;
}

int args_check_used(const struct kvlist *kvs, const char *what, struct allot_error *err)
{
    for (int i = 0; i < kvs->n; i++)
        if (!kvs->kv[i].used)
            return allot_errorf(err, ALLOT_EINVAL, "unknown key '%s' for '%s' (see --help)",
                                kvs->kv[i].key, what);
    return 0;
}

int args_amount(const char *key, const char *s, int signed_ok, int64_t *sumin,
                struct allot_error *err)
{
    struct allot_error e = {0};
    int64_t v;
    int rc = signed_ok ? money_parse_signed_sumin(s, &v, &e) : money_parse_sumin(s, &v, &e);
    if (rc < 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: %s", key, e.msg);
    *sumin = v;
    return 0;
}

/* Read exactly n digits at *p into *out and advance. */
static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

int args_time(const char *key, const char *s, int64_t *epoch_s, struct allot_error *err)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, sec = 0;
    struct tm tm = {0};
    time_t t;

    if (!s || !*s)
        return allot_errorf(err, ALLOT_EINVAL, "%s: empty time", key);
    size_t n = strlen(s);
    if (strspn(s, "0123456789") == n) {
        int64_t v;
        /* 253402300799 = 9999-12-31T23:59:59Z: the documented range, and what
         * args_format_time can write back as a date. */
        if (n > 12 || args_uint(key, s, &v, err) < 0 || v > INT64_C(253402300799))
            return allot_errorf(err, ALLOT_EINVAL, "%s: epoch seconds out of range", key);
        *epoch_s = v;
        return 0;
    }
    if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 || *p++ != '-' ||
        digits(&p, 2, &d) < 0)
        goto bad;
    if (*p == 'T' || *p == ' ') {
        p++;
        if (digits(&p, 2, &h) < 0 || *p++ != ':' || digits(&p, 2, &mi) < 0)
            goto bad;
        if (*p == ':') {
            p++;
            if (digits(&p, 2, &sec) < 0)
                goto bad;
        }
        if (*p == 'Z')
            p++;
    }
    if (*p)
        goto bad;
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
        goto range;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    t = timegm(&tm);
    /* timegm normalises 02-30 to 03-02: a changed day means the date does not exist. */
    if (t == (time_t)-1 || tm.tm_mday != d || tm.tm_mon != mo - 1)
        goto range;
    *epoch_s = (int64_t)t;
    return 0;
bad:
    return allot_errorf(err, ALLOT_EINVAL,
                        "%s: '%s': expected YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS]Z or epoch seconds",
                        key, s);
range:
    return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is not a valid date and time", key, s);
}

/* Slurm's time syntax as seconds; min_s is the smallest value accepted (1 for a limit, 0
 * for an elapsed time: Slurm reports 00:00:00 for a job cancelled as it started). */
static int duration(const char *key, const char *s, int64_t min_s, int64_t *seconds,
                    struct allot_error *err)
{
    int64_t parts[4] = {0};
    int np = 0, days = 0;
    int64_t total, dval = 0;
    const char *p = s;
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > 32)
        goto bad;
    if (s[n - 1] == 's') {
        char num[33];
        memcpy(num, s, n - 1);
        num[n - 1] = '\0';
        if (args_uint(key, num, &total, NULL) < 0)
            goto bad;
        goto check;
    }
    const char *dash = strchr(s, '-');
    if (dash) {
        char num[33];
        memcpy(num, s, (size_t)(dash - s));
        num[dash - s] = '\0';
        if (args_uint(key, num, &dval, NULL) < 0 || dval > 365)
            goto bad;
        days = 1;
        p = dash + 1;
    }
    for (;;) {
        int64_t v = 0;
        int nd = 0;
        while (isdigit((unsigned char)*p) && nd < 9) {
            v = v * 10 + (*p++ - '0');
            nd++;
        }
        if (nd == 0 || np >= 3)
            goto bad;
        parts[np++] = v;
        if (*p == ':') {
            p++;
            continue;
        }
        if (*p)
            goto bad;
        break;
    }
    if (days) { /* D-HH, D-HH:MM, D-HH:MM:SS */
        int64_t hh = parts[0], mm = np > 1 ? parts[1] : 0, ss = np > 2 ? parts[2] : 0;
        if (hh > 23 || mm > 59 || ss > 59)
            goto bad;
        total = dval * 86400 + hh * 3600 + mm * 60 + ss;
    } else if (np == 1) { /* MM */
        total = parts[0] * 60;
    } else if (np == 2) { /* MM:SS */
        if (parts[1] > 59)
            goto bad;
        total = parts[0] * 60 + parts[1];
    } else { /* HH:MM:SS */
        if (parts[1] > 59 || parts[2] > 59)
            goto bad;
        total = parts[0] * 3600 + parts[1] * 60 + parts[2];
    }
check:
    if (total < min_s || total > 366LL * 86400)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%s': must be between %lld s and 366 days", key,
                            s, (long long)min_s);
    *seconds = total;
    return 0;
bad:
    return allot_errorf(err, ALLOT_EINVAL,
                        "%s: '%s': expected minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]] or <N>s", key,
                        s ? s : "");
}

int args_duration(const char *key, const char *s, int64_t *seconds, struct allot_error *err)
{
    return duration(key, s, 1, seconds, err);
}

int args_elapsed(const char *key, const char *s, int64_t *seconds, struct allot_error *err)
{
    return duration(key, s, 0, seconds, err);
}

int args_timelimit(const char *key, const char *s, int64_t *seconds, struct allot_error *err)
{
    /* The words Slurm prints and takes for "not set" (scontrol, sacctmgr); the API's
     * unit for it is -1, which `partition show` prints back as Slurm does: UNLIMITED for
     * a MaxTime, NONE for a DefaultTime. */
    if (s && (!*s || !strcasecmp(s, "UNLIMITED") || !strcasecmp(s, "INFINITE") ||
              !strcasecmp(s, "NONE"))) {
        *seconds = -1;
        return 0;
    }
    if (duration(key, s, 1, seconds, NULL) == 0)
        return 0;
    return allot_errorf(err, ALLOT_EINVAL,
                        "%s: '%s': expected minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]], <N>s or "
                        "UNLIMITED",
                        key, s ? s : "");
}

int args_uint(const char *key, const char *s, int64_t *out, struct allot_error *err)
{
    int64_t v = 0;
    if (!s || !*s)
        return allot_errorf(err, ALLOT_EINVAL, "%s: expected a number", key);
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is not a non-negative integer", key,
                                s);
        if (v > (INT64_MAX - (*p - '0')) / 10)
            return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is too large", key, s);
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

int args_bool(const char *key, const char *s, int *out, struct allot_error *err)
{
    static const char *const yes[] = {"yes", "true", "1", "on"};
    static const char *const no[] = {"no", "false", "0", "off"};
    for (size_t i = 0; s && i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return allot_errorf(err, ALLOT_EINVAL, "%s: expected yes or no", key);
}

int args_decimal(const char *key, const char *s, struct allot_error *err)
{
    const char *p = s;
    int intd = 0, fracd = 0;
    while (p && isdigit((unsigned char)*p) && intd < 12) {
        p++;
        intd++;
    }
    if (p && *p == '.') {
        p++;
        while (isdigit((unsigned char)*p) && fracd < 7) {
            p++;
            fracd++;
        }
        if (fracd == 0)
            intd = 0;
    }
    if (!p || *p || intd == 0 || fracd > 6)
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: '%s': expected a decimal number such as 1 or 1.5", key,
                            s ? s : "");
    return 0;
}

void args_format_time(int64_t epoch_s, char *buf, size_t len)
{
    char text[CIVIL_UTC_LEN + 1];
    if (!civil_format_utc(epoch_s, text))
        snprintf(buf, len, "%lld", (long long)epoch_s);
    else
        snprintf(buf, len, "%s", text);
}
