/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_job_adjust.c - re-pricing a held run whose time limit changed (store.h
 * store_hold_adjust).
 *
 * Design: the difference between the new price and the hold is one ledger entry, a checked
 * hold (the same atomic check-and-hold as store_hold) or an unchecked release; the run's
 * row then records the new hold and time limit, so the settle releases exactly what is held
 * and caps the charge at it.  The price is money_hold_sumin at the billing the run was held
 * at, as its settle charges (times its tasks for a job array's submit hold).  A refusal
 * moves nothing and records a failure with the denial text an admission would give,
 * counting the run's own hold as available to it.
 */
#include <stdio.h>
#include <string.h>

#include "libcore/denial.h"
#include "libcore/money.h"
#include "libstore/store_int.h"
#include "libutil/text.h"

static const char SQL_JOB_ADJUST[] =
    "UPDATE jobs SET hold_sumin = $1, time_limit_s = $2, updated_s = $3 "
    "WHERE cluster = $4 AND job_id = $5 AND run = $6 AND status = 'held'";

static void adjust_failure(const struct hold_adjust_req *q, const struct job *j, int64_t amount,
                           int64_t now, struct hold_adjust_result *res)
{
    struct failure *f = &res->failure;
    memset(f, 0, sizeof *f);
    text_copy(f->cluster, sizeof f->cluster, j->cluster);
    f->job_id = j->job_id;
    f->run = j->run;
    text_copy(f->user, sizeof f->user, j->user);
    text_copy(f->account, sizeof f->account, j->account);
    text_copy(f->partition, sizeof f->partition, j->partition);
    text_copy(f->stage, sizeof f->stage, "hold");
    f->time_s = now;
    f->alloc_id = j->alloc_id;
    /* What this run could have in all: the balance's available plus its own hold. */
    f->needed_sumin = amount;
    f->available_sumin = res->bal.available_sumin + j->hold_sumin;
    f->held_sumin = res->bal.held_sumin - j->hold_sumin;
    struct denial d = {.job_id = store_submit_token_valid(j->job_id) ? 0 : j->job_id,
                       .run = j->run,
                       .account = j->account,
                       .resource = res->alloc.resource,
                       .cluster = j->cluster,
                       .at_s = now,
                       .cost_sumin = amount,
                       .billing_micro = j->billing_micro,
                       .time_limit_s = q->time_limit_s,
                       .alloc_id = j->alloc_id,
                       .payer_account = res->alloc.account,
                       .available_sumin = f->available_sumin,
                       .held_sumin = f->held_sumin};
    static const char head[] = "time limit not raised: ";
    char text[ALLOT_MSG_MAX - sizeof head + 1]; /* so that the whole fits the failure */
    denial_format(text, sizeof text, &d);
    snprintf(f->message, sizeof f->message, "%s%s", head, text);
}

int store_hold_adjust(store_t *st, const struct hold_adjust_req *q, struct hold_adjust_result *res,
                      struct allot_error *err)
{
    if (store_ready_write(st, "hold adjust", err) < 0)
        return -1;
    if (model_check_name("actor", q->actor, 1, err) < 0)
        return -1;
    if (q->time_limit_s <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "time_limit_s: must be positive");
    memset(res, 0, sizeof *res);
    struct job j;
    if (store_job_get(st, q->cluster, q->job_id, q->run, &j, err) < 0)
        return -1;
    if (j.status != JOB_HELD)
        return allot_errorf(
            err, ALLOT_ECONFLICT, "job %lld run %d on cluster '%s' is %s: no hold to re-price",
            (long long)j.job_id, (int)j.run, j.cluster, model_job_status_name(j.status));
    if (store_alloc_read(st, j.alloc_id, &res->alloc, &res->bal, err) < 0)
        return -1;
    res->old_hold_sumin = j.hold_sumin;
    res->old_time_limit_s = j.time_limit_s;
    res->job = j;
    if (j.time_limit_s == q->time_limit_s) {
        res->replay = 1;
        return 0;
    }
    int64_t amount, one_old;
    if (money_hold_sumin(j.billing_micro, q->time_limit_s, &amount, err) < 0 ||
        money_hold_sumin(j.billing_micro, j.time_limit_s, &one_old, err) < 0)
        return allot_error_prefix(err, "time_limit_s");
    /* A job array's submit hold is its tasks' shares (store_submit.c): each re-priced. */
    if (store_submit_token_valid(j.job_id) && one_old > 0 && j.hold_sumin / one_old > 1 &&
        money_mul(amount, j.hold_sumin / one_old, &amount) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "time_limit_s: the array's hold is too large");
    int64_t now = store_now_or(q->now_s);
    int64_t delta = amount - j.hold_sumin;
    if (delta != 0) {
        struct ledger_entry e;
        memset(&e, 0, sizeof e);
        e.alloc_id = j.alloc_id;
        e.kind = delta > 0 ? LEDGER_HOLD : LEDGER_RELEASE;
        e.amount_sumin = delta > 0 ? delta : -delta;
        text_copy(e.actor, sizeof e.actor, q->actor);
        e.time_s = now;
        snprintf(e.comment, sizeof e.comment, "time limit %lld -> %lld min",
                 (long long)(j.time_limit_s / 60), (long long)(q->time_limit_s / 60));
        text_copy(e.cluster, sizeof e.cluster, j.cluster);
        e.job_id = j.job_id;
        e.run = j.run;
        int rc = store_ledger_apply_noid(st, &e, delta > 0, err);
        if (rc < 0)
            return -1;
        if (rc == 1) { /* the raise is more than the allocation has available */
            res->refused = 1;
            adjust_failure(q, &j, amount, now, res);
            return store_failure_add(st, &res->failure, err);
        }
    }
    db_stmt_t *s = store_stmt(st, STMT_JOB_ADJUST, SQL_JOB_ADJUST, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, amount);
    db_bind_int64(s, 2, q->time_limit_s);
    db_bind_int64(s, 3, now);
    db_bind_text(s, 4, j.cluster);
    db_bind_int64(s, 5, j.job_id);
    db_bind_int64(s, 6, j.run);
    if (db_run(s, err) < 0)
        return -1;
    res->delta_sumin = delta;
    res->job.hold_sumin = amount;
    res->job.time_limit_s = q->time_limit_s;
    res->job.updated_s = now;
    res->bal.held_sumin += delta;
    res->bal.available_sumin -= delta;
    return 0;
}
