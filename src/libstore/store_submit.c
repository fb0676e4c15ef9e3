/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_submit.c - hold-at-submit (doc/design.md §3.8, HoldMode=submit): the provisional hold taken
 * when job_submit admits a job, its binding to the real job id at start, and the sweep of
 * orphans.
 *
 * Design: a provisional hold is an ordinary JOB_HELD run (store_hold, so the same atomic
 * check-and-hold and the same ledger) keyed (cluster, submit token, run).  Tokens are
 * >= STORE_SUBMIT_TOKEN_MIN = 2^32 and Slurm job ids are 32-bit, so the two key spaces never
 * meet and no schema change is needed.  Binding releases the provisional run and holds the
 * real run in the caller's transaction: the release gives back exactly what the new hold
 * takes when the price did not change, so the second check cannot fail then; a larger price
 * at start (allocated TRES above the request) is checked for the difference only, and may
 * be refused like any hold (no overdraft, ever).
 * A job array's provisional hold covers all its tasks (tasks x one task's cost, the cost of
 * one being money_hold_sumin of the run's billing and time limit).  Each task's start takes
 * one share: the provisional run is released and what is left held again as the token's
 * next run, so every run keeps one hold and at most one release (store_check), the ledger
 * shows each move, and the re-hold cannot fail (the release just gave back more).  Tasks
 * cancelled while pending are given back by asking to keep only the shares of the tasks
 * that may still start (an absolute number, so a repeat changes nothing).  Invariant: every
 * provisional run is either HELD (the token's last run, waiting for its tasks), or RELEASED (bound,
 * cancelled, moved on, or swept after the TTL).
 */
#include <stdlib.h>
#include <string.h>

#include "libcore/money.h"
#include "libstore/store.h"
#include "libutil/text.h"

int store_submit_token_valid(int64_t token)
{
    return token >= STORE_SUBMIT_TOKEN_MIN && token <= STORE_SUBMIT_TOKEN_MAX;
}

/* The token's last run, the one a bind or release works on. */
struct last_run {
    struct job j;
    int found;
};

static int on_run(const struct job *j, void *arg)
{
    struct last_run *l = arg;
    if (!l->found || j->run > l->j.run) {
        l->j = *j;
        l->found = 1;
    }
    return 0;
}

/* The token's last provisional run into *P: 1 when it is still held, 0 when there is none
 * or it is not held, -1 with err. */
static int provisional(store_t *st, const char *cluster, int64_t token, struct job *p,
                       struct allot_error *err)
{
    struct last_run l = {.found = 0};
    memset(p, 0, sizeof *p);
    struct job_filter f = {.cluster = cluster, .job_id = token, .status = -1};
    if (store_job_list(st, &f, on_run, &l, err) < 0)
        return -1;
    if (!l.found)
        return 0;
    *p = l.j;
    return p->status == JOB_HELD;
}

/* Release SHARES tasks' shares of provisional run P (0: all of it): P is released and what
 * is left held again as the token's next run, on the allocation that held P (P's start
 * picks it again).  RESOURCE: the partition's resource type, for that lookup. */
static int take_shares(store_t *st, const struct job *p, int64_t shares, const char *resource,
                       const char *actor, const char *comment, int64_t now_s,
                       struct allot_error *err)
{
    int64_t one = 0, left = 0;
    if (shares > 0 && money_hold_sumin(p->billing_micro, p->time_limit_s, &one, NULL) == 0 &&
        one > 0 && p->hold_sumin / one > shares)
        left = p->hold_sumin - one * shares;
    struct settle_result sr;
    if (store_release(st, p->cluster, p->job_id, p->run, actor, comment, now_s, &sr, err) < 0)
        return -1;
    if (left <= 0)
        return 0;
    struct hold_req q;
    memset(&q, 0, sizeof q);
    text_copy(q.cluster, sizeof q.cluster, p->cluster);
    q.job_id = p->job_id;
    q.run = p->run + 1;
    text_copy(q.user, sizeof q.user, p->user);
    text_copy(q.account, sizeof q.account, p->account);
    text_copy(q.partition, sizeof q.partition, p->partition);
    text_copy(q.qos, sizeof q.qos, p->qos);
    text_copy(q.resource, sizeof q.resource, resource);
    q.submit_s = p->submit_s;
    q.start_s = p->start_s;
    q.time_limit_s = p->time_limit_s;
    q.billing_micro = p->billing_micro;
    text_copy(q.req_tres, sizeof q.req_tres, p->req_tres);
    q.amount_sumin = left;
    q.tasks = left / one;
    text_copy(q.actor, sizeof q.actor, actor);
    q.now_s = now_s;
    struct hold_result hr;
    return store_hold(st, &q, &hr, err);
}

