/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_policy.c - /v1/policies and /v1/evaluations (doc/design.md §5): add, list, show with
 * status (periods, last evaluations, waiting commands), evaluate (a tick for one policy),
 * dry-run (the same evaluation in a transaction that is rolled back: it shows exactly what
 * the next tick would do and changes nothing), force-reset (a RawUsage reset command for
 * the current period, keyed by time so each request enqueues one) and a whole tick.
 * Writes go through the writer (one savepoint of a group commit); dry-run uses the
 * worker's read connection inside its own transaction and never commits.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/json.h"
#include "allotd/tick.h"
#include "libcore/carryover.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

static int parse_policy_id(const char *s, int64_t *id, struct allot_error *err)
{
    char *end;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || x <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "id: '%s' is not a policy id", s);
    *id = x;
    return 0;
}

static json_t *json_policy(const struct policy *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(p->id));
    json_object_set_new(o, "alloc", json_integer(p->alloc_id));
    json_object_set_new(o, "account", json_string(p->account));
    json_object_set_new(o, "cluster", json_string(p->cluster));
    json_object_set_new(o, "period", json_string(p->period_kind));
    json_object_set_new(o, "base_sumin", json_integer(p->base_sumin));
    json_object_set_new(o, "carryover", json_boolean(p->carryover));
    json_object_set_new(o, "carryover_factor_ppm", json_integer(p->carry_factor_ppm));
    json_object_set_new(o, "grace_ppm", json_integer(p->grace_ppm));
    json_object_set_new(o, "notify_ppm", json_integer(p->notify_ppm));
    json_object_set_new(o, "downscale_ppm", json_integer(p->downscale_ppm));
    json_object_set_new(o, "slow_qos", json_string(p->slow_qos));
    json_object_set_new(o, "normal_qos", json_string(p->normal_qos));
    json_object_set_new(o, "reset_raw_usage", json_boolean(p->reset_raw_usage));
    json_object_set_new(o, "limit_type", json_string(p->limit_type));
    json_object_set_new(o, "tres_weights", json_string(p->tres_weights));
    json_object_set_new(o, "fairshare", json_integer(p->fairshare));
    json_object_set_new(o, "forecast_days", json_integer(p->forecast_days));
    json_object_set_new(o, "current_period", json_string(p->current_period));
    json_object_set_new(o, "period_start", json_time(p->period_start_s));
    json_object_set_new(o, "period_end", json_time(p->period_end_s));
    json_object_set_new(o, "period_total_sumin", json_integer(p->period_total_sumin));
    json_object_set_new(o, "flags", json_integer(p->flags));
    json_object_set_new(o, "created", json_time(p->created_s));
    return o;
}

static json_t *json_roll(const struct policy_roll *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "rolled", json_boolean(r->rolled));
    json_object_set_new(o, "old_period", json_string(r->old_period));
    json_object_set_new(o, "new_period", json_string(r->new_period));
    json_object_set_new(o, "prev_used_sumin", json_integer(r->prev_used_sumin));
    json_object_set_new(o, "expired_sumin", json_integer(r->expired_sumin));
    json_object_set_new(o, "carry_sumin", json_integer(r->carry_sumin));
    json_object_set_new(o, "credit_sumin", json_integer(r->credit_sumin));
    json_object_set_new(o, "total_sumin", json_integer(r->total_sumin));
    json_object_set_new(o, "limit_value", json_integer(r->limit_value));
    json_t *ids = json_array();
    for (int i = 0; i < r->ncommands; i++)
        json_array_append_new(ids, json_integer(r->command_ids[i]));
    json_object_set_new(o, "command_ids", ids);
    return o;
}

static json_t *json_eval(const struct policy_eval *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(e->id));
    json_object_set_new(o, "policy", json_integer(e->policy_id));
    json_object_set_new(o, "period", json_string(e->period));
    json_object_set_new(o, "time", json_time(e->time_s));
    json_object_set_new(o, "used_sumin", json_integer(e->used_sumin));
    json_object_set_new(o, "total_sumin", json_integer(e->total_sumin));
    json_object_set_new(o, "usage_ppm", json_integer(e->usage_ppm));
    json_object_set_new(o, "prev_flags", json_integer(e->prev_flags));
    json_object_set_new(o, "new_flags", json_integer(e->new_flags));
    json_object_set_new(o, "actions", json_string(e->actions));
    json_object_set_new(o, "command_ids", json_string(e->command_ids));
    return o;
}

