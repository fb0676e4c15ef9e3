/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_job_bulk.c - POST /v1/jobs/settle/bulk: many finished jobs settled in one request and
 * one transaction (doc/api.md "Bulk settle").
 *
 * Body {"match"?: "run"|"sacct", "jobs": [settle body, ...]}, at most BULK_MAX jobs.  Each
 * element is read and checked as POST /v1/jobs/settle reads it (api_settle.h); one that
 * fails gets its error in its item and the others go on.  The checked ones become one
 * writer op, each settle in a savepoint of its own inside the request's: a refusal (no
 * payer, another job under the same id) undoes that settle alone and is its item's error.
 * A failure of the bank itself (I/O, internal) fails the whole request: nothing of it is
 * written.  Each settle is store_settle's, so it is idempotent per (cluster, job, run): a
 * run settled before is a replay and charged nothing.
 * match "sacct": the body's run is not given; allotd picks it from the runs it has of the
 * job, in the transaction, as the agent's reconciliation does (doc/agent.md).  "run" (the
 * default): each settle names its run, as the single verb.
 */
#include <stdlib.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/api_job_ids.h"
#include "allotd/api_settle.h"
#include "allotd/json.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

#define BULK_MAX 10000 /* doc/api.md: jobs per request, so one transaction stays short */

enum outcome { OUT_SETTLED, OUT_REPLAY, OUT_VOID, OUT_SKIPPED, OUT_ERROR };
static const char *const OUTCOME_NAME[] = {"settled", "replay", "replay", "skipped", "error"};

struct bulk_job {
    struct settle_req q; /* as read; the writer settles a copy (a rerun starts from this) */
    struct job_slurm_ids ids;
    int32_t run;          /* the run settled or found (match sacct picks it) */
    int bad;              /* refused when read: e holds why; the writer skips it */
    int price_failed;     /* match sacct: pricing failed (e); an error only for a new run */
    enum outcome out;     /* set by the writer */
    int64_t charge_sumin; /* settled: what the run was charged */
    struct allot_error e; /* OUT_ERROR */
};

struct bulk_op {
    size_t n;
    int match_sacct;
    struct bulk_job v[];
};

/* A failure of the bank, not of the job: the whole request fails and retries as one. */
static int bank_failure(enum allot_errnum e)
{
    return e == ALLOT_EIO || e == ALLOT_EUNAVAIL || e == ALLOT_ENOMEM || e == ALLOT_EINTERNAL ||
           e == ALLOT_EPROTO || e == ALLOT_EAUTH;
}

/* What the bank has of a job's runs, for the sacct record of a run that started at start. */
struct runs_seen {
    int64_t start;
    int max_run;   /* the highest run, -1 when none */
    int start_run; /* the highest run recorded with this start, -1 when none */
    int start_held;
    int held_run; /* the highest held run, -1 (a hold at submit has another start) */
    int void_run; /* the highest run the plugins cancelled before start, -1 */
};

static int see_run(const struct job *j, void *arg)
{
    struct runs_seen *k = arg;
    if (j->run > k->max_run)
        k->max_run = j->run;
    if (k->start > 0 && j->start_s == k->start && j->run >= k->start_run) {
        k->start_run = j->run;
        k->start_held = j->status == JOB_HELD;
    }
    if (j->status == JOB_HELD && j->run > k->held_run)
        k->held_run = j->run;
    if (!strcmp(j->settle_source, "void") && j->run > k->void_run)
        k->void_run = j->run;
    return 0;
}

/* match sacct: choose the run of q (b's copy).  1: settle it (q->run set), 0: nothing to do
 * (b->out and b->run set), -1 with err. */
