/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json.c - the strict readers and the model encoders of json.h. */
#include "allotd/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libcore/civil.h"
#include "libcore/money.h"
#include "libcore/numparse.h"

int json_body(struct req *r, struct allot_error *err)
{
    if (r->in)
        return 0;
    if (r->body_len == 0) {
        r->in = json_object();
        return 0;
    }
    json_error_t je;
    json_t *j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return allot_errorf(err, ALLOT_EINVAL, "body: malformed JSON at line %d column %d: %s",
                            je.line, je.column, je.text);
    if (!json_is_object(j)) {
        json_decref(j);
        return allot_errorf(err, ALLOT_EINVAL, "body: must be a JSON object");
    }
    r->in = j;
    return 0;
}

int json_check_time(const char *field, int64_t t, struct allot_error *err)
{
    if (t < 1 || t > JSON_TIME_MAX)
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: must be after 1970-01-01T00:00:00Z and no later than "
                            "9999-12-31T23:59:59Z (epoch seconds 1 to %lld)",
                            field, (long long)JSON_TIME_MAX);
    return 0;
}

int json_parse_time(const char *field, const char *s, int64_t *out, struct allot_error *err)
{
    struct tm tm = {0};
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end) {
        memset(&tm, 0, sizeof(tm));
        end = strptime(s, "%Y-%m-%d", &tm);
        if (!end || *end)
            return allot_errorf(err, ALLOT_EINVAL,
                                "%s: '%s' is not a time (2026-01-01T00:00:00Z, 2026-01-01 or "
                                "epoch seconds)",
                                field, s);
    }
    /* Times are epoch seconds >= 0, as the integer form (JF_TIME) and the CLI require:
     * timegm would give a negative time for an earlier date (and -1, its error value, for
     * 1969-12-31T23:59:59Z). */
    if (tm.tm_year < 70)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is before 1970-01-01", field, s);
    /* strptime takes any day 1..31 and second 0..60, and timegm quietly moves what does
     * not exist ("2026-02-30" to March 2nd, :60 to the next minute): converted back, an
     * impossible date or time no longer reads as given. */
    const struct tm given = tm;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is out of range", field, s);
    if (tm.tm_year != given.tm_year || tm.tm_mon != given.tm_mon || tm.tm_mday != given.tm_mday ||
        tm.tm_hour != given.tm_hour || tm.tm_min != given.tm_min || tm.tm_sec != given.tm_sec)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is not a date and time that exists", field,
                            s);
    if ((int64_t)t > JSON_TIME_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is after 9999-12-31T23:59:59Z", field, s);
    *out = (int64_t)t;
    return 0;
}

static const char *type_text(enum jf_type t)
{
    switch (t) {
    case JF_NAME:
    case JF_TEXT:
        return "a string";
    case JF_INT:
    case JF_SUMIN:
    case JF_BILLING:
        return "an integer";
    case JF_BOOL:
        return "true or false";
    case JF_TIME:
        return "a time string or epoch seconds";
    case JF_SU:
        return "a string with units (\"100h\", \"90m\")";
    case JF_FACTOR:
        return "a decimal string (\"1.5\")";
    }
    return "?";
}

static int read_one(struct jfield *f, json_t *v, struct allot_error *err)
{
    switch (f->type) {
    case JF_NAME:
        if (!json_is_string(v))
            break;
        return model_copy_name(f->dst, f->name, json_string_value(v), f->allow_empty, err);
    case JF_TEXT:
        if (!json_is_string(v))
            break;
        return model_copy_text(f->dst, f->size, f->name, json_string_value(v), err);
    case JF_INT: {
        if (!json_is_integer(v))
            break;
        json_int_t x = json_integer_value(v);
        if (x < f->min)
            return allot_errorf(err, ALLOT_EINVAL, "%s: must be >= %lld", f->name,
                                (long long)f->min);
        *(int64_t *)f->dst = x;
        return 0;
    }
    case JF_BOOL:
        if (!json_is_boolean(v))
            break;
        *(int *)f->dst = json_is_true(v);
        return 0;
    case JF_TIME:
        if (json_is_integer(v)) {
            if (json_check_time(f->name, json_integer_value(v), err) < 0)
                return -1;
            *(int64_t *)f->dst = json_integer_value(v);
            return 0;
        }
        if (!json_is_string(v))
            break;
        if (json_parse_time(f->name, json_string_value(v), f->dst, err) < 0)
            return -1;
        return json_check_time(f->name, *(int64_t *)f->dst, err);
    case JF_SU: {
        if (!json_is_string(v))
            break;
        int64_t x;
        int rc = f->min < 0 ? money_parse_signed_sumin(json_string_value(v), &x, err)
                            : money_parse_sumin(json_string_value(v), &x, err);
        if (rc < 0)
            return allot_error_prefix(err, "%s", f->name);
        if (x == 0 && !f->allow_empty)
            return allot_errorf(err, ALLOT_EINVAL, "%s: must be positive", f->name);
        *(int64_t *)f->dst = x;
        return 0;
    }
    case JF_SUMIN: {
        if (!json_is_integer(v))
            break;
        json_int_t x = json_integer_value(v);
        if (f->min >= 0 && (x < 0 || (x == 0 && !f->allow_empty)))
            return allot_errorf(err, ALLOT_EINVAL, "%s: must be positive", f->name);
        *(int64_t *)f->dst = x;
        return 0;
    }
    case JF_FACTOR: {
        if (!json_is_string(v))
            break;
        const char *t = json_string_value(v);
        int64_t x;
        if (numparse_fixed(t, strlen(t), 6, &x) < 0 || x < 0)
            return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is not a decimal >= 0", f->name, t);
        *(int64_t *)f->dst = x;
        return 0;
    }
    case JF_BILLING: {
        if (!json_is_integer(v))
            break;
        json_int_t x = json_integer_value(v);
        if (x < 0 || x > INT64_MAX / 1000000)
            return allot_errorf(err, ALLOT_EINVAL, "%s: must be 0..%lld", f->name,
                                (long long)(INT64_MAX / 1000000));
        *(int64_t *)f->dst = x * 1000000;
        return 0;
    }
    }
    return allot_errorf(err, ALLOT_EINVAL, "%s: must be %s", f->name, type_text(f->type));
}

