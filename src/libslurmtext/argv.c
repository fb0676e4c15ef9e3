/* SPDX-License-Identifier: GPL-3.0-or-later */
/* argv.c - argv builders for Slurm's commands (see argv.h).
 * Every builder writes into a scratch copy first and commits only on success, so a failing
 * builder leaves the caller's vector as it was. */
#include "libslurmtext/argv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libslurmtext/squeue.h"

void slt_argv_init(struct slt_argv *a)
{
    a->argc = 0;
    a->used = 0;
    a->argv[0] = NULL;
}

static int full(struct allot_error *err)
{
    return allot_errorf(err, ALLOT_ETOOBIG, "argv: more than %d words or %d bytes", SLT_ARGV_MAX,
                        SLT_ARGV_BUF);
}

int slt_argv_add_borrowed(struct slt_argv *a, char *s, struct allot_error *err)
{
    if (a->argc >= SLT_ARGV_MAX)
        return full(err);
    a->argv[a->argc++] = s;
    a->argv[a->argc] = NULL;
    return 0;
}

__attribute__((format(printf, 3, 0))) static int vaddf(struct slt_argv *a, struct allot_error *err,
                                                       const char *fmt, va_list ap)
{
    if (a->argc >= SLT_ARGV_MAX)
        return full(err);
    size_t room = SLT_ARGV_BUF - a->used;
    int n = vsnprintf(a->buf + a->used, room, fmt, ap);
    if (n < 0 || (size_t)n >= room)
        return full(err);
    a->argv[a->argc++] = a->buf + a->used;
    a->argv[a->argc] = NULL;
    a->used += (size_t)n + 1;
    return 0;
}

int slt_argv_addf(struct slt_argv *a, struct allot_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vaddf(a, err, fmt, ap);
    va_end(ap);
    return rc;
}

int slt_argv_add(struct slt_argv *a, const char *s, struct allot_error *err)
{
    return slt_argv_addf(a, err, "%s", s);
}

/* [A-Z0-9]+ optionally followed by @N: what srun --signal accepts (a name or a number). */
static bool signal_ok(const char *s)
{
    size_t i = 0;
    while ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9'))
        i++;
    if (i == 0 || i > 16)
        return false;
    if (s[i] == '\0')
        return true;
    if (s[i] != '@')
        return false;
    size_t j = i + 1;
    while (s[j] >= '0' && s[j] <= '9')
        j++;
    return j > i + 1 && j - i - 1 <= 6 && s[j] == '\0';
}

int slt_argv_srun(struct slt_argv *out, const char *srun, const struct slt_srun_opts *o,
                  char *const cmd[], struct allot_error *err)
{
    if (!o->step_name || !o->step_name[0])
        return allot_errorf(err, ALLOT_EINVAL, "srun: step name is required");
    if (o->nodes == 0)
        return allot_errorf(err, ALLOT_EINVAL, "srun: nodes must be at least 1");
    if (!cmd || !cmd[0])
        return allot_errorf(err, ALLOT_EINVAL, "srun: no command to run");
    if (o->signal && !signal_ok(o->signal))
        return allot_errorf(err, ALLOT_EINVAL,
                            "srun: signal: invalid spec '%.32s' (want "
                            "NAME@SECONDS, e.g. TERM@120)",
                            o->signal);
    if (o->mem_mb < 0 || o->time_min < 0)
        return allot_errorf(err, ALLOT_EINVAL, "srun: negative mem or time");
    /* A struct slt_argv is large; build in place and roll back on failure. */
    size_t argc0 = out->argc, used0 = out->used;
    struct slt_argv *a = out;
    if (slt_argv_add(a, srun, err) < 0 || slt_argv_addf(a, err, "--jobid=%u", o->job_id) < 0 ||
        slt_argv_add(a, "--ntasks=1", err) < 0 || slt_argv_add(a, "--exact", err) < 0)
        goto fail;
    if (!o->cpu_bind && slt_argv_add(a, "--cpu-bind=none", err) < 0)
        goto fail;
    if (slt_argv_addf(a, err, "--job-name=%s", o->step_name) < 0 ||
        slt_argv_addf(a, err, "--nodes=%u", o->nodes) < 0)
        goto fail;
    if (o->cpus_per_task && slt_argv_addf(a, err, "--cpus-per-task=%u", o->cpus_per_task) < 0)
        goto fail;
    if (o->mem_mb && slt_argv_addf(a, err, "--mem=%lldM", (long long)o->mem_mb) < 0)
        goto fail;
    if (o->time_min && slt_argv_addf(a, err, "--time=%lld", (long long)o->time_min) < 0)
        goto fail;
    if (o->signal && slt_argv_addf(a, err, "--signal=%s", o->signal) < 0)
        goto fail;
    for (size_t i = 0; cmd[i]; i++)
        if (slt_argv_add_borrowed(a, cmd[i], err) < 0)
            goto fail;
    return 0;
fail:
    out->argc = argc0;
    out->used = used0;
    out->argv[argc0] = NULL;
    return -1;
}

static int build(struct slt_argv *out, struct allot_error *err, int nwords, const char *words[])
{
    size_t argc0 = out->argc, used0 = out->used;
    for (int i = 0; i < nwords; i++) {
        if (slt_argv_add(out, words[i], err) < 0) {
            out->argc = argc0;
            out->used = used0;
            out->argv[argc0] = NULL;
            return -1;
        }
    }
    return 0;
}

int slt_argv_sstat(struct slt_argv *a, const char *sstat, uint32_t job, uint32_t step,
                   const char *format, struct allot_error *err)
{
    char id[32], fmt[1024];
    snprintf(id, sizeof(id), "%u.%u", job, step);
    if ((size_t)snprintf(fmt, sizeof(fmt), "--format=%s", format) >= sizeof(fmt))
        return full(err);
    const char *w[] = {sstat, "-n", "-P", "-j", id, fmt};
    return build(a, err, 6, w);
}

int slt_argv_sacct(struct slt_argv *a, const char *sacct, uint32_t job, const char *format,
                   bool allocations, struct allot_error *err)
{
    char id[16], fmt[1024];
    snprintf(id, sizeof(id), "%u", job);
    if ((size_t)snprintf(fmt, sizeof(fmt), "--format=%s", format) >= sizeof(fmt))
        return full(err);
    const char *w[] = {sacct, "-n", "-P", "-j", id, fmt, "--allocations"};
    return build(a, err, allocations ? 7 : 6, w);
}

int slt_argv_squeue_steps(struct slt_argv *a, const char *squeue, uint32_t job,
                          struct allot_error *err)
{
    char id[16];
    snprintf(id, sizeof(id), "%u", job);
    const char *w[] = {squeue, "--steps", "-h", "-j", id, "-o", SLT_SQUEUE_STEP_FORMAT};
    return build(a, err, 7, w);
}

int slt_argv_squeue_time_left(struct slt_argv *a, const char *squeue, uint32_t job,
                              struct allot_error *err)
{
    char id[16];
    snprintf(id, sizeof(id), "%u", job);
    const char *w[] = {squeue, "-h", "-j", id, "-o", "%L"};
    return build(a, err, 6, w);
}

int64_t slt_step_time_min(int64_t left_s)
{
    if (left_s < 0)
        return 0;
    /* One second less than the time left: squeue prints whole seconds, and a step limit
     * equal to the allocation's ends in the job's TIMEOUT (the step shows CANCELLED), which
     * is exactly what rounding down is meant to avoid (seen on 22.05.8). */
    int64_t m = (left_s - 1) / 60;
    return m < 1 ? 1 : m;
}