static int match_run(store_t *st, struct bulk_job *b, struct settle_req *q, struct allot_error *err)
{
    struct runs_seen k = {q->start_s, -1, -1, 0, -1, -1};
    struct job_filter f = {.cluster = q->cluster, .job_id = q->job_id, .status = -1};
    if (store_job_list(st, &f, see_run, &k, err) < 0)
        return -1;
    if (k.void_run >= 0 && k.void_run == k.max_run) {
        /* The plugins cancelled its last run before it started (a void run ends the job):
         * sacct's record of it costs nothing. */
        b->run = k.void_run;
        b->out = OUT_VOID;
        return 0;
    }
    if (k.start_run >= 0 && !k.start_held) {
        b->run = k.start_run; /* settled by the epilog or an earlier pass */
        b->out = OUT_REPLAY;
        return 0;
    }
    int pick = k.start_run >= 0 ? k.start_run : k.held_run;
    if (q->start_s == 0 && pick < 0) {
        b->out = OUT_SKIPPED; /* never ran and never held: nothing to charge or release */
        return 0;
    }
    if (pick >= 0) {
        /* A held run is settled on its hold's record: who and where are the hold's. */
        q->run = pick;
        q->user[0] = q->account[0] = q->partition[0] = q->qos[0] = 0;
        q->resource[0] = 0;
        q->time_limit_s = 0;
        return 1;
    }
    if (b->price_failed) {
        *err = b->e;
        return -1;
    }
    q->run = k.max_run + 1;
    return 1;
}

/* One settle in its own savepoint.  0 (b->out set), -1 with err: the bank failed. */
static int settle_one(store_t *st, const struct bulk_op *o, struct bulk_job *b,
                      struct allot_error *err)
{
    if (store_savepoint(st, err) < 0)
        return -1;
    struct allot_error e = {0};
    struct settle_result res;
    memset(&res, 0, sizeof(res));
    struct settle_req q = b->q;
    int go = o->match_sacct ? match_run(st, b, &q, &e) : 1;
    if (go == 1)
        b->run = q.run;
    if (go == 1 && api_settle_apply(st, &q, &b->ids, 0, &res, &e) == 0) {
        b->out = res.replay ? (!strcmp(res.job.settle_source, "void") ? OUT_VOID : OUT_REPLAY)
                            : OUT_SETTLED;
        b->charge_sumin = res.job.charge_sumin;
    } else if (go < 0 || go == 1) {
        store_savepoint_rollback(st);
        if (bank_failure(e.code)) {
            *err = e;
            return -1;
        }
        b->out = OUT_ERROR;
        b->e = e;
        return 0;
    }
    return store_savepoint_release(st, err);
}

static int run_bulk(store_t *st, void *arg, struct allot_error *err)
{
    struct bulk_op *o = arg;
    for (size_t i = 0; i < o->n; i++) {
        struct bulk_job *b = &o->v[i];
        if (b->bad)
            continue;
        b->charge_sumin = 0;
        if (settle_one(st, o, b, err) < 0)
            return allot_error_prefix(err, "jobs[%zu]", i);
    }
    return 0;
}

static json_t *item(const struct bulk_job *b)
{
    json_t *it =
        json_pack("{s:I, s:s}", "job_id", (json_int_t)b->q.job_id, "outcome", OUTCOME_NAME[b->out]);
    if (!it)
        return NULL;
    if (b->out != OUT_ERROR && b->out != OUT_SKIPPED)
        json_object_set_new(it, "run", json_integer(b->run));
    if (b->out == OUT_SETTLED)
        json_object_set_new(it, "charge_sumin", json_integer(b->charge_sumin));
    if (b->out == OUT_VOID)
        json_object_set_new(it, "message", json_string(API_VOID_MESSAGE));
    if (b->out == OUT_ERROR) {
        json_t *e = json_pack("{s:s, s:i, s:s}", "code", allot_errname(b->e.code), "status",
                              allot_error_http_status(b->e.code), "message", b->e.msg);
        if (!e) /* a message quoting bytes that are not UTF-8 */
            e = json_pack("{s:s, s:i, s:s}", "code", allot_errname(b->e.code), "status",
                          allot_error_http_status(b->e.code), "message", "(not UTF-8)");
        json_object_set_new(it, "error", e);
    }
    return it;
}

