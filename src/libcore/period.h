/* SPDX-License-Identifier: GPL-3.0-or-later */
/* period.h - policy periods (doc/design.md §5.2): month "2026-07", quarter "2026-Q3", year "2026",
 * and the single-shot "total".
 *
 * Design: a period is a (kind, year, index) value.  Boundaries are local midnights in the
 * policy's time zone, returned as UTC seconds.  libcore reads no clock and no tz database:
 * the caller passes a struct period_tz whose callback gives the zone's UTC offset at a UTC
 * instant (allotd implements it with localtime_r under TZ); NULL means UTC.  A local time is
 * turned into UTC with the offsets in force around it; in a DST gap the result is the
 * wall time moved forward by the gap (as mktime does), in an overlap the earlier instant.
 * "total" has no boundaries: its start is INT64_MIN and its end INT64_MAX.
 * Invariants: month index 1..12, quarter 1..4, year/total index 0; year 1..9999.
 * Thread rule: reentrant if the callback is.
 */
#ifndef ALLOT_LIBCORE_PERIOD_H
#define ALLOT_LIBCORE_PERIOD_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

enum period_kind { PERIOD_MONTH = 0, PERIOD_QUARTER, PERIOD_YEAR, PERIOD_TOTAL };

#define PERIOD_STR_MAX 16

struct period {
    enum period_kind kind;
    int year;  /* 1..9999; 0 for total */
    int index; /* month 1..12, quarter 1..4, else 0 */
};

struct period_tz {
    /* Seconds to add to UTC to get local time at utc_s (e.g. +7200 for CEST). */
    int64_t (*utc_offset_s)(int64_t utc_s, void *arg);
    void *arg;
};

/* Names of kinds ("month", "quarter", "year", "total") and their inverse (-1 if unknown). */
const char *period_kind_name(enum period_kind k);
int period_kind_parse(const char *s, enum period_kind *out);

/* Parse "2026-07", "2026-Q3" (q case-insensitive), "2026" or "total".
 * Errors: ALLOT_EINVAL; *out untouched. */
int period_parse(const char *s, struct period *out, struct allot_error *err);

/* Format as period_parse reads it.  Errors: ALLOT_EINVAL (invalid p), ALLOT_ETOOBIG (buf). */
int period_format(const struct period *p, char *buf, size_t len, struct allot_error *err);

/* The period of kind containing instant utc_s in zone tz (NULL = UTC).
 * Errors: ALLOT_EINVAL when the local date falls outside years 1..9999. */
int period_of(enum period_kind kind, int64_t utc_s, const struct period_tz *tz, struct period *out,
              struct allot_error *err);

/* The following period.  Errors: ALLOT_EINVAL for total or past 1..9999. */
int period_next(const struct period *p, struct period *out, struct allot_error *err);

/* First instant (inclusive) and end (exclusive, = next period's start) in UTC seconds. */
int period_start_utc(const struct period *p, const struct period_tz *tz, int64_t *start_s,
                     struct allot_error *err);
int period_end_utc(const struct period *p, const struct period_tz *tz, int64_t *end_s,
                   struct allot_error *err);

#endif
