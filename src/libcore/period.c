/* SPDX-License-Identifier: GPL-3.0-or-later */
/* period.c - period strings, civil-date arithmetic and time-zone boundaries (period.h). */
#include "libcore/period.h"

#include <stdio.h>
#include <string.h>

#include "libcore/civil.h"
#include "libcore/numparse.h"

static const char *const kind_names[] = {"month", "quarter", "year", "total"};

const char *period_kind_name(enum period_kind k)
{
    return (k >= PERIOD_MONTH && k <= PERIOD_TOTAL) ? kind_names[k] : "?";
}

int period_kind_parse(const char *s, enum period_kind *out)
{
    for (int i = 0; i <= PERIOD_TOTAL; i++) {
        if (s && strcmp(s, kind_names[i]) == 0) {
            *out = (enum period_kind)i;
            return 0;
        }
    }
    return -1;
}

static int valid(const struct period *p)
{
    switch (p->kind) {
    case PERIOD_MONTH:
        return p->year >= 1 && p->year <= 9999 && p->index >= 1 && p->index <= 12;
    case PERIOD_QUARTER:
        return p->year >= 1 && p->year <= 9999 && p->index >= 1 && p->index <= 4;
    case PERIOD_YEAR:
        return p->year >= 1 && p->year <= 9999 && p->index == 0;
    case PERIOD_TOTAL:
        return p->year == 0 && p->index == 0;
    }
    return 0;
}

static int64_t offset(const struct period_tz *tz, int64_t utc_s)
{
    return (tz && tz->utc_offset_s) ? tz->utc_offset_s(utc_s, tz->arg) : 0;
}

/* UTC instant of a local wall-clock time.  The offsets in force two days before and two
 * days after give the two candidates (equal away from a transition); a candidate is right
 * when mapping it back gives local_s.  Overlap: the earlier right one.  Gap: neither is
 * right; take the later, the wall time moved forward by the gap as mktime() does. */
static int64_t local_to_utc(int64_t local_s, const struct period_tz *tz)
{
    int64_t a = local_s - offset(tz, local_s - 2 * 86400);
    int64_t b = local_s - offset(tz, local_s + 2 * 86400);
    int a_ok = a + offset(tz, a) == local_s, b_ok = b + offset(tz, b) == local_s;

    if (a_ok && b_ok)
        return a < b ? a : b;
    if (a_ok)
        return a;
    if (b_ok)
        return b;
    return a > b ? a : b;
}

int period_parse(const char *s, struct period *out, struct allot_error *err)
{
    struct period p = {0};
    int64_t y, i;

    if (!s)
        return allot_errorf(err, ALLOT_EINVAL, "period: missing");
    size_t len = strlen(s);
    if (strcmp(s, "total") == 0) {
        p.kind = PERIOD_TOTAL;
    } else if (len == 4 && numparse_uint(s, 4, &y) == 0) {
        p.kind = PERIOD_YEAR;
        p.year = (int)y;
    } else if (len == 7 && s[4] == '-' && numparse_uint(s, 4, &y) == 0 &&
               numparse_uint(s + 5, 2, &i) == 0) {
        p.kind = PERIOD_MONTH;
        p.year = (int)y;
        p.index = (int)i;
    } else if (len == 7 && s[4] == '-' && (s[5] == 'Q' || s[5] == 'q') &&
               numparse_uint(s, 4, &y) == 0 && numparse_uint(s + 6, 1, &i) == 0) {
        p.kind = PERIOD_QUARTER;
        p.year = (int)y;
        p.index = (int)i;
    } else {
        return allot_errorf(err, ALLOT_EINVAL,
                            "period: '%.32s' is not YYYY-MM, YYYY-Qn, YYYY or total", s);
    }
    if (!valid(&p))
        return allot_errorf(err, ALLOT_EINVAL, "period: '%s' is out of range", s);
    *out = p;
    return 0;
}

