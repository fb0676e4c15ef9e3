/* SPDX-License-Identifier: GPL-3.0-or-later */
/* timestamp.c - parse/format Slurm timestamps and convert them under a zone rule
 * (see timestamp.h).  The fixed-offset conversion uses the proleptic Gregorian day count
 * (days from 1970-01-01), so it needs no tz database and no global state. */
#include "libslurmtext/timestamp.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "libslurmtext/field.h"

static int is_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int y, int m)
{
    static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : d[m - 1];
}

/* Days since 1970-01-01 of a civil date (the classic era-based formula). */
static int64_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int num(const char *p, size_t n, uint64_t max, int *out)
{
    uint64_t v;
    if (slt_uint(p, n, max, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

int slt_time_parse(const char *text, size_t n, const char *field, struct slt_time *out,
                   struct allot_error *err)
{
    struct slt_span s = {text, n};
    struct slt_time t;
    memset(&t, 0, sizeof(t));
    if (n == 0) {
        *out = t;
        return 0;
    }
    if (slt_eq(s, "Unknown")) {
        t.kind = SLT_TIME_UNKNOWN;
        *out = t;
        return 0;
    }
    if (slt_eq(s, "None")) {
        t.kind = SLT_TIME_NONE;
        *out = t;
        return 0;
    }
    /* YYYY-MM-DDTHH:MM:SS, exactly 19 bytes. */
    if (n != 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
        text[16] != ':')
        goto bad;
    if (num(text, 4, 9999, &t.year) < 0 || num(text + 5, 2, 12, &t.month) < 0 ||
        num(text + 8, 2, 31, &t.day) < 0 || num(text + 11, 2, 23, &t.hour) < 0 ||
        num(text + 14, 2, 59, &t.min) < 0 || num(text + 17, 2, 59, &t.sec) < 0)
        goto bad;
    if (t.year < 1970 || t.month < 1 || t.day < 1 || t.day > month_days(t.year, t.month))
        goto bad;
    t.kind = SLT_TIME_VALUE;
    *out = t;
    return 0;
bad:
    return slt_field_error(err, field, "invalid timestamp", s);
}

int slt_time_format(const struct slt_time *t, char *buf, size_t len, struct allot_error *err)
{
    char tmp[64];
    int n;
    switch (t->kind) {
    case SLT_TIME_EMPTY:
        n = 0;
        tmp[0] = '\0';
        break;
    case SLT_TIME_UNKNOWN:
        n = snprintf(tmp, sizeof(tmp), "Unknown");
        break;
    case SLT_TIME_NONE:
        n = snprintf(tmp, sizeof(tmp), "None");
        break;
    case SLT_TIME_VALUE:
        if (t->year < 1970 || t->year > 9999 || t->month < 1 || t->month > 12 || t->day < 1 ||
            t->day > month_days(t->year, t->month) || t->hour < 0 || t->hour > 23 || t->min < 0 ||
            t->min > 59 || t->sec < 0 || t->sec > 59)
            return allot_errorf(err, ALLOT_EINVAL, "timestamp: fields out of range");
        n = snprintf(tmp, sizeof(tmp), "%04d-%02d-%02dT%02d:%02d:%02d", t->year, t->month, t->day,
                     t->hour, t->min, t->sec);
        break;
    default:
        return allot_errorf(err, ALLOT_EINVAL, "timestamp: unknown kind %d", (int)t->kind);
    }
    if ((size_t)n >= len)
        return allot_errorf(err, ALLOT_ETOOBIG, "timestamp: buffer of %zu bytes too small", len);
    memcpy(buf, tmp, (size_t)n + 1);
    return n;
}

int slt_time_to_epoch(const struct slt_time *t, const struct slt_tz *tz, int64_t *epoch_s,
                      struct allot_error *err)
{
    if (t->kind != SLT_TIME_VALUE)
        return allot_errorf(err, ALLOT_EINVAL, "timestamp: no time to convert");
    if (tz->kind == SLT_TZ_OFFSET) {
        int64_t days = days_from_civil(t->year, t->month, t->day);
        *epoch_s = days * 86400 + t->hour * 3600 + t->min * 60 + t->sec - tz->offset_s;
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = t->year - 1900;
    tm.tm_mon = t->month - 1;
    tm.tm_mday = t->day;
    tm.tm_hour = t->hour;
    tm.tm_min = t->min;
    tm.tm_sec = t->sec;
    tm.tm_isdst = -1;
    time_t v = mktime(&tm);
    /* mktime normalises a time in a DST gap to another wall time: refuse it. */
    if (v == (time_t)-1 || tm.tm_hour != t->hour || tm.tm_min != t->min)
        return allot_errorf(err, ALLOT_EINVAL,
                            "timestamp: %04d-%02d-%02dT%02d:%02d:%02d does "
                            "not exist in the local time zone",
                            t->year, t->month, t->day, t->hour, t->min, t->sec);
    *epoch_s = (int64_t)v;
    return 0;
}
