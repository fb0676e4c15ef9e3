/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_job.c - the job verbs (admit, hold, settle, release: doc/api.md "Job verbs"), job
 * records and failures.  admit is read-only; hold/settle/release go through the writer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/api_job_ids.h"
#include "allotd/api_settle.h"
#include "allotd/auth.h"
#include "allotd/bank.h"
#include "allotd/json.h"
#include "allotd/json_fast.h"
#include "allotd/observe.h"
#include "allotd/partcache.h"
#include "allotd/submit.h"
#include "allotd/tick.h"
#include "libcore/denial.h"
#include "libcore/money.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

#define JOB_CLOCK_SKEW_S 300 /* doc/api.md "Job verbs": how far ahead a job's time may be */

int api_job_admit(struct req *r, struct allot_error *err)
{
    char cluster[ALLOT_NAME_MAX] = "", user[ALLOT_NAME_MAX] = "", account[ALLOT_NAME_MAX] = "",
         partition[ALLOT_NAME_MAX] = "", qos[ALLOT_NAME_MAX] = "", tres[ALLOT_TRES_MAX] = "";
    int64_t time_limit_s = 0, billing = 0, token = 0, tasks = 1, extra = 0;
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = cluster},
        {.name = "user", .type = JF_NAME, .required = 1, .dst = user},
        {.name = "account", .type = JF_NAME, .required = 1, .dst = account},
        {.name = "partition", .type = JF_NAME, .required = 1, .dst = partition},
        {.name = "qos", .type = JF_NAME, .required = 0, .dst = qos, .allow_empty = 1},
        {.name = "time_limit_s", .type = JF_INT, .required = 1, .dst = &time_limit_s, .min = 1},
        {.name = "tres", .type = JF_TEXT, .required = 0, .dst = tres, .size = sizeof(tres)},
        {.name = "billing", .type = JF_BILLING, .required = 0, .dst = &billing},
        {.name = "billing_micro", .type = JF_INT, .required = 0, .dst = &billing},
        {.name = "submit_token", .type = JF_INT, .required = 0, .dst = &token}, /* api_submit.c */
        {.name = "tasks", .type = JF_INT, .required = 0, .dst = &tasks, .min = 1},
        {.name = "extra_sumin", .type = JF_INT, .required = 0, .dst = &extra},
    };
    store_t *st = req_reader(r, err);
    if (!st || json_fast_body(r, f, sizeof(f) / sizeof(f[0]), err) < 0)
        return -1;
    if (api_cluster_served(r, cluster, err) < 0)
        return -1;
    if (token && !api_submit_enabled(r->d))
        return allot_errorf(err, ALLOT_EINVAL,
                            "submit_token: hold-at-submit is off (allot.conf HoldMode=start)");
    if (tasks > API_ADMIT_TASKS_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "tasks: at most %d (Slurm's largest job array)",
                            API_ADMIT_TASKS_MAX);
    if (extra < 0)
        return allot_errorf(err, ALLOT_EINVAL, "extra_sumin: must not be negative");
    struct bank_job j = {cluster, account, partition, tres, billing, time_limit_s, "tres"};
    struct bank_cost c;
    if (bank_cost(r->d->partcache, st, &j, &c, err) < 0)
        return -1;
    /* An array's tasks may all run, so admission checks them all (doc/money.md). */
    int64_t total;
    if (money_mul(c.cost_sumin, tasks, &total) < 0 || money_add(total, extra, &total) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "tasks: the array's cost overflows");
    char why[ALLOT_MSG_MAX];
    int lim = limit_check_admit(st, cluster, user, account, partition, qos, time_limit_s, tres, why,
                                sizeof(why), err);
    if (lim < 0)
        return -1;
    if (lim == 1 && api_observe_on(r)) {
        struct api_observe_refusal x = {.cluster = cluster,
                                        .user = user,
                                        .account = account,
                                        .partition = partition,
                                        .limit = 1,
                                        .message = why,
                                        .now_s = (int64_t)time(NULL),
                                        .billing_micro = c.billing_micro,
                                        .cost_sumin = c.cost_sumin};
        return api_observe_admit(r, &x, err);
    }
    if (lim == 1) {
        r->status = 403;
        r->out = json_pack("{s:b, s:s, s:{s:s, s:s}, s:I, s:I}", "admitted", 0, "message", why,
                           "error", "code", "ELIMIT", "message", why, "billing_micro",
                           (json_int_t)c.billing_micro, "cost_sumin", (json_int_t)c.cost_sumin);
        log_info("msg=\"admission denied by a limit\" req=%llu cluster=%s account=%s user=%s "
                 "reason=\"%s\"",
                 (unsigned long long)r->id, cluster, account, user, why);
        return 0;
    }
    struct allocation a = {0};
    struct balance b = {0};
    struct allot_error ferr;
    int64_t now = (int64_t)time(NULL);
    int have = store_find_payer(st, account, c.resource, cluster, now, &a, &b, &ferr) == 0;
    if (!have && ferr.code != ALLOT_ENOENT) {
        *err = ferr;
        return -1;
    }
    int ok = have && b.available_sumin >= total;
    if (ok && token) { /* HoldMode=submit: admitted, so take the provisional hold */
        struct api_submit_job sj = {cluster, user,         account, partition, qos,
                                    tres,    time_limit_s, &c,      tasks};
        struct api_submit_admit sa = {
            .alloc_id = a.id, .available_sumin = b.available_sumin, .held_sumin = b.held_sumin};
        text_copy(sa.payer_account, sizeof(sa.payer_account), a.account);
        if (lim == 2)
            text_copy(sa.pending_reason, sizeof(sa.pending_reason), why);
        return api_submit_admit_hold(r, token, &sj, &sa, err);
    }
    r->out = json_pack("{s:b, s:I, s:s, s:I, s:I, s:I, s:I}", "admitted", ok, "alloc_id",
                       (json_int_t)a.id, "payer_account", a.account, "billing_micro",
                       (json_int_t)c.billing_micro, "cost_sumin", (json_int_t)c.cost_sumin,
                       "available_sumin", (json_int_t)b.available_sumin, "held_sumin",
                       (json_int_t)b.held_sumin);
    json_object_set_new(r->out, "tasks", json_integer((json_int_t)tasks));
    json_object_set_new(r->out, "total_sumin", json_integer((json_int_t)total));
    if (lim == 2)
        json_object_set_new(r->out, "pending_reason", json_string(why));
    if (!ok) {
        char msg[ALLOT_MSG_MAX];
        int64_t pending = 0;
        if (have && store_alloc_held_at_submit(st, a.id, &pending, err) < 0)
            return -1;
        struct denial d = {.account = account,
                           .resource = c.resource,
                           .cluster = cluster,
                           .at_s = now,
                           .cost_sumin = c.cost_sumin,
                           .tasks = tasks,
                           .extra_sumin = extra,
                           .billing_micro = c.billing_micro,
                           .time_limit_s = time_limit_s,
                           .alloc_id = have ? a.id : 0,
                           .payer_account = a.account,
                           .available_sumin = b.available_sumin,
                           .held_sumin = b.held_sumin,
                           .held_pending_sumin = pending};
        denial_format(msg, sizeof(msg), &d);
        if (api_observe_on(r)) {
            json_decref(r->out);
            r->out = NULL;
            struct api_observe_refusal x = {.cluster = cluster,
                                            .user = user,
                                            .account = account,
                                            .partition = partition,
                                            .message = msg,
                                            .now_s = now,
                                            .alloc_id = have ? a.id : 0,
                                            .billing_micro = c.billing_micro,
                                            .cost_sumin = c.cost_sumin,
                                            .total_sumin = total,
                                            .available_sumin = b.available_sumin,
                                            .held_sumin = b.held_sumin,
                                            .payer_account = a.account,
                                            .pending_reason = lim == 2 ? why : NULL};
            return api_observe_admit(r, &x, err);
        }
        json_object_set_new(r->out, "message", json_string(msg));
        json_object_set_new(r->out, "error",
                            json_pack("{s:s, s:s}", "code", "EFUNDS", "message", msg));
        r->status = 402;
        log_info("msg=\"admission denied\" req=%llu cluster=%s account=%s user=%s cost_sumin=%lld "
                 "available_sumin=%lld",
                 (unsigned long long)r->id, cluster, account, user, (long long)total,
                 (long long)b.available_sumin);
    }
    return 0;
}

