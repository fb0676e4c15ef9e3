/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_command.c - the command outbox over HTTP (doc/design.md §5): history (/v1/commands, filtered
 * by cluster, policy, period, state), the agent's poll (/v1/agents/{cluster}/poll) and its
 * result by command id (/v1/commands/{id}/result), and /v1/agents/{cluster} status.
 *
 * Poll: a bounded long poll.  The worker waits (at most wait_s <= 25, checking the read
 * connection every 250 ms) until the cluster has a pending or lease-expired command, then
 * claims up to max of them through the writer: they become 'sent' with attempts + 1, and come
 * back to the next poll when no result arrives within lease_s (the agent died).  A result is
 * idempotent: 'confirmed' and 'failed' are final; the same state again is reported as a
 * replay, the other state is a conflict (409).
 * 'confirmed' is only ever written here, from an agent's verified result.
 * Reconcile marker (/v1/agents/{cluster}/reconcile): the agent reports each finished sacct
 * window; the stored marker only moves forward, so a restarted agent resumes from it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "libutil/xalloc.h"

#define POLL_WAIT_MAX_S 25
#define POLL_MAX 50

json_t *api_json_command(const struct command *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(c->id));
    json_object_set_new(o, "cluster", json_string(c->cluster));
    json_object_set_new(o, "kind", json_string(c->kind));
    json_object_set_new(o, "target", json_string(c->target));
    json_object_set_new(o, "payload", json_string(c->payload));
    json_object_set_new(o, "policy", json_integer(c->policy_id));
    json_object_set_new(o, "period", json_string(c->period));
    json_object_set_new(o, "state", json_string(store_command_state_name(c->state)));
    json_object_set_new(o, "attempts", json_integer(c->attempts));
    json_object_set_new(o, "result", json_string(c->result));
    json_object_set_new(o, "created", json_time(c->created_s));
    json_object_set_new(o, "sent", c->sent_s ? json_time(c->sent_s) : json_null());
    json_object_set_new(o, "done", c->done_s ? json_time(c->done_s) : json_null());
    return o;
}

static int parse_command_id(const char *s, int64_t *id, struct allot_error *err)
{
    char *end;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || x <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "id: '%s' is not a command id", s);
    *id = x;
    return 0;
}

static int on_command(const struct command *c, void *arg)
{
    json_array_append_new(arg, api_json_command(c));
    return 0;
}

int api_command_list(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct command_filter f = {.state = -1};
    int64_t limit = 0;
    const char *state = req_query(r, "state");
    if (!st ||
        api_query_history_cluster(r, st, STORE_HISTORY_COMMANDS, "command", &f.cluster, err) < 0 ||
        json_query_int(r, "policy", 1, &f.policy_id, err) < 0 ||
        json_query_int(r, "after", 0, &f.after_id, err) < 0 ||
        json_query_int(r, "limit", 1, &limit, err) < 0)
        return -1;
    f.period = req_query(r, "period");
    if (state) {
        for (int i = COMMAND_PENDING; i <= COMMAND_FAILED; i++)
            if (strcmp(state, store_command_state_name(i)) == 0)
                f.state = i;
        if (f.state < 0)
            return allot_errorf(err, ALLOT_EINVAL,
                                "state: '%s' is not pending, sent, confirmed or failed", state);
    }
    f.limit = limit > 100000 ? 100000 : (int)limit;
    json_t *items = json_array();
    if (store_command_list(st, &f, on_command, items, err) < 0) {
        json_decref(items);
        return -1;
    }
    r->out = json_object();
    json_object_set_new(r->out, "commands", items);
    return 0;
}

int api_command_get(struct req *r, struct allot_error *err)
{
    int64_t id = 0;
    struct command c;
    store_t *st = req_reader(r, err);
    if (!st || parse_command_id(r->param[0], &id, err) < 0 ||
        store_command_get(st, id, &c, err) < 0)
        return -1;
    r->out = api_json_command(&c);
    return 0;
}

/* ---- poll ---- */

struct poll_op {
    char cluster[ALLOT_NAME_MAX];
    int64_t now_s, lease_s, max;
    int n;
    struct command cmds[POLL_MAX]; /* claimed; JSON is built in finish (scratch is free()d) */
};

static int on_claimed(const struct command *c, void *arg)
{
    struct poll_op *o = arg;
    if (o->n < POLL_MAX)
        o->cmds[o->n++] = *c;
    return 0;
}

