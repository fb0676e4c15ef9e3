/* SPDX-License-Identifier: GPL-3.0-or-later */
/* duration.h - Slurm durations as printed by sacct, sstat, squeue and sacctmgr 22.05.
 *
 * Accepted: "[D-]HH:MM:SS", "HH:MM:SS", "MM:SS", "MM:SS.mmm" (TotalCPU/UserCPU/SystemCPU
 * below an hour), "D-HH", "D-HH:MM", a fraction ".d{1,6}" on any seconds component, a bare
 * "N" as minutes (Slurm's input convention, printed by some limits), and the words
 * UNLIMITED / INFINITE (any case), Partition_Limit and INVALID.  Empty text is "no data"
 * (SLT_DUR_NONE), never zero.  Values are kept in milliseconds (fractions below a millisecond
 * are truncated).  Components after the first must be < 60 (hours after "D-" < 24).
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_DURATION_H
#define ALLOT_LIBSLURMTEXT_DURATION_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

enum slt_duration_kind {
    SLT_DUR_NONE = 0,        /* empty field: no data */
    SLT_DUR_VALUE,           /* ms holds the value */
    SLT_DUR_UNLIMITED,       /* UNLIMITED / INFINITE */
    SLT_DUR_PARTITION_LIMIT, /* Partition_Limit: the partition's MaxTime applies */
    SLT_DUR_INVALID,         /* Slurm printed INVALID */
};

struct slt_duration {
    enum slt_duration_kind kind;
    int64_t ms; /* only for SLT_DUR_VALUE; >= 0 */
};

/* Parse text[0..n).  field names the column in error messages ("Elapsed").  Returns 0, or -1
 * with ALLOT_EINVAL naming field and text; *out untouched on error. */
int slt_duration_parse(const char *text, size_t n, const char *field, struct slt_duration *out,
                       struct allot_error *err);

/* Write d as Slurm prints it: "[D-]HH:MM:SS" plus ".mmm" when ms is not a whole second, the
 * word for the special kinds, "" for NONE.  Returns the length, or -1 with ALLOT_ETOOBIG when
 * len (with the NUL) is too small; buf is then untouched.  32 bytes always suffice. */
int slt_duration_format(const struct slt_duration *d, char *buf, size_t len,
                        struct allot_error *err);

/* Seconds of a VALUE duration, rounded down; -1 for any other kind. */
int64_t slt_duration_s(const struct slt_duration *d);

#endif
