/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_refusal.h - what prep/allot does with a job whose hold at start the bank refused,
 * and the reason text the user reads (StartRefusal, doc/slurm.md "When credit is short at
 * start").
 *
 * Design: a refusal for credit is often momentary (other runs hold credit that their
 * settles free seconds later), so by default the job waits: requeued, held with the reason,
 * and released for another try after StartRetryDelay.  Waiting only helps when credit can
 * free up: a job whose cost exceeds what its allocation has left in all (available + held
 * by other runs), or that has no allocation at all, is cancelled with a reason saying so,
 * as is every refused job under StartRefusal=cancel.  Slurm's part (requeue, hold, cancel)
 * is prep_allot.c's; this file only decides and words it.
 * No Slurm headers: unit-tested without slurmctld.
 */
#ifndef ALLOT_PLUGINS_PREP_ALLOT_PREP_REFUSAL_H
#define ALLOT_PLUGINS_PREP_ALLOT_PREP_REFUSAL_H

#include <stddef.h>

#include "allot/allot.h"

enum prep_refusal_action {
    PREP_REFUSAL_WAIT = 0, /* requeue, hold with the reason, retry after the delay */
    PREP_REFUSAL_CANCEL,   /* StartRefusal=cancel */
    PREP_REFUSAL_NEVER,    /* cancel: waiting cannot make the allocation cover it */
};

/* The action for the refused hold RES under StartRefusal (CANCEL_MODE: =cancel). */
enum prep_refusal_action prep_refusal_decide(int cancel_mode, const struct allot_job_result *res);

/*
 * prep_refusal_reason - the job's reason for ACTION into BUF (always terminated): the
 * bank's message RES->message behind a prefix naming what happens next ("allot: waiting
 * for credit, start retried every N s: ..." / "allot: cancelled, ...").
 */
void prep_refusal_reason(enum prep_refusal_action action, int retry_s,
                         const struct allot_job_result *res, char *buf, size_t size);

#endif