int json_read(json_t *obj, struct jfield *f, size_t n, struct allot_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        size_t i = 0;
        while (i < n && strcmp(f[i].name, key) != 0)
            i++;
        if (i == n)
            return allot_errorf(err, ALLOT_EINVAL, "%s: unknown field", key);
    }
    for (size_t i = 0; i < n; i++) {
        f[i].seen = 0;
        json_t *x = json_object_get(obj, f[i].name);
        if (!x || json_is_null(x)) {
            if (f[i].required)
                return allot_errorf(err, ALLOT_EINVAL, "%s: required", f[i].name);
            continue;
        }
        if (read_one(&f[i], x, err) < 0)
            return -1;
        f[i].seen = 1;
    }
    return 0;
}

int json_query_int(struct req *r, const char *name, int64_t min, int64_t *out,
                   struct allot_error *err)
{
    const char *s = req_query(r, name);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno || x < min)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' must be an integer >= %lld", name, s,
                            (long long)min);
    *out = x;
    return 0;
}

int json_query_time(struct req *r, const char *name, int64_t *out, struct allot_error *err)
{
    const char *s = req_query(r, name);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (*s && !*end && !errno && x >= 0) {
        *out = x;
        return 0;
    }
    return json_parse_time(name, s, out, err);
}

int json_query_name(struct req *r, const char *name, const char **out, struct allot_error *err)
{
    const char *s = req_query(r, name);
    *out = NULL;
    if (!s)
        return 0;
    if (model_check_name(name, s, 0, err) < 0)
        return -1;
    *out = s;
    return 0;
}

json_t *json_time(int64_t t_s)
{
    if (t_s == 0)
        return json_null();
    char buf[CIVIL_UTC_LEN + 1];
    if (!civil_format_utc(t_s, buf))
        return json_integer(t_s); /* beyond year 9999: no such text */
    return json_string(buf);
}

json_t *json_account(const struct account *a)
{
    return json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:o}", "name", a->name, "parent",
                     a->parent, "shares", (json_int_t)a->shares, "description", a->description,
                     "organization", a->organization, "qos", a->qos, "default_qos", a->default_qos,
                     "coordinators", a->coordinators, "created", json_time(a->created_s));
}

static json_t *json_factor(int64_t ppm)
{
    char buf[48];
    if (ppm < 0 || numparse_format_fixed(ppm, 6, buf, sizeof(buf)) < 0)
        return json_string("");
    return json_string(buf);
}

json_t *json_qos(const struct qos *q)
{
    return json_pack("{s:s, s:I, s:s, s:o, s:o, s:s}", "name", q->name, "priority",
                     (json_int_t)q->priority, "flags", q->flags, "usage_factor",
                     json_factor(q->usage_factor_ppm), "limit_factor",
                     json_factor(q->limit_factor_ppm), "description", q->description);
}

json_t *json_user(const struct user *u)
{
    return json_pack("{s:s, s:I, s:s, s:o}", "name", u->name, "uid", (json_int_t)u->uid,
                     "default_account", u->default_account, "created", json_time(u->created_s));
}

json_t *json_assoc(const struct assoc *a)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s}", "cluster", a->cluster, "account",
                     a->account, "user", a->user, "partition", a->partition, "shares",
                     (json_int_t)a->shares, "default_qos", a->default_qos, "qos", a->qos);
}

