/* SPDX-License-Identifier: GPL-3.0-or-later */
/* submit.h - hold-at-submit in allotd (api_submit.c; doc/slurm.md "Hold at submit").
 * An admit with a submit_token takes a provisional hold keyed by the token; the prolog's hold
 * with the same token moves it to the real job (store_submit_bind); the tick thread releases
 * provisional holds left unbound for SubmitHoldTTL seconds. */
#ifndef ALLOT_ALLOTD_SUBMIT_H
#define ALLOT_ALLOTD_SUBMIT_H

#include <stdint.h>

#include "allotd/allotd.h"
#include "allotd/bank.h"
#include "allotd/request.h"

/* The admitted job, as api_job_admit parsed and priced it (borrowed strings). */
struct api_submit_job {
    const char *cluster, *user, *account, *partition, *qos, *tres;
    int64_t time_limit_s;
    const struct bank_cost *cost;
    int64_t tasks; /* a job array's tasks: the hold is tasks x cost, one share per task */
};

/* The largest job array admit prices (Slurm's largest MaxArraySize). */
#define API_ADMIT_TASKS_MAX 4000001

/* The admit's read-only answer, returned with the hold's outcome. */
struct api_submit_admit {
    int64_t alloc_id;
    char payer_account[ALLOT_NAME_MAX];
    int64_t available_sumin, held_sumin;
    char pending_reason[ALLOT_MSG_MAX]; /* "" = none */
};

/* Finish an admitted POST /v1/jobs/admit that carries TOKEN: defer the provisional hold to
 * the writer (req_defer_write) and answer the admit fields of A plus submit_token, held,
 * replay, job and balance; a hold refused by the atomic check turns the answer into the
 * 402 EFUNDS denial.  Copies everything it needs from J and A.  Returns 0, or -1 with err
 * (EINVAL: token out of range).  Request thread. */
int api_submit_admit_hold(struct req *r, int64_t token, const struct api_submit_job *j,
                          const struct api_submit_admit *a, struct allot_error *err);

/* 1 when allot.conf says HoldMode=submit (submit tokens are accepted and swept). */
int api_submit_enabled(struct allotd *d);
/* One sweep of unbound provisional holds older than SubmitHoldTTL, through the writer; a
 * no-op returning 0 unless HoldMode=submit.  Returns how many were released, or -1 with err.
 * Tick thread (any non-writer thread). */
int api_submit_sweep(struct allotd *d, struct allot_error *err);

#endif
