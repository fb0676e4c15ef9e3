/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_submit.c - hold-at-submit (DESIGN §3, HoldMode=submit): the provisional hold taken
 * when job_submit admits a job, its binding to the real job id at start, and the sweep of
 * orphans.
 *
 * Design: a provisional hold is an ordinary JOB_HELD run (store_hold, so the same atomic
 * check-and-hold and the same ledger) keyed (cluster, submit token, run 0).  Tokens are
 * >= STORE_SUBMIT_TOKEN_MIN = 2^32 and Slurm job ids are 32-bit, so the two key spaces never
 * meet and no schema change is needed.  Binding releases the provisional run and holds the
 * real run in the caller's transaction: the release gives back exactly what the new hold
 * takes when the price did not change, so the second check cannot fail then; a larger price
 * at start (allocated TRES above the request) is checked for the difference only, and may
 * be refused like any hold (no overdraft, ever).  Invariant: every provisional run is either
 * HELD (waiting for its job), or RELEASED (bound, cancelled, or swept after the TTL).
 */
#include <stdlib.h>
#include <string.h>

#include "libstore/store.h"

int store_submit_token_valid(int64_t token)
{
    return token >= STORE_SUBMIT_TOKEN_MIN && token <= STORE_SUBMIT_TOKEN_MAX;
}

int store_submit_bind(store_t *st, int64_t token, const struct hold_req *req,
                      struct hold_result *res, struct allot_error *err)
{
    if (!store_submit_token_valid(token))
        return allot_errorf(err, ALLOT_EINVAL, "submit_token: %lld is not a submit token",
                            (long long)token);
    if (store_submit_token_valid(req->job_id))
        return allot_errorf(err, ALLOT_EINVAL, "job_id: %lld is a submit token, not a job id",
                            (long long)req->job_id);
    struct job p;
    struct allot_error gerr = {0};
    if (store_job_get(st, req->cluster, token, 0, &p, &gerr) < 0) {
        if (gerr.code != ALLOT_ENOENT) {
            if (err)
                *err = gerr;
            return -1;
        }
        /* Swept already (or never taken): the real hold checks funds on its own. */
        return store_hold(st, req, res, err);
    }
    /* Only the job that made the token may take its credit over. */
    if (p.status == JOB_HELD && !strcmp(p.user, req->user) && !strcmp(p.account, req->account)) {
        char comment[96];
        struct settle_result sr;
        snprintf(comment, sizeof comment, "submit hold bound to job %lld run %d",
                 (long long)req->job_id, (int)req->run);
        if (store_release(st, req->cluster, token, 0, req->actor, comment, req->now_s, &sr,
                          err) < 0)
            return -1;
    }
    return store_hold(st, req, res, err);
}

struct sweep_keys {
    int64_t cutoff_s;
    struct job *v; /* only cluster and job_id are used */
    size_t n, cap;
};

static int on_held(const struct job *j, void *arg)
{
    struct sweep_keys *k = arg;
    if (!store_submit_token_valid(j->job_id) || j->updated_s >= k->cutoff_s || k->n == k->cap)
        return 0;
    k->v[k->n++] = *j;
    return 0;
}

int store_submit_sweep(store_t *st, int64_t ttl_s, const char *actor, int64_t now_s, int max,
                       int *released, struct allot_error *err)
{
    *released = 0;
    if (ttl_s < 1 || max < 1)
        return allot_errorf(err, ALLOT_EINVAL, "submit sweep: ttl and max must be positive");
    struct sweep_keys k = {.cutoff_s = now_s - ttl_s, .cap = (size_t)max};
    k.v = calloc(k.cap, sizeof *k.v);
    if (!k.v)
        return allot_errorf(err, ALLOT_ENOMEM, "submit sweep: out of memory");
    struct job_filter f = {.status = JOB_HELD};
    /* Collected first: the list statement must be finished before the releases write. */
    int rc = store_job_list(st, &f, on_held, &k, err);
    for (size_t i = 0; rc == 0 && i < k.n; i++) {
        struct settle_result sr;
        char comment[64];
        snprintf(comment, sizeof comment, "submit hold not bound within %llds",
                 (long long)ttl_s);
        if (store_release(st, k.v[i].cluster, k.v[i].job_id, 0, actor, comment, now_s, &sr,
                          err) < 0)
            rc = -1;
        else if (!sr.replay)
            (*released)++;
    }
    free(k.v);
    return rc;
}
