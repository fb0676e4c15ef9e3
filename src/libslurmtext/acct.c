/* SPDX-License-Identifier: GPL-3.0-or-later */
/* acct.c - sacct/sstat column table and row parser (see acct.h).
 * The row is built in a local struct and copied out only when every field parsed, so a bad
 * line leaves the caller's row untouched. */
#include "libslurmtext/acct.h"

#include <string.h>
#include <strings.h>

static const char *const col_names[ST_COL_MAX] = {
    [ST_COL_OTHER] = "",
    [ST_COL_JOBID] = "JobID",
    [ST_COL_JOBNAME] = "JobName",
    [ST_COL_STATE] = "State",
    [ST_COL_EXITCODE] = "ExitCode",
    [ST_COL_DERIVEDEXITCODE] = "DerivedExitCode",
    [ST_COL_ELAPSED] = "Elapsed",
    [ST_COL_TIMELIMIT] = "Timelimit",
    [ST_COL_TOTALCPU] = "TotalCPU",
    [ST_COL_USERCPU] = "UserCPU",
    [ST_COL_SYSTEMCPU] = "SystemCPU",
    [ST_COL_CPUTIME] = "CPUTime",
    [ST_COL_AVECPU] = "AveCPU",
    [ST_COL_MINCPU] = "MinCPU",
    [ST_COL_MAXRSS] = "MaxRSS",
    [ST_COL_AVERSS] = "AveRSS",
    [ST_COL_MAXVMSIZE] = "MaxVMSize",
    [ST_COL_MAXDISKREAD] = "MaxDiskRead",
    [ST_COL_MAXDISKWRITE] = "MaxDiskWrite",
    [ST_COL_REQMEM] = "ReqMem",
    [ST_COL_ALLOCTRES] = "AllocTRES",
    [ST_COL_REQTRES] = "ReqTRES",
    [ST_COL_ALLOCCPUS] = "AllocCPUS",
    [ST_COL_NNODES] = "NNodes",
    [ST_COL_NTASKS] = "NTasks",
    [ST_COL_NODELIST] = "NodeList",
    [ST_COL_START] = "Start",
    [ST_COL_END] = "End",
    [ST_COL_SUBMIT] = "Submit",
    [ST_COL_ACCOUNT] = "Account",
    [ST_COL_ELAPSEDRAW] = "ElapsedRaw",
    [ST_COL_USER] = "User",
    [ST_COL_PARTITION] = "Partition",
    [ST_COL_QOS] = "QOS",
    [ST_COL_CLUSTER] = "Cluster",
};

const char *st_col_name(enum st_col c)
{
    if ((int)c < 0 || c >= ST_COL_MAX)
        return "";
    return col_names[c];
}

int st_acct_format_parse(const char *list, struct st_acct_format *out, struct allot_error *err)
{
    struct st_acct_format f;
    struct st_span parts[ST_FIELDS_MAX];
    size_t n;
    struct st_span all = {list, strlen(list)};
    if (st_split(all, ',', parts, ST_FIELDS_MAX, &n, err) < 0)
        return -1;
    f.n = n;
    for (size_t i = 0; i < n; i++) {
        struct st_span name = parts[i];
        const char *pct = memchr(name.p, '%', name.n);
        if (pct)
            name.n = (size_t)(pct - name.p);
        if (name.n == 0)
            return allot_errorf(err, ALLOT_EINVAL, "format: empty column name at position %zu",
                                i + 1);
        f.col[i] = ST_COL_OTHER;
        for (int c = 1; c < ST_COL_MAX; c++) {
            if (st_eq_nocase(name, col_names[c])) {
                f.col[i] = (enum st_col)c;
                break;
            }
        }
    }
    *out = f;
    return 0;
}

static int parse_u32(struct st_span v, const char *field, bool *has, uint32_t *out,
                     struct allot_error *err)
{
    uint64_t x;
    if (v.n == 0) {
        *has = false;
        *out = 0;
        return 0;
    }
    if (st_uint(v.p, v.n, UINT32_MAX, &x) < 0)
        return st_field_error(err, field, "invalid count", v);
    *has = true;
    *out = (uint32_t)x;
    return 0;
}

