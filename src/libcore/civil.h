/* SPDX-License-Identifier: GPL-3.0-or-later */
/* civil.h - proleptic Gregorian dates from and to day numbers, and UTC times as
 * "YYYY-MM-DDTHH:MM:SSZ", by arithmetic alone.
 *
 * Why: policy periods (period.c) and usage decay resets (decay.c) need calendar arithmetic
 * on days since 1970-01-01 in any zone, and allotd formats several times in every reply;
 * gmtime_r + strftime cost ~1,200 instructions a time there (bench/results/bank.md,
 * 2026-11-25 (902b1b0)).  Era arithmetic (400-year cycles of 146,097 days, years counted from March
 * so that the leap day is last): exact for every int64 day that fits a year in int64.
 * Thread rule: pure functions.
 */
#ifndef ALLOT_LIBCORE_CIVIL_H
#define ALLOT_LIBCORE_CIVIL_H

#include <stddef.h>
#include <stdint.h>

/* "YYYY-MM-DDTHH:MM:SSZ" */
#define CIVIL_UTC_LEN 20

/* a / b rounded toward minus infinity (b > 0). */
int64_t civil_floor_div(int64_t a, int64_t b);

/* Days since 1970-01-01 of year y, month m (1..12), day d (1..31). */
int64_t civil_days(int64_t y, int m, int d);

/* The date of day number `days` (since 1970-01-01): year, month 1..12, day 1..31. */
void civil_date(int64_t days, int64_t *y, int *m, int *d);

/* UTC time t_s (epoch seconds) as "YYYY-MM-DDTHH:MM:SSZ" with its NUL into buf (at least
 * CIVIL_UTC_LEN + 1 bytes): CIVIL_UTC_LEN, or 0 (buf untouched) for a year outside
 * 0..9999. */
size_t civil_format_utc(int64_t t_s, char *buf);

#endif
