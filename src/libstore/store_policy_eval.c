/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_policy_eval.c - the evaluation of a periodic policy (store.h, doc/design.md §5):
 * the open period's use against its thresholds, the commands of each threshold crossed, and
 * the evaluation log.
 */
#include <stdio.h>
#include <string.h>

#include "libcore/carryover.h"
#include "libcore/forecast.h"
#include "libstore/store_policy_int.h"
#include "libutil/text.h"

#define EVAL_COLS                                                                                  \
    "id, policy_id, period, time_s, used_sumin, total_sumin, usage_ppm, prev_flags, new_flags, "   \
    "actions, command_ids"
static const char SQL_E_ADD[] =
    "INSERT INTO evaluations (policy_id, period, time_s, used_sumin, total_sumin, usage_ppm, "
    "prev_flags, new_flags, actions, command_ids) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
    "$10) RETURNING id";
static const char SQL_E_LIST[] =
    "SELECT " EVAL_COLS " FROM evaluations WHERE (CAST($1 AS BIGINT) = 0 OR policy_id = $1) "
    "AND ($2 = '' OR period = $2) ORDER BY id DESC LIMIT $3";

static void read_eval(db_stmt_t *s, struct policy_eval *e)
{
    memset(e, 0, sizeof *e);
    e->id = db_column_int64(s, 0);
    e->policy_id = db_column_int64(s, 1);
    db_column_copy(s, 2, e->period, sizeof e->period);
    e->time_s = db_column_int64(s, 3);
    e->used_sumin = db_column_int64(s, 4);
    e->total_sumin = db_column_int64(s, 5);
    e->usage_ppm = db_column_int64(s, 6);
    e->prev_flags = (unsigned)db_column_int64(s, 7);
    e->new_flags = (unsigned)db_column_int64(s, 8);
    db_column_copy(s, 9, e->actions, sizeof e->actions);
    db_column_copy(s, 10, e->command_ids, sizeof e->command_ids);
}

/* forecast_days: whether the allocation's exhaustion forecast as of now (doc/forecast.md,
 * the default window) says its available balance b runs out within that many days.  Read
 * only when the policy asks for it: the forecast reads the window's ledger entries. */
static int forecast_soon(store_t *st, const struct policy *p, const struct allocation *al,
                         const struct balance *b, int64_t now_s, int *soon, struct allot_error *err)
{
    struct forecast f;
    *soon = 0;
    if (p->forecast_days <= 0)
        return 0;
    if (store_alloc_forecast(st, al, b, now_s, FORECAST_WINDOW_DEFAULT, &f, NULL, err) < 0)
        return -1;
    *soon = f.exhaust_s != FORECAST_NEVER && f.exhaust_s < al->end_s &&
            f.exhaust_s - now_s < p->forecast_days * FORECAST_DAY_S;
    return 0;
}

/* ---- evaluation ---- */

static int64_t usage_ppm(int64_t used, int64_t total)
{
    if (total <= 0)
        return used > 0 ? INT64_MAX : 0;
    unsigned __int128 v = (unsigned __int128)(uint64_t)used * CARRYOVER_PPM / (uint64_t)total;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static void append_list(char *buf, size_t len, const char *item)
{
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, "%s%s", n ? "," : "", item);
}

/* The open period's use and total as of now_s into e, and the thresholds it passes (with
 * the forecast's) into *flags. */
static int eval_measure(store_t *st, const struct policy *p, const struct allocation *al,
                        int64_t now_s, struct policy_eval *e, unsigned *flags,
                        struct allot_error *err)
{
    struct balance b;
    if (store_balance_get(st, p->alloc_id, &b, err) < 0)
        return -1;
    e->policy_id = p->id;
    text_copy(e->period, sizeof e->period, p->current_period);
    e->time_s = now_s;
    e->used_sumin = b.used_sumin - p->period_used_open_sumin;
    if (e->used_sumin < 0)
        e->used_sumin = 0;
    e->total_sumin = store_policy_period_total(p->period_total_sumin); /* base + carry + hand */
    e->usage_ppm = usage_ppm(e->used_sumin, e->total_sumin);
    struct carryover_thresholds th = {
        .notify_ppm = p->notify_ppm, .downscale_ppm = p->downscale_ppm, .grace_ppm = p->grace_ppm};
    *flags = 0;
    if (carryover_flags(e->used_sumin, e->total_sumin, &th, flags, err) < 0)
        return -1;
    int soon = 0;
    if (forecast_soon(st, p, al, &b, now_s, &soon, err) < 0)
        return -1;
    if (soon)
        *flags |= CARRYOVER_FORECAST;
    e->prev_flags = p->flags;
    e->new_flags = *flags;
    return 0;
}

/* The actions of the thresholds raised and cleared (e->prev_flags to e->new_flags) into
 * e->actions, the commands of those that act on Slurm enqueued, their ids into
 * e->command_ids. */