static int finish_bulk(struct req *r, struct allot_error *err)
{
    struct bulk_op *o = r->scratch;
    int64_t count[OUT_ERROR + 1] = {0}, charged = 0;
    json_t *items = json_array();
    for (size_t i = 0; i < o->n; i++) {
        const struct bulk_job *b = &o->v[i];
        count[b->out]++;
        if (b->out == OUT_SETTLED)
            charged += b->charge_sumin;
        json_t *it = item(b);
        if (!it || json_array_append_new(items, it) < 0) {
            json_decref(items);
            return allot_errorf(err, ALLOT_EINTERNAL, "jobs[%zu]: reply not encodable", i);
        }
    }
    r->out = json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "settled", (json_int_t)count[OUT_SETTLED],
                       "replay", (json_int_t)(count[OUT_REPLAY] + count[OUT_VOID]), "skipped",
                       (json_int_t)count[OUT_SKIPPED], "errors", (json_int_t)count[OUT_ERROR],
                       "charged_sumin", (json_int_t)charged, "items", items);
    log_info("msg=\"bulk settle\" req=%llu jobs=%zu settled=%lld replay=%lld skipped=%lld "
             "errors=%lld charged_sumin=%lld",
             (unsigned long long)r->id, o->n, (long long)count[OUT_SETTLED],
             (long long)(count[OUT_REPLAY] + count[OUT_VOID]), (long long)count[OUT_SKIPPED],
             (long long)count[OUT_ERROR], (long long)charged);
    return r->out ? 0 : allot_errorf(err, ALLOT_EINTERNAL, "reply not encodable");
}

/* Read and check jobs[i] into *b; a refusal is b's error, never the request's. */
static void read_job(struct req *r, json_t *v, size_t i, int match_sacct, struct bulk_job *b)
{
    struct settle_in in;
    struct jfield f[API_SETTLE_FIELDS];
    size_t n = api_settle_fields(&b->q, &b->ids, &in, f);
    struct allot_error *e = &b->e;
    if (!json_is_object(v))
        allot_errorf(e, ALLOT_EINVAL, "jobs[%zu]: not an object", i);
    else if (json_read(v, f, n, e) == 0 && api_settle_check(r, &b->q, &b->ids, &in, e) == 0) {
        if (match_sacct && json_object_get(v, "run"))
            allot_errorf(e, ALLOT_EINVAL, "run: not with match sacct (allotd picks the run)");
        else if (api_settle_price(r, &b->q, &in, e) == 0)
            return;
        else if (match_sacct && !bank_failure(e->code)) {
            b->price_failed = 1; /* a held run needs no price: only a new run fails */
            return;
        }
    }
    b->bad = 1;
    b->out = OUT_ERROR;
}

int api_job_settle_bulk(struct req *r, struct allot_error *err)
{
    char match[16] = "run";
    struct jfield f[] = {
        {.name = "match", .type = JF_TEXT, .required = 0, .dst = match, .size = sizeof(match)},
    };
    if (json_body(r, err) < 0)
        return -1;
    json_t *jobs = json_incref(json_object_get(r->in, "jobs"));
    json_object_del(r->in, "jobs");
    int rc = -1;
    struct bulk_op *o = NULL;
    if (json_read(r->in, f, sizeof(f) / sizeof(f[0]), err) < 0)
        goto out;
    if (strcmp(match, "run") && strcmp(match, "sacct")) {
        allot_errorf(err, ALLOT_EINVAL, "match: must be run or sacct");
        goto out;
    }
    if (!json_is_array(jobs)) {
        allot_errorf(err, ALLOT_EINVAL, "jobs: required, an array of settles");
        goto out;
    }
    size_t n = json_array_size(jobs);
    if (n > BULK_MAX) {
        allot_errorf(err, ALLOT_ETOOBIG, "jobs: more than %d in one request", BULK_MAX);
        goto out;
    }
    o = xcalloc(1, sizeof(*o) + n * sizeof(o->v[0]));
    o->n = n;
    o->match_sacct = !strcmp(match, "sacct");
    for (size_t i = 0; i < n; i++)
        read_job(r, json_array_get(jobs, i), i, o->match_sacct, &o->v[i]);
    r->scratch = o; /* the request's from here */
    o = NULL;
    r->op.rerunnable = 1; /* run_bulk rewrites every outcome it sets */
    r->op.idempotent = 1; /* each settle per (cluster, job, run): a run settled is a replay */
    rc = req_defer_write(r, run_bulk, r->scratch, finish_bulk);
out:
    free(o);
    json_decref(jobs);
    return rc;
}
