/* SPDX-License-Identifier: GPL-3.0-or-later */
/* acct.h - rows of `sacct -P -n --format=...` and `sstat -P -n --format=...` (the two share
 * column names and value formats).
 *
 * Design: the caller states the column list once (slt_acct_format_parse, the same text it
 * passes to --format), then parses each line into a fixed struct slt_acct_row: typed values
 * for the columns allot interprets, spans into the line for text columns.  No allocation;
 * a row borrows from its line.  Columns not listed keep has/kind = "no data"; columns allot
 * does not interpret are accepted and skipped.  Empty fields are "no data", never zero.
 * Units: durations in ms, memory in bytes (a bare MaxRSS etc. is bytes, a bare ReqMem MiB,
 * as sacct prints them), counts as integers.
 * Thread rule: formats are immutable after parse and may be shared; parsing is reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_ACCT_H
#define ALLOT_LIBSLURMTEXT_ACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libslurmtext/duration.h"
#include "libslurmtext/exitcode.h"
#include "libslurmtext/field.h"
#include "libslurmtext/jobid.h"
#include "libslurmtext/memory.h"
#include "libslurmtext/state.h"
#include "libslurmtext/timestamp.h"

enum slt_col {
    SLT_COL_OTHER = 0, /* a column allot does not interpret: skipped */
    SLT_COL_JOBID,
    SLT_COL_JOBNAME,
    SLT_COL_STATE,
    SLT_COL_EXITCODE,
    SLT_COL_DERIVEDEXITCODE,
    SLT_COL_ELAPSED,
    SLT_COL_TIMELIMIT,
    SLT_COL_TOTALCPU,
    SLT_COL_USERCPU,
    SLT_COL_SYSTEMCPU,
    SLT_COL_CPUTIME,
    SLT_COL_AVECPU,
    SLT_COL_MINCPU,
    SLT_COL_MAXRSS,
    SLT_COL_AVERSS,
    SLT_COL_MAXVMSIZE,
    SLT_COL_MAXDISKREAD,
    SLT_COL_MAXDISKWRITE,
    SLT_COL_REQMEM,
    SLT_COL_ALLOCTRES,
    SLT_COL_REQTRES,
    SLT_COL_ALLOCCPUS,
    SLT_COL_NNODES,
    SLT_COL_NTASKS,
    SLT_COL_NODELIST,
    SLT_COL_START,
    SLT_COL_END,
    SLT_COL_SUBMIT,
    SLT_COL_ACCOUNT,
    SLT_COL_USER,
    SLT_COL_PARTITION,
    SLT_COL_QOS,
    SLT_COL_CLUSTER,
    SLT_COL_ELAPSEDRAW, /* whole seconds: what slurmdbd recorded (end - start - suspended) */
    SLT_COL_MAX
};

struct slt_acct_format {
    size_t n; /* number of columns */
    enum slt_col col[SLT_FIELDS_MAX];
};

struct slt_acct_row {
    bool has_id;
    struct slt_jobid id;      /* JobID */
    struct slt_span name;     /* JobName */
    struct slt_span nodelist; /* NodeList ("None assigned" kept as text) */
    struct slt_span account, user, partition, qos, cluster;
    struct slt_span alloc_tres, req_tres; /* AllocTRES, ReqTRES: see slt_acct_tres() */
    struct slt_state state;
    struct slt_exitcode exit_code, derived_exit_code;
    struct slt_duration elapsed, timelimit, total_cpu, user_cpu, system_cpu, cpu_time;
    struct slt_duration ave_cpu, min_cpu;
    struct slt_memory max_rss, ave_rss, max_vmsize, max_disk_read, max_disk_write, req_mem;
    bool has_alloc_cpus, has_nnodes, has_ntasks, has_elapsed_raw;
    uint32_t alloc_cpus, nnodes, ntasks, elapsed_raw_s;
    struct slt_time start, end, submit;
};

/* Parse a --format list ("JobID,JobName,MaxRSS", case-insensitive, ',' separated, "%N"
 * widths ignored) into *out.  Errors: ALLOT_EINVAL for an empty name, ALLOT_ETOOBIG for more
 * than SLT_FIELDS_MAX columns; out untouched. */
int slt_acct_format_parse(const char *list, struct slt_acct_format *out, struct allot_error *err);

/* Canonical Slurm spelling of a column ("JobID"); "" for SLT_COL_OTHER. */
const char *slt_col_name(enum slt_col c);

/* Parse one line (no newline) into *row.  The line must have exactly fmt->n fields, or
 * fmt->n + 1 with an empty last one (`-p` prints a trailing '|').  Errors: ALLOT_EINVAL
 * naming the column and its text ("MaxRSS: invalid memory size '12Q'"); row untouched. */
int slt_acct_row_parse(const struct slt_acct_format *fmt, struct slt_span line,
                       struct slt_acct_row *row, struct allot_error *err);

#endif
