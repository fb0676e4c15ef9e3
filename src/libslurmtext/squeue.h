/* SPDX-License-Identifier: GPL-3.0-or-later */
/* squeue.h - `squeue --steps -h -o "%i|%j"` lines ("12.0|wf42_j7", "12.batch|batch") and the
 * lookup of a step's numeric id by its name, which sstat needs (it takes ids, not names).
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_SQUEUE_H
#define ALLOT_LIBSLURMTEXT_SQUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libslurmtext/field.h"
#include "libslurmtext/jobid.h"

/* The -o format these functions read. */
#define SLT_SQUEUE_STEP_FORMAT "%i|%j"

struct slt_squeue_step {
    struct slt_jobid id;  /* "12.0" */
    struct slt_span name; /* borrows from the line; a name may itself contain '|' */
};

/* Parse one line.  The name is everything after the first '|'.  Errors: ALLOT_EINVAL
 * ("StepID: invalid job id '...'" or a missing separator); out untouched. */
int slt_squeue_step_parse(struct slt_span line, struct slt_squeue_step *out,
                          struct allot_error *err);

/* Scan buf[0..len) (squeue --steps output) for the numbered step of job `job` named `name`
 * and set *step.  An array task's steps are printed "<array job>_<task>.<step>"
 * (slt_jobid_is_job).  A step still pending is printed with "TDB" (22.05's spelling) or
 * "TBD" for its number and is passed over: it is not numbered yet.  When several match (a
 * name reused), the highest step id wins: the newest step.  Returns 1 found, 0 not found,
 * -1 with ALLOT_EPROTO naming the line for a line that does not parse (*step untouched
 * unless 1). */
int slt_squeue_find_step(const char *buf, size_t len, const struct slt_job_ref *job,
                         const char *name, uint32_t *step, struct allot_error *err);

#endif