/* 1 when (cluster, job_id, run) has a record (a bind or release of it was done), 0 if not. */
static int run_known(store_t *st, const char *cluster, int64_t job_id, int32_t run,
                     struct allot_error *err)
{
    struct job j;
    struct allot_error gerr = {0};
    if (store_job_get(st, cluster, job_id, run, &j, &gerr) == 0)
        return 1;
    if (gerr.code == ALLOT_ENOENT)
        return 0;
    if (err)
        *err = gerr;
    return -1;
}

static int check_ids(int64_t token, int64_t job_id, struct allot_error *err)
{
    if (!store_submit_token_valid(token))
        return allot_errorf(err, ALLOT_EINVAL, "submit_token: %lld is not a submit token",
                            (long long)token);
    if (store_submit_token_valid(job_id))
        return allot_errorf(err, ALLOT_EINVAL, "job_id: %lld is a submit token, not a job id",
                            (long long)job_id);
    return 0;
}

int store_submit_bind(store_t *st, int64_t token, const struct hold_req *req,
                      struct hold_result *res, struct allot_error *err)
{
    if (check_ids(token, req->job_id, err) < 0)
        return -1;
    /* A repeat of this run's hold is a replay: it must not take a second share. */
    int known = run_known(st, req->cluster, req->job_id, req->run, err);
    if (known < 0)
        return -1;
    struct job p;
    int held = known ? 0 : provisional(st, req->cluster, token, &p, err);
    if (held < 0)
        return -1;
    /* Swept already (or never taken): the real hold checks funds on its own.  Only the job
     * that made the token may take its credit over. */
    if (held && !strcmp(p.user, req->user) && !strcmp(p.account, req->account)) {
        char comment[96];
        snprintf(comment, sizeof comment, "submit hold bound to job %lld run %d",
                 (long long)req->job_id, (int)req->run);
        if (take_shares(st, &p, 1, req->resource, req->actor, comment, req->now_s, err) < 0)
            return -1;
    }
    return store_hold(st, req, res, err);
}

int store_submit_release_all(store_t *st, const char *cluster, int64_t token, int64_t keep,
                             const char *actor, const char *comment, int64_t now_s,
                             struct settle_result *res, struct allot_error *err)
{
    if (!store_submit_token_valid(token))
        return allot_errorf(err, ALLOT_EINVAL, "submit_token: %lld is not a submit token",
                            (long long)token);
    if (keep < 0)
        return allot_errorf(err, ALLOT_EINVAL, "keep_tasks: must not be negative");
    struct job p;
    int held = provisional(st, cluster, token, &p, err);
    if (held < 0)
        return -1;
    int64_t one = 0;
    if (held && keep > 0) {
        /* Keep KEEP tasks' shares: give back only what is above them (never more). */
        if (money_hold_sumin(p.billing_micro, p.time_limit_s, &one, err) < 0)
            return -1;
        if (one <= 0 || p.hold_sumin <= one * keep) {
            memset(res, 0, sizeof *res);
            res->replay = 1;
            res->job = p;
            return 0;
        }
        struct partition part;
        if (store_partition_get(st, cluster, p.partition, &part, err) < 0 ||
            take_shares(st, &p, p.hold_sumin / one - keep, part.resource, actor, comment, now_s,
                        err) < 0)
            return -1;
        memset(res, 0, sizeof *res);
        /* The run that holds the rest now. */
        return store_job_get(st, cluster, token, p.run + 1, &res->job, err);
    }
    /* None at all: store_release says the run is not known. */
    return store_release(st, cluster, token, p.job_id ? p.run : 0, actor, comment, now_s, res, err);
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
        snprintf(comment, sizeof comment, "submit hold not bound within %llds", (long long)ttl_s);
        if (store_release(st, k.v[i].cluster, k.v[i].job_id, k.v[i].run, actor, comment, now_s, &sr,
                          err) < 0)
            rc = -1;
        else if (!sr.replay)
            (*released)++;
    }
    free(k.v);
    return rc;
}
