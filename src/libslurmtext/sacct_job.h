/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacct_job.h - finished jobs from a `sacct -P` listing, as `allot import sacct` loads them
 * (doc/adopt.md "Bring the history").
 *
 * Design: the listing starts with sacct's header line (`sacct -P` prints one; its column
 * names say the order), then one row per job or step.  The header must name the columns
 * allot needs (SLT_SACCT_JOB_COLUMNS); others are accepted and skipped.  Each row becomes a
 * struct slt_sacct_job, or is passed over: a step row ("12.batch"), a job that has not ended
 * (no final state) or never started (no Start).  Row parsing borrows from the line and
 * allocates nothing, so the CLI's check of a whole file and allotd's import of a batch run
 * the same code.
 * Thread rule: a parsed header is immutable; parsing rows is reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_SACCT_JOB_H
#define ALLOT_LIBSLURMTEXT_SACCT_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libslurmtext/acct.h"

/* The columns a listing must have, in the order `allot import sacct` asks sacct for them
 * (sacct --format=...).  QOS, Timelimit and Cluster are read when present. */
#define SLT_SACCT_JOB_REQUIRED "JobIDRaw,State,User,Account,Partition,Start,End,Elapsed,AllocTRES"
#define SLT_SACCT_JOB_COLUMNS SLT_SACCT_JOB_REQUIRED ",QOS,Timelimit"

struct slt_sacct_header {
    struct slt_acct_format fmt;
    size_t jobid_col; /* index of JobIDRaw */
};

struct slt_sacct_job {
    uint32_t job_id; /* JobIDRaw (an array task's own id) */
    struct slt_span user, account, partition, qos, cluster, alloc_tres;
    char state[48];                  /* as allotd's settle takes it: "COMPLETED", "CANCELLED" */
    int64_t start_s, end_s;          /* UTC epoch seconds (sacct run with TZ=UTC0) */
    int64_t elapsed_s, time_limit_s; /* time_limit_s 0: not known */
};

/* Parse the header line ("JobIDRaw|State|..."); -1 with err (EINVAL) naming a missing
 * required column or a bad name. */
int slt_sacct_header_parse(struct slt_span line, struct slt_sacct_header *h,
                           struct allot_error *err);

/* Parse one row: 1 with *out for a finished job, 0 for a row passed over (see top), -1 with
 * err (EINVAL) naming the column and its text.  Times are read as UTC. */
int slt_sacct_job_parse(const struct slt_sacct_header *h, struct slt_span line,
                        struct slt_sacct_job *out, struct allot_error *err);

#endif