struct hold_op {
    struct hold_req q;
    struct hold_result res;
    struct bank_job j;
    struct bank_cost c;
    int64_t submit_token;     /* 0, or the provisional hold to move to this run */
    struct job_slurm_ids ids; /* Slurm's array / het ids sent with it (api_job_ids.c) */
    struct store_job_op job;  /* offered to the batch (writer.h) */
};

static int run_hold(store_t *st, void *arg, struct allot_error *err)
{
    struct hold_op *s = arg;
    if (s->job.done) /* applied with its batch (never with ids) */
        return 0;
    int rc = s->submit_token ? store_submit_bind(st, s->submit_token, &s->q, &s->res, err)
                             : store_hold(st, &s->q, &s->res, err);
    if (rc == 0 && api_job_ids_given(&s->ids))
        rc = store_job_ids_put(st, s->q.cluster, s->q.job_id, &s->ids, err);
    return rc;
}

static int finish_hold(struct req *r, struct allot_error *err)
{
    struct hold_op *s = r->scratch;
    struct hold_result *h = &s->res;
    if (h->refused && h->observed) { /* EnforceMode=observe: the job starts unheld */
        r->out =
            json_pack("{s:b, s:b, s:b, s:s, s:{s:s, s:s}, s:o}", "held", 0, "observed", 1, "replay",
                      h->replay, "message", h->failure.message, "error", "code", "EFUNDS",
                      "message", h->failure.message, "failure", json_failure(&h->failure));
        log_info("msg=\"hold observed\" req=%llu cluster=%s job=%lld run=%d account=%s "
                 "failure=%lld",
                 (unsigned long long)r->id, s->q.cluster, (long long)s->q.job_id, s->q.run,
                 s->q.account, (long long)h->failure.id);
        return 0;
    }
    if (h->refused) {
        r->status = 402;
        r->out = json_pack("{s:b, s:b, s:s, s:o, s:o}", "held", 0, "replay", h->replay, "message",
                           h->failure.message, "failure", json_failure(&h->failure), "job",
                           json_job(&h->job));
        log_info("msg=\"hold refused\" req=%llu cluster=%s job=%lld run=%d account=%s",
                 (unsigned long long)r->id, s->q.cluster, (long long)s->q.job_id, s->q.run,
                 s->q.account);
        return 0;
    }
    /* Hot path: the reply written directly (json_fast.h); jansson for text it declines. */
    r->text = json_fast_job_reply("held", h->replay, &h->job, &h->alloc, &h->bal, &r->text_len);
    if (r->text)
        return 0;
    r->out = json_job_reply("held", h->replay, &h->job, &h->alloc, &h->bal);
    return 0;
}