json_t *json_partition(const struct partition *p)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:I, s:I}", "cluster", p->cluster, "name",
                     p->name, "resource", p->resource, "billing_weights", p->billing_weights,
                     "max_tres", p->max_tres, "qos", p->qos, "default_time_s",
                     (json_int_t)p->default_time_s, "max_time_s", (json_int_t)p->max_time_s);
}

size_t json_balance_members(const struct allocation *a, const struct balance *b, struct jmember *m)
{
    size_t n = 0;
    m[n++] = (struct jmember){.key = "id", .type = JM_INT, .i = a->id};
    m[n++] = (struct jmember){.key = "account", .type = JM_STR, .s = a->account};
    m[n++] = (struct jmember){.key = "resource", .type = JM_STR, .s = a->resource};
    m[n++] = (struct jmember){.key = "cluster", .type = JM_STR, .s = a->cluster};
    m[n++] = (struct jmember){.key = "category", .type = JM_STR, .s = a->category};
    m[n++] = (struct jmember){.key = "start", .type = JM_TIME, .i = a->start_s};
    m[n++] = (struct jmember){.key = "end", .type = JM_TIME, .i = a->end_s};
    m[n++] = (struct jmember){.key = "granted_sumin", .type = JM_INT, .i = b->granted_sumin};
    m[n++] = (struct jmember){.key = "used_sumin", .type = JM_INT, .i = b->used_sumin};
    m[n++] = (struct jmember){.key = "held_sumin", .type = JM_INT, .i = b->held_sumin};
    m[n++] = (struct jmember){.key = "available_sumin", .type = JM_INT, .i = b->available_sumin};
    return n;
}

json_t *json_balance(const struct allocation *a, const struct balance *b)
{
    struct jmember m[JSON_BALANCE_MEMBERS];
    return json_object_of(m, json_balance_members(a, b, m));
}

json_t *json_allocation(const struct allocation *a, const struct balance *b)
{
    json_t *j = json_balance(a, b);
    json_object_set_new(j, "comment", json_string(a->comment));
    json_object_set_new(j, "created", json_time(a->created_s));
    return j;
}

json_t *json_ledger(const struct ledger_entry *e)
{
    return json_pack("{s:I, s:I, s:s, s:I, s:s, s:o, s:s, s:s, s:I, s:i, s:s}", "id",
                     (json_int_t)e->id, "alloc_id", (json_int_t)e->alloc_id, "kind",
                     model_ledger_kind_name(e->kind), "amount_sumin", (json_int_t)e->amount_sumin,
                     "actor", e->actor, "time", json_time(e->time_s), "comment", e->comment,
                     "cluster", e->cluster, "job_id", (json_int_t)e->job_id, "run", (int)e->run,
                     "idempotency_key", e->idem_key);
}

size_t json_job_members(const struct job *j, struct jmember *m, char *slurm_id)
{
    size_t n = 0;
    m[n++] = (struct jmember){.key = "cluster", .type = JM_STR, .s = j->cluster};
    m[n++] = (struct jmember){.key = "job_id", .type = JM_INT, .i = j->job_id};
    m[n++] = (struct jmember){.key = "run", .type = JM_INT, .i = j->run};
    m[n++] = (struct jmember){.key = "user", .type = JM_STR, .s = j->user};
    m[n++] = (struct jmember){.key = "account", .type = JM_STR, .s = j->account};
    m[n++] = (struct jmember){.key = "partition", .type = JM_STR, .s = j->partition};
    m[n++] = (struct jmember){.key = "qos", .type = JM_STR, .s = j->qos};
    m[n++] = (struct jmember){.key = "submit", .type = JM_TIME, .i = j->submit_s};
    m[n++] = (struct jmember){.key = "start", .type = JM_TIME, .i = j->start_s};
    m[n++] = (struct jmember){.key = "end", .type = JM_TIME, .i = j->end_s};
    m[n++] = (struct jmember){.key = "tres", .type = JM_STR, .s = j->req_tres};
    m[n++] = (struct jmember){.key = "alloc_tres", .type = JM_STR, .s = j->alloc_tres};
    m[n++] = (struct jmember){.key = "billing_micro", .type = JM_INT, .i = j->billing_micro};
    m[n++] = (struct jmember){.key = "time_limit_s", .type = JM_INT, .i = j->time_limit_s};
    m[n++] = (struct jmember){.key = "elapsed_s", .type = JM_INT, .i = j->elapsed_s};
    m[n++] = (struct jmember){.key = "state", .type = JM_STR, .s = j->slurm_state};
    m[n++] =
        (struct jmember){.key = "status", .type = JM_STR, .s = model_job_status_name(j->status)};
    m[n++] = (struct jmember){.key = "hold_sumin", .type = JM_INT, .i = j->hold_sumin};
    m[n++] = (struct jmember){.key = "charge_sumin", .type = JM_INT, .i = j->charge_sumin};
    m[n++] = (struct jmember){.key = "alloc_id", .type = JM_INT, .i = j->alloc_id};
    m[n++] = (struct jmember){.key = "payer_account", .type = JM_STR, .s = j->payer_account};
    m[n++] = (struct jmember){.key = "settle_source", .type = JM_STR, .s = j->settle_source};
    m[n++] = (struct jmember){.key = "updated", .type = JM_TIME, .i = j->updated_s};
    /* Slurm's names of the job (schema 0020), when known: "54_3", "60+1"; a heterogeneous
     * job's name wins where a job has both. */
    const struct job_slurm_ids *ids = &j->ids;
    if (ids->array_job_id > 0) {
        m[n++] = (struct jmember){.key = "array_job_id", .type = JM_INT, .i = ids->array_job_id};
        m[n++] = (struct jmember){.key = "array_task_id", .type = JM_INT, .i = ids->array_task_id};
        snprintf(slurm_id, JSON_SLURM_ID_MAX, "%lld_%lld", (long long)ids->array_job_id,
                 (long long)ids->array_task_id);
        m[n++] = (struct jmember){.key = "slurm_job_id", .type = JM_STR, .s = slurm_id};
    }
    if (ids->het_job_id > 0) {
        m[n++] = (struct jmember){.key = "het_job_id", .type = JM_INT, .i = ids->het_job_id};
        m[n++] =
            (struct jmember){.key = "het_job_offset", .type = JM_INT, .i = ids->het_job_offset};
        int named = ids->array_job_id > 0;
        snprintf(slurm_id, JSON_SLURM_ID_MAX, "%lld+%lld", (long long)ids->het_job_id,
                 (long long)ids->het_job_offset);
        if (!named)
            m[n++] = (struct jmember){.key = "slurm_job_id", .type = JM_STR, .s = slurm_id};
    }
    return n;
}

