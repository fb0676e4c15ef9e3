/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_efficiency.c - `allot job efficiency`: seff for many jobs at once, beside what each
 * job cost in the bank (doc/step.md "Efficiency").
 *
 *   allot job efficiency [CLUSTER:]JOBID... [cluster=C]
 *   allot job efficiency account=A [since=DATE] [until=DATE] [user=U] [cluster=C]
 *
 * Design: one sacct run (argv built with libslurmtext, no shell; $ALLOT_SACCT replaces the
 * binary) gives the job and step rows; libslurmtext parses them and folds each job's rows
 * into an slt_efficiency (seff's rules: CPU = TotalCPU / (Elapsed x AllocCPUS), memory =
 * max MaxRSS / requested).  sacct prints a job's rows together, so grouping is one pass.
 * The bank side comes from allotd: GET /v1/jobs/{cluster}/{job} per job, or one
 * GET /v1/jobs?account=&since= for an account; the charge is the sum of the settled runs'
 * charges.  allotd being unreachable leaves the charge column empty with a warning: the
 * efficiency is still worth printing.  Array tasks are shown under sacct's JobID ("12_3");
 * their bank charge is looked up under their own job id (JobIDRaw), as the bank charged
 * them.
 * Bounds: sacct runs at most ALLOT_SACCT_TIMEOUT_S (60 s) and its output is capped at
 * SACCT_OUT_MAX; beyond either the command fails rather than print a partial answer.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libcore/money.h"
#include "libslurmtext/acct.h"
#include "libslurmtext/argv.h"
#include "libslurmtext/efficiency.h"
#include "libslurmtext/field.h"
#include "libutil/subproc.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

/* JobIDRaw last: an array task's own job id, under which the bank charged it (its JobID is
 * "12_3"); read from the line's last column (libslurmtext skips it). */
#define SACCT_FORMAT                                                                               \
    "JobID,Cluster,User,Account,State,Elapsed,TotalCPU,AllocCPUS,ReqMem,MaxRSS,NNodes,JobIDRaw"
#define SACCT_OUT_MAX (256L * 1024 * 1024)
#define SACCT_TIMEOUT_MS 60000L
#define EFF_JOBS_MAX 512 /* job ids on one command line */

void cli_format_bytes(int64_t bytes, char *buf, size_t len)
{
    static const char units[] = "KMGTP";
    if (bytes < 1024) {
        snprintf(buf, len, "%lldB", (long long)bytes);
        return;
    }
    double v = (double)bytes / 1024.0;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.1f%c", v, units[u]);
}

int cli_run_capture(char *const argv[], char **out, size_t *len, struct allot_error *err)
{
    struct subproc_opts o = {
        .timeout_ms = SACCT_TIMEOUT_MS, .out_max = SACCT_OUT_MAX, .kill_at_cap = 1};
    struct subproc_result r;
    int rc = subproc_run(argv, &o, &r);
    size_t en = strlen(r.err);
    while (en > 0 && (r.err[en - 1] == '\n' || r.err[en - 1] == '\r'))
        r.err[--en] = '\0';
    if (r.exec_errno)
        rc = allot_errorf(err, ALLOT_EUNAVAIL, "sacct: cannot run %s: %s", argv[0],
                          strerror(r.exec_errno));
    else if (r.timed_out)
        rc = allot_errorf(err, ALLOT_EUNAVAIL, "sacct: no answer within %ld s",
                          SACCT_TIMEOUT_MS / 1000);
    else if (r.too_big)
        rc = allot_errorf(
            err, ALLOT_ETOOBIG,
            "sacct: more than %ld MiB of output; narrow since=/until=", SACCT_OUT_MAX >> 20);
    else if (rc < 0)
        rc = allot_errorf(err, ALLOT_EUNAVAIL, "sacct: %s", r.err);
    else if (r.status != 0)
        rc = allot_errorf(err, ALLOT_EUNAVAIL, "sacct failed (status %d): %s", r.status,
                          en ? r.err : "no message");
    if (rc < 0) {
        subproc_result_free(&r);
        return -1;
    }
    *out = r.out ? r.out : xstrdup("");
    *len = r.n;
    return 0;
}

