/* SPDX-License-Identifier: GPL-3.0-or-later */
/* jobid.c - parse and format Slurm job/step ids (see jobid.h). */
#include "libslurmtext/jobid.h"

#include <stdio.h>
#include <string.h>

/* Length of the leading digit run of p[0..n). */
static size_t digits(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && p[i] >= '0' && p[i] <= '9')
        i++;
    return i;
}

int slt_jobid_parse(const char *text, size_t n, const char *field, struct slt_jobid *out,
                    struct allot_error *err)
{
    struct slt_span s = {text, n};
    struct slt_jobid id;
    memset(&id, 0, sizeof(id));
    const char *p = text, *end = text + n;
    uint64_t v;
    size_t d = digits(p, (size_t)(end - p));
    if (slt_uint(p, d, UINT32_MAX, &v) < 0)
        goto bad;
    id.job = (uint32_t)v;
    p += d;
    if (p < end && *p == '+') {
        p++;
        d = digits(p, (size_t)(end - p));
        if (slt_uint(p, d, UINT32_MAX, &v) < 0)
            goto bad;
        id.has_het = true;
        id.het_offset = (uint32_t)v;
        p += d;
    } else if (p < end && *p == '_') {
        p++;
        if (p < end && *p == '[') {
            const char *close = memchr(p, ']', (size_t)(end - p));
            if (!close || close == p + 1)
                goto bad;
            id.array_spec.p = p + 1;
            id.array_spec.n = (size_t)(close - p - 1);
            for (const char *q = p + 1; q < close; q++)
                if (!((*q >= '0' && *q <= '9') || *q == '-' || *q == ',' || *q == '%' || *q == ':'))
                    goto bad;
            p = close + 1;
        } else {
            d = digits(p, (size_t)(end - p));
            if (slt_uint(p, d, UINT32_MAX, &v) < 0)
                goto bad;
            id.has_array_task = true;
            id.array_task = (uint32_t)v;
            p += d;
        }
    }
    if (p < end) {
        if (*p != '.')
            goto bad;
        p++;
        struct slt_span step = {p, (size_t)(end - p)};
        if (slt_eq(step, "batch")) {
            id.step_kind = SLT_STEP_BATCH;
        } else if (slt_eq(step, "extern")) {
            id.step_kind = SLT_STEP_EXTERN;
        } else if (slt_eq(step, "interactive")) {
            id.step_kind = SLT_STEP_INTERACTIVE;
        } else {
            d = digits(step.p, step.n);
            if (slt_uint(step.p, d, UINT32_MAX, &v) < 0)
                goto bad;
            id.step_kind = SLT_STEP_NUMBERED;
            id.step = (uint32_t)v;
            if (d < step.n) { /* "+C": a het step's component */
                if (step.p[d] != '+' ||
                    slt_uint(step.p + d + 1, step.n - d - 1, UINT32_MAX, &v) < 0)
                    goto bad;
                id.has_step_het = true;
                id.step_het_comp = (uint32_t)v;
            }
        }
    }
    *out = id;
    return 0;
bad:
    return slt_field_error(err, field, "invalid job id", s);
}

int slt_jobid_format(const struct slt_jobid *id, char *buf, size_t len, struct allot_error *err)
{
    char tmp[96];
    size_t cap = sizeof(tmp);
    int n = snprintf(tmp, cap, "%u", id->job);
    if (id->has_het)
        n += snprintf(tmp + n, cap - (size_t)n, "+%u", id->het_offset);
    else if (id->has_array_task)
        n += snprintf(tmp + n, cap - (size_t)n, "_%u", id->array_task);
    else if (id->array_spec.n > 0) {
        if (id->array_spec.n > 64)
            return allot_errorf(err, ALLOT_ETOOBIG, "job id: array spec too long");
        n += snprintf(tmp + n, cap - (size_t)n, "_[%.*s]", (int)id->array_spec.n, id->array_spec.p);
    }
    switch (id->step_kind) {
    case SLT_STEP_NONE:
        break;
    case SLT_STEP_NUMBERED:
        n += snprintf(tmp + n, cap - (size_t)n, ".%u", id->step);
        if (id->has_step_het)
            n += snprintf(tmp + n, cap - (size_t)n, "+%u", id->step_het_comp);
        break;
    case SLT_STEP_BATCH:
        n += snprintf(tmp + n, cap - (size_t)n, ".batch");
        break;
    case SLT_STEP_EXTERN:
        n += snprintf(tmp + n, cap - (size_t)n, ".extern");
        break;
    case SLT_STEP_INTERACTIVE:
        n += snprintf(tmp + n, cap - (size_t)n, ".interactive");
        break;
    default:
        return allot_errorf(err, ALLOT_EINVAL, "job id: unknown step kind %d", (int)id->step_kind);
    }
    if ((size_t)n >= len)
        return allot_errorf(err, ALLOT_ETOOBIG, "job id: buffer of %zu bytes too small", len);
    memcpy(buf, tmp, (size_t)n + 1);
    return n;
}

bool slt_jobid_is_job(const struct slt_jobid *id, const struct slt_job_ref *ref)
{
    if (id->has_het || id->array_spec.n > 0)
        return false;
    if (!id->has_array_task)
        return id->job == ref->job;
    return ref->is_array_task && id->job == ref->array_job && id->array_task == ref->array_task;
}