/* ---- add ---- */

struct policy_op {
    struct policy p;
    struct policy_eval e;
    struct command c;
    int64_t now_s;
    char actor[ALLOT_NAME_MAX];
    const char *base_key; /* add: "base_su" or "base_sumin", as the request said */
};

static int run_add(store_t *st, void *arg, struct allot_error *err)
{
    struct policy_op *o = arg;
    if (store_policy_add(st, &o->p, err) == 0)
        return 0;
    /* The store names some fields by its members; the error names the request's keys. */
    static const char *const keys[][2] = {{"carryover_factor", "carryover_factor_ppm"},
                                          {"grace", "grace_ppm"},
                                          {"notify", "notify_ppm"},
                                          {"downscale", "downscale_ppm"}};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        api_error_field(err, keys[i][0], keys[i][1]);
    return api_error_field(err, "base", o->base_key);
}

static int finish_add(struct req *r, struct allot_error *err)
{
    (void)err;
    struct policy_op *o = r->scratch;
    r->status = 201;
    r->out = json_policy(&o->p);
    return 0;
}

int api_policy_add(struct req *r, struct allot_error *err)
{
    struct policy_op *o = xcalloc(1, sizeof *o);
    r->scratch = o;
    struct policy *p = &o->p;
    p->carryover = 1;
    p->carry_factor_ppm = CARRYOVER_DEFAULT_FACTOR_PPM;
    p->grace_ppm = CARRYOVER_DEFAULT_GRACE_PPM;
    p->notify_ppm = CARRYOVER_DEFAULT_NOTIFY_PPM;
    p->downscale_ppm = CARRYOVER_DEFAULT_DOWNSCALE_PPM;
    p->reset_raw_usage = 1;
    p->fairshare = -1;
    snprintf(p->limit_type, sizeof p->limit_type, "GrpTRESMins");
    struct jfield f[] = {
        {.name = "alloc", .type = JF_INT, .required = 1, .dst = &p->alloc_id, .min = 1},
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = p->cluster},
        {.name = "period", .type = JF_NAME, .required = 1, .dst = p->period_kind},
        {.name = "base_su", .type = JF_SU, .dst = &p->base_sumin, .allow_empty = 1},
        {.name = "base_sumin", .type = JF_SUMIN, .dst = &p->base_sumin, .allow_empty = 1},
        {.name = "carryover", .type = JF_BOOL, .dst = &p->carryover},
        {.name = "carryover_factor_ppm", .type = JF_INT, .dst = &p->carry_factor_ppm},
        {.name = "grace_ppm", .type = JF_INT, .dst = &p->grace_ppm},
        {.name = "notify_ppm", .type = JF_INT, .dst = &p->notify_ppm},
        {.name = "downscale_ppm", .type = JF_INT, .dst = &p->downscale_ppm},
        {.name = "slow_qos", .type = JF_NAME, .dst = p->slow_qos, .allow_empty = 1},
        {.name = "normal_qos", .type = JF_NAME, .dst = p->normal_qos, .allow_empty = 1},
        {.name = "reset_raw_usage", .type = JF_BOOL, .dst = &p->reset_raw_usage},
        {.name = "limit_type", .type = JF_NAME, .dst = p->limit_type},
        {.name = "tres_weights",
         .type = JF_TEXT,
         .dst = p->tres_weights,
         .size = sizeof p->tres_weights},
        {.name = "fairshare", .type = JF_INT, .dst = &p->fairshare, .min = -1},
        {.name = "initial", .type = JF_NAME, .dst = p->initial},
        {.name = "forecast_days", .type = JF_INT, .dst = &p->forecast_days},
    };
    if (json_body(r, err) < 0 || json_read(r->in, f, sizeof f / sizeof f[0], err) < 0)
        return -1;
    if (!f[3].seen && !f[4].seen)
        return allot_errorf(err, ALLOT_EINVAL, "base_su: required (or base_sumin)");
    if (f[3].seen && f[4].seen)
        return allot_errorf(err, ALLOT_EINVAL, "base_su: give base_su or base_sumin, not both");
    o->base_key = f[3].seen ? "base_su" : "base_sumin";
    p->created_s = (int64_t)time(NULL);
    text_copy(p->actor, sizeof p->actor, r->who.user);
    return req_defer_write(r, run_add, o, finish_add);
}

