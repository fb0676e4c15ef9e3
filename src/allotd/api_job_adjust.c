/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_job_adjust.c - POST /v1/jobs/adjust: re-price a held run whose time limit changed
 * (doc/api.md "Job verbs"; store_hold_adjust).  Goes through the writer like hold. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "allotd/json_fast.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

struct adjust_op {
    struct hold_adjust_req q;
    struct hold_adjust_result res;
};

static int run_adjust(store_t *st, void *arg, struct allot_error *err)
{
    struct adjust_op *s = arg;
    return store_hold_adjust(st, &s->q, &s->res, err);
}

static int finish_adjust(struct req *r, struct allot_error *err)
{
    (void)err;
    struct adjust_op *s = r->scratch;
    struct hold_adjust_result *h = &s->res;
    if (h->refused) {
        r->status = 402;
        r->out = json_pack("{s:b, s:b, s:s, s:o, s:o}", "adjusted", 0, "replay", 0, "message",
                           h->failure.message, "failure", json_failure(&h->failure), "job",
                           json_job(&h->job));
        log_info("msg=\"hold adjust refused\" req=%llu cluster=%s job=%lld run=%d "
                 "time_limit_s=%lld needed_sumin=%lld",
                 (unsigned long long)r->id, s->q.cluster, (long long)s->q.job_id, s->q.run,
                 (long long)s->q.time_limit_s, (long long)h->failure.needed_sumin);
        return 0;
    }
    if (!h->replay)
        log_info("msg=\"hold adjusted\" req=%llu cluster=%s job=%lld run=%d time_limit_s=%lld "
                 "hold_sumin=%lld delta_sumin=%lld",
                 (unsigned long long)r->id, s->q.cluster, (long long)s->q.job_id, s->q.run,
                 (long long)s->q.time_limit_s, (long long)h->job.hold_sumin,
                 (long long)h->delta_sumin);
    r->out = json_pack("{s:b, s:b, s:I, s:o, s:o}", "adjusted", 1, "replay", h->replay,
                       "delta_sumin", (json_int_t)h->delta_sumin, "job", json_job(&h->job),
                       "balance", json_balance(&h->alloc, &h->bal));
    return 0;
}

int api_job_adjust(struct req *r, struct allot_error *err)
{
    struct adjust_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    struct hold_adjust_req *q = &s->q;
    int64_t run = 0;
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = q->cluster},
        {.name = "job_id", .type = JF_INT, .required = 1, .dst = &q->job_id, .min = 1},
        {.name = "run", .type = JF_INT, .required = 0, .dst = &run},
        {.name = "time_limit_s", .type = JF_INT, .required = 1, .dst = &q->time_limit_s, .min = 1},
    };
    if (json_fast_body(r, f, sizeof(f) / sizeof(f[0]), err) < 0 ||
        api_cluster_served(r, q->cluster, err) < 0)
        return -1;
    if (run < 0 || run > INT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "run: must be 0..%d", INT32_MAX);
    q->run = (int32_t)run;
    text_copy(q->actor, sizeof(q->actor), r->who.user);
    q->now_s = (int64_t)time(NULL);
    r->op.rerunnable = 1; /* run_adjust rewrites its result; nothing outside the store */
    r->op.idempotent = 1; /* the same time limit again is a replay */
    return req_defer_write(r, run_adjust, s, finish_adjust);
}
