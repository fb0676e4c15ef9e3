/* SPDX-License-Identifier: GPL-3.0-or-later */
/* jobname.c - a job as a user names it (jobname.h). */
#include "libslurmtext/jobname.h"

#include <string.h>

#include "libslurmtext/arrayspec.h"
#include "libslurmtext/jobid.h"

int slt_job_name_parse(const char *text, const char *what, struct slt_job_name *out,
                       struct allot_error *err)
{
    struct slt_jobid id;
    struct slt_job_name n;
    memset(&n, 0, sizeof n);
    if (!text || slt_jobid_parse(text, strlen(text), what, &id, NULL) < 0 || id.job == 0 ||
        id.step_kind != SLT_STEP_NONE || id.has_step_het)
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: '%s' is not a job (give JOBID, ARRAYJOB_TASK, "
                            "ARRAYJOB_[TASKS] or HETJOB+COMPONENT, as Slurm prints them)",
                            what, text ? text : "");
    n.job = id.job;
    if (id.has_het) {
        n.kind = SLT_JOB_NAME_HET;
        n.index = id.het_offset;
    } else if (id.has_array_task) {
        n.kind = SLT_JOB_NAME_TASK;
        n.index = id.array_task;
    } else if (id.array_spec.n > 0) {
        uint32_t count;
        char msg[128];
        if (id.array_spec.n >= sizeof n.spec)
            return allot_errorf(err, ALLOT_EINVAL, "%s: '%s': task list too long", what, text);
        memcpy(n.spec, id.array_spec.p, id.array_spec.n);
        n.spec[id.array_spec.n] = '\0';
        if (slt_array_spec_count(n.spec, &count, msg, sizeof msg) < 0)
            return allot_errorf(err, ALLOT_EINVAL, "%s: '%s': %s", what, text, msg);
        n.kind = SLT_JOB_NAME_TASKS;
    }
    *out = n;
    return 0;
}

bool slt_job_name_has_task(const struct slt_job_name *name, uint32_t array_job, uint32_t array_task)
{
    if (name->job != array_job)
        return false;
    switch (name->kind) {
    case SLT_JOB_NAME_ID:
        return true;
    case SLT_JOB_NAME_TASK:
        return name->index == array_task;
    case SLT_JOB_NAME_TASKS:
        return slt_array_spec_has(name->spec, array_task);
    default:
        return false;
    }
}
