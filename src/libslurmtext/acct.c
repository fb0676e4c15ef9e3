/* SPDX-License-Identifier: GPL-3.0-or-later */
/* acct.c - sacct/sstat column table and row parser (see acct.h).
 * The row is built in a local struct and copied out only when every field parsed, so a bad
 * line leaves the caller's row untouched. */
#include "libslurmtext/acct.h"

#include <string.h>
#include <strings.h>

static const char *const col_names[SLT_COL_MAX] = {
    [SLT_COL_OTHER] = "",
    [SLT_COL_JOBID] = "JobID",
    [SLT_COL_JOBNAME] = "JobName",
    [SLT_COL_STATE] = "State",
    [SLT_COL_EXITCODE] = "ExitCode",
    [SLT_COL_DERIVEDEXITCODE] = "DerivedExitCode",
    [SLT_COL_ELAPSED] = "Elapsed",
    [SLT_COL_TIMELIMIT] = "Timelimit",
    [SLT_COL_TOTALCPU] = "TotalCPU",
    [SLT_COL_USERCPU] = "UserCPU",
    [SLT_COL_SYSTEMCPU] = "SystemCPU",
    [SLT_COL_CPUTIME] = "CPUTime",
    [SLT_COL_AVECPU] = "AveCPU",
    [SLT_COL_MINCPU] = "MinCPU",
    [SLT_COL_MAXRSS] = "MaxRSS",
    [SLT_COL_AVERSS] = "AveRSS",
    [SLT_COL_MAXVMSIZE] = "MaxVMSize",
    [SLT_COL_MAXDISKREAD] = "MaxDiskRead",
    [SLT_COL_MAXDISKWRITE] = "MaxDiskWrite",
    [SLT_COL_REQMEM] = "ReqMem",
    [SLT_COL_ALLOCTRES] = "AllocTRES",
    [SLT_COL_REQTRES] = "ReqTRES",
    [SLT_COL_ALLOCCPUS] = "AllocCPUS",
    [SLT_COL_NNODES] = "NNodes",
    [SLT_COL_NTASKS] = "NTasks",
    [SLT_COL_NODELIST] = "NodeList",
    [SLT_COL_START] = "Start",
    [SLT_COL_END] = "End",
    [SLT_COL_SUBMIT] = "Submit",
    [SLT_COL_ACCOUNT] = "Account",
    [SLT_COL_ELAPSEDRAW] = "ElapsedRaw",
    [SLT_COL_USER] = "User",
    [SLT_COL_PARTITION] = "Partition",
    [SLT_COL_QOS] = "QOS",
    [SLT_COL_CLUSTER] = "Cluster",
};

const char *slt_col_name(enum slt_col c)
{
    if ((int)c < 0 || c >= SLT_COL_MAX)
        return "";
    return col_names[c];
}

int slt_acct_format_parse(const char *list, struct slt_acct_format *out, struct allot_error *err)
{
    struct slt_acct_format f;
    struct slt_span parts[SLT_FIELDS_MAX];
    size_t n;
    struct slt_span all = {list, strlen(list)};
    if (slt_split(all, ',', parts, SLT_FIELDS_MAX, &n, err) < 0)
        return -1;
    f.n = n;
    for (size_t i = 0; i < n; i++) {
        struct slt_span name = parts[i];
        const char *pct = memchr(name.p, '%', name.n);
        if (pct)
            name.n = (size_t)(pct - name.p);
        if (name.n == 0)
            return allot_errorf(err, ALLOT_EINVAL, "format: empty column name at position %zu",
                                i + 1);
        f.col[i] = SLT_COL_OTHER;
        for (int c = 1; c < SLT_COL_MAX; c++) {
            if (slt_eq_nocase(name, col_names[c])) {
                f.col[i] = (enum slt_col)c;
                break;
            }
        }
    }
    *out = f;
    return 0;
}

static int parse_u32(struct slt_span v, const char *field, bool *has, uint32_t *out,
                     struct allot_error *err)
{
    uint64_t x;
    if (v.n == 0) {
        *has = false;
        *out = 0;
        return 0;
    }
    if (slt_uint(v.p, v.n, UINT32_MAX, &x) < 0)
        return slt_field_error(err, field, "invalid count", v);
    *has = true;
    *out = (uint32_t)x;
    return 0;
}