static int eval_actions(store_t *st, const struct policy *p, int64_t now_s, struct policy_eval *e,
                        struct allot_error *err)
{
    unsigned raised = 0, cleared = 0;
    carryover_flags_diff(e->prev_flags, e->new_flags, &raised, &cleared);
    int64_t ids[8];
    int n = 0, max = 8;
    char payload[ALLOT_TRES_MAX], tail[ALLOT_KEY_MAX];
    /* Each action's key names the transition and the time, so a flag that is raised, cleared
     * and raised again in one period enqueues each transition once. */
#define ACTION(what, kind_, payload_)                                                              \
    do {                                                                                           \
        append_list(e->actions, sizeof e->actions, what);                                          \
        snprintf(tail, sizeof tail, "%s@%lld", what, (long long)now_s);                            \
        if (store_policy_command(st, p, p->current_period, kind_, payload_, tail, now_s, ids, &n,  \
                                 max, err) < 0)                                                    \
            return -1;                                                                             \
    } while (0)
    if (raised & CARRYOVER_NOTIFY)
        append_list(e->actions, sizeof e->actions, "notify");
    if (cleared & CARRYOVER_NOTIFY)
        append_list(e->actions, sizeof e->actions, "notify-clear");
    if (raised & CARRYOVER_FORECAST)
        append_list(e->actions, sizeof e->actions, "forecast-notify");
    if (cleared & CARRYOVER_FORECAST)
        append_list(e->actions, sizeof e->actions, "forecast-notify-clear");
    if ((raised & CARRYOVER_DOWNSCALE) && p->slow_qos[0]) {
        snprintf(payload, sizeof payload, "qos=%s", p->slow_qos);
        ACTION("downscale", "set_qos", payload);
    }
    if ((cleared & CARRYOVER_DOWNSCALE) && p->slow_qos[0]) {
        snprintf(payload, sizeof payload, "qos=%s", p->normal_qos[0] ? p->normal_qos : "normal");
        ACTION("downscale-clear", "set_qos", payload);
    }
    if (raised & CARRYOVER_PAUSE)
        ACTION("pause", "set_grpjobs", "GrpJobs=0");
    if (cleared & CARRYOVER_PAUSE) {
        if (store_policy_unpause_payload(st, p, payload, err) < 0)
            return -1;
        ACTION("pause-clear", "set_grpjobs", payload);
    }
#undef ACTION
    for (int i = 0; i < n; i++) {
        char id[24];
        snprintf(id, sizeof id, "%lld", (long long)ids[i]);
        append_list(e->command_ids, sizeof e->command_ids, id);
    }
    return 0;
}

/* Append e to the evaluation log; e->id set. */
static int eval_insert(store_t *st, struct policy_eval *e, struct allot_error *err)
{
    db_stmt_t *s = store_policy_stmt(st, E_ADD, SQL_E_ADD, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, e->policy_id);
    db_bind_text(s, 2, e->period);
    db_bind_int64(s, 3, e->time_s);
    db_bind_int64(s, 4, e->used_sumin);
    db_bind_int64(s, 5, e->total_sumin);
    db_bind_int64(s, 6, e->usage_ppm);
    db_bind_int64(s, 7, e->prev_flags);
    db_bind_int64(s, 8, e->new_flags);
    db_bind_text(s, 9, e->actions);
    db_bind_text(s, 10, e->command_ids);
    if (db_step(s, err) != 1) {
        db_reset(s);
        return err->code ? -1 : allot_errorf(err, ALLOT_EIO, "evaluation: no id returned");
    }
    e->id = db_column_int64(s, 0);
    db_reset(s);
    return 0;
}

int store_policy_evaluate(store_t *st, int64_t policy_id, int64_t now_s, const struct period_tz *tz,
                          const char *actor, struct policy_eval *out, struct allot_error *err)
{
    struct policy_eval e;
    struct policy p;
    struct allocation al;
    memset(&e, 0, sizeof e);
    if (store_policy_roll(st, policy_id, now_s, tz, actor, &e.roll, err) < 0)
        return -1;
    if (store_policy_get(st, policy_id, &p, err) < 0)
        return -1;
    if (store_alloc_read(st, p.alloc_id, &al, NULL, err) < 0)
        return -1;
    /* Before any period, nothing to evaluate; after the allocation's end its last period is
     * closed and its actions undone (store_policy_roll): nothing may raise them again. */
    if (p.current_period[0] && now_s < al.end_s) {
        unsigned flags;
        if (eval_measure(st, &p, &al, now_s, &e, &flags, err) < 0 ||
            eval_actions(st, &p, now_s, &e, err) < 0)
            return -1;
        if (flags != p.flags && store_policy_set_flags(st, p.id, flags, err) < 0)
            return -1;
        if (eval_insert(st, &e, err) < 0)
            return -1;
    }
    if (out)
        *out = e;
    return 0;
}

STORE_ROWS(eval, struct policy_eval, store_eval_f, read_eval(s, &row))

int store_eval_list(store_t *st, const struct eval_filter *f, store_eval_f cb, void *arg,
                    struct allot_error *err)
{
    if (store_ready(st, "evaluation list", err) < 0)
        return -1;
    db_stmt_t *s = store_policy_stmt(st, E_LIST, SQL_E_LIST, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, f ? f->policy_id : 0);
    db_bind_text(s, 2, f && f->period ? f->period : "");
    db_bind_int64(s, 3, f && f->limit > 0 ? f->limit : INT64_MAX);
    return store_walk(s, eval_row, &(struct eval_walk){cb, arg}, err);
}
