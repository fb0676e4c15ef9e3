/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_settle.h - a settle's body, its checks and its write, shared by POST /v1/jobs/settle
 * (api_job.c) and POST /v1/jobs/settle/bulk (api_job_bulk.c), so that a settle in a bulk
 * request is read, checked and written exactly as the single verb does it.
 * Threads: as the handlers (request thread for fields/check/price, writer for apply). */
#ifndef ALLOT_ALLOTD_API_SETTLE_H
#define ALLOT_ALLOTD_API_SETTLE_H

#include <stddef.h>
#include <stdint.h>

#include "allotd/json.h"
#include "allotd/request.h"
#include "libstore/store.h"

#define API_SETTLE_FIELDS 20

/* A settle body's fields that are not settle_req's own. */
struct settle_in {
    int64_t run, billing, billing_micro;
    char source[ALLOT_NAME_MAX];
};

/* Fill f[API_SETTLE_FIELDS] with the body's fields, reading into q, ids and in (defaults
 * set here).  Returns API_SETTLE_FIELDS. */
size_t api_settle_fields(struct settle_req *q, struct job_slurm_ids *ids, struct settle_in *in,
                         struct jfield *f);
/* After the fields were read: check them (cluster served, ids, run, state, source, times,
 * billing) and complete q (run, billing, source, actor, now).  0, or -1 with err. */
int api_settle_check(struct req *r, struct settle_req *q, const struct job_slurm_ids *ids,
                     const struct settle_in *in, struct allot_error *err);
/* A settle naming its account and partition (a run that may never have been held): the
 * partition's resource, and its billing from alloc_tres.  0, or -1 with err. */
int api_settle_price(struct req *r, struct settle_req *q, const struct settle_in *in,
                     struct allot_error *err);
/* In the writer's transaction: store_settle (unless done: the group commit applied it), the
 * Slurm ids, the policy thresholds.  0, or -1 with err. */
int api_settle_apply(store_t *st, const struct settle_req *q, const struct job_slurm_ids *ids,
                     int done, struct settle_result *res, struct allot_error *err);

#endif
