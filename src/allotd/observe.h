/* SPDX-License-Identifier: GPL-3.0-or-later */
/* observe.h - allot.conf EnforceMode=observe in allotd (api_observe.c; doc/adopt.md). */
#ifndef ALLOT_ALLOTD_OBSERVE_H
#define ALLOT_ALLOTD_OBSERVE_H

#include <stdint.h>

#include "allotd/request.h"

/* 1 when the request's configuration says EnforceMode=observe. */
int api_observe_on(const struct req *r);

/* An admission the bank refuses, as api_job_admit computed it (borrowed strings). */
struct api_observe_refusal {
    const char *cluster, *user, *account, *partition;
    int limit;           /* 1: a limit refused it (ELIMIT), 0: credit (EFUNDS) */
    const char *message; /* what the user would have read at sbatch */
    int64_t now_s, alloc_id, billing_micro, cost_sumin, available_sumin, held_sumin;
    int64_t total_sumin;        /* a job array's cost, all tasks (0: cost_sumin) */
    const char *payer_account;  /* may be NULL */
    const char *pending_reason; /* may be NULL */
};

/* Observe mode: record X as an observed admission failure (a deferred write) and answer
 * 200 admitted, "observed": true, with X's message and numbers.  Always returns 0. */
int api_observe_admit(struct req *r, const struct api_observe_refusal *x, struct allot_error *err);

/* GET /v1/reports/observe?since=&account=&cluster=: the observed refusals per account. */
int api_report_observe(struct req *r, struct allot_error *err);

#endif