/* A job's times as its verbs may report them: none after now plus JOB_CLOCK_SKEW_S (the
 * clocks of slurmctld's host, the agent's and allotd's may differ a little; a later time is
 * not a clock's error but a wrong or hostile one, and its usage would outweigh every real
 * job's in fair-share), start no later than end, and elapsed within end - start.  0 is "not
 * given" for start and end. */
static int job_time_not_future(const char *field, int64_t t, int64_t now_s, struct allot_error *err)
{
    if (t > now_s + JOB_CLOCK_SKEW_S)
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: %lld is %lld s after allotd's clock (at most %d s of skew)", field,
                            (long long)t, (long long)(t - now_s), JOB_CLOCK_SKEW_S);
    return 0;
}

static int job_times_check(int64_t start_s, int64_t end_s, int64_t elapsed_s, int64_t now_s,
                           struct allot_error *err)
{
    if (job_time_not_future("start", start_s, now_s, err) < 0 ||
        job_time_not_future("end", end_s, now_s, err) < 0)
        return -1;
    if (start_s && end_s && start_s > end_s)
        return allot_errorf(err, ALLOT_EINVAL, "start: %lld is after end %lld", (long long)start_s,
                            (long long)end_s);
    if (elapsed_s < 0)
        return allot_errorf(err, ALLOT_EINVAL, "elapsed_s: must not be negative");
    if (start_s && end_s && elapsed_s > end_s - start_s)
        return allot_errorf(err, ALLOT_EINVAL,
                            "elapsed_s: %lld is longer than end - start (%lld s)",
                            (long long)elapsed_s, (long long)(end_s - start_s));
    return 0;
}

