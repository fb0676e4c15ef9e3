/* SPDX-License-Identifier: GPL-3.0-or-later */
/* job.c - typed job verbs (admit, hold, settle, release, void) for the plugins and the agent.
 *
 * Each verb builds its JSON body from struct allot_job_desc (leaving out what is not
 * given), posts it, and reads the decision and numbers back into struct allot_job_result.
 * A 402/403 reply that carries a decision (`"admitted":false`, `"held":false`) is a refusal,
 * an outcome the caller acts on; any other failure is an error (no decision).
 */
#include "allot/allot.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/text.h"

enum job_verb { VERB_ADMIT, VERB_HOLD, VERB_SETTLE, VERB_RELEASE, VERB_ADJUST, VERB_VOID };

static const struct {
    const char *path;
    const char *decision; /* the reply's boolean field */
} verbs[] = {
    [VERB_ADMIT] = {"/v1/jobs/admit", "admitted"},
    [VERB_HOLD] = {"/v1/jobs/hold", "held"},
    [VERB_SETTLE] = {"/v1/jobs/settle", "settled"},
    [VERB_RELEASE] = {"/v1/jobs/release", "released"},
    [VERB_ADJUST] = {"/v1/jobs/adjust", "adjusted"},
    [VERB_VOID] = {"/v1/jobs/void", "voided"},
};

static int put_str(json_t *o, const char *key, const char *v)
{
    if (!v || !*v)
        return 0;
    return json_object_set_new(o, key, json_string(v));
}

static int put_int(json_t *o, const char *key, int64_t v)
{
    if (v <= 0)
        return 0;
    return json_object_set_new(o, key, json_integer((json_int_t)v));
}

