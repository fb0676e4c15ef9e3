/* SPDX-License-Identifier: GPL-3.0-or-later */
/* post.h - file a step record in allotd (POST /v1/steps through liballot), so the bank
 * keeps each step's metrics under its job (doc/step.md "Recording in allotd").
 *
 * Recording is a side effect of the user's command, never a condition of it: every failure
 * (no cluster name, allotd down, refused, timeout) is a warning and the caller's exit code
 * stays the command's.  The request is bounded by timeout_ms.  The record is filed under
 * (cluster, job, step name, attempt); allotd answers a resent identical record as a replay,
 * so a retry by the user (same attempt) is harmless and a new attempt needs a new number.
 * Thread rule: single-threaded program.
 */
#ifndef ALLOT_STEP_POST_H
#define ALLOT_STEP_POST_H

#include <jansson.h>
#include <stdint.h>

struct step_post {
    const char *url;     /* allotd URL; NULL = $ALLOT_URL (liballot's default otherwise) */
    const char *cluster; /* Slurm cluster name, required */
    uint32_t job_id;
    const char *step_name;
    int64_t attempt; /* >= 1 */
    long timeout_ms; /* whole request */
};

/* POST {cluster, job_id, step_name, attempt, record} to /v1/steps.  rec is borrowed.
 * Returns 1 when newly recorded, 2 when allotd already had it (replay), -1 after logging a
 * warning that says why it was not recorded. */
int step_post_record(const struct step_post *p, json_t *rec);

#endif
