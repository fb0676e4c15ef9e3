/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bank.h - the money decisions of the job verbs (doc/design.md §3): which partition resource,
 * what billing, what maximum cost.  The denial text is libcore's (denial.h); the atomic
 * check-and-hold itself is store_hold() run by the writer.
 * Threads: reentrant; the store passed is the caller's read connection. */
#ifndef ALLOT_ALLOTD_BANK_H
#define ALLOT_ALLOTD_BANK_H

#include <stdint.h>

#include "allot/error.h"
#include "libstore/store.h"

struct partcache;

struct bank_job {
    const char *cluster, *account, *partition;
    const char *tres;      /* requested or allocated TRES, Slurm syntax */
    int64_t billing_micro; /* > 0: given by the caller; 0: computed from tres */
    int64_t time_limit_s;
    const char *tres_field; /* the request's key for tres, named in errors; NULL = "tres" */
};

struct bank_cost {
    char resource[ALLOT_NAME_MAX]; /* the partition's resource type */
    int64_t billing_micro;
    int64_t cost_sumin; /* money_hold_sumin(billing, time limit) */
};

/* Resource and billing of a job from its partition's weights (read through pc, the
 * daemon's partition cache); EINVAL naming the field. */
int bank_cost(struct partcache *pc, store_t *st, const struct bank_job *j, struct bank_cost *out,
              struct allot_error *err);

/* The billing of TRES (Slurm syntax) under partition p's weights, as a hold prices it;
 * EINVAL naming the field ("tres" or the partition's billing_weights). */
int bank_billing(const struct partition *p, const char *field, const char *tres,
                 int64_t *billing_micro, struct allot_error *err);

/* Submit-time limits (doc/design.md §4.3) for an admission (api_limit.c): 0 = within limits,
 * 1 = denied at submission (Slurm's rule, e.g. DenyOnLimit) with the reason in msg,
 * 2 = accepted but Slurm will keep it pending, reason in msg; -1 with err (no
 * association: ENOENT naming it). */
int limit_check_admit(store_t *st, const char *cluster, const char *user, const char *account,
                      const char *partition, const char *qos, int64_t time_limit_s,
                      const char *tres, char *msg, size_t msgsz, struct allot_error *err);

#endif