int api_job_hold(struct req *r, struct allot_error *err)
{
    struct hold_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    struct hold_req *q = &s->q;
    int64_t billing = 0, run = 0;
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = q->cluster},
        {.name = "job_id", .type = JF_INT, .required = 1, .dst = &q->job_id, .min = 1},
        {.name = "run", .type = JF_INT, .required = 0, .dst = &run},
        {.name = "user", .type = JF_NAME, .required = 1, .dst = q->user},
        {.name = "account", .type = JF_NAME, .required = 1, .dst = q->account},
        {.name = "partition", .type = JF_NAME, .required = 1, .dst = q->partition},
        {.name = "qos", .type = JF_NAME, .required = 0, .dst = q->qos, .allow_empty = 1},
        {.name = "submit", .type = JF_TIME, .required = 0, .dst = &q->submit_s},
        {.name = "start", .type = JF_TIME, .required = 0, .dst = &q->start_s},
        {.name = "time_limit_s", .type = JF_INT, .required = 1, .dst = &q->time_limit_s, .min = 1},
        {.name = "tres",
         .type = JF_TEXT,
         .required = 0,
         .dst = q->req_tres,
         .size = sizeof(q->req_tres)},
        {.name = "alloc_tres",
         .type = JF_TEXT,
         .required = 0,
         .dst = q->alloc_tres,
         .size = sizeof(q->alloc_tres)},
        {.name = "billing", .type = JF_BILLING, .required = 0, .dst = &billing},
        {.name = "billing_micro", .type = JF_INT, .required = 0, .dst = &billing},
        {.name = "submit_token", .type = JF_INT, .required = 0, .dst = &s->submit_token},
        API_JOB_IDS_FIELDS(s->ids),
    };
    api_job_ids_none(&s->ids);
    store_t *st = req_reader(r, err);
    if (!st || json_fast_body(r, f, sizeof(f) / sizeof(f[0]), err) < 0 ||
        api_cluster_served(r, q->cluster, err) < 0 || store_job_ids_check(&s->ids, err) < 0)
        return -1;
    if (run > INT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "run: too large");
    q->run = (int32_t)run;
    q->now_s = (int64_t)time(NULL);
    if (job_time_not_future("start", q->start_s, q->now_s, err) < 0 ||
        job_time_not_future("submit", q->submit_s, q->now_s, err) < 0)
        return -1;
    if (!q->start_s)
        q->start_s = q->now_s;
    /* A hold for no association is not a refusal to record but a request naming nothing
     * (404, as admit and settle): no job and no failure for an account that may not exist. */
    if (store_assoc_exists(st, q->cluster, q->account, q->user, q->partition, err) < 0)
        return -1;
    s->j = (struct bank_job){q->cluster,
                             q->account,
                             q->partition,
                             q->alloc_tres[0] ? q->alloc_tres : q->req_tres,
                             billing,
                             q->time_limit_s,
                             q->alloc_tres[0] ? "alloc_tres" : "tres"};
    if (bank_cost(r->d->partcache, st, &s->j, &s->c, err) < 0)
        return -1;
    memcpy(q->resource, s->c.resource, sizeof(q->resource));
    q->billing_micro = s->c.billing_micro;
    q->amount_sumin = s->c.cost_sumin;
    text_copy(q->actor, sizeof(q->actor), r->who.user);
    r->op.rerunnable = 1; /* run_hold rewrites its result; nothing outside the store */
    r->op.idempotent = 1; /* per (cluster, job_id, run); per token with a submit token */
    q->observe = api_observe_on(r);
    /* Observe mode leaves the batch: its replay of an observed refusal is store_hold's. */
    if (!s->submit_token && !api_job_ids_given(&s->ids) && !q->observe) {
        s->job.hold = q;
        s->job.hold_res = &s->res;
        r->op.job = &s->job;
    }
    return req_defer_write(r, run_hold, s, finish_hold);
}

/* Slurm job states as sacct prints them (man sacct, JOB STATE CODES), sorted for bsearch.
 * What the agent sends (sacct's final states) and prep/allot sends (job_state_string of
 * the base state) is among them.  Case matters: the store tells NODE_FAIL (free) by name. */
static const char *const slurm_states[] = {
    "BOOT_FAIL", "CANCELLED",     "COMPLETED", "DEADLINE",  "FAILED",
    "NODE_FAIL", "OUT_OF_MEMORY", "PENDING",   "PREEMPTED", "REQUEUED",
    "RESIZING",  "REVOKED",       "RUNNING",   "SUSPENDED", "TIMEOUT",
};
#define NSLURM_STATES (sizeof(slurm_states) / sizeof(slurm_states[0]))

