/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_job_void.c - POST /v1/jobs/void: a run the Slurm plugins cancelled before it started
 * without a hold the bank answered (doc/api.md "Job verbs", doc/slurm.md "Fail modes").
 * The run is recorded as void (store_void), so no later settle of it charges anything;
 * the reply says so in "message".  Through the writer, like the other job verbs. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "allotd/json_fast.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

struct void_op {
    struct void_req q;
    struct settle_result res;
};

static int run_void(store_t *st, void *arg, struct allot_error *err)
{
    struct void_op *v = arg;
    return store_void(st, &v->q, &v->res, err);
}

static int finish_void(struct req *r, struct allot_error *err)
{
    struct void_op *v = r->scratch;
    (void)err;
    int is_void = strcmp(v->res.job.settle_source, "void") == 0;
    if (!v->res.replay || is_void)
        log_info("msg=\"run void: cancelled by allot before start\" req=%llu cluster=%s "
                 "job=%lld run=%d account=%s replay=%d",
                 (unsigned long long)r->id, v->q.cluster, (long long)v->q.job_id, (int)v->q.run,
                 v->q.account, v->res.replay);
    r->out = json_pack("{s:b, s:b, s:s, s:o}", "voided", 1, "replay", v->res.replay, "message",
                       is_void ? API_VOID_MESSAGE
                               : "already settled, released or refused: its outcome stands",
                       "job", json_job(&v->res.job));
    return 0;
}

int api_job_void(struct req *r, struct allot_error *err)
{
    struct void_op *v = xcalloc(1, sizeof(*v));
    r->scratch = v;
    struct void_req *q = &v->q;
    int64_t run = 0;
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = q->cluster},
        {.name = "job_id", .type = JF_INT, .required = 1, .dst = &q->job_id, .min = 1},
        {.name = "run", .type = JF_INT, .required = 0, .dst = &run},
        {.name = "user", .type = JF_NAME, .required = 1, .dst = q->user},
        {.name = "account", .type = JF_NAME, .required = 1, .dst = q->account},
        {.name = "partition", .type = JF_NAME, .required = 0, .dst = q->partition},
        {.name = "qos", .type = JF_NAME, .required = 0, .dst = q->qos, .allow_empty = 1},
        {.name = "submit", .type = JF_TIME, .required = 0, .dst = &q->submit_s},
        {.name = "start", .type = JF_TIME, .required = 0, .dst = &q->start_s},
        {.name = "time_limit_s", .type = JF_INT, .required = 0, .dst = &q->time_limit_s},
        {.name = "alloc_tres",
         .type = JF_TEXT,
         .required = 0,
         .dst = q->alloc_tres,
         .size = sizeof(q->alloc_tres)},
        {.name = "reason",
         .type = JF_TEXT,
         .required = 0,
         .dst = q->reason,
         .size = sizeof(q->reason)},
    };
    if (json_fast_body(r, f, sizeof(f) / sizeof(f[0]), err) < 0 ||
        api_cluster_served(r, q->cluster, err) < 0)
        return -1;
    if (run > INT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "run: too large");
    q->run = (int32_t)run;
    text_copy(q->actor, sizeof(q->actor), r->who.user);
    q->now_s = (int64_t)time(NULL);
    r->op.rerunnable = 1; /* run_void rewrites its result; nothing outside the store */
    r->op.idempotent = 1; /* a void run stays void */
    return req_defer_write(r, run_void, v, finish_void);
}