/* One job of the report, built from its sacct rows. */
struct eff_job {
    char key[64]; /* JobID of the job row as sacct printed it ("12", "12_3") */
    uint32_t job;
    uint32_t raw; /* its own job id (JobIDRaw), the bank's key; 0 = not read */
    char cluster[64], user[64], account[64], state[64];
    int64_t elapsed_ms; /* -1 = unknown */
    int64_t alloc_cpus; /* -1 = unknown */
    struct slt_efficiency e;
    int64_t charge_sumin; /* sum over settled runs; -1 = none known */
    char bank_status[16]; /* newest run's status, "" = the bank has no record */
};

struct eff_report {
    struct eff_job *jobs;
    size_t n, cap;
};

static void span_copy(char *dst, size_t size, struct slt_span s)
{
    size_t n = s.n < size - 1 ? s.n : size - 1;
    memcpy(dst, s.p, n);
    dst[n] = '\0';
}

/* Fold sacct's output into rep (jobs in sacct's order). */
static int eff_parse(const char *out, size_t len, struct eff_report *rep, struct allot_error *err)
{
    struct slt_acct_format fmt;
    if (slt_acct_format_parse(SACCT_FORMAT, &fmt, err) < 0)
        return -1;
    size_t pos = 0;
    struct slt_span line;
    while (slt_next_line(out, len, &pos, &line)) {
        if (line.n == 0)
            continue;
        struct slt_acct_row row;
        if (slt_acct_row_parse(&fmt, line, &row, err) < 0)
            return -1;
        if (!row.has_id)
            continue;
        /* The row's job key: its JobID up to the step suffix. */
        const char *dot = memchr(line.p, '.', line.n);
        const char *bar = memchr(line.p, '|', line.n);
        size_t kn = (size_t)((dot && (!bar || dot < bar) ? dot
                              : bar                      ? bar
                                                         : line.p + line.n) -
                             line.p);
        struct eff_job *j = rep->n ? &rep->jobs[rep->n - 1] : NULL;
        if (!j || strlen(j->key) != kn || memcmp(j->key, line.p, kn) != 0) {
            if (rep->n == rep->cap) {
                rep->cap = rep->cap ? rep->cap * 2 : 64;
                rep->jobs = xrealloc(rep->jobs, rep->cap * sizeof(*rep->jobs));
            }
            j = &rep->jobs[rep->n++];
            memset(j, 0, sizeof *j);
            span_copy(j->key, sizeof j->key, (struct slt_span){line.p, kn});
            j->job = row.id.job;
            j->elapsed_ms = j->alloc_cpus = j->charge_sumin = -1;
            slt_efficiency_init(&j->e, row.id.job);
        }
        if (row.id.step_kind == SLT_STEP_NONE) {
            /* JobIDRaw, the last column; a pending array's "12_[1-5]" row has the array's. */
            const char *last = line.p + line.n;
            while (last > line.p && last[-1] != '|')
                last--;
            uint64_t raw;
            if (row.id.array_spec.n == 0 &&
                slt_uint(last, (size_t)(line.p + line.n - last), UINT32_MAX, &raw) == 0)
                j->raw = (uint32_t)raw;
            span_copy(j->cluster, sizeof j->cluster, row.cluster);
            span_copy(j->user, sizeof j->user, row.user);
            span_copy(j->account, sizeof j->account, row.account);
            if (slt_state_format(&row.state, j->state, sizeof j->state, NULL) < 0)
                j->state[0] = '\0';
            if (row.elapsed.kind == SLT_DUR_VALUE)
                j->elapsed_ms = row.elapsed.ms;
            if (row.has_alloc_cpus)
                j->alloc_cpus = row.alloc_cpus;
        }
        if (slt_efficiency_add(&j->e, &row, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < rep->n; i++)
        slt_efficiency_finish(&rep->jobs[i].e);
    return 0;
}

/* Add one bank run to the job it belongs to (by cluster and job id). */
static void eff_add_run(struct eff_report *rep, json_t *run)
{
    const char *cluster = json_string_value(json_object_get(run, "cluster"));
    json_int_t id = json_integer_value(json_object_get(run, "job_id"));
    const char *status = json_string_value(json_object_get(run, "status"));
    json_t *charge = json_object_get(run, "charge_sumin");
    for (size_t i = 0; i < rep->n; i++) {
        struct eff_job *j = &rep->jobs[i];
        if (!j->raw || (json_int_t)j->raw != id || !cluster ||
            (j->cluster[0] && strcmp(j->cluster, cluster) != 0))
            continue;
        if (!j->bank_status[0] && status) /* runs come newest first */
            text_copy(j->bank_status, sizeof j->bank_status, status);
        if (status && !strcmp(status, "settled") && json_is_integer(charge))
            j->charge_sumin =
                (j->charge_sumin < 0 ? 0 : j->charge_sumin) + json_integer_value(charge);
    }
}

/* ONLY: the job id asked for (0 = any): the runs of a job array's id include its other
 * tasks' (doc/api.md "Job ids"), which their own requests add. */
static int eff_join_runs(struct eff_report *rep, json_t *reply, json_int_t only)
{
    json_t *rows = json_object_get(reply, "runs");
    if (!rows)
        rows = cli_rows(reply);
    size_t i;
    json_t *run;
    json_array_foreach(rows, i, run)
    {
        if (!only || json_integer_value(json_object_get(run, "job_id")) == only)
            eff_add_run(rep, run);
    }
    return 0;
}

static json_t *real_or_null(bool has, double v)
{
    return has ? json_real((double)(int64_t)(v * 10.0 + 0.5) / 10.0) : json_null();
}

static json_t *eff_row(const struct eff_job *j)
{
    const struct slt_efficiency *e = &j->e;
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "cluster",
        j->cluster, "job_id", j->key, "user", j->user, "account", j->account, "state", j->state,
        "elapsed_s", j->elapsed_ms >= 0 ? json_integer(j->elapsed_ms / 1000) : json_null(),
        "alloc_cpus", j->alloc_cpus >= 0 ? json_integer(j->alloc_cpus) : json_null(), "cpu_used_s",
        e->cpu_used_ms >= 0 ? json_real((double)e->cpu_used_ms / 1000.0) : json_null(),
        "cpu_efficiency_percent", real_or_null(e->has_cpu, e->cpu_pct), "mem_used_bytes",
        e->mem_used_bytes >= 0 ? json_integer(e->mem_used_bytes) : json_null(), "mem_req_bytes",
        e->mem_req_bytes > 0 ? json_integer(e->mem_req_bytes) : json_null(),
        "mem_efficiency_percent", real_or_null(e->has_mem, e->mem_pct), "charge_sumin",
        j->charge_sumin >= 0 ? json_integer(j->charge_sumin) : json_null(), "charged",
        json_boolean(j->charge_sumin >= 0), "bank_status", j->bank_status);
}

/* Display members for the table (-P and the aligned table print the same text). */
static void eff_text(json_t *row)
{
    char buf[64];
    json_t *v;
    v = json_object_get(row, "cpu_efficiency_percent");
    buf[0] = '\0';
    if (json_is_number(v))
        snprintf(buf, sizeof buf, "%.1f%%", json_number_value(v));
    json_object_set_new(row, "cpu_eff_text", json_string(buf));
    buf[0] = '\0';
    v = json_object_get(row, "mem_efficiency_percent");
    if (json_is_number(v))
        snprintf(buf, sizeof buf, "%.1f%%", json_number_value(v));
    json_object_set_new(row, "mem_eff_text", json_string(buf));
    buf[0] = '\0';
    v = json_object_get(row, "mem_used_bytes");
    if (json_is_integer(v))
        cli_format_bytes(json_integer_value(v), buf, sizeof buf);
    json_object_set_new(row, "mem_used_text", json_string(buf));
    buf[0] = '\0';
    v = json_object_get(row, "mem_req_bytes");
    if (json_is_integer(v))
        cli_format_bytes(json_integer_value(v), buf, sizeof buf);
    json_object_set_new(row, "mem_req_text", json_string(buf));
    buf[0] = '\0';
    v = json_object_get(row, "charge_sumin");
    if (json_is_integer(v) && money_format_sumin(json_integer_value(v), buf, sizeof buf) < 0)
        buf[0] = '\0';
    else if (!json_is_integer(v))
        text_copy(buf, sizeof buf, json_string_value(json_object_get(row, "bank_status")));
    json_object_set_new(row, "charge_text", json_string(buf));
}

static const struct column eff_columns[] = {
    {"Cluster", "cluster", C_STR},
    {"JobID", "job_id", C_STR},
    {"User", "user", C_STR},
    {"Account", "account", C_STR},
    {"State", "state", C_STR},
    {"Elapsed", "elapsed_s", C_DURATION},
    {"CPUs", "alloc_cpus", C_INT},
    {"CPUEff", "cpu_eff_text", C_STR},
    {"MemUsed", "mem_used_text", C_STR},
    {"MemReq", "mem_req_text", C_STR},
    {"MemEff", "mem_eff_text", C_STR},
    {"Charge", "charge_text", C_STR},
    {0},
};

/* Epoch seconds as the local time sacct reads ("2026-01-01T00:00:00"). */
static void sacct_time(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    localtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

struct eff_args {
    const char *cluster, *account, *user;
    int64_t since_s, until_s;
    char cluster_buf[128]; /* from CLUSTER:JOBID */
    char jobs[4096];       /* "1,2,3" */
    const char *job_words[EFF_JOBS_MAX];
    int njobs;
};

static int eff_parse_args(int argc, char **argv, struct eff_args *a, struct allot_error *err)
{
    size_t used = 0;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        const char *eq = strchr(w, '=');
        if (eq) {
            size_t kn = (size_t)(eq - w);
            const char *v = eq + 1;
            if (kn == 7 && !strncmp(w, "cluster", kn))
                a->cluster = v;
            else if (kn == 7 && !strncmp(w, "account", kn))
                a->account = v;
            else if (kn == 4 && !strncmp(w, "user", kn))
                a->user = v;
            else if ((kn == 5 && !strncmp(w, "since", kn)) ||
                     (kn == 5 && !strncmp(w, "until", kn))) {
                struct field f = {w[0] == 's' ? "since" : "until", NULL, V_TIME, NULL};
                json_t *t = cli_value(&f, v, err);
                if (!t)
                    return -1;
                if (w[0] == 's')
                    a->since_s = json_integer_value(t);
                else
                    a->until_s = json_integer_value(t);
                json_decref(t);
            } else
                return allot_errorf(err, ALLOT_EINVAL,
                                    "job efficiency: unknown key '%.*s' (cluster, account, "
                                    "user, since, until)",
                                    (int)kn, w);
            continue;
        }
        const char *id = w, *colon = strchr(w, ':');
        if (colon) {
            size_t n = (size_t)(colon - w);
            if (n == 0 || n >= sizeof a->cluster_buf)
                return allot_errorf(err, ALLOT_EINVAL, "job: bad job '%s'", w);
            memcpy(a->cluster_buf, w, n);
            a->cluster_buf[n] = '\0';
            a->cluster = a->cluster_buf;
            id = colon + 1;
        }
        int64_t v;
        if (args_uint("job", id, &v, err) < 0)
            return -1;
        if (v <= 0 || v > UINT32_MAX)
            return allot_errorf(err, ALLOT_EINVAL, "job: '%s' is not a job id", id);
        if (a->njobs == EFF_JOBS_MAX)
            return allot_errorf(err, ALLOT_ETOOBIG, "job efficiency: at most %d jobs",
                                EFF_JOBS_MAX);
        int k = snprintf(a->jobs + used, sizeof a->jobs - used, "%s%lld", used ? "," : "",
                         (long long)v);
        if (k < 0 || (size_t)k >= sizeof a->jobs - used)
            return allot_errorf(err, ALLOT_ETOOBIG, "job efficiency: too many jobs");
        used += (size_t)k;
        a->job_words[a->njobs++] = id;
    }
    if (a->njobs && (a->account || a->since_s || a->until_s))
        return allot_errorf(err, ALLOT_EINVAL,
                            "job efficiency: give job ids or account=/since=, not both");
    if (!a->njobs && !a->account && !a->user)
        return allot_errorf(err, ALLOT_EINVAL,
                            "job efficiency: which jobs? (JOBID..., or account=A since=DATE)");
    return 0;
}

static int eff_sacct_argv(const struct eff_args *a, struct slt_argv *av, struct allot_error *err)
{
    const char *sacct = getenv("ALLOT_SACCT");
    char t[64];
    slt_argv_init(av);
    if (slt_argv_add(av, sacct && sacct[0] ? sacct : "sacct", err) < 0 ||
        slt_argv_add(av, "-n", err) < 0 || slt_argv_add(av, "-P", err) < 0 ||
        slt_argv_addf(av, err, "--format=%s", SACCT_FORMAT) < 0)
        return -1;
    if (a->cluster && slt_argv_addf(av, err, "--clusters=%s", a->cluster) < 0)
        return -1;
    if (a->njobs)
        return slt_argv_addf(av, err, "--jobs=%s", a->jobs);
    /* All users of the account (Slurm's PrivateData still applies to the caller). */
    if (slt_argv_add(av, "--allusers", err) < 0)
        return -1;
    if (a->account && slt_argv_addf(av, err, "--accounts=%s", a->account) < 0)
        return -1;
    if (a->user && slt_argv_addf(av, err, "--user=%s", a->user) < 0)
        return -1;
    if (a->since_s) {
        sacct_time(a->since_s, t, sizeof t);
        if (slt_argv_addf(av, err, "--starttime=%s", t) < 0)
            return -1;
    }
    if (a->until_s) {
        sacct_time(a->until_s, t, sizeof t);
        if (slt_argv_addf(av, err, "--endtime=%s", t) < 0)
            return -1;
    }
    return 0;
}

/* Fetch the bank's runs of the reported jobs; a failure is a warning (charges stay empty). */
static void eff_join_bank(struct cli *cli, const struct eff_args *a, struct eff_report *rep)
{
    struct allot_error err = {0};
    if (a->njobs) {
        for (size_t i = 0; i < rep->n; i++) {
            const struct eff_job *j = &rep->jobs[i];
            const char *cluster = j->cluster[0] ? j->cluster : a->cluster;
            if (!j->raw || !cluster)
                continue;
            char num[32];
            snprintf(num, sizeof num, "%u", j->raw);
            struct path p;
            path_init(&p, "/v1/jobs");
            path_segment(&p, cluster);
            path_segment(&p, num);
            json_t *reply = cli_get_json(cli, p.s, &err);
            path_fini(&p);
            if (reply) {
                eff_join_runs(rep, reply, (json_int_t)j->raw);
                json_decref(reply);
            } else if (err.code != ALLOT_ENOENT) {
                break;
            }
            allot_error_clear(&err);
        }
    } else {
        struct path p;
        path_init(&p, "/v1/jobs");
        if (a->cluster)
            path_query(&p, "cluster", a->cluster);
        if (a->account)
            path_query(&p, "account", a->account);
        if (a->user)
            path_query(&p, "user", a->user);
        if (a->since_s) {
            char num[32];
            snprintf(num, sizeof num, "%lld", (long long)a->since_s);
            path_query(&p, "since", num);
        }
        json_t *reply = cli_get_json(cli, p.s, &err);
        path_fini(&p);
        if (reply) {
            eff_join_runs(rep, reply, 0);
            json_decref(reply);
        }
    }
    if (err.code != ALLOT_OK)
        fprintf(stderr, "allot: warning: no charges from allotd: %s\n",
                err.msg[0] ? err.msg : allot_strerror(err.code));
}

int cmd_job_efficiency(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    struct eff_args a;
    memset(&a, 0, sizeof a);
    struct slt_argv *av = xcalloc(1, sizeof(*av));
    struct eff_report rep = {0};
    char *out = NULL;
    size_t len = 0;
    json_t *items = NULL;
    int rc = -1;
    if (eff_parse_args(argc, argv, &a, err) < 0 || eff_sacct_argv(&a, av, err) < 0 ||
        cli_run_capture(av->argv, &out, &len, err) < 0 || eff_parse(out, len, &rep, err) < 0)
        goto out;
    eff_join_bank(cli, &a, &rep);
    items = json_array();
    for (size_t i = 0; i < rep.n; i++)
        json_array_append_new(items, eff_row(&rep.jobs[i]));
    if (cli->json) {
        json_t *root = json_pack("{s:O}", "items", items);
        char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        cli_print_json_text(text ? text : "{}");
        free(text);
        json_decref(root);
    } else {
        size_t i;
        json_t *row;
        json_array_foreach(items, i, row) eff_text(row);
        cli_print_table(cli, items, eff_columns);
    }
    if (a.njobs && rep.n == 0) {
        rc = allot_errorf(err, ALLOT_ENOENT, "job efficiency: sacct knows none of %s", a.jobs);
        goto out;
    }
    rc = 0;
out:
    json_decref(items);
    free(rep.jobs);
    free(out);
    free(av);
    return rc;
}