static int state_cmp(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

/* A settle's state: "" (not known), a name above, or "CANCELLED by <uid>" as sacct prints
 * a cancel.  On the hot path: a bsearch (4 strcmp), no allocation. */
static int check_state(const char *s, struct allot_error *err)
{
    static const char by[] = "CANCELLED by ";
    if (!s[0] || bsearch(s, slurm_states, NSLURM_STATES, sizeof(slurm_states[0]), state_cmp))
        return 0;
    if (strncmp(s, by, sizeof(by) - 1) == 0) {
        const char *d = s + sizeof(by) - 1;
        size_t n = strspn(d, "0123456789");
        if (n > 0 && n <= 10 && !d[n] && strtoull(d, NULL, 10) <= UINT32_MAX)
            return 0;
    }
    char list[ALLOT_ERRMSG_MAX / 2] = "";
    size_t len = 0;
    for (size_t i = 0; i < NSLURM_STATES && len < sizeof(list); i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
                                slurm_states[i]);
    return allot_errorf(err, ALLOT_EINVAL,
                        "state: '%s' is not a Slurm job state (%s, 'CANCELLED by <uid>', or "
                        "empty)",
                        s, list);
}

struct settle_op {
    struct settle_req q;
    struct settle_result res;
    int release;
    struct job_slurm_ids ids; /* settle: Slurm's array / het ids sent with it */
    int64_t keep_tasks;       /* release of a submit token: the array tasks' shares to keep */
    char comment[ALLOT_TEXT_MAX];
    struct store_job_op job; /* offered to the batch (writer.h); not for release */
};

size_t api_settle_fields(struct settle_req *q, struct job_slurm_ids *ids, struct settle_in *in,
                         struct jfield *f)
{
    memset(in, 0, sizeof(*in));
    text_copy(in->source, sizeof(in->source), "api");
    q->charge_sumin = -1;
    api_job_ids_none(ids);
    struct jfield t[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = q->cluster},
        {.name = "job_id", .type = JF_INT, .required = 1, .dst = &q->job_id, .min = 1},
        {.name = "run", .type = JF_INT, .required = 0, .dst = &in->run},
        {.name = "start", .type = JF_TIME, .required = 0, .dst = &q->start_s},
        {.name = "end", .type = JF_TIME, .required = 0, .dst = &q->end_s},
        {.name = "elapsed_s", .type = JF_INT, .required = 1, .dst = &q->elapsed_s},
        {.name = "state",
         .type = JF_TEXT,
         .required = 0,
         .dst = q->slurm_state,
         .size = sizeof(q->slurm_state)},
        {.name = "billing", .type = JF_BILLING, .required = 0, .dst = &in->billing},
        {.name = "billing_micro", .type = JF_INT, .required = 0, .dst = &in->billing_micro},
        {.name = "alloc_tres",
         .type = JF_TEXT,
         .required = 0,
         .dst = q->alloc_tres,
         .size = sizeof(q->alloc_tres)},
        {.name = "source", .type = JF_NAME, .required = 0, .dst = in->source},
        {.name = "user", .type = JF_NAME, .required = 0, .dst = q->user},
        {.name = "account", .type = JF_NAME, .required = 0, .dst = q->account},
        {.name = "partition", .type = JF_NAME, .required = 0, .dst = q->partition},
        {.name = "qos", .type = JF_NAME, .required = 0, .dst = q->qos, .allow_empty = 1},
        {.name = "time_limit_s", .type = JF_INT, .required = 0, .dst = &q->time_limit_s},
        API_JOB_IDS_FIELDS(*ids),
    };
    _Static_assert(sizeof(t) / sizeof(t[0]) == API_SETTLE_FIELDS, "api_settle_fields");
    memcpy(f, t, sizeof(t));
    return API_SETTLE_FIELDS;
}

int api_settle_check(struct req *r, struct settle_req *q, const struct job_slurm_ids *ids,
                     const struct settle_in *in, struct allot_error *err)
{
    if (api_cluster_served(r, q->cluster, err) < 0 || store_job_ids_check(ids, err) < 0)
        return -1;
    if (in->run > INT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "run: too large");
    if (check_state(q->slurm_state, err) < 0)
        return -1;
    if (strcmp(in->source, "epilog") && strcmp(in->source, "sacct") && strcmp(in->source, "api"))
        return allot_errorf(err, ALLOT_EINVAL, "source: must be epilog, sacct or api");
    if (job_times_check(q->start_s, q->end_s, q->elapsed_s, (int64_t)time(NULL), err) < 0)
        return -1;
    if (in->billing_micro < 0)
        return allot_errorf(err, ALLOT_EINVAL, "billing_micro: must not be negative");
    q->run = (int32_t)in->run;
    /* Only a run never held uses this billing (a held one keeps its hold's, store.h): the
     * exact billing_micro when given, else its allocated TRES priced as a hold prices them,
     * else Slurm's integer billing (truncated, so the last resort). */
    q->billing_micro = in->billing_micro > 0 ? in->billing_micro : in->billing;
    text_copy(q->settle_source, sizeof(q->settle_source), in->source);
    text_copy(q->actor, sizeof(q->actor), r->who.user);
    q->now_s = (int64_t)time(NULL);
    return 0;
}

int api_settle_price(struct req *r, struct settle_req *q, const struct settle_in *in,
                     struct allot_error *err)
{
    if (!q->account[0] || !q->partition[0])
        return 0;
    /* A run that may never have been held: resolve its resource for the store. */
    store_t *st = req_reader(r, err);
    struct partition p;
    if (!st || partcache_get(r->d->partcache, st, q->cluster, q->partition, &p, err) < 0)
        return -1;
    memcpy(q->resource, p.resource, sizeof(q->resource));
    if (in->billing_micro <= 0 && q->alloc_tres[0] &&
        bank_billing(&p, "alloc_tres", q->alloc_tres, &q->billing_micro, err) < 0)
        return -1;
    return 0;
}