static int run_poll(store_t *st, void *arg, struct allot_error *err)
{
    struct poll_op *o = arg;
    o->n = 0; /* a batch retried by the writer must not list a command twice */
    return store_command_claim(st, o->cluster, o->now_s, o->lease_s, (int)o->max, on_claimed, o,
                               err);
}

static int finish_poll(struct req *r, struct allot_error *err)
{
    (void)err;
    struct poll_op *o = r->scratch;
    json_t *items = json_array();
    for (int i = 0; i < o->n; i++)
        json_array_append_new(items, api_json_command(&o->cmds[i]));
    r->out = json_object();
    json_object_set_new(r->out, "commands", items);
    return 0;
}

struct has_arg {
    int64_t cutoff_s;
    int found;
};
static int on_ready(const struct command *c, void *arg)
{
    struct has_arg *h = arg;
    if (c->state == COMMAND_PENDING || (c->state == COMMAND_SENT && c->sent_s <= h->cutoff_s)) {
        h->found = 1;
        return 1;
    }
    return 0;
}

/* Whether a claim now would hand anything out (read connection, no lock taken). */
static int has_work(store_t *st, const char *cluster, int64_t cutoff_s, struct allot_error *err)
{
    struct has_arg h = {.cutoff_s = cutoff_s};
    struct command_filter f = {.cluster = cluster, .state = COMMAND_PENDING, .limit = 1};
    if (store_command_list(st, &f, on_ready, &h, err) < 0)
        return -1;
    if (h.found)
        return 1;
    f.state = COMMAND_SENT;
    f.limit = 0;
    if (store_command_list(st, &f, on_ready, &h, err) < 0)
        return -1;
    return h.found;
}

