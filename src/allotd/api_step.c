/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_step.c - monitored step records (doc/api.md "Steps"; doc/design.md §7.3).
 *
 *   POST /v1/steps   {"cluster", "job_id", "step_name", "attempt", "record": {...}}
 *   GET  /v1/steps?cluster=&job=&user=&limit=
 *
 * record is allot-step's JSON (doc/step.md "The record": "result", "slurm_stats", ...).
 * It is stored in canonical form (compact, keys sorted, integral reals as integers), so
 * "the same record" means the same JSON value whatever its spacing, key order or number
 * spelling (a client that passed it through jq turns 1.0 into 1): a replay of (cluster,
 * job, step, attempt) with it answers 200 with replay true, another record 409.
 *
 * Who may record: operators and superusers (agents, wrappers) for any job; anyone else
 * only for a job the bank knows whose user they are (the step belongs to the job's owner).
 * Who may read: users see the steps of their own jobs; operators, admins, superusers all.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

/* The scratch of a step write, freed with the request (one block: the record text lives
 * in it, so a refused write leaks nothing). */
struct step_op {
    struct step_record s;
    int replay;
    char record[]; /* canonical JSON text */
};

static int run_step(store_t *st, void *arg, struct allot_error *err)
{
    struct step_op *o = arg;
    return store_step_add(st, &o->s, &o->replay, err);
}

static json_t *json_step(const struct step_record *s)
{
    json_t *rec = json_loads(s->record, JSON_DECODE_ANY, NULL);
    return json_pack("{s:s, s:I, s:s, s:I, s:s, s:s, s:I, s:I, s:s, s:o, s:o}", "cluster",
                     s->cluster, "job_id", (json_int_t)s->job_id, "step_name", s->step_name,
                     "attempt", (json_int_t)s->attempt, "user", s->user, "status", s->status,
                     "return_code", (json_int_t)s->return_code, "exec_ms", (json_int_t)s->exec_ms,
                     "actor", s->actor, "created", json_time(s->created_s), "record",
                     rec ? rec : json_null());
}

static int finish_step(struct req *r, struct allot_error *err)
{
    struct step_op *o = r->scratch;
    (void)err;
    o->s.record = o->record;
    r->status = o->replay ? 200 : 201;
    r->out =
        json_pack("{s:b, s:b, s:o}", "recorded", 1, "replay", o->replay, "step", json_step(&o->s));
    log_info("msg=\"step recorded\" req=%llu cluster=%s job=%lld step=%s attempt=%lld "
             "status=%s replay=%d",
             (unsigned long long)r->id, o->s.cluster, (long long)o->s.job_id, o->s.step_name,
             (long long)o->s.attempt, o->s.status, o->replay);
    return 0;
}

struct owner {
    int known;
    char user[ALLOT_NAME_MAX];
};

static int on_owner(const struct job *j, void *arg)
{
    struct owner *o = arg;
    o->known = 1;
    text_copy(o->user, sizeof o->user, j->user);
    return 1; /* the newest run is enough */
}

/* Canonical numbers: a real with an integral value (|v| < 2^53, exact in a double) is
 * spelled as that integer.  Other reals keep their value; jansson prints them with 17
 * significant digits, which reads back to the same double. */
static int integral_real(json_t *m)
{
    if (!json_is_real(m))
        return 0;
    double d = json_real_value(m);
    return d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(json_int_t)d;
}

/* Replace every integral real under v (an object or array) by an integer. */
static int canon_tree(json_t *v)
{
    const char *k;
    json_t *m;
    size_t i;
    void *tmp;
    if (json_is_object(v)) {
        json_object_foreach_safe(v, tmp, k, m)
        {
            if (integral_real(m)) {
                if (json_object_set_new(v, k, json_integer((json_int_t)json_real_value(m))) < 0)
                    return -1;
            } else if (canon_tree(m) < 0) {
                return -1;
            }
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, m)
        {
            if (integral_real(m)) {
                if (json_array_set_new(v, i, json_integer((json_int_t)json_real_value(m))) < 0)
                    return -1;
            } else if (canon_tree(m) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* The fields copied out of the record for listing; EINVAL naming the member otherwise. */
static int record_summary(json_t *rec, struct step_record *s, struct allot_error *err)
{
    json_t *res = json_object_get(rec, "result");
    if (!json_is_object(res))
        return allot_errorf(err, ALLOT_EINVAL, "record.result: missing or not an object");
    json_t *st = json_object_get(res, "status");
    json_t *rc = json_object_get(res, "return_code");
    json_t *ms = json_object_get(res, "exec_time_ms");
    if (!json_is_string(st) || json_string_length(st) >= sizeof s->status)
        return allot_errorf(err, ALLOT_EINVAL, "record.result.status: missing or not a status");
    if (!json_is_integer(rc))
        return allot_errorf(err, ALLOT_EINVAL,
                            "record.result.return_code: missing or not an "
                            "integer");
    if (ms && !json_is_null(ms) && (!json_is_integer(ms) || json_integer_value(ms) < 0))
        return allot_errorf(err, ALLOT_EINVAL, "record.result.exec_time_ms: not a duration");
    text_copy(s->status, sizeof s->status, json_string_value(st));
    s->return_code = json_integer_value(rc);
    s->exec_ms = json_is_integer(ms) ? json_integer_value(ms) : 0;
    /* The record must describe the step it is filed under. */
    json_t *name = json_object_get(rec, "step_name");
    if (name && (!json_is_string(name) || strcmp(json_string_value(name), s->step_name) != 0))
        return allot_errorf(err, ALLOT_EINVAL, "record.step_name: differs from step_name '%s'",
                            s->step_name);
    json_t *job = json_object_get(rec, "slurm_job_id");
    if (job && !json_is_null(job) &&
        (!json_is_integer(job) || json_integer_value(job) != s->job_id))
        return allot_errorf(err, ALLOT_EINVAL, "record.slurm_job_id: differs from job_id %lld",
                            (long long)s->job_id);
    return 0;
}

int api_step_add(struct req *r, struct allot_error *err)
{
    struct step_record sr = {.attempt = 1};
    struct step_record *s = &sr;
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = s->cluster},
        {.name = "job_id", .type = JF_INT, .required = 1, .dst = &s->job_id, .min = 1},
        {.name = "step_name", .type = JF_NAME, .required = 1, .dst = s->step_name},
        {.name = "attempt", .type = JF_INT, .required = 0, .dst = &s->attempt, .min = 1},
    };
    store_t *st = req_reader(r, err);
    if (!st || json_body(r, err) < 0)
        return -1;
    json_t *rec = json_object_get(r->in, "record");
    if (!json_is_object(rec))
        return allot_errorf(err, ALLOT_EINVAL, "record: missing or not an object");
    /* json_read refuses unknown members: read the envelope without the record. */
    json_t *env = json_copy(r->in);
    if (!env)
        return allot_errorf(err, ALLOT_ENOMEM, "body: out of memory");
    json_object_del(env, "record");
    int rc = json_read(env, f, sizeof(f) / sizeof(f[0]), err);
    json_decref(env);
    if (rc < 0)
        return -1;
    if (s->attempt > INT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "attempt: too large");
    if (record_summary(rec, s, err) < 0)
        return -1;

    struct owner own = {0};
    struct job_filter jf = {.cluster = s->cluster, .job_id = s->job_id, .status = -1, .limit = 1};
    if (store_job_list(st, &jf, on_owner, &own, err) < 0)
        return -1;
    enum role role = r->who.role;
    if (role != ROLE_OPERATOR && role != ROLE_SUPERUSER) {
        if (!own.known)
            return allot_errorf(err, ALLOT_ENOENT,
                                "job %s/%lld: not known to the bank; only its user may record "
                                "its steps once the bank has it (or an operator)",
                                s->cluster, (long long)s->job_id);
        if (strcmp(own.user, r->who.user) != 0)
            return allot_errorf(err, ALLOT_EPERM,
                                "job %s/%lld belongs to %s: %s may not record its steps",
                                s->cluster, (long long)s->job_id, own.user, r->who.user);
    }
    text_copy(s->user, sizeof s->user, own.known ? own.user : "");
    text_copy(s->actor, sizeof s->actor, r->who.user);
    s->created_s = (int64_t)time(NULL);
    if (canon_tree(rec) < 0)
        return allot_errorf(err, ALLOT_ENOMEM, "record: out of memory");
    char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return allot_errorf(err, ALLOT_ENOMEM, "record: out of memory");
    size_t n = strlen(text);
    struct step_op *o = xmalloc(sizeof(*o) + n + 1);
    o->s = sr;
    o->replay = 0;
    memcpy(o->record, text, n + 1);
    free(text);
    o->s.record = o->record;
    return req_defer_write(r, run_step, o, finish_step);
}

struct list_arg {
    json_t *items;
};

static int on_step(const struct step_record *s, void *arg)
{
    struct list_arg *l = arg;
    json_array_append_new(l->items, json_step(s));
    return 0;
}

int api_step_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct step_filter f = {0};
    int64_t limit = 0, job = 0;
    if (!st || api_query_history_cluster(r, st, STORE_HISTORY_STEPS, "step", &f.cluster, err) < 0 ||
        json_query_name(r, "user", &f.user, err) < 0 ||
        json_query_int(r, "job", 1, &job, err) < 0 ||
        json_query_int(r, "limit", 1, &limit, err) < 0)
        return -1;
    f.job_id = job;
    f.limit = limit > 100000 ? 100000 : (int)limit;
    const char *asked_user = f.user;
    if (r->who.role == ROLE_USER) {
        if (f.user && strcmp(f.user, r->who.user) != 0)
            return allot_errorf(err, ALLOT_EPERM, "user: %s may read only its own steps",
                                r->who.user);
        f.user = r->who.user;
    }
    struct list_arg l = {json_array()};
    if (store_step_list(st, &f, on_step, &l, err) < 0 ||
        (json_array_size(l.items) == 0 &&
         api_empty_listing_names(r, st, NULL, asked_user, "step", err) < 0)) {
        json_decref(l.items);
        return -1;
    }
    r->out = json_pack("{s:o}", "items", l.items);
    return 0;
}