int api_settle_apply(store_t *st, const struct settle_req *q, const struct job_slurm_ids *ids,
                     int done, struct settle_result *res, struct allot_error *err)
{
    if (!done && store_settle(st, q, res, err) < 0)
        return -1;
    if (api_job_ids_given(ids) && store_job_ids_put(st, q->cluster, q->job_id, ids, err) < 0)
        return -1;
    /* doc/design.md §5.5: thresholds on each settle (of an allocation with a policy) */
    if (!res->replay && !res->no_policy)
        tick_after_write(st, res->job.alloc_id, q->now_s, "settle", 0);
    return 0;
}

static int run_settle(store_t *st, void *arg, struct allot_error *err)
{
    struct settle_op *s = arg;
    /* HoldMode=submit: a token's hold is its last run; an array task's share is released
     * under the task's id (store_submit.c). */
    if (s->release && s->q.run == 0 && store_submit_token_valid(s->q.job_id))
        return store_submit_release_all(st, s->q.cluster, s->q.job_id, s->keep_tasks, s->q.actor,
                                        s->comment, s->q.now_s, &s->res, err);
    if (s->release)
        return store_release(st, s->q.cluster, s->q.job_id, s->q.run, s->q.actor, s->comment,
                             s->q.now_s, &s->res, err);
    return api_settle_apply(st, &s->q, &s->ids, s->job.done, &s->res, err);
}

static int finish_settle(struct req *r, struct allot_error *err)
{
    struct settle_op *s = r->scratch;
    if (!s->res.replay && s->res.capped_from_sumin)
        log_info("msg=\"charge capped at the hold\" req=%llu cluster=%s job=%lld run=%d "
                 "used_sumin=%lld hold_sumin=%lld",
                 (unsigned long long)r->id, s->q.cluster, (long long)s->q.job_id, s->q.run,
                 (long long)s->res.capped_from_sumin, (long long)s->res.job.charge_sumin);
    if (s->res.replay && !strcmp(s->res.job.settle_source, "void")) {
        /* A run the plugins cancelled before it started (api_job_void.c): say why it is free. */
        r->out = json_pack("{s:b, s:b, s:s, s:o}", s->release ? "released" : "settled", 1, "replay",
                           1, "message", API_VOID_MESSAGE, "job", json_job(&s->res.job));
        return 0;
    }
    r->text = json_fast_job_reply(s->release ? "released" : "settled", s->res.replay, &s->res.job,
                                  &s->res.alloc, &s->res.bal, &r->text_len);
    if (r->text)
        return 0;
    r->out = json_job_reply(s->release ? "released" : "settled", s->res.replay, &s->res.job,
                            &s->res.alloc, &s->res.bal);
    return 0;
}

int api_job_settle(struct req *r, struct allot_error *err)
{
    struct settle_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    struct settle_in in;
    struct jfield f[API_SETTLE_FIELDS];
    size_t n = api_settle_fields(&s->q, &s->ids, &in, f);
    if (json_fast_body(r, f, n, err) < 0 || api_settle_check(r, &s->q, &s->ids, &in, err) < 0 ||
        api_settle_price(r, &s->q, &in, err) < 0)
        return -1;
    r->op.rerunnable = 1;              /* run_settle rewrites its result (a rerun may log twice) */
    r->op.idempotent = 1;              /* per (cluster, job_id, run) */
    if (!api_job_ids_given(&s->ids)) { /* with ids: one transaction, in run_settle */
        s->job.settle = &s->q;
        s->job.settle_res = &s->res;
        r->op.job = &s->job;
    }
    return req_defer_write(r, run_settle, s, finish_settle);
}

int api_job_release(struct req *r, struct allot_error *err)
{
    struct settle_op *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    s->release = 1;
    int64_t run = 0;
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = s->q.cluster},
        {.name = "job_id", .type = JF_INT, .required = 1, .dst = &s->q.job_id, .min = 1},
        {.name = "run", .type = JF_INT, .required = 0, .dst = &run},
        {.name = "comment",
         .type = JF_TEXT,
         .required = 0,
         .dst = s->comment,
         .size = sizeof(s->comment)},
        {.name = "keep_tasks", .type = JF_INT, .required = 0, .dst = &s->keep_tasks},
    };
    if (json_fast_body(r, f, sizeof(f) / sizeof(f[0]), err) < 0 ||
        api_cluster_served(r, s->q.cluster, err) < 0)
        return -1;
    if (s->keep_tasks < 0)
        return allot_errorf(err, ALLOT_EINVAL, "keep_tasks: must not be negative");
    if (s->keep_tasks && (run != 0 || !store_submit_token_valid(s->q.job_id)))
        return allot_errorf(err, ALLOT_EINVAL,
                            "keep_tasks: only for a submit hold (job_id a submit token, run 0)");
    if (run > INT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "run: too large");
    s->q.run = (int32_t)run;
    text_copy(s->q.actor, sizeof(s->q.actor), r->who.user);
    s->q.now_s = (int64_t)time(NULL);
    r->op.rerunnable = 1; /* run_settle rewrites its result (a rerun may log twice) */
    r->op.idempotent = 1; /* per (cluster, job_id, run) */
    return req_defer_write(r, run_settle, s, finish_settle);
}