json_t *json_job(const struct job *j)
{
    struct jmember m[JSON_JOB_MEMBERS];
    char slurm_id[JSON_SLURM_ID_MAX];
    return json_object_of(m, json_job_members(j, m, slurm_id));
}

size_t json_job_reply_members(struct json_job_reply *m, const char *verb, int replay,
                              const struct job *j, const struct allocation *a,
                              const struct balance *b)
{
    size_t nj = json_job_members(j, m->job, m->slurm_id);
    size_t nb = json_balance_members(a, b, m->balance);
    m->top[0] = (struct jmember){.key = verb, .type = JM_BOOL, .i = 1};
    m->top[1] = (struct jmember){.key = "replay", .type = JM_BOOL, .i = replay};
    m->top[2] = (struct jmember){.key = "job", .type = JM_OBJECT, .obj = m->job, .n = nj};
    m->top[3] = (struct jmember){.key = "balance", .type = JM_OBJECT, .obj = m->balance, .n = nb};
    return 4;
}

json_t *json_job_reply(const char *verb, int replay, const struct job *j,
                       const struct allocation *a, const struct balance *b)
{
    struct json_job_reply m;
    return json_object_of(m.top, json_job_reply_members(&m, verb, replay, j, a, b));
}

json_t *json_object_of(const struct jmember *m, size_t n)
{
    json_t *o = json_object();
    for (size_t k = 0; o && k < n; k++) {
        json_t *v = NULL;
        switch (m[k].type) {
        case JM_STR:
            v = json_string(m[k].s);
            break;
        case JM_INT:
            v = json_integer((json_int_t)m[k].i);
            break;
        case JM_BOOL:
            v = json_boolean(m[k].i);
            break;
        case JM_TIME:
            v = json_time(m[k].i);
            break;
        case JM_OBJECT:
            v = json_object_of(m[k].obj, m[k].n);
            break;
        }
        if (json_object_set_new(o, m[k].key, v) < 0) { /* v NULL: not UTF-8 */
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

json_t *json_failure(const struct failure *f)
{
    return json_pack("{s:I, s:s, s:I, s:i, s:s, s:s, s:s, s:I, s:s, s:o, s:I, s:I, s:I, s:s, s:b}",
                     "id", (json_int_t)f->id, "cluster", f->cluster, "job_id",
                     (json_int_t)f->job_id, "run", (int)f->run, "user", f->user, "account",
                     f->account, "partition", f->partition, "alloc_id", (json_int_t)f->alloc_id,
                     "stage", f->stage, "time", json_time(f->time_s), "needed_sumin",
                     (json_int_t)f->needed_sumin, "available_sumin", (json_int_t)f->available_sumin,
                     "held_sumin", (json_int_t)f->held_sumin, "message", f->message, "observed",
                     f->observed ? 1 : 0);
}
