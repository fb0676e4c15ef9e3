/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacct_job.c - finished jobs of a `sacct -P` listing (sacct_job.h). */
#include "libslurmtext/sacct_job.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct slt_tz UTC = {.kind = SLT_TZ_OFFSET, .offset_s = 0};

int slt_sacct_header_parse(struct slt_span line, struct slt_sacct_header *h,
                           struct allot_error *err)
{
    struct slt_span f[SLT_FIELDS_MAX];
    size_t n = 0;
    char list[SLT_FIELDS_MAX * 24];
    size_t len = 0;
    if (slt_split(line, '|', f, SLT_FIELDS_MAX, &n, err) < 0)
        return -1;
    if (n > 1 && f[n - 1].n == 0) /* `sacct -p` ends each line with '|' */
        n--;
    struct slt_sacct_header out = {.jobid_col = (size_t)-1};
    for (size_t i = 0; i < n; i++) {
        if (f[i].n == 0 || f[i].n > 20 || len + f[i].n + 2 > sizeof list)
            return allot_errorf(err, ALLOT_EINVAL, "header: column %zu: not a sacct column name",
                                i + 1);
        if (f[i].n == 8 && strncasecmp(f[i].p, "JobIDRaw", 8) == 0)
            out.jobid_col = i;
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%.*s", i ? "," : "", (int)f[i].n,
                                f[i].p);
    }
    if (slt_acct_format_parse(list, &out.fmt, err) < 0)
        return allot_error_prefix(err, "header");
    static const enum slt_col need[] = {SLT_COL_STATE,     SLT_COL_USER,     SLT_COL_ACCOUNT,
                                        SLT_COL_PARTITION, SLT_COL_START,    SLT_COL_END,
                                        SLT_COL_ELAPSED,   SLT_COL_ALLOCTRES};
    if (out.jobid_col == (size_t)-1)
        return allot_errorf(err, ALLOT_EINVAL, "header: no JobIDRaw column (sacct -P --format=%s)",
                            SLT_SACCT_JOB_COLUMNS);
    for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
        size_t i = 0;
        while (i < out.fmt.n && out.fmt.col[i] != need[k])
            i++;
        if (i == out.fmt.n)
            return allot_errorf(err, ALLOT_EINVAL, "header: no %s column (sacct -P --format=%s)",
                                slt_col_name(need[k]), SLT_SACCT_JOB_COLUMNS);
    }
    *h = out;
    return 0;
}

int slt_sacct_job_parse(const struct slt_sacct_header *h, struct slt_span line,
                        struct slt_sacct_job *out, struct allot_error *err)
{
    struct slt_acct_row row;
    struct slt_span f[SLT_FIELDS_MAX];
    size_t n = 0;
    if (slt_acct_row_parse(&h->fmt, line, &row, err) < 0 ||
        slt_split(line, '|', f, SLT_FIELDS_MAX, &n, err) < 0)
        return -1;
    struct slt_jobid id;
    struct slt_span raw = f[h->jobid_col];
    if (slt_jobid_parse(raw.p, raw.n, "JobIDRaw", &id, err) < 0)
        return -1;
    if (id.step_kind != SLT_STEP_NONE)
        return 0; /* a step: its job's row carries the job */
    if (id.has_array_task || id.array_spec.n || id.has_het || id.job == 0)
        return slt_field_error(err, "JobIDRaw", "not a plain job id", raw);
    if (!slt_state_is_final(row.state.state) || row.start.kind != SLT_TIME_VALUE)
        return 0; /* not ended, or never ran: nothing used */
    if (row.end.kind != SLT_TIME_VALUE)
        return allot_errorf(err, ALLOT_EINVAL, "End: no end time for a finished job");
    if (row.elapsed.kind != SLT_DUR_VALUE)
        return allot_errorf(err, ALLOT_EINVAL, "Elapsed: no elapsed time for a finished job");
    memset(out, 0, sizeof *out);
    out->job_id = id.job;
    out->user = row.user;
    out->account = row.account;
    out->partition = row.partition;
    out->qos = row.qos;
    out->cluster = row.cluster;
    out->alloc_tres = row.alloc_tres;
    /* allotd's settle takes sacct's words; "CANCELLED by N" keeps its uid. */
    if (slt_state_format(&row.state, out->state, sizeof out->state, err) < 0 ||
        slt_time_to_epoch(&row.start, &UTC, &out->start_s, err) < 0 ||
        slt_time_to_epoch(&row.end, &UTC, &out->end_s, err) < 0)
        return -1;
    if (out->end_s < out->start_s)
        return allot_errorf(err, ALLOT_EINVAL, "End: before Start");
    out->elapsed_s = row.elapsed.ms / 1000;
    if (row.timelimit.kind == SLT_DUR_VALUE)
        out->time_limit_s = row.timelimit.ms / 1000;
    return 1;
}