struct list_arg {
    struct req *r;
    json_t *items;
    struct allot_error *err;
    store_t *ids_st; /* non-NULL: add each job's Slurm array / het ids (schema 0020) */
};

static int on_job(const struct job *j, void *arg)
{
    struct list_arg *l = arg;
    if (l->r->who.role == ROLE_USER && strcmp(j->user, l->r->who.user) != 0) {
        int vis = auth_sees_account(l->r, j->account, l->err);
        if (vis <= 0)
            return vis;
    }
    if (!l->ids_st) {
        json_array_append_new(l->items, json_job(j));
        return 0;
    }
    struct job with = *j;
    if (store_job_ids_get(l->ids_st, j->cluster, j->job_id, &with.ids, l->err) < 0)
        return -1;
    json_array_append_new(l->items, json_job(&with));
    return 0;
}

int api_job_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct job_filter f = {.status = -1};
    const char *status = req_query(r, "status");
    int64_t limit = 0;
    if (!st || api_query_history_cluster(r, st, STORE_HISTORY_JOBS, "job", &f.cluster, err) < 0 ||
        json_query_name(r, "account", &f.account, err) < 0 ||
        json_query_name(r, "user", &f.user, err) < 0 ||
        json_query_time(r, "since", &f.since_s, err) < 0 ||
        json_query_int(r, "limit", 1, &limit, err) < 0)
        return -1;
    if (status) {
        enum job_status js;
        if (model_job_status_parse(status, &js) < 0)
            return allot_errorf(err, ALLOT_EINVAL, "status: '%s' is not a job status", status);
        f.status = (int)js;
    }
    f.limit = limit > 100000 ? 100000 : (int)limit;
    int any = store_job_ids_any(st, err);
    if (any < 0)
        return -1;
    struct list_arg l = {r, json_array(), err, any ? st : NULL};
    /* job=NAME (api_job_ids.h): the runs of the job ids it names. */
    const char *name = req_query(r, "job");
    int rc = 0;
    if (name) {
        int64_t *ids = NULL;
        size_t n = 0;
        if (!f.cluster || !f.cluster[0] ||
            api_job_ids_resolve(st, f.cluster, name, &ids, &n, err) < 0) {
            json_decref(l.items);
            return f.cluster && f.cluster[0]
                       ? -1
                       : allot_errorf(err, ALLOT_EINVAL, "job: needs cluster= as well");
        }
        for (size_t i = 0; rc == 0 && i < n; i++) {
            f.job_id = ids[i];
            rc = store_job_list(st, &f, on_job, &l, err);
        }
        free(ids);
    } else {
        rc = store_job_list(st, &f, on_job, &l, err);
    }
    if (rc < 0 || (!name && json_array_size(l.items) == 0 &&
                   api_empty_listing_names(r, st, f.account, f.user, "job", err) < 0)) {
        json_decref(l.items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", l.items);
    return 0;
}

/* GET /v1/jobs/{cluster}/{job} shows a job as all its runs (a requeue is a new run): the
 * runs the caller may see, and the ledger entries and failures of those runs and of no
 * other, so that every entry's run is one of "runs".  A plain user may see some runs of a
 * job id and not others (a run on an account it has no association with); the money of
 * the others is not its to read.  A run whose record was scrubbed is not listed, nor its
 * entries: /v1/ledger?cluster=&job= still has them.  {job} is a name as Slurm prints it
 * (api_job_ids.h): a job array or het job shows every task or component it names, each
 * under its own job id, and "total" sums their holds and charges. */
struct job_view {
    struct list_arg l; /* first: on_job's argument */
    int32_t *runs;     /* the run numbers of job_id in l.items */
    size_t n, cap;
    const char *cluster;
    int64_t job_id;
    json_t *out;                      /* the array a ledger or failure callback fills */
    int64_t hold_sumin, charge_sumin; /* of the runs shown: held runs' holds, charges */
    size_t jobs;                      /* job ids with a run shown */
};

static int view_has_run(const struct job_view *v, int32_t run)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->runs[i] == run)
            return 1;
    return 0;
}