/* ---- list / show ---- */

struct list_arg {
    struct req *r;
    json_t *items;
    struct allot_error *err;
};

static int on_policy(const struct policy *p, void *arg)
{
    struct list_arg *l = arg;
    int vis = auth_sees_account(l->r, p->account, l->err);
    if (vis < 0)
        return -1;
    if (vis)
        json_array_append_new(l->items, json_policy(p));
    return 0;
}

int api_policy_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct list_arg l = {r, json_array(), err};
    if (store_policy_list(st, 0, 0, on_policy, &l, err) != 0) {
        json_decref(l.items);
        return -1;
    }
    r->out = json_object();
    json_object_set_new(r->out, "policies", l.items);
    return 0;
}

static int on_period(const struct policy_period_row *p, void *arg)
{
    json_t *o = json_object();
    json_object_set_new(o, "period", json_string(p->period));
    json_object_set_new(o, "start", json_time(p->start_s));
    json_object_set_new(o, "end", json_time(p->end_s));
    json_object_set_new(o, "base_sumin", json_integer(p->base_sumin));
    json_object_set_new(o, "carry_sumin", json_integer(p->carry_sumin));
    json_object_set_new(o, "total_sumin", json_integer(p->total_sumin));
    json_object_set_new(o, "opened", json_time(p->opened_s));
    json_object_set_new(o, "closed", p->closed_s ? json_time(p->closed_s) : json_null());
    json_object_set_new(o, "used_sumin", json_integer(p->used_sumin));
    json_object_set_new(o, "expired_sumin", json_integer(p->expired_sumin));
    json_array_append_new(arg, o);
    return 0;
}

static int on_eval(const struct policy_eval *e, void *arg)
{
    json_array_append_new(arg, json_eval(e));
    return 0;
}

static int on_command(const struct command *c, void *arg)
{
    json_array_append_new(arg, api_json_command(c));
    return 0;
}

/* GET /v1/policies/{id}: the policy, its periods, its last 20 evaluations and its
 * unfinished commands with the time since they wait (doc/design.md §5.7). */
int api_policy_get(struct req *r, struct allot_error *err)
{
    int64_t id = 0;
    struct policy p;
    store_t *st = req_reader(r, err);
    if (!st || parse_policy_id(r->param[0], &id, err) < 0 || store_policy_get(st, id, &p, err) < 0)
        return -1;
    int vis = auth_sees_account(r, p.account, err);
    if (vis < 0)
        return -1;
    if (!vis)
        return allot_errorf(err, ALLOT_ENOENT, "policy %lld does not exist", (long long)id);
    json_t *periods = json_array(), *evals = json_array(), *waiting = json_array();
    r->out = json_policy(&p);
    json_object_set_new(r->out, "periods", periods);
    json_object_set_new(r->out, "evaluations", evals);
    json_object_set_new(r->out, "waiting_commands", waiting);
    struct eval_filter ef = {.policy_id = id, .limit = 20};
    struct command_filter cf = {.policy_id = id, .state = COMMAND_PENDING};
    if (store_policy_periods(st, id, on_period, periods, err) < 0 ||
        store_eval_list(st, &ef, on_eval, evals, err) < 0 ||
        store_command_list(st, &cf, on_command, waiting, err) < 0)
        return -1;
    cf.state = COMMAND_SENT;
    if (store_command_list(st, &cf, on_command, waiting, err) < 0)
        return -1;
    int64_t last = 0, oldest = 0, n = 0;
    if (store_agent_status(st, p.cluster, &last, &oldest, &n, err) < 0)
        return -1;
    json_object_set_new(r->out, "agent_last_seen", last ? json_time(last) : json_null());
    json_object_set_new(r->out, "waiting_since", oldest ? json_time(oldest) : json_null());
    return 0;
}

/* ---- evaluate, dry-run, force-reset ---- */

static int body_now(struct req *r, int64_t *now_s, struct allot_error *err)
{
    *now_s = (int64_t)time(NULL);
    struct jfield f[] = {{.name = "now", .type = JF_TIME, .dst = now_s}};
    return json_body(r, err) < 0 || json_read(r->in, f, 1, err) < 0 ? -1 : 0;
}

static int run_eval(store_t *st, void *arg, struct allot_error *err)
{
    struct policy_op *o = arg;
    return store_policy_evaluate(st, o->p.id, o->now_s, tick_zone(), o->actor, &o->e, err);
}

