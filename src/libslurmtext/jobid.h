/* SPDX-License-Identifier: GPL-3.0-or-later */
/* jobid.h - Slurm job and step ids as sacct, sstat and squeue print them:
 * "3", "3.batch", "3.extern", "3.interactive", "3.0", "3+0" (het component), "3+0.1",
 * "3_7" (array task), "3_[1-5%2]" (pending array, spec kept as text), "3_7.batch",
 * "3.2+0" (component 0 of a het step, as squeue and sstat print one).
 *
 * Design: parsed into plain integers plus an enum for the step kind, with no allocation; the
 * array spec of a pending array is a span into the caller's text.  Formatting gives back
 * Slurm's text exactly for everything but the array spec, which is copied verbatim.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_JOBID_H
#define ALLOT_LIBSLURMTEXT_JOBID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libslurmtext/field.h"

enum slt_step_kind {
    SLT_STEP_NONE = 0,    /* a job (allocation) row: no ".step" */
    SLT_STEP_NUMBERED,    /* ".N": step holds N */
    SLT_STEP_BATCH,       /* ".batch" */
    SLT_STEP_EXTERN,      /* ".extern" */
    SLT_STEP_INTERACTIVE, /* ".interactive" (salloc's step in 22.05) */
};

struct slt_jobid {
    uint32_t job; /* the (first) job id */
    bool has_het; /* "+N" */
    uint32_t het_offset;
    bool has_array_task; /* "_N" */
    uint32_t array_task;
    struct slt_span array_spec; /* "_[...]" text inside the brackets; n = 0 if none */
    enum slt_step_kind step_kind;
    uint32_t step;     /* for SLT_STEP_NUMBERED */
    bool has_step_het; /* ".N+C": component C of het step N */
    uint32_t step_het_comp;
};

/* Parse text[0..n).  Errors: ALLOT_EINVAL naming field ("JobID") and text; out untouched.
 * array_spec borrows from text. */
int slt_jobid_parse(const char *text, size_t n, const char *field, struct slt_jobid *out,
                    struct allot_error *err);

/* Write id as Slurm prints it.  Returns the length or -1 with ALLOT_ETOOBIG (buf untouched). */
int slt_jobid_format(const struct slt_jobid *id, char *buf, size_t len, struct allot_error *err);

/* A job as a program running in it knows it: SLURM_JOB_ID, and for an array task also
 * SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID.  squeue --steps and sacct print an array
 * task's rows as "<array job>_<task>[.<step>]" (sstat as "<job>.<step>"), so telling
 * whether a printed id is this job's takes both. */
struct slt_job_ref {
    uint32_t job;
    bool is_array_task;
    uint32_t array_job, array_task;
};

/* Whether id, as squeue or sacct prints it, is ref's job or one of its steps:
 * "<job>[.<step>]", or for an array task also "<array job>_<task>[.<step>]".  A het
 * component ("+N") or a pending array ("_[...]") never is. */
bool slt_jobid_is_job(const struct slt_jobid *id, const struct slt_job_ref *ref);

#endif