static json_t *build_body(enum job_verb verb, const struct allot_job_desc *j)
{
    json_t *o = json_object();
    int bad = 0;

    if (!o)
        return NULL;
    bad |= put_str(o, "cluster", j->cluster);
    if (verb != VERB_ADMIT) {
        bad |= put_int(o, "job_id", j->job_id);
        bad |= json_object_set_new(o, "run", json_integer(j->run));
    }
    if (verb == VERB_ADJUST) {
        bad |= put_int(o, "time_limit_s", j->time_limit_s);
    } else if (verb != VERB_RELEASE) {
        bad |= put_str(o, "user", j->user);
        bad |= put_str(o, "account", j->account);
        bad |= put_str(o, "partition", j->partition);
        bad |= put_str(o, "qos", j->qos);
        bad |= put_int(o, "time_limit_s", j->time_limit_s);
        if (verb != VERB_VOID) {
            bad |= put_int(o, "billing", j->billing);
            bad |= put_int(o, "billing_micro", j->billing_micro);
        }
    }
    /* Requested TRES and submit time belong to admission and hold; settle bills from the
     * allocated TRES (doc/api.md "Job verbs"), and allotd refuses unknown fields. */
    if (verb == VERB_ADMIT || verb == VERB_HOLD)
        bad |= put_str(o, "tres", j->tres);
    if (verb == VERB_HOLD || verb == VERB_VOID)
        bad |= put_int(o, "submit", j->submit_s);
    if (verb == VERB_ADMIT || verb == VERB_HOLD)
        bad |= put_int(o, "submit_token", j->submit_token);
    if (verb == VERB_RELEASE)
        bad |= put_int(o, "keep_tasks", j->tasks);
    if ((verb == VERB_HOLD || verb == VERB_SETTLE) && j->array_job_id > 0) {
        bad |= put_int(o, "array_job_id", j->array_job_id);
        bad |= json_object_set_new(o, "array_task_id", json_integer(j->array_task_id));
    }
    if ((verb == VERB_HOLD || verb == VERB_SETTLE) && j->het_job_id > 0) {
        bad |= put_int(o, "het_job_id", j->het_job_id);
        bad |= json_object_set_new(o, "het_job_offset", json_integer(j->het_job_offset));
    }
    if (verb == VERB_ADMIT) {
        bad |= put_int(o, "tasks", j->tasks);
        bad |= put_int(o, "extra_sumin", j->extra_sumin);
    }
    if (verb == VERB_HOLD || verb == VERB_SETTLE || verb == VERB_VOID) {
        bad |= put_int(o, "start", j->start_s);
        bad |= put_str(o, "alloc_tres", j->alloc_tres);
    }
    if (verb == VERB_SETTLE) {
        bad |= put_int(o, "end", j->end_s);
        /* elapsed 0 is meaningful at settle (a job that never ran). */
        if (j->elapsed_s >= 0)
            bad |= json_object_set_new(o, "elapsed_s", json_integer(j->elapsed_s));
        bad |= put_str(o, "state", j->state);
        bad |= put_str(o, "source", j->source);
    }
    if (verb == VERB_RELEASE)
        bad |= put_str(o, "comment", j->comment);
    if (verb == VERB_VOID)
        bad |= put_str(o, "reason", j->comment);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int64_t get_int(json_t *o, const char *key)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

/* Copy the numbers the reply carries, at top level or in its "job"/"balance" objects. */
static void read_numbers(json_t *root, struct allot_job_result *res)
{
    json_t *job = json_object_get(root, "job");
    json_t *bal = json_object_get(root, "balance");
    const char *payer = json_string_value(json_object_get(root, "payer_account"));
    const char *msg = json_string_value(json_object_get(root, "message"));

    res->replay = json_is_true(json_object_get(root, "replay"));
    res->alloc_id = get_int(root, "alloc_id");
    if (!res->alloc_id)
        res->alloc_id = get_int(job, "alloc_id");
    if (!payer && job)
        payer = json_string_value(json_object_get(job, "payer_account"));
    if (payer)
        text_copy(res->payer_account, sizeof(res->payer_account), payer);
    res->billing_micro = get_int(root, "billing_micro");
    if (!res->billing_micro)
        res->billing_micro = get_int(job, "billing_micro");
    res->cost_sumin = get_int(root, "cost_sumin");
    res->available_sumin = get_int(root, "available_sumin");
    if (!res->available_sumin)
        res->available_sumin = get_int(bal, "available_sumin");
    res->held_sumin = get_int(root, "held_sumin");
    if (!res->held_sumin)
        res->held_sumin = get_int(bal, "held_sumin");
    res->hold_sumin = get_int(job, "hold_sumin");
    res->charge_sumin = get_int(job, "charge_sumin");
    res->submit_token = get_int(root, "submit_token");
    res->tasks = get_int(root, "tasks");
    res->total_sumin = get_int(root, "total_sumin");
    /* A refused hold carries its numbers in its failure record. */
    json_t *fail = json_object_get(root, "failure");
    if (json_is_object(fail)) {
        if (!res->alloc_id)
            res->alloc_id = get_int(fail, "alloc_id");
        if (!res->cost_sumin)
            res->cost_sumin = get_int(fail, "needed_sumin");
        if (!res->available_sumin)
            res->available_sumin = get_int(fail, "available_sumin");
        if (!res->held_sumin)
            res->held_sumin = get_int(fail, "held_sumin");
    }
    if (msg)
        text_copy(res->message, sizeof(res->message), msg);
}

static int job_verb(enum job_verb verb, allot_client_t *c, const struct allot_job_desc *j,
                    struct allot_job_result *res, struct allot_error *err)
{
    struct allot_error rerr = {0};
    json_t *body = NULL, *root = NULL;
    char *text = NULL, *reply = NULL;
    int status = 0, rc = -1;

    memset(res, 0, sizeof(*res));
    if (!c || !j)
        return allot_errorf(err, ALLOT_EINVAL, "%s: missing client or job", verbs[verb].path);
    body = build_body(verb, j);
    text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (!text) {
        allot_errorf(err, ALLOT_ENOMEM, "out of memory building the request");
        goto out;
    }
    if (allot_request(c, "POST", verbs[verb].path, text, &status, &reply, &rerr) == 0) {
        root = json_loads(reply, 0, NULL);
        if (!json_is_object(root)) {
            allot_errorf(err, ALLOT_EPROTO, "%s: reply is not a JSON object", verbs[verb].path);
            goto out;
        }
        json_t *d = json_object_get(root, verbs[verb].decision);
        /* Absent decision on 200 means done (older daemons answer release without one). */
        res->ok = d ? json_is_true(d) : 1;
        read_numbers(root, res);
        if (!res->ok)
            res->refusal = ALLOT_EFUNDS;
        if (json_is_true(json_object_get(root, "observed"))) {
            /* EnforceMode=observe: the job goes on; refusal and message say what
             * enforcement would have done (allot.h). */
            const char *code =
                json_string_value(json_object_get(json_object_get(root, "error"), "code"));
            res->ok = 1;
            res->refusal = code && !strcmp(code, "ELIMIT") ? ALLOT_ELIMIT : ALLOT_EFUNDS;
        }
        rc = 0;
        goto out;
    }
    if ((rerr.code == ALLOT_EFUNDS || rerr.code == ALLOT_ELIMIT) && reply) {
        root = json_loads(reply, 0, NULL);
        json_t *d = json_is_object(root) ? json_object_get(root, verbs[verb].decision) : NULL;
        if (json_is_false(d)) {
            read_numbers(root, res);
            res->ok = 0;
            res->refusal = rerr.code;
            if (!res->message[0])
                text_copy(res->message, sizeof(res->message), rerr.msg);
            rc = 0;
            goto out;
        }
    }
    if (err)
        *err = rerr;
out:
    if (rc < 0)
        memset(res, 0, sizeof(*res));
    json_decref(root);
    json_decref(body);
    free(text);
    free(reply);
    return rc;
}

int allot_job_admit(allot_client_t *c, const struct allot_job_desc *job,
                    struct allot_job_result *res, struct allot_error *err)
{
    return job_verb(VERB_ADMIT, c, job, res, err);
}

int allot_job_hold(allot_client_t *c, const struct allot_job_desc *job,
                   struct allot_job_result *res, struct allot_error *err)
{
    return job_verb(VERB_HOLD, c, job, res, err);
}

int allot_job_settle(allot_client_t *c, const struct allot_job_desc *job,
                     struct allot_job_result *res, struct allot_error *err)
{
    return job_verb(VERB_SETTLE, c, job, res, err);
}

int allot_job_release(allot_client_t *c, const struct allot_job_desc *job,
                      struct allot_job_result *res, struct allot_error *err)
{
    return job_verb(VERB_RELEASE, c, job, res, err);
}

int allot_job_adjust(allot_client_t *c, const struct allot_job_desc *job,
                     struct allot_job_result *res, struct allot_error *err)
{
    return job_verb(VERB_ADJUST, c, job, res, err);
}

int allot_job_void(allot_client_t *c, const struct allot_job_desc *job,
                   struct allot_job_result *res, struct allot_error *err)
{
    return job_verb(VERB_VOID, c, job, res, err);
}