static int finish_eval(struct req *r, struct allot_error *err)
{
    (void)err;
    struct policy_op *o = r->scratch;
    r->out = json_eval(&o->e);
    json_object_set_new(r->out, "boundary", json_roll(&o->e.roll));
    return 0;
}

int api_policy_evaluate(struct req *r, struct allot_error *err)
{
    struct policy_op *o = xcalloc(1, sizeof *o);
    r->scratch = o;
    if (parse_policy_id(r->param[0], &o->p.id, err) < 0 || body_now(r, &o->now_s, err) < 0)
        return -1;
    text_copy(o->actor, sizeof o->actor, r->who.user);
    return req_defer_write(r, run_eval, o, finish_eval);
}

int api_policy_dry_run(struct req *r, struct allot_error *err)
{
    int64_t id = 0, now_s;
    struct policy_eval e;
    store_t *st = req_reader(r, err);
    if (!st || parse_policy_id(r->param[0], &id, err) < 0 || body_now(r, &now_s, err) < 0)
        return -1;
    if (store_begin(st, err) < 0)
        return -1;
    int rc = store_policy_evaluate(st, id, now_s, tick_zone(), r->who.user, &e, err);
    store_rollback(st); /* a dry run never commits */
    if (rc < 0)
        return -1;
    r->out = json_eval(&e);
    json_object_set_new(r->out, "boundary", json_roll(&e.roll));
    json_object_set_new(r->out, "dry_run", json_true());
    return 0;
}

static int run_force_reset(store_t *st, void *arg, struct allot_error *err)
{
    struct policy_op *o = arg;
    struct policy p;
    int replay = 0;
    if (store_policy_get(st, o->p.id, &p, err) < 0)
        return -1;
    if (!p.current_period[0])
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "policy %lld has no current period yet (evaluate it first)",
                            (long long)p.id);
    struct command *c = &o->c;
    text_copy(c->cluster, sizeof c->cluster, p.cluster);
    snprintf(c->kind, sizeof c->kind, "reset_raw_usage");
    text_copy(c->target, sizeof c->target, p.account);
    snprintf(c->payload, sizeof c->payload, "RawUsage=0");
    c->policy_id = p.id;
    text_copy(c->period, sizeof c->period, p.current_period);
    snprintf(c->idem_key, sizeof c->idem_key, "policy:%lld:%s:force-reset@%lld", (long long)p.id,
             p.current_period, (long long)o->now_s);
    return store_command_add(st, c, o->now_s, &replay, err);
}

static int finish_force_reset(struct req *r, struct allot_error *err)
{
    (void)err;
    struct policy_op *o = r->scratch;
    r->status = 201;
    r->out = api_json_command(&o->c);
    return 0;
}

int api_policy_force_reset(struct req *r, struct allot_error *err)
{
    struct policy_op *o = xcalloc(1, sizeof *o);
    r->scratch = o;
    if (parse_policy_id(r->param[0], &o->p.id, err) < 0 || body_now(r, &o->now_s, err) < 0)
        return -1;
    return req_defer_write(r, run_force_reset, o, finish_force_reset);
}

/* POST /v1/policies/tick: one pass of the clock now (or at "now"), for operators and tests. */
int api_policy_tick(struct req *r, struct allot_error *err)
{
    int64_t now_s;
    int rolled = 0;
    if (body_now(r, &now_s, err) < 0)
        return -1;
    int n = tick_run_once(r->d, now_s, &rolled, err);
    if (n < 0)
        return -1;
    r->out = json_object();
    json_object_set_new(r->out, "evaluated", json_integer(n));
    json_object_set_new(r->out, "rolled", json_integer(rolled));
    return 0;
}

int api_eval_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct eval_filter f = {0};
    int64_t limit = 0;
    if (!st || json_query_int(r, "policy", 1, &f.policy_id, err) < 0 ||
        json_query_int(r, "limit", 1, &limit, err) < 0)
        return -1;
    f.period = req_query(r, "period");
    f.limit = limit > 100000 ? 100000 : (int)limit;
    json_t *items = json_array();
    if (store_eval_list(st, &f, on_eval, items, err) < 0) {
        json_decref(items);
        return -1;
    }
    r->out = json_object();
    json_object_set_new(r->out, "evaluations", items);
    return 0;
}
