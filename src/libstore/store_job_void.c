/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_job_void.c - a run the Slurm plugins cancelled before it started (store_void).
 *
 * With FailMode=closed and allotd unreachable at the hold, prep/allot cancels the job and
 * later tells allotd so.  The run is written as a released run with no hold and no charge,
 * marked settle_source "void": store_settle and store_release answer every later call on a
 * released run as a replay, so whoever settles it afterwards (the plugin's spool, the
 * agent's sacct pass, an operator) debits nothing.  A failure row (stage "hold") keeps the
 * plugin's reason where `allot failures` shows refusals.  If the hold did reach allotd and
 * only its answer was lost, the run is held: its hold is released (store_release) and the
 * run marked void the same way.  One write transaction, like every job verb.
 */
#include <string.h>

#include "libstore/store_int.h"
#include "libutil/text.h"

static const char SQL_JOB_VOID_MARK[] =
    "UPDATE jobs SET settle_source = 'void', slurm_state = 'CANCELLED', updated_s = $1 "
    "WHERE cluster = $2 AND job_id = $3 AND run = $4";

static int void_validate(const struct void_req *r, struct allot_error *err)
{
    if (model_check_name("cluster", r->cluster, 0, err) < 0 ||
        model_check_name("user", r->user, 0, err) < 0 ||
        model_check_name("account", r->account, 0, err) < 0 ||
        model_check_name("partition", r->partition, 1, err) < 0 ||
        model_check_name("qos", r->qos, 1, err) < 0 ||
        model_check_name("actor", r->actor, 1, err) < 0)
        return -1;
    if (r->job_id <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "job_id: must be positive");
    if (r->run < 0)
        return allot_errorf(err, ALLOT_EINVAL, "run: must not be negative");
    if (r->submit_s < 0 || r->start_s < 0 || r->time_limit_s < 0)
        return allot_errorf(err, ALLOT_EINVAL, "submit, start, time_limit_s: must not be negative");
    if (!memchr(r->alloc_tres, '\0', sizeof r->alloc_tres) ||
        !memchr(r->reason, '\0', sizeof r->reason))
        return allot_errorf(err, ALLOT_EINVAL, "alloc_tres or reason: too long");
    return 0;
}

static int void_mark(store_t *st, const struct void_req *r, int64_t now, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_JOB_VOID_MARK, SQL_JOB_VOID_MARK, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, now);
    db_bind_text(s, 2, r->cluster);
    db_bind_int64(s, 3, r->job_id);
    db_bind_int64(s, 4, r->run);
    return db_run(s, err);
}

static int void_failure(store_t *st, const struct void_req *r, int64_t now, struct allot_error *err)
{
    struct failure f;
    memset(&f, 0, sizeof f);
    text_copy(f.cluster, sizeof f.cluster, r->cluster);
    f.job_id = r->job_id;
    f.run = r->run;
    text_copy(f.user, sizeof f.user, r->user);
    text_copy(f.account, sizeof f.account, r->account);
    text_copy(f.partition, sizeof f.partition, r->partition);
    memcpy(f.stage, "hold", 5);
    f.time_s = now;
    /* The reason is cut to fit the message (a reason is an error text, far shorter). */
    snprintf(f.message, sizeof f.message, "cancelled by allot before start, not charged: %.*s",
             (int)(sizeof f.message - 64),
             r->reason[0] ? r->reason : "the bank did not answer the hold");
    return store_failure_add(st, &f, err);
}

int store_void(store_t *st, const struct void_req *req, struct settle_result *res,
               struct allot_error *err)
{
    struct job j;
    struct allot_error nf = {0};
    if (store_ready_write(st, "void", err) < 0 || void_validate(req, err) < 0)
        return -1;
    memset(res, 0, sizeof *res);
    int64_t now = store_now_or(req->now_s);
    if (store_job_get(st, req->cluster, req->job_id, req->run, &j, &nf) == 0) {
        if (j.status != JOB_HELD) {
            /* Settled, released or refused: its outcome stands (store.h). */
            res->replay = 1;
            res->job = j;
            return 0;
        }
        if (store_release(st, req->cluster, req->job_id, req->run, req->actor,
                          "void: cancelled by allot before start", now, res, err) < 0 ||
            void_mark(st, req, now, err) < 0 || void_failure(st, req, now, err) < 0)
            return -1;
        memcpy(res->job.settle_source, "void", 5);
        memcpy(res->job.slurm_state, "CANCELLED", 10);
        return 0;
    }
    if (nf.code != ALLOT_ENOENT) {
        if (err)
            *err = nf;
        return -1;
    }
    memset(&j, 0, sizeof j);
    text_copy(j.cluster, sizeof j.cluster, req->cluster);
    j.job_id = req->job_id;
    j.run = req->run;
    text_copy(j.user, sizeof j.user, req->user);
    text_copy(j.account, sizeof j.account, req->account);
    text_copy(j.partition, sizeof j.partition, req->partition);
    text_copy(j.qos, sizeof j.qos, req->qos);
    j.submit_s = req->submit_s;
    j.start_s = req->start_s;
    j.end_s = req->start_s;
    text_copy(j.alloc_tres, sizeof j.alloc_tres, req->alloc_tres);
    j.time_limit_s = req->time_limit_s;
    memcpy(j.slurm_state, "CANCELLED", 10);
    j.status = JOB_RELEASED;
    memcpy(j.settle_source, "void", 5);
    j.updated_s = now;
    if (store_job_insert(st, &j, err) < 0 || void_failure(st, req, now, err) < 0)
        return -1;
    res->job = j;
    res->no_policy = 1;
    return 0;
}
