/* SPDX-License-Identifier: GPL-3.0-or-later */
/* acct.h - rows of `sacct -P -n --format=...` and `sstat -P -n --format=...` (the two share
 * column names and value formats).
 *
 * Design: the caller states the column list once (st_acct_format_parse, the same text it
 * passes to --format), then parses each line into a fixed struct st_acct_row: typed values
 * for the columns allot interprets, spans into the line for text columns.  No allocation;
 * a row borrows from its line.  Columns not listed keep has/kind = "no data"; columns allot
 * does not interpret are accepted and skipped.  Empty fields are "no data", never zero.
 * Units: durations in ms, memory in bytes (a bare MaxRSS etc. is bytes, a bare ReqMem MiB,
 * as sacct prints them), counts as integers.
 * Thread rule: formats are immutable after parse and may be shared; parsing is reentrant.
 */
#ifndef ALLOT_SLURMTEXT_ACCT_H
#define ALLOT_SLURMTEXT_ACCT_H

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

enum st_col {
    ST_COL_OTHER = 0, /* a column allot does not interpret: skipped */
    ST_COL_JOBID,
    ST_COL_JOBNAME,
    ST_COL_STATE,
    ST_COL_EXITCODE,
    ST_COL_DERIVEDEXITCODE,
    ST_COL_ELAPSED,
    ST_COL_TIMELIMIT,
    ST_COL_TOTALCPU,
    ST_COL_USERCPU,
    ST_COL_SYSTEMCPU,
    ST_COL_CPUTIME,
    ST_COL_AVECPU,
    ST_COL_MINCPU,
    ST_COL_MAXRSS,
    ST_COL_AVERSS,
    ST_COL_MAXVMSIZE,
    ST_COL_MAXDISKREAD,
    ST_COL_MAXDISKWRITE,
    ST_COL_REQMEM,
    ST_COL_ALLOCTRES,
    ST_COL_REQTRES,
    ST_COL_ALLOCCPUS,
    ST_COL_NNODES,
    ST_COL_NTASKS,
    ST_COL_NODELIST,
    ST_COL_START,
    ST_COL_END,
    ST_COL_SUBMIT,
    ST_COL_ACCOUNT,
    ST_COL_USER,
    ST_COL_PARTITION,
    ST_COL_QOS,
    ST_COL_CLUSTER,
    ST_COL_ELAPSEDRAW, /* whole seconds: what slurmdbd recorded (end - start - suspended) */
    ST_COL_MAX
};

struct st_acct_format {
    size_t n;                      /* number of columns */
    enum st_col col[ST_FIELDS_MAX];
};

struct st_acct_row {
    bool has_id;
    struct st_jobid id;                  /* JobID */
    struct st_span name;                 /* JobName */
    struct st_span nodelist;             /* NodeList ("None assigned" kept as text) */
    struct st_span account, user, partition, qos, cluster;
    struct st_span alloc_tres, req_tres; /* AllocTRES, ReqTRES: see st_acct_tres() */
    struct st_state state;
    struct st_exitcode exit_code, derived_exit_code;
    struct st_duration elapsed, timelimit, total_cpu, user_cpu, system_cpu, cpu_time;
    struct st_duration ave_cpu, min_cpu;
    struct st_memory max_rss, ave_rss, max_vmsize, max_disk_read, max_disk_write, req_mem;
    bool has_alloc_cpus, has_nnodes, has_ntasks, has_elapsed_raw;
    uint32_t alloc_cpus, nnodes, ntasks, elapsed_raw_s;
    struct st_time start, end, submit;
};

/* Parse a --format list ("JobID,JobName,MaxRSS", case-insensitive, ',' separated, "%N"
 * widths ignored) into *out.  Errors: ALLOT_EINVAL for an empty name, ALLOT_ETOOBIG for more
 * than ST_FIELDS_MAX columns; out untouched. */
int st_acct_format_parse(const char *list, struct st_acct_format *out, struct allot_error *err);

/* Canonical Slurm spelling of a column ("JobID"); "" for ST_COL_OTHER. */
const char *st_col_name(enum st_col c);

/* Parse one line (no newline) into *row.  The line must have exactly fmt->n fields, or
 * fmt->n + 1 with an empty last one (`-p` prints a trailing '|').  Errors: ALLOT_EINVAL
 * naming the column and its text ("MaxRSS: invalid memory size '12Q'"); row untouched. */
int st_acct_row_parse(const struct st_acct_format *fmt, struct st_span line,
                      struct st_acct_row *row, struct allot_error *err);

#endif
