/* SPDX-License-Identifier: GPL-3.0-or-later */
/* report.h - usage report rows like sreport's: per group (an account, user, partition or
 * resource, as the caller names it) and period (month, quarter, year or total, libcore/
 * period.h), the SU charged, the jobs, the CPU and GPU seconds, the CPU time used against
 * allocated (efficiency) and the refusals.
 *
 * Design: the caller feeds sums of settled job runs, refusals and step CPU records with the
 * group key and the instant they count at (a job at its end, a refusal at its time; libstore
 * hands them summed per UTC day); each lands in the row of (key, period of that instant), or
 * of (key, a period the caller names: an allocation's window).  Sums are exact int64
 * (SU-minutes, seconds); one that would leave int64 is refused.  Rows come out sorted by
 * key, then period.
 * Memory: the rows are allocated (libutil xalloc); report_fini frees them.
 * Thread rule: a struct report belongs to one thread.
 */
#ifndef ALLOT_LIBCORE_REPORT_H
#define ALLOT_LIBCORE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libcore/model.h"
#include "libcore/period.h"

struct report_row {
    char key[ALLOT_NAME_MAX];
    char period[PERIOD_STR_MAX]; /* "2026-07", "2026-Q3", "2026", "total", or the caller's */
    int64_t start_s, end_s;      /* the period's bounds (the caller's: as given) */
    int64_t charged_sumin;       /* the runs' charges */
    int64_t jobs;                /* settled runs */
    int64_t cpu_s, gpu_s;        /* allocated CPUs (GPUs) x elapsed seconds */
    int64_t cpu_used_s;          /* CPU time the steps recorded */
    int64_t cpu_alloc_s;         /* CPU time those steps were allocated */
    int64_t refusals;
};

struct report {
    enum period_kind kind;
    const struct period_tz *tz; /* NULL = UTC */
    struct report_row *rows;
    size_t n, cap;
};

void report_init(struct report *r, enum period_kind kind, const struct period_tz *tz);
void report_fini(struct report *r);

/* Where a sum lands: group key, and either the instant t_s (its period of the report's
 * kind) or, when label is non-NULL, the period label with its bounds [start_s, end_s). */
struct report_at {
    const char *key;
    int64_t t_s;
    const char *label; /* NULL: the period of t_s */
    int64_t start_s, end_s;
};

/* The sums of jobs settled runs of a group: their charge, CPU and GPU seconds.  Returns 0,
 * or -1 with EINVAL (a negative amount, a key or label too long, a sum leaving int64, t_s
 * outside the years 1..9999); the report is then unchanged. */
int report_add_jobs(struct report *r, const struct report_at *at, int64_t jobs,
                    int64_t charge_sumin, int64_t cpu_s, int64_t gpu_s, struct allot_error *err);
/* n refusals. */
int report_add_refusals(struct report *r, const struct report_at *at, int64_t n,
                        struct allot_error *err);
/* Steps' CPU time used and the CPU time their jobs were allocated. */
int report_add_cpu(struct report *r, const struct report_at *at, int64_t used_s, int64_t alloc_s,
                   struct allot_error *err);

/* Sort the rows by key, then by period's start. */
void report_sort(struct report *r);

#endif