static int parse_field(enum st_col c, struct st_span v, struct st_acct_row *r,
                       struct allot_error *err)
{
    const char *name = col_names[c];
    switch (c) {
    case ST_COL_OTHER:
        return 0;
    case ST_COL_JOBID:
        if (v.n == 0)
            return st_field_error(err, name, "missing job id", v);
        r->has_id = true;
        return st_jobid_parse(v.p, v.n, name, &r->id, err);
    case ST_COL_JOBNAME:
        r->name = v;
        return 0;
    case ST_COL_NODELIST:
        r->nodelist = v;
        return 0;
    case ST_COL_ACCOUNT:
        r->account = v;
        return 0;
    case ST_COL_USER:
        r->user = v;
        return 0;
    case ST_COL_PARTITION:
        r->partition = v;
        return 0;
    case ST_COL_QOS:
        r->qos = v;
        return 0;
    case ST_COL_CLUSTER:
        r->cluster = v;
        return 0;
    case ST_COL_ALLOCTRES:
        r->alloc_tres = v;
        return 0;
    case ST_COL_REQTRES:
        r->req_tres = v;
        return 0;
    case ST_COL_STATE:
        return st_state_parse(v.p, v.n, name, &r->state, err);
    case ST_COL_EXITCODE:
        return st_exitcode_parse(v.p, v.n, name, &r->exit_code, err);
    case ST_COL_DERIVEDEXITCODE:
        return st_exitcode_parse(v.p, v.n, name, &r->derived_exit_code, err);
    case ST_COL_ELAPSED:
        return st_duration_parse(v.p, v.n, name, &r->elapsed, err);
    case ST_COL_TIMELIMIT:
        return st_duration_parse(v.p, v.n, name, &r->timelimit, err);
    case ST_COL_TOTALCPU:
        return st_duration_parse(v.p, v.n, name, &r->total_cpu, err);
    case ST_COL_USERCPU:
        return st_duration_parse(v.p, v.n, name, &r->user_cpu, err);
    case ST_COL_SYSTEMCPU:
        return st_duration_parse(v.p, v.n, name, &r->system_cpu, err);
    case ST_COL_CPUTIME:
        return st_duration_parse(v.p, v.n, name, &r->cpu_time, err);
    case ST_COL_AVECPU:
        return st_duration_parse(v.p, v.n, name, &r->ave_cpu, err);
    case ST_COL_MINCPU:
        return st_duration_parse(v.p, v.n, name, &r->min_cpu, err);
    case ST_COL_MAXRSS:
        return st_memory_parse(v.p, v.n, name, 1, &r->max_rss, err);
    case ST_COL_AVERSS:
        return st_memory_parse(v.p, v.n, name, 1, &r->ave_rss, err);
    case ST_COL_MAXVMSIZE:
        return st_memory_parse(v.p, v.n, name, 1, &r->max_vmsize, err);
    case ST_COL_MAXDISKREAD:
        return st_memory_parse(v.p, v.n, name, 1, &r->max_disk_read, err);
    case ST_COL_MAXDISKWRITE:
        return st_memory_parse(v.p, v.n, name, 1, &r->max_disk_write, err);
    case ST_COL_REQMEM:
        return st_memory_parse(v.p, v.n, name, 1LL << 20, &r->req_mem, err);
    case ST_COL_ALLOCCPUS:
        return parse_u32(v, name, &r->has_alloc_cpus, &r->alloc_cpus, err);
    case ST_COL_NNODES:
        return parse_u32(v, name, &r->has_nnodes, &r->nnodes, err);
    case ST_COL_NTASKS:
        return parse_u32(v, name, &r->has_ntasks, &r->ntasks, err);
    case ST_COL_ELAPSEDRAW:
        return parse_u32(v, name, &r->has_elapsed_raw, &r->elapsed_raw_s, err);
    case ST_COL_START:
        return st_time_parse(v.p, v.n, name, &r->start, err);
    case ST_COL_END:
        return st_time_parse(v.p, v.n, name, &r->end, err);
    case ST_COL_SUBMIT:
        return st_time_parse(v.p, v.n, name, &r->submit, err);
    default:
        return allot_errorf(err, ALLOT_EINTERNAL, "acct: column %d has no parser", (int)c);
    }
}

int st_acct_row_parse(const struct st_acct_format *fmt, struct st_span line,
                      struct st_acct_row *row, struct allot_error *err)
{
    struct st_span f[ST_FIELDS_MAX];
    size_t n;
    if (st_split(line, '|', f, ST_FIELDS_MAX, &n, err) < 0)
        return -1;
    if (n == fmt->n + 1 && f[n - 1].n == 0)
        n--;
    if (n != fmt->n)
        return allot_errorf(err, ALLOT_EINVAL, "line has %zu fields, %zu columns expected", n,
                            fmt->n);
    struct st_acct_row r;
    memset(&r, 0, sizeof(r));
    for (size_t i = 0; i < n; i++)
        if (parse_field(fmt->col[i], f[i], &r, err) < 0)
            return -1;
    *row = r;
    return 0;
}
