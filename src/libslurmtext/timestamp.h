/* SPDX-License-Identifier: GPL-3.0-or-later */
/* timestamp.h - Slurm timestamps "2026-11-21T20:42:20", "Unknown", "None".
 *
 * sacct, sstat and squeue print times in the local time of the machine running the command
 * (Slurm formats with localtime_r; there is no zone in the text).  So parsing keeps the civil
 * fields as printed, and turning them into an instant needs a zone rule from the caller:
 * a fixed offset (exact and pure; what a cluster configured in UTC needs) or the process's
 * local zone (mktime with isdst = -1: in the repeated hour of a DST change the earlier
 * instant is not guaranteed — a documented ambiguity of the text itself).
 * Thread rule: parse/format are pure; slt_time_to_epoch with SLT_TZ_LOCAL calls mktime, which
 * reads the TZ environment (do not change TZ concurrently).
 */
#ifndef ALLOT_LIBSLURMTEXT_TIMESTAMP_H
#define ALLOT_LIBSLURMTEXT_TIMESTAMP_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

enum slt_time_kind {
    SLT_TIME_EMPTY = 0, /* empty field: no data */
    SLT_TIME_VALUE,     /* civil fields below are valid */
    SLT_TIME_UNKNOWN,   /* "Unknown": e.g. End of a running job */
    SLT_TIME_NONE,      /* "None": e.g. Start of a job cancelled while pending */
};

struct slt_time {
    enum slt_time_kind kind;
    int year;  /* 1970..9999 */
    int month; /* 1..12 */
    int day;   /* 1..31, valid for the month */
    int hour, min, sec;
};

enum slt_tz_kind {
    SLT_TZ_OFFSET = 0, /* fixed offset east of UTC, seconds (0 = UTC) */
    SLT_TZ_LOCAL,      /* the process's local zone (TZ / /etc/localtime) */
};

struct slt_tz {
    enum slt_tz_kind kind;
    int32_t offset_s;
};

/* Parse text[0..n).  Errors: ALLOT_EINVAL naming field and text; out untouched. */
int slt_time_parse(const char *text, size_t n, const char *field, struct slt_time *out,
                   struct allot_error *err);

/* Write t as Slurm prints it ("" / "Unknown" / "None" / "YYYY-MM-DDTHH:MM:SS").  Returns the
 * length or -1 (ETOOBIG/EINVAL, buf untouched).  32 bytes suffice. */
int slt_time_format(const struct slt_time *t, char *buf, size_t len, struct allot_error *err);

/* Seconds since the epoch of a VALUE time under tz.  Errors: ALLOT_EINVAL for a non-VALUE
 * time or a local time that does not exist; *epoch_s untouched on error. */
int slt_time_to_epoch(const struct slt_time *t, const struct slt_tz *tz, int64_t *epoch_s,
                      struct allot_error *err);

#endif
