/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_submit.c - hold-at-submit (HoldMode=submit, doc/slurm.md "Hold at submit"): an admit
 * carrying a submit_token also takes a provisional hold under that token (store_submit.c),
 * and the tick thread releases provisional holds never bound within SubmitHoldTTL.
 * The binding itself is POST /v1/jobs/hold with submit_token (api_job.c -> store_submit_bind).
 * The admit's read-only answer is computed first; the hold is then one writer op, so its
 * check-and-hold is the atomic one of store_hold (a race between two admits cannot overdraw).
 */
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "allotd/observe.h"
#include "allotd/submit.h"
#include "allotd/writer.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

struct submit_op {
    struct hold_req q;
    struct hold_result res;
    struct api_submit_admit a; /* the admit's read-only answer, sent with the hold */
    int64_t tasks;
};

static int run_submit(store_t *st, void *arg, struct allot_error *err)
{
    struct submit_op *s = arg;
    return store_hold(st, &s->q, &s->res, err);
}

static int finish_submit(struct req *r, struct allot_error *err)
{
    (void)err;
    struct submit_op *s = r->scratch;
    struct hold_result *h = &s->res;
    if (h->refused && h->observed) { /* EnforceMode=observe: admitted, not held */
        char msg[ALLOT_MSG_MAX];
        store_hold_denial(&s->q, h, 0, msg, sizeof msg);
        r->out = json_pack("{s:b, s:b, s:b, s:I, s:s, s:I, s:I, s:s, s:{s:s, s:s}, s:I}",
                           "admitted", 1, "observed", 1, "held", 0, "alloc_id",
                           (json_int_t)s->a.alloc_id, "payer_account", s->a.payer_account,
                           "billing_micro", (json_int_t)s->q.billing_micro, "cost_sumin",
                           (json_int_t)s->q.amount_sumin, "message", msg, "error", "code", "EFUNDS",
                           "message", msg, "failure_id", (json_int_t)h->failure.id);
        return 0;
    }
    json_t *out = json_pack(
        "{s:b, s:I, s:s, s:I, s:I, s:I, s:I}", "admitted", 1, "alloc_id", (json_int_t)s->a.alloc_id,
        "payer_account", s->a.payer_account, "billing_micro", (json_int_t)s->q.billing_micro,
        "cost_sumin", (json_int_t)(s->q.amount_sumin / s->tasks), "available_sumin",
        (json_int_t)s->a.available_sumin, "held_sumin", (json_int_t)s->a.held_sumin);
    if (s->a.pending_reason[0])
        json_object_set_new(out, "pending_reason", json_string(s->a.pending_reason));
    json_object_set_new(out, "submit_token", json_integer((json_int_t)s->q.job_id));
    json_object_set_new(out, "tasks", json_integer((json_int_t)s->tasks));
    json_object_set_new(out, "total_sumin", json_integer((json_int_t)s->q.amount_sumin));
    json_object_set_new(out, "held", json_boolean(!h->refused));
    json_object_set_new(out, "replay", json_boolean(h->replay));
    json_object_set_new(out, "job", json_job(&h->job));
    if (h->refused) {
        /* Credit went to another hold between the read and the write: a denial after all.
         * The user reads it at sbatch, so it is the admission's text, not the failure's
         * (which names the token as "job T run 0", meaningless to them). */
        char msg[ALLOT_MSG_MAX];
        store_hold_denial(&s->q, h, 0, msg, sizeof msg);
        r->status = 402;
        json_object_set_new(out, "admitted", json_false());
        json_object_set_new(out, "message", json_string(msg));
        json_object_set_new(out, "error",
                            json_pack("{s:s, s:s}", "code", "EFUNDS", "message", msg));
    } else {
        json_object_set_new(out, "balance", json_balance(&h->alloc, &h->bal));
    }
    r->out = out;
    log_info("msg=\"submit hold\" req=%llu cluster=%s token=%lld account=%s held=%d "
             "amount_sumin=%lld",
             (unsigned long long)r->id, s->q.cluster, (long long)s->q.job_id, s->q.account,
             !h->refused, (long long)s->q.amount_sumin);
    return 0;
}

int api_submit_admit_hold(struct req *r, int64_t token, const struct api_submit_job *j,
                          const struct api_submit_admit *a, struct allot_error *err)
{
    if (!store_submit_token_valid(token))
        return allot_errorf(err, ALLOT_EINVAL,
                            "submit_token: must be in [2^32, 2^62] (job_submit makes it)");
    struct submit_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    s->a = *a;
    struct hold_req *q = &s->q;
    text_copy(q->cluster, sizeof(q->cluster), j->cluster);
    text_copy(q->user, sizeof(q->user), j->user);
    text_copy(q->account, sizeof(q->account), j->account);
    text_copy(q->partition, sizeof(q->partition), j->partition);
    text_copy(q->qos, sizeof(q->qos), j->qos);
    text_copy(q->req_tres, sizeof(q->req_tres), j->tres);
    text_copy(q->resource, sizeof(q->resource), j->cost->resource);
    text_copy(q->actor, sizeof(q->actor), r->who.user);
    q->job_id = token;
    q->run = 0;
    q->now_s = (int64_t)time(NULL);
    q->submit_s = q->now_s;
    q->start_s = q->now_s; /* picks the allocation paying now, as the admit's answer did */
    q->time_limit_s = j->time_limit_s;
    q->billing_micro = j->cost->billing_micro;
    /* An array's hold covers every task; each task's start takes one share of it
     * (store_submit_bind).  admit checked that the product does not overflow. */
    s->tasks = j->tasks > 1 ? j->tasks : 1;
    q->amount_sumin = j->cost->cost_sumin * s->tasks;
    q->tasks = s->tasks;
    q->observe = api_observe_on(r);
    return req_defer_write(r, run_submit, s, finish_submit);
}

struct sweep_op {
    int64_t ttl_s;
    int released;
};

static int run_sweep(store_t *st, void *arg, struct allot_error *err)
{
    struct sweep_op *o = arg;
    /* 1000 a pass bounds the transaction; the next tick takes the rest. */
    return store_submit_sweep(st, o->ttl_s, "allotd", (int64_t)time(NULL), 1000, &o->released, err);
}

int api_submit_enabled(struct allotd *d)
{
    struct allot_conf *c = allotd_conf_get(d);
    int on = strcmp(c->hold_mode, "submit") == 0;
    conf_unref(c);
    return on;
}

int api_submit_sweep(struct allotd *d, struct allot_error *err)
{
    /* Provisional holds exist only with HoldMode=submit (admit refuses tokens otherwise), so
     * other sites' ticks never touch the writer for this. */
    if (!api_submit_enabled(d))
        return 0;
    struct allot_conf *c = allotd_conf_get(d);
    struct sweep_op o = {.ttl_s = c->submit_hold_ttl_s};
    conf_unref(c);
    struct write_op op = {.run = run_sweep, .arg = &o};
    if (writer_run(d->writer, &op, err) < 0)
        return -1;
    if (o.released > 0)
        log_info("msg=\"unbound submit holds released\" count=%d ttl_s=%lld", o.released,
                 (long long)o.ttl_s);
    return o.released;
}
