/* SPDX-License-Identifier: GPL-3.0-or-later */
/* denial.h - the text a user reads when a job is refused for lack of credit (doc/design.md §3.5):
 * the account, the allocation that would pay, what is available, the job's maximum cost and its
 * parts (billing x time limit), what running jobs and what pending jobs (held at submit,
 * HoldMode=submit) hold, and what to change.
 *
 * Design: one formatter for both places a refusal is decided, admission (job_submit,
 * `allot job admit`) and the atomic hold at start (PrEp, recorded as a failure), so the
 * user reads the same sentence whichever refused the job.
 * Thread rule: pure function, reentrant.
 */
#ifndef ALLOT_LIBCORE_DENIAL_H
#define ALLOT_LIBCORE_DENIAL_H

#include <stddef.h>
#include <stdint.h>

struct denial {
    int64_t job_id; /* > 0 at the hold (the text starts "job J run R: "); 0 at admission */
    int run;
    const char *account;  /* the job's account */
    const char *resource; /* its partition's resource type */
    const char *cluster;
    int64_t at_s;        /* when the payer was looked for (the hold's start, or now) */
    int64_t cost_sumin;  /* one job's, or one task's of an array */
    int64_t tasks;       /* > 1: a job array of that many tasks, each costing cost_sumin */
    int64_t extra_sumin; /* > 0: what the other components of its het job need besides */
    int64_t billing_micro;
    int64_t time_limit_s;
    /* The payer found: alloc_id 0 means none, for the account or any ancestor. */
    int64_t alloc_id;
    const char *payer_account;
    int64_t available_sumin, held_sumin;
    int64_t held_pending_sumin; /* of held_sumin: held at submit for jobs still pending */
};

/* Write d's text into buf (size bytes, truncated if it must be; always terminated when
 * size > 0). */
void denial_format(char *buf, size_t size, const struct denial *d);

#endif