static int parse_field(enum slt_col c, struct slt_span v, struct slt_acct_row *r,
                       struct allot_error *err)
{
    const char *name = col_names[c];
    switch (c) {
    case SLT_COL_OTHER:
        return 0;
    case SLT_COL_JOBID:
        if (v.n == 0)
            return slt_field_error(err, name, "missing job id", v);
        r->has_id = true;
        return slt_jobid_parse(v.p, v.n, name, &r->id, err);
    case SLT_COL_JOBNAME:
        r->name = v;
        return 0;
    case SLT_COL_NODELIST:
        r->nodelist = v;
        return 0;
    case SLT_COL_ACCOUNT:
        r->account = v;
        return 0;
    case SLT_COL_USER:
        r->user = v;
        return 0;
    case SLT_COL_PARTITION:
        r->partition = v;
        return 0;
    case SLT_COL_QOS:
        r->qos = v;
        return 0;
    case SLT_COL_CLUSTER:
        r->cluster = v;
        return 0;
    case SLT_COL_ALLOCTRES:
        r->alloc_tres = v;
        return 0;
    case SLT_COL_REQTRES:
        r->req_tres = v;
        return 0;
    case SLT_COL_STATE:
        return slt_state_parse(v.p, v.n, name, &r->state, err);
    case SLT_COL_EXITCODE:
        return slt_exitcode_parse(v.p, v.n, name, &r->exit_code, err);
    case SLT_COL_DERIVEDEXITCODE:
        return slt_exitcode_parse(v.p, v.n, name, &r->derived_exit_code, err);
    case SLT_COL_ELAPSED:
        return slt_duration_parse(v.p, v.n, name, &r->elapsed, err);
    case SLT_COL_TIMELIMIT:
        return slt_duration_parse(v.p, v.n, name, &r->timelimit, err);
    case SLT_COL_TOTALCPU:
        return slt_duration_parse(v.p, v.n, name, &r->total_cpu, err);
    case SLT_COL_USERCPU:
        return slt_duration_parse(v.p, v.n, name, &r->user_cpu, err);
    case SLT_COL_SYSTEMCPU:
        return slt_duration_parse(v.p, v.n, name, &r->system_cpu, err);
    case SLT_COL_CPUTIME:
        return slt_duration_parse(v.p, v.n, name, &r->cpu_time, err);
    case SLT_COL_AVECPU:
        return slt_duration_parse(v.p, v.n, name, &r->ave_cpu, err);
    case SLT_COL_MINCPU:
        return slt_duration_parse(v.p, v.n, name, &r->min_cpu, err);
    case SLT_COL_MAXRSS:
        return slt_memory_parse(v.p, v.n, name, 1, &r->max_rss, err);
    case SLT_COL_AVERSS:
        return slt_memory_parse(v.p, v.n, name, 1, &r->ave_rss, err);
    case SLT_COL_MAXVMSIZE:
        return slt_memory_parse(v.p, v.n, name, 1, &r->max_vmsize, err);
    case SLT_COL_MAXDISKREAD:
        return slt_memory_parse(v.p, v.n, name, 1, &r->max_disk_read, err);
    case SLT_COL_MAXDISKWRITE:
        return slt_memory_parse(v.p, v.n, name, 1, &r->max_disk_write, err);
    case SLT_COL_REQMEM:
        return slt_memory_parse(v.p, v.n, name, 1LL << 20, &r->req_mem, err);
    case SLT_COL_ALLOCCPUS:
        return parse_u32(v, name, &r->has_alloc_cpus, &r->alloc_cpus, err);
    case SLT_COL_NNODES:
        return parse_u32(v, name, &r->has_nnodes, &r->nnodes, err);
    case SLT_COL_NTASKS:
        return parse_u32(v, name, &r->has_ntasks, &r->ntasks, err);
    case SLT_COL_ELAPSEDRAW:
        return parse_u32(v, name, &r->has_elapsed_raw, &r->elapsed_raw_s, err);
    case SLT_COL_START:
        return slt_time_parse(v.p, v.n, name, &r->start, err);
    case SLT_COL_END:
        return slt_time_parse(v.p, v.n, name, &r->end, err);
    case SLT_COL_SUBMIT:
        return slt_time_parse(v.p, v.n, name, &r->submit, err);
    default:
        return allot_errorf(err, ALLOT_EINTERNAL, "acct: column %d has no parser", (int)c);
    }
}

int slt_acct_row_parse(const struct slt_acct_format *fmt, struct slt_span line,
                       struct slt_acct_row *row, struct allot_error *err)
{
    struct slt_span f[SLT_FIELDS_MAX];
    size_t n;
    if (slt_split(line, '|', f, SLT_FIELDS_MAX, &n, err) < 0)
        return -1;
    if (n == fmt->n + 1 && f[n - 1].n == 0)
        n--;
    if (n != fmt->n)
        return allot_errorf(err, ALLOT_EINVAL, "line has %zu fields, %zu columns expected", n,
                            fmt->n);
    struct slt_acct_row r;
    memset(&r, 0, sizeof(r));
    for (size_t i = 0; i < n; i++)
        if (parse_field(fmt->col[i], f[i], &r, err) < 0)
            return -1;
    *row = r;
    return 0;
}