int period_format(const struct period *p, char *buf, size_t len, struct allot_error *err)
{
    char tmp[PERIOD_STR_MAX];

    if (!valid(p))
        return allot_errorf(err, ALLOT_EINVAL, "period: invalid period");
    switch (p->kind) {
    case PERIOD_MONTH:
        snprintf(tmp, sizeof(tmp), "%04d-%02d", p->year, p->index);
        break;
    case PERIOD_QUARTER:
        snprintf(tmp, sizeof(tmp), "%04d-Q%d", p->year, p->index);
        break;
    case PERIOD_YEAR:
        snprintf(tmp, sizeof(tmp), "%04d", p->year);
        break;
    default:
        snprintf(tmp, sizeof(tmp), "total");
        break;
    }
    if (strlen(tmp) + 1 > len)
        return allot_errorf(err, ALLOT_ETOOBIG, "period: buffer too small");
    memcpy(buf, tmp, strlen(tmp) + 1);
    return 0;
}

int period_of(enum period_kind kind, int64_t utc_s, const struct period_tz *tz, struct period *out,
              struct allot_error *err)
{
    struct period p = {.kind = kind};
    int64_t off = offset(tz, utc_s), local, y;
    int m, d;

    if (kind < PERIOD_MONTH || kind > PERIOD_TOTAL)
        return allot_errorf(err, ALLOT_EINVAL, "period: unknown kind %d", (int)kind);
    if (kind == PERIOD_TOTAL) {
        *out = p;
        return 0;
    }
    /* Years 1..9999 span about +-3.2e11 s; anything beyond cannot be a valid period. */
    if (utc_s < -70000000000LL || utc_s > 260000000000LL || off < -200000 || off > 200000)
        return allot_errorf(err, ALLOT_EINVAL, "period: time %lld out of range", (long long)utc_s);
    local = utc_s + off;
    civil_date(civil_floor_div(local, 86400), &y, &m, &d);
    p.year = (int)y;
    p.index = kind == PERIOD_MONTH ? m : kind == PERIOD_QUARTER ? (m - 1) / 3 + 1 : 0;
    if (!valid(&p))
        return allot_errorf(err, ALLOT_EINVAL, "period: time %lld out of range", (long long)utc_s);
    *out = p;
    return 0;
}

int period_next(const struct period *p, struct period *out, struct allot_error *err)
{
    struct period q = *p;

    if (!valid(p) || p->kind == PERIOD_TOTAL)
        return allot_errorf(err, ALLOT_EINVAL, "period: %s has no next period",
                            valid(p) ? "total" : "an invalid period");
    int per_year = p->kind == PERIOD_MONTH ? 12 : p->kind == PERIOD_QUARTER ? 4 : 0;
    if (per_year == 0) {
        q.year++;
    } else if (++q.index > per_year) {
        q.index = 1;
        q.year++;
    }
    if (!valid(&q))
        return allot_errorf(err, ALLOT_EINVAL, "period: beyond years 1..9999");
    *out = q;
    return 0;
}

/* Local midnight opening p, as UTC. */
static int64_t start_of(const struct period *p, const struct period_tz *tz)
{
    int m = p->kind == PERIOD_MONTH     ? p->index
            : p->kind == PERIOD_QUARTER ? (p->index - 1) * 3 + 1
                                        : 1;
    return local_to_utc(civil_days(p->year, m, 1) * 86400, tz);
}

int period_start_utc(const struct period *p, const struct period_tz *tz, int64_t *start_s,
                     struct allot_error *err)
{
    if (!valid(p))
        return allot_errorf(err, ALLOT_EINVAL, "period: invalid period");
    *start_s = p->kind == PERIOD_TOTAL ? INT64_MIN : start_of(p, tz);
    return 0;
}

int period_end_utc(const struct period *p, const struct period_tz *tz, int64_t *end_s,
                   struct allot_error *err)
{
    if (!valid(p))
        return allot_errorf(err, ALLOT_EINVAL, "period: invalid period");
    if (p->kind == PERIOD_TOTAL) {
        *end_s = INT64_MAX;
        return 0;
    }
    struct period n = *p;
    /* The end of 9999 is 10000-01-01, one past the last valid period: compute it directly. */
    if (period_next(p, &n, NULL) < 0) {
        *end_s = local_to_utc(civil_days(10000, 1, 1) * 86400, tz);
        return 0;
    }
    *end_s = start_of(&n, tz);
    return 0;
}
