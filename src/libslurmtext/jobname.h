/* SPDX-License-Identifier: GPL-3.0-or-later */
/* jobname.h - a job as a user names it to allot (doc/cli.md "Job ids"): "54" (a job, or a
 * whole job array or het job), "54_3" (task 3 of array 54), "54_[1-3,7]" (those tasks),
 * "60+1" (component 1 of het job 60), as Slurm prints them.  Steps ("54.batch") are not
 * jobs and are refused.
 *
 * Design: slt_jobid_parse reads the text; this keeps the forms that name jobs and checks a
 * task list with slt_array_spec_count, copying it so the name owns it.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_JOBNAME_H
#define ALLOT_LIBSLURMTEXT_JOBNAME_H

#include <stdbool.h>
#include <stdint.h>

#include "allot/error.h"

enum slt_job_name_kind {
    SLT_JOB_NAME_ID = 0, /* "54": job id 54, or array / het job 54 whole */
    SLT_JOB_NAME_TASK,   /* "54_3" */
    SLT_JOB_NAME_TASKS,  /* "54_[1-3]" */
    SLT_JOB_NAME_HET,    /* "60+1" */
};

#define SLT_JOB_NAME_SPEC_MAX 256

struct slt_job_name {
    enum slt_job_name_kind kind;
    uint32_t job;                     /* the job, array job or het job id (> 0) */
    uint32_t index;                   /* TASK: the task id; HET: the component offset */
    char spec[SLT_JOB_NAME_SPEC_MAX]; /* TASKS: the list inside the brackets */
};

/* Parse TEXT.  0, or -1 with ALLOT_EINVAL naming WHAT and the text (out untouched). */
int slt_job_name_parse(const char *text, const char *what, struct slt_job_name *out,
                       struct allot_error *err);

/* Whether an array task ARRAY_TASK of array job ARRAY_JOB is one NAME names (TASK, TASKS,
 * or ID naming the array job). */
bool slt_job_name_has_task(const struct slt_job_name *name, uint32_t array_job,
                           uint32_t array_task);

#endif