int api_agent_poll(struct req *r, struct allot_error *err)
{
    struct poll_op *o = xcalloc(1, sizeof *o);
    r->scratch = o;
    int64_t wait_s = 0;
    o->lease_s = 300;
    o->max = 20;
    struct jfield f[] = {
        {.name = "wait_s", .type = JF_INT, .dst = &wait_s, .min = 0},
        {.name = "lease_s", .type = JF_INT, .dst = &o->lease_s, .min = 1},
        {.name = "max", .type = JF_INT, .dst = &o->max, .min = 1},
    };
    if (model_check_name("cluster", r->param[0], 0, err) < 0 ||
        model_copy_text(o->cluster, sizeof o->cluster, "cluster", r->param[0], err) < 0 ||
        json_body(r, err) < 0 || json_read(r->in, f, sizeof f / sizeof f[0], err) < 0)
        return -1;
    if (wait_s > POLL_WAIT_MAX_S)
        wait_s = POLL_WAIT_MAX_S;
    if (o->max > POLL_MAX)
        o->max = POLL_MAX;
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    int64_t deadline_ms = (int64_t)time(NULL) * 1000 + wait_s * 1000;
    for (;;) {
        int64_t now = (int64_t)time(NULL);
        int h = has_work(st, o->cluster, now - o->lease_s, err);
        if (h < 0)
            return -1;
        if (h || now * 1000 >= deadline_ms)
            break;
        struct timespec ts = {0, 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    o->now_s = (int64_t)time(NULL);
    /* Even an empty poll goes through the writer: it records the agent as seen. */
    return req_defer_write(r, run_poll, o, finish_poll);
}

/* ---- result ---- */

struct result_op {
    int64_t id, now_s;
    enum command_state state;
    char text[ALLOT_TEXT_MAX];
    int replay;
    struct command c;
};

static int run_result(store_t *st, void *arg, struct allot_error *err)
{
    struct result_op *o = arg;
    if (store_command_result(st, o->id, o->state, o->text, o->now_s, &o->replay, err) < 0)
        return -1;
    return store_command_get(st, o->id, &o->c, err);
}

static int finish_result(struct req *r, struct allot_error *err)
{
    (void)err;
    struct result_op *o = r->scratch;
    r->out = api_json_command(&o->c);
    json_object_set_new(r->out, "replay", json_boolean(o->replay));
    return 0;
}

int api_command_result(struct req *r, struct allot_error *err)
{
    struct result_op *o = xcalloc(1, sizeof *o);
    r->scratch = o;
    char state[ALLOT_NAME_MAX] = "";
    struct jfield f[] = {
        {.name = "state", .type = JF_NAME, .required = 1, .dst = state},
        {.name = "result", .type = JF_TEXT, .dst = o->text, .size = sizeof o->text},
    };
    if (parse_command_id(r->param[0], &o->id, err) < 0 || json_body(r, err) < 0 ||
        json_read(r->in, f, sizeof f / sizeof f[0], err) < 0)
        return -1;
    if (strcmp(state, "confirmed") == 0)
        o->state = COMMAND_CONFIRMED;
    else if (strcmp(state, "failed") == 0)
        o->state = COMMAND_FAILED;
    else
        return allot_errorf(err, ALLOT_EINVAL, "state: must be confirmed or failed");
    o->now_s = (int64_t)time(NULL);
    return req_defer_write(r, run_result, o, finish_result);
}

int api_agent_status(struct req *r, struct allot_error *err)
{
    int64_t last = 0, oldest = 0, n = 0;
    store_t *st = req_reader(r, err);
    /* A cluster the bank lacks is 404: zero counts would read as "its agent is idle".  A
     * known cluster whose agent has not reported yet is 200 with zero counts. */
    if (!st || model_check_name("cluster", r->param[0], 0, err) < 0 ||
        api_cluster_check(st, r->param[0], err) < 0 ||
        store_agent_status(st, r->param[0], &last, &oldest, &n, err) < 0)
        return -1;
    r->out = json_object();
    json_object_set_new(r->out, "cluster", json_string(r->param[0]));
    json_object_set_new(r->out, "last_seen", last ? json_time(last) : json_null());
    json_object_set_new(r->out, "waiting", json_integer(n));
    json_object_set_new(r->out, "waiting_since", oldest ? json_time(oldest) : json_null());
    struct reconcile_mark m;
    if (store_reconcile_get(st, r->param[0], &m, err) < 0)
        return -1;
    json_t *rec = json_object();
    json_object_set_new(rec, "until", m.until_s ? json_time(m.until_s) : json_null());
    json_object_set_new(rec, "until_s", json_integer(m.until_s));
    json_object_set_new(rec, "updated", m.updated_s ? json_time(m.updated_s) : json_null());
    json_object_set_new(rec, "settled", json_integer(m.settled));
    json_object_set_new(rec, "unknown", json_integer(m.unknown));
    json_object_set_new(rec, "report", json_string(m.report));
    json_object_set_new(r->out, "reconcile", rec);
    return 0;
}

/* ---- reconcile marker: the agent reports one finished sacct window ---- */

struct reconcile_op {
    char cluster[ALLOT_NAME_MAX];
    int64_t until_s, settled, unknown, now_s;
    char report[ALLOT_TEXT_MAX];
    struct reconcile_mark m;
};

static int run_reconcile(store_t *st, void *arg, struct allot_error *err)
{
    struct reconcile_op *o = arg;
    if (store_reconcile_set(st, o->cluster, o->until_s, o->settled, o->unknown, o->report, o->now_s,
                            err) < 0)
        return -1;
    return store_reconcile_get(st, o->cluster, &o->m, err);
}

static int finish_reconcile(struct req *r, struct allot_error *err)
{
    (void)err;
    struct reconcile_op *o = r->scratch;
    r->out = json_pack("{s:s, s:I, s:I, s:I}", "cluster", o->m.cluster, "until_s",
                       (json_int_t)o->m.until_s, "settled", (json_int_t)o->m.settled, "unknown",
                       (json_int_t)o->m.unknown);
    return 0;
}

int api_agent_reconcile(struct req *r, struct allot_error *err)
{
    struct reconcile_op *o = xcalloc(1, sizeof *o);
    r->scratch = o;
    struct jfield f[] = {
        {.name = "until", .type = JF_TIME, .required = 1, .dst = &o->until_s},
        {.name = "settled", .type = JF_INT, .dst = &o->settled},
        {.name = "unknown", .type = JF_INT, .dst = &o->unknown},
        {.name = "report", .type = JF_TEXT, .dst = o->report, .size = sizeof o->report},
    };
    if (model_check_name("cluster", r->param[0], 0, err) < 0 ||
        model_copy_text(o->cluster, sizeof o->cluster, "cluster", r->param[0], err) < 0 ||
        json_body(r, err) < 0 || json_read(r->in, f, sizeof f / sizeof f[0], err) < 0)
        return -1;
    o->now_s = (int64_t)time(NULL);
    return req_defer_write(r, run_reconcile, o, finish_reconcile);
}