static int on_view_job(const struct job *j, void *arg)
{
    struct job_view *v = arg;
    size_t before = json_array_size(v->l.items);
    int rc = on_job(j, &v->l);
    if (rc != 0 || json_array_size(v->l.items) == before)
        return rc;
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->runs = xrealloc(v->runs, v->cap * sizeof(*v->runs));
    }
    v->runs[v->n++] = j->run;
    if (j->status == JOB_HELD)
        v->hold_sumin += j->hold_sumin;
    v->charge_sumin += j->charge_sumin;
    return 0;
}

static int on_view_ledger(const struct ledger_entry *e, void *arg)
{
    struct job_view *v = arg;
    if (view_has_run(v, e->run))
        json_array_append_new(v->out, json_ledger(e));
    return 0;
}

static int on_view_failure(const struct failure *fl, void *arg)
{
    struct job_view *v = arg;
    if (view_has_run(v, fl->run))
        json_array_append_new(v->out, json_failure(fl));
    return 0;
}

/* Add job v->job_id's runs, ledger entries and failures (failures_job) to the reply's
 * arrays; 0, or -1 with err. */
static int view_add(store_t *st, struct job_view *v, json_t *ledger, json_t *failures,
                    struct allot_error *err)
{
    v->n = 0;
    struct job_filter f = {.cluster = v->cluster, .job_id = v->job_id, .status = -1};
    if (store_job_list(st, &f, on_view_job, v, err) < 0)
        return -1;
    if (v->n == 0)
        return 0;
    v->jobs++;
    struct ledger_filter lf = {.cluster = v->cluster, .job_id = v->job_id};
    v->out = ledger;
    if (store_ledger_list(st, &lf, on_view_ledger, v, err) < 0)
        return -1;
    struct failure_filter ff = {.cluster = v->cluster, .job_id = v->job_id};
    v->out = failures;
    return store_failure_list(st, &ff, on_view_failure, v, err);
}

int api_job_get(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    int64_t *ids = NULL;
    size_t nids = 0;
    if (!st || model_check_name("cluster", r->param[0], 0, err) < 0 ||
        api_job_ids_resolve(st, r->param[0], r->param[1], &ids, &nids, err) < 0)
        return -1;
    int any = store_job_ids_any(st, err);
    if (any < 0) {
        free(ids);
        return -1;
    }
    struct job_view v = {.l = {r, json_array(), err, any ? st : NULL}, .cluster = r->param[0]};
    json_t *ledger = json_array(), *failures = json_array();
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nids; i++) {
        v.job_id = ids[i];
        rc = view_add(st, &v, ledger, failures, err);
    }
    free(v.runs);
    free(ids);
    if (rc == 0 && json_array_size(v.l.items) == 0)
        rc = allot_errorf(err, ALLOT_ENOENT, "job %s/%s: not found", v.cluster, r->param[1]);
    if (rc < 0) {
        json_decref(v.l.items);
        json_decref(ledger);
        json_decref(failures);
        return -1;
    }
    r->out =
        json_pack("{s:o, s:o, s:o}", "runs", v.l.items, "ledger", ledger, "failures", failures);
    if (v.jobs > 1)
        json_object_set_new(r->out, "total",
                            json_pack("{s:I, s:I, s:I}", "jobs", (json_int_t)v.jobs, "hold_sumin",
                                      (json_int_t)v.hold_sumin, "charge_sumin",
                                      (json_int_t)v.charge_sumin));
    return 0;
}

static int on_failure(const struct failure *fl, void *arg)
{
    json_array_append_new(arg, json_failure(fl));
    return 0;
}

int api_failure_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct failure_filter f = {0};
    int64_t limit = 0;
    if (!st || json_query_name(r, "account", &f.account, err) < 0 ||
        json_query_name(r, "user", &f.user, err) < 0 ||
        json_query_time(r, "since", &f.since_s, err) < 0 ||
        json_query_int(r, "limit", 1, &limit, err) < 0)
        return -1;
    f.limit = limit > 100000 ? 100000 : (int)limit;
    const char *asked_user = f.user;
    /* A plain user reads its own refusals; a coordinator of account= reads every user's on
     * that account (its PI view). */
    if (r->who.role == ROLE_USER && (!f.user || strcmp(f.user, r->who.user) != 0)) {
        int coord = f.account ? auth_coordinates(r, f.account, err) : 0;
        if (coord < 0)
            return -1;
        if (!coord && f.user)
            return allot_errorf(err, ALLOT_EPERM,
                                "user: %s may read only its own failures, or every user's on "
                                "an account it coordinates (account=)",
                                r->who.user);
        if (!coord)
            f.user = r->who.user;
    }
    json_t *items = json_array();
    if (store_failure_list(st, &f, on_failure, items, err) < 0 ||
        (json_array_size(items) == 0 &&
         api_empty_listing_names(r, st, f.account, asked_user, "failure", err) < 0)) {
        json_decref(items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", items);
    return 0;
}
