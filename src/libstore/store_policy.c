/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_policy.c - periodic policies, the boundary transaction and the evaluation log of
 * store.h (doc/design.md §5); their commands go to the outbox of store_command.c.
 *
 * Exactly once: a period boundary writes its ledger entries under idempotency keys
 * "policy:<id>:<period>:<what>", its commands under the same kind of keys (UNIQUE in the
 * commands table), and advances policies.current_period with a compare-and-set, all in the
 * caller's transaction.  Whatever is retried (allotd restarted between ticks, two allotd on
 * one PostgreSQL, a tick replayed), a second pass finds the marker already advanced; and if
 * the marker were ever lost, the keys would still refuse a second credit or reset.
 * Clock: the caller passes now_s; a now_s whose period is before the marker (a clock stepped
 * back) changes nothing, a jump forward over several periods processes the current one once.
 * Periods run only while the allocation is active (start_s <= now_s < end_s); the first pass
 * at or after its end closes the last period and undoes downscale/pause (close_at_end).
 * What expires at a boundary is all the old period did not debit, holds of running jobs
 * included: their charge is the new period's use (doc/policies.md "What expires").
 * A period's total is base + carry + what was credited by hand while it was current
 * (store_policy_hand_credit, from store_credit): thresholds and the pushed limit use it; the
 * carry stays of base alone, and what is left of a top-up expires with the period.
 * Statement ids: the block STMT_POLICY_FIRST..STMT_POLICY_LAST of store_int.h, numbered by
 * enum pstmt below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libcore/carryover.h"
#include "libcore/forecast.h"
#include "libcore/period.h"
#include "libstore/store_int.h"
#include "libutil/text.h"

enum pstmt {
    P_ADD,
    P_SAME_ASSOC,
    P_GET,
    P_GET_ALLOC,
    P_LIST,
    P_MARKER_CAS,
    P_FLAGS,
    PP_INSERT,
    PP_CLOSE,
    PP_LIST,
    PP_CLOSED,
    E_ADD,
    E_LIST,
    PP_ADD_TOTAL,
    PP_REFUNDS,
    P_NSTMT
};
_Static_assert(STMT_POLICY_FIRST + P_NSTMT - 1 <= STMT_POLICY_LAST, "grow the policy id block");

#define POLICY_COLS                                                                                \
    "p.id, p.alloc_id, ac.name, p.cluster, p.period_kind, p.base_sumin, p.carryover, "             \
    "p.carry_factor_ppm, p.grace_ppm, p.notify_ppm, p.downscale_ppm, p.slow_qos, p.normal_qos, "   \
    "p.reset_raw_usage, p.limit_type, p.tres_weights, p.fairshare, p.current_period, p.flags, "    \
    "p.created_s, COALESCE(pp.start_s, 0), COALESCE(pp.end_s, 0), COALESCE(pp.total_sumin, 0), "   \
    "COALESCE(pp.used_open_sumin, 0), p.forecast_days"
#define POLICY_FROM                                                                                \
    " FROM policies p JOIN allocations al ON al.id = p.alloc_id "                                  \
    "JOIN accounts ac ON ac.id = al.account_id "                                                   \
    "LEFT JOIN policy_periods pp ON pp.policy_id = p.id AND pp.period = p.current_period "

static const char SQL_P_ADD[] =
    "INSERT INTO policies (alloc_id, cluster, period_kind, base_sumin, carryover, "
    "carry_factor_ppm, grace_ppm, notify_ppm, downscale_ppm, slow_qos, normal_qos, "
    "reset_raw_usage, limit_type, tres_weights, fairshare, created_s, forecast_days) VALUES ($1, "
    "$2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING id";
/* Another policy that drives the same Slurm association (account on cluster) while its
 * allocation runs at the same time as [$3, $4). */
static const char SQL_P_SAME_ASSOC[] =
    "SELECT p.id, p.alloc_id FROM policies p JOIN allocations al ON al.id = p.alloc_id "
    "JOIN accounts ac ON ac.id = al.account_id WHERE ac.name = $1 AND p.cluster = $2 "
    "AND al.end_s > $3 AND al.start_s < $4 ORDER BY p.id LIMIT 1";
static const char SQL_P_GET[] = "SELECT " POLICY_COLS POLICY_FROM "WHERE p.id = $1";
static const char SQL_P_GET_ALLOC[] = "SELECT " POLICY_COLS POLICY_FROM "WHERE p.alloc_id = $1";
static const char SQL_P_LIST[] =
    "SELECT " POLICY_COLS POLICY_FROM "WHERE p.id > $1 ORDER BY p.id LIMIT $2";
static const char SQL_P_MARKER_CAS[] =
    "UPDATE policies SET current_period = $1 WHERE id = $2 AND current_period = $3";
static const char SQL_P_FLAGS[] = "UPDATE policies SET flags = $1 WHERE id = $2";
static const char SQL_PP_INSERT[] =
    "INSERT INTO policy_periods (policy_id, period, start_s, end_s, base_sumin, carry_sumin, "
    "total_sumin, used_open_sumin, opened_s) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
static const char SQL_PP_CLOSE[] = "UPDATE policy_periods SET closed_s = $1, used_sumin = $2, "
                                   "expired_sumin = $3 WHERE policy_id = $4 AND period = $5";
/* The refunds made since the policy's open period opened (refund_credit_sumin). */
static const char SQL_PP_REFUNDS[] =
    "SELECT COALESCE(SUM(l.amount_sumin), 0) FROM ledger l JOIN policy_periods pp "
    "ON pp.policy_id = $1 AND pp.period = $2 AND pp.closed_s = 0 "
    "WHERE l.alloc_id = $3 AND l.kind = 'refund' AND l.time_s >= pp.opened_s";
/* A hand credit moves the total of the policy's open period (store_policy_hand_credit). */
static const char SQL_PP_ADD_TOTAL[] = "UPDATE policy_periods SET total_sumin = total_sumin + $1 "
                                       "WHERE policy_id = $2 AND period = $3 AND closed_s = 0";
static const char SQL_PP_CLOSED[] = "SELECT COALESCE(closed_s, 0) FROM policy_periods "
                                    "WHERE policy_id = $1 AND period = $2";
static const char SQL_PP_LIST[] =
    "SELECT period, start_s, end_s, base_sumin, carry_sumin, total_sumin, used_open_sumin, "
    "opened_s, closed_s, used_sumin, expired_sumin FROM policy_periods WHERE policy_id = $1 "
    "ORDER BY opened_s, start_s";

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

static db_stmt_t *pstmt(store_t *st, enum pstmt id, const char *sql, struct allot_error *err)
{
    return store_stmt(st, STMT_POLICY_FIRST + (int)id, sql, err);
}

static const char *const LIMIT_TYPES[] = {"GrpTRESMins", "MaxTRESMins", "GrpTRES"};
/* ---- readers ---- */

static void read_policy(db_stmt_t *s, struct policy *p)
{
    memset(p, 0, sizeof *p);
    p->id = db_column_int64(s, 0);
    p->alloc_id = db_column_int64(s, 1);
    db_column_copy(s, 2, p->account, sizeof p->account);
    db_column_copy(s, 3, p->cluster, sizeof p->cluster);
    db_column_copy(s, 4, p->period_kind, sizeof p->period_kind);
    p->base_sumin = db_column_int64(s, 5);
    p->carryover = (int)db_column_int64(s, 6);
    p->carry_factor_ppm = db_column_int64(s, 7);
    p->grace_ppm = db_column_int64(s, 8);
    p->notify_ppm = db_column_int64(s, 9);
    p->downscale_ppm = db_column_int64(s, 10);
    db_column_copy(s, 11, p->slow_qos, sizeof p->slow_qos);
    db_column_copy(s, 12, p->normal_qos, sizeof p->normal_qos);
    p->reset_raw_usage = (int)db_column_int64(s, 13);
    db_column_copy(s, 14, p->limit_type, sizeof p->limit_type);
    db_column_copy(s, 15, p->tres_weights, sizeof p->tres_weights);
    p->fairshare = db_column_int64(s, 16);
    db_column_copy(s, 17, p->current_period, sizeof p->current_period);
    p->flags = (unsigned)db_column_int64(s, 18);
    p->created_s = db_column_int64(s, 19);
    p->period_start_s = db_column_int64(s, 20);
    p->period_end_s = db_column_int64(s, 21);
    p->period_total_sumin = db_column_int64(s, 22);
    p->period_used_open_sumin = db_column_int64(s, 23);
    p->forecast_days = db_column_int64(s, 24);
}

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

/* ---- policies ---- */

static int check_ppm(const char *field, int64_t v, struct allot_error *err)
{
    if (v < 0 || v > 100 * (int64_t)CARRYOVER_PPM)
        return allot_errorf(err, ALLOT_EINVAL, "%s: %lld ppm is out of range (0..1e8)", field,
                            (long long)v);
    return 0;
}

/* Two policies pushing limits, QOS and fair-share to the same Slurm association (say one
 * on an account's cpu allocation and one on its gpu allocation) would overwrite each other
 * at every boundary and threshold: one policy per account and cluster at a time. */
static int policy_assoc_free(store_t *st, const struct policy *p, const struct allocation *a,
                             struct allot_error *err)
{
    db_stmt_t *s = pstmt(st, P_SAME_ASSOC, SQL_P_SAME_ASSOC, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, a->account);
    db_bind_text(s, 2, p->cluster);
    db_bind_int64(s, 3, a->start_s);
    db_bind_int64(s, 4, a->end_s);
    int rc = db_step(s, err);
    long long other = 0, other_alloc = 0;
    if (rc == 1) {
        other = (long long)db_column_int64(s, 0);
        other_alloc = (long long)db_column_int64(s, 1);
    }
    db_reset(s);
    if (rc < 0)
        return -1;
    if (rc == 1)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "cluster: policy %lld (allocation %lld) already drives account "
                            "'%s' on cluster '%s' in this allocation's time; its limits, QOS "
                            "and fair-share would overwrite each other",
                            other, other_alloc, a->account, p->cluster);
    return 0;
}

static int boundary_entry(store_t *st, const struct policy *p, enum ledger_kind kind,
                          const char *period, const char *what, const char *why, int64_t amount,
                          const char *actor, int64_t now_s, struct allot_error *err);

/* Every period credits base on top of what the allocation holds: a grant already made would
 * double the first period's budget unless the operator chose (p->initial) to keep it beside
 * the base or to let it expire. */
static int initial_check(const struct policy *p, const struct balance *b, struct allot_error *err)
{
    if (strcmp(p->initial, "add") == 0 || strcmp(p->initial, "expire") == 0)
        return 0;
    if (p->initial[0])
        return allot_errorf(err, ALLOT_EINVAL, "initial: '%s' is not add or expire", p->initial);
    if (b->granted_sumin <= 0)
        return 0;
    char g[STORE_SU_MAX], f[STORE_SU_MAX];
    store_format_su(b->granted_sumin, g, sizeof g);
    store_format_su(b->available_sumin > 0 ? b->available_sumin : 0, f, sizeof f);
    return allot_errorf(err, ALLOT_EINVAL,
                        "initial: allocation %lld was already granted %s SU and the policy "
                        "credits its base on top of that each period; say initial=add to keep "
                        "the grant beside the first period's base, or initial=expire to let its "
                        "free balance (%s SU) expire now",
                        (long long)p->alloc_id, g, f);
}

int store_policy_add(store_t *st, struct policy *p, struct allot_error *err)
{
    enum period_kind kind;
    struct allocation a;
    struct balance b;
    struct policy old;
    if (store_ready_write(st, "policy add", err) < 0)
        return -1;
    if (period_kind_parse(p->period_kind, &kind) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "period: '%s' is not month, quarter, year or total",
                            p->period_kind);
    int lt_ok = 0;
    for (size_t i = 0; i < sizeof LIMIT_TYPES / sizeof LIMIT_TYPES[0]; i++)
        if (strcmp(p->limit_type, LIMIT_TYPES[i]) == 0)
            lt_ok = 1;
    if (!lt_ok)
        return allot_errorf(err, ALLOT_EINVAL,
                            "limit_type: '%s' is not GrpTRESMins, MaxTRESMins or GrpTRES",
                            p->limit_type);
    if (p->base_sumin < 0 || p->base_sumin > STORE_AMOUNT_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "base: out of range");
    if (p->forecast_days < 0 || p->forecast_days > POLICY_FORECAST_DAYS_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "forecast_days: %lld, must be 0 (off) to %d days",
                            (long long)p->forecast_days, POLICY_FORECAST_DAYS_MAX);
    if (check_ppm("carryover_factor", p->carry_factor_ppm, err) < 0 ||
        check_ppm("grace", p->grace_ppm, err) < 0 || check_ppm("notify", p->notify_ppm, err) < 0 ||
        check_ppm("downscale", p->downscale_ppm, err) < 0)
        return -1;
    /* carry <= unused <= base, so a factor above 1 acts as 1: refuse it rather than let
     * "carryover_factor=50" (meant as 50 %) silently carry 100 %. */
    if (p->carry_factor_ppm > CARRYOVER_PPM)
        return allot_errorf(err, ALLOT_EINVAL,
                            "carryover_factor: %lld ppm is above 1 (100 %%); the carry is at "
                            "most the unused part of base",
                            (long long)p->carry_factor_ppm);
    if (p->fairshare < -1)
        return allot_errorf(err, ALLOT_EINVAL, "fairshare: must be >= 0 (or -1: unmanaged)");
    if (model_check_name("cluster", p->cluster, 0, err) < 0 ||
        model_check_name("slow_qos", p->slow_qos, 1, err) < 0 ||
        model_check_name("normal_qos", p->normal_qos, 1, err) < 0)
        return -1;
    char tmp[ALLOT_TRES_MAX];
    if (model_copy_text(tmp, sizeof tmp, "tres_weights", p->tres_weights, err) < 0)
        return -1;
    if (store_alloc_read(st, p->alloc_id, &a, &b, err) < 0)
        return -1;
    if (initial_check(p, &b, err) < 0)
        return -1;
    int ex = store_cluster_exists(st, p->cluster, err);
    if (ex < 0)
        return -1;
    if (!ex)
        return allot_errorf(err, ALLOT_ENOENT, "cluster: '%s' does not exist", p->cluster);
    /* The policy's commands throttle the account on its cluster: for an allocation that pays
     * on one cluster only, any other cluster would be throttled for a budget it never uses. */
    if (a.cluster[0] && strcmp(a.cluster, p->cluster) != 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "cluster: allocation %lld pays for jobs on cluster '%s' only, not "
                            "on '%s'",
                            (long long)p->alloc_id, a.cluster, p->cluster);
    if (store_policy_get_by_alloc(st, p->alloc_id, &old, err) == 0)
        return allot_errorf(err, ALLOT_EEXIST, "allocation %lld already has policy %lld",
                            (long long)p->alloc_id, (long long)old.id);
    if (err->code != ALLOT_ENOENT)
        return -1;
    if (policy_assoc_free(st, p, &a, err) < 0)
        return -1;
    if (kind == PERIOD_TOTAL)
        p->reset_raw_usage = 0; /* doc/design.md §5.1: never for total */
    db_stmt_t *s = pstmt(st, P_ADD, SQL_P_ADD, err);
    if (!s)
        return -1;
    if (p->created_s <= 0)
        p->created_s = (int64_t)time(NULL);
    db_bind_int64(s, 1, p->alloc_id);
    db_bind_text(s, 2, p->cluster);
    db_bind_text(s, 3, period_kind_name(kind));
    db_bind_int64(s, 4, p->base_sumin);
    db_bind_int64(s, 5, p->carryover ? 1 : 0);
    db_bind_int64(s, 6, p->carry_factor_ppm);
    db_bind_int64(s, 7, p->grace_ppm);
    db_bind_int64(s, 8, p->notify_ppm);
    db_bind_int64(s, 9, p->downscale_ppm);
    db_bind_text(s, 10, p->slow_qos);
    db_bind_text(s, 11, p->normal_qos);
    db_bind_int64(s, 12, p->reset_raw_usage ? 1 : 0);
    db_bind_text(s, 13, p->limit_type);
    db_bind_text(s, 14, p->tres_weights);
    db_bind_int64(s, 15, p->fairshare);
    db_bind_int64(s, 16, p->created_s);
    db_bind_int64(s, 17, p->forecast_days);
    if (db_step(s, err) != 1) {
        db_reset(s);
        return err->code ? -1 : allot_errorf(err, ALLOT_EIO, "policy add: no id returned");
    }
    p->id = db_column_int64(s, 0);
    db_reset(s);
    /* Expired in the add's transaction, so the first period's credit finds base alone. */
    if (strcmp(p->initial, "expire") == 0 &&
        boundary_entry(st, p, LEDGER_EXPIRY, "initial", "expiry",
                       "the free balance granted before the policy expires (initial=expire)",
                       b.available_sumin, p->actor, p->created_s, err) < 0)
        return -1;
    memcpy(p->account, a.account, sizeof p->account);
    p->current_period[0] = 0;
    p->flags = 0;
    return 0;
}

static int get_one(store_t *st, enum pstmt id, const char *sql, int64_t key, struct policy *out,
                   const char *what, struct allot_error *err)
{
    db_stmt_t *s = pstmt(st, id, sql, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, key);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        db_reset(s);
        return allot_errorf(err, ALLOT_ENOENT, "%s %lld has no policy", what, (long long)key);
    }
    read_policy(s, out);
    db_reset(s);
    return 0;
}

int store_policy_get(store_t *st, int64_t id, struct policy *out, struct allot_error *err)
{
    if (store_ready(st, "policy get", err) < 0)
        return -1;
    if (get_one(st, P_GET, SQL_P_GET, id, out, "id", err) < 0) {
        if (err->code == ALLOT_ENOENT)
            allot_errorf(err, ALLOT_ENOENT, "policy %lld does not exist", (long long)id);
        return -1;
    }
    return 0;
}

int store_policy_get_by_alloc(store_t *st, int64_t alloc_id, struct policy *out,
                              struct allot_error *err)
{
    if (store_ready(st, "policy get", err) < 0)
        return -1;
    return get_one(st, P_GET_ALLOC, SQL_P_GET_ALLOC, alloc_id, out, "allocation", err);
}

int store_policy_list(store_t *st, int64_t after_id, int limit, store_policy_f cb, void *arg,
                      struct allot_error *err)
{
    if (store_ready(st, "policy list", err) < 0)
        return -1;
    db_stmt_t *s = pstmt(st, P_LIST, SQL_P_LIST, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, after_id);
    db_bind_int64(s, 2, limit > 0 ? limit : INT64_MAX);
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct policy p;
        read_policy(s, &p);
        int r = cb(&p, arg);
        if (r) {
            db_reset(s);
            return r;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

int store_policy_periods(store_t *st, int64_t policy_id, store_policy_period_f cb, void *arg,
                         struct allot_error *err)
{
    if (store_ready(st, "policy periods", err) < 0)
        return -1;
    db_stmt_t *s = pstmt(st, PP_LIST, SQL_PP_LIST, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, policy_id);
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct policy_period_row r;
        memset(&r, 0, sizeof r);
        db_column_copy(s, 0, r.period, sizeof r.period);
        r.start_s = db_column_int64(s, 1);
        r.end_s = db_column_int64(s, 2);
        r.base_sumin = db_column_int64(s, 3);
        r.carry_sumin = db_column_int64(s, 4);
        r.total_sumin = db_column_int64(s, 5);
        r.used_open_sumin = db_column_int64(s, 6);
        r.opened_s = db_column_int64(s, 7);
        r.closed_s = db_column_int64(s, 8);
        r.used_sumin = db_column_int64(s, 9);
        r.expired_sumin = db_column_int64(s, 10);
        int x = cb(&r, arg);
        if (x) {
            db_reset(s);
            return x;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

/* ---- boundary ---- */

/* Order of two periods of the same kind: <0, 0, >0. */
static int period_cmp(const struct period *a, const struct period *b)
{
    if (a->year != b->year)
        return a->year < b->year ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* One ledger entry of the boundary under key "policy:<id>:<period>:<what>", with a comment
 * that tells a PI why the balance moved (why: its tail); amount 0 writes nothing. */
static int boundary_entry(store_t *st, const struct policy *p, enum ledger_kind kind,
                          const char *period, const char *what, const char *why, int64_t amount,
                          const char *actor, int64_t now_s, struct allot_error *err)
{
    /* One entry carries at most STORE_AMOUNT_MAX: a larger amount (the expiry of a period
     * whose base + carry passes it) is written in parts, keyed "<what>", "<what>.2", ... */
    for (int part = 1; amount > 0; part++) {
        struct ledger_entry e;
        memset(&e, 0, sizeof e);
        e.alloc_id = p->alloc_id;
        e.kind = kind;
        e.amount_sumin = amount < STORE_AMOUNT_MAX ? amount : STORE_AMOUNT_MAX;
        text_copy(e.actor, sizeof e.actor, actor && actor[0] ? actor : "allotd");
        e.time_s = now_s;
        char n[16] = "";
        if (part > 1)
            snprintf(n, sizeof n, ".%d", part);
        snprintf(e.comment, sizeof e.comment, "policy %lld period %s: %s%s%s", (long long)p->id,
                 period, why, part > 1 ? ", part " : "", part > 1 ? n + 1 : "");
        snprintf(e.idem_key, sizeof e.idem_key, "policy:%lld:%s:%s%s", (long long)p->id, period,
                 what, n);
        int replay = 0;
        if (store_credit_entry(st, &e, &replay, err) < 0) /* not a hand credit: total stays */
            return -1;
        amount -= e.amount_sumin;
    }
    return 0;
}

/* The comment of a closed period's expiry: "unused 700h expires (used 300h)". */
static void expiry_why(char *buf, size_t len, const char *when, int64_t expired, int64_t used)
{
    char x[STORE_SU_MAX], u[STORE_SU_MAX];
    store_format_su(expired, x, sizeof x);
    store_format_su(used, u, sizeof u);
    snprintf(buf, len, "closed%s; unused %s SU expires (used %s SU)", when, x, u);
}

/* Enqueue one policy command; its id is appended to ids[*n] (bounded by max). */
static int policy_command(store_t *st, const struct policy *p, const char *period, const char *kind,
                          const char *payload, const char *key_tail, int64_t now_s, int64_t *ids,
                          int *n, int max, struct allot_error *err)
{
    struct command c;
    memset(&c, 0, sizeof c);
    text_copy(c.cluster, sizeof c.cluster, p->cluster);
    text_copy(c.kind, sizeof c.kind, kind);
    text_copy(c.target, sizeof c.target, p->account);
    text_copy(c.payload, sizeof c.payload, payload);
    c.policy_id = p->id;
    text_copy(c.period, sizeof c.period, period);
    int w = snprintf(c.idem_key, sizeof c.idem_key, "policy:%lld:%s:%s", (long long)p->id, period,
                     key_tail);
    if (w < 0 || (size_t)w >= sizeof c.idem_key)
        return allot_errorf(err, ALLOT_EINTERNAL, "command key too long");
    int replay = 0;
    if (store_command_add(st, &c, now_s, &replay, err) < 0)
        return -1;
    if (*n < max)
        ids[(*n)++] = c.id;
    return 0;
}

static int find_grpjobs(const struct limit_value *l, void *arg)
{
    if (strcmp(l->name, "GrpJobs") != 0)
        return 0;
    snprintf(arg, ALLOT_TRES_MAX, "GrpJobs=%.40s", l->value); /* a count: canonical digits */
    return 1;
}

/* The payload that lifts a pause: the account's own GrpJobs limit when the operator set one
 * (allot limits), else -1 (none).  "GrpJobs=-1" would drop the operator's limit in Slurm. */
static int unpause_payload(store_t *st, const struct policy *p, char buf[ALLOT_TRES_MAX],
                           struct allot_error *err)
{
    snprintf(buf, ALLOT_TRES_MAX, "GrpJobs=-1");
    int rc = store_limit_list(st, LIMIT_SCOPE_ACCOUNT, p->account, find_grpjobs, buf, err);
    return rc < 0 ? -1 : 0;
}

/* Undo an active downscale (back to normal_qos) and pause, as commands of period, keyed
 * "<prefix>qos-restore" and "<prefix>unpause"; their ids are appended to r. */
static int undo_actions(store_t *st, const struct policy *p, const char *period, const char *prefix,
                        int64_t now_s, struct policy_roll *r, struct allot_error *err)
{
    char payload[ALLOT_TRES_MAX], tail[64];
    int max = (int)(sizeof r->command_ids / sizeof r->command_ids[0]);
    if ((p->flags & CARRYOVER_DOWNSCALE) && p->slow_qos[0]) {
        snprintf(payload, sizeof payload, "qos=%s", p->normal_qos[0] ? p->normal_qos : "normal");
        snprintf(tail, sizeof tail, "%sqos-restore", prefix);
        if (policy_command(st, p, period, "set_qos", payload, tail, now_s, r->command_ids,
                           &r->ncommands, max, err) < 0)
            return -1;
    }
    if (p->flags & CARRYOVER_PAUSE) {
        snprintf(tail, sizeof tail, "%sunpause", prefix);
        if (unpause_payload(st, p, payload, err) < 0 ||
            policy_command(st, p, period, "set_grpjobs", payload, tail, now_s, r->command_ids,
                           &r->ncommands, max, err) < 0)
            return -1;
    }
    return 0;
}

/* The value pushed with the policy's limit type for a period total (doc/design.md §5.3).  GrpTRES
 * is a concurrent limit, so the period's TRES-minutes are spread over its length in minutes. */
static int limit_value(const struct policy *p, int64_t total_sumin, int64_t start_s, int64_t end_s,
                       int64_t *out, struct allot_error *err)
{
    int64_t v;
    if (carryover_limit_tres_min(total_sumin, p->grace_ppm, &v, err) < 0)
        return -1;
    if (strcmp(p->limit_type, "GrpTRES") == 0) {
        int64_t minutes = (end_s - start_s) / 60;
        v = minutes > 0 ? v / minutes : v;
        if (v < 1 && total_sumin > 0)
            v = 1;
    }
    *out = v;
    return 0;
}

/* The allocation has ended inside period p->current_period: close that period once (its
 * free balance expires; holds of jobs still running stay, for their settles) and undo an
 * active downscale or pause, so that the account's next allocation does not start
 * throttled.  Nothing happens when the period row is already closed. */
static int close_at_end(store_t *st, const struct policy *p, const char *actor, int64_t now_s,
                        struct policy_roll *r, struct allot_error *err)
{
    db_stmt_t *s = pstmt(st, PP_CLOSED, SQL_PP_CLOSED, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, p->id);
    db_bind_text(s, 2, p->current_period);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    int64_t closed_s = rc == 1 ? db_column_int64(s, 0) : 0;
    db_reset(s);
    if (rc == 0 || closed_s != 0)
        return 0;
    struct balance b;
    if (store_balance_get(st, p->alloc_id, &b, err) < 0)
        return -1;
    r->prev_used_sumin = b.used_sumin - p->period_used_open_sumin;
    if (r->prev_used_sumin < 0)
        r->prev_used_sumin = 0;
    r->expired_sumin = b.available_sumin > 0 ? b.available_sumin : 0;
    char why[160];
    expiry_why(why, sizeof why, " at the allocation's end", r->expired_sumin, r->prev_used_sumin);
    /* Its own key: should the allocation be extended, the period's boundary still closes. */
    if (boundary_entry(st, p, LEDGER_EXPIRY, p->current_period, "end-expiry", why, r->expired_sumin,
                       actor, now_s, err) < 0)
        return -1;
    s = pstmt(st, PP_CLOSE, SQL_PP_CLOSE, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, now_s);
    db_bind_int64(s, 2, r->prev_used_sumin);
    db_bind_int64(s, 3, r->expired_sumin);
    db_bind_int64(s, 4, p->id);
    db_bind_text(s, 5, p->current_period);
    if (db_run(s, err) < 0)
        return -1;
    if (undo_actions(st, p, p->current_period, "end-", now_s, r, err) < 0)
        return -1;
    s = pstmt(st, P_FLAGS, SQL_P_FLAGS, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, 0);
    db_bind_int64(s, 2, p->id);
    return db_run(s, err);
}

int store_policy_roll(store_t *st, int64_t policy_id, int64_t now_s, const struct period_tz *tz,
                      const char *actor, struct policy_roll *out, struct allot_error *err)
{
    struct policy p;
    struct policy_roll r;
    enum period_kind kind;
    struct period cur, old;
    memset(&r, 0, sizeof r);
    if (out)
        memset(out, 0, sizeof *out);
    if (store_ready_write(st, "policy roll", err) < 0)
        return -1;
    if (store_policy_get(st, policy_id, &p, err) < 0)
        return -1;
    if (period_kind_parse(p.period_kind, &kind) < 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "policy %lld: bad period kind '%s'",
                            (long long)p.id, p.period_kind);
    /* Periods run only while the allocation is active: no credit before it starts or
     * after it ends. */
    struct allocation al;
    if (store_alloc_read(st, p.alloc_id, &al, NULL, err) < 0)
        return -1;
    if (now_s < al.start_s || now_s >= al.end_s) {
        text_copy(r.old_period, sizeof r.old_period, p.current_period);
        if (now_s >= al.end_s && p.current_period[0] &&
            close_at_end(st, &p, actor, now_s, &r, err) < 0)
            return -1;
        if (out)
            *out = r;
        return 0;
    }
    if (kind == PERIOD_TOTAL) {
        cur = (struct period){.kind = PERIOD_TOTAL};
    } else if (period_of(kind, now_s, tz, &cur, err) < 0) {
        return -1;
    }
    if (period_format(&cur, r.new_period, sizeof r.new_period, err) < 0)
        return -1;
    text_copy(r.old_period, sizeof r.old_period, p.current_period);
    if (strcmp(p.current_period, r.new_period) == 0) {
        if (out)
            *out = r;
        return 0;
    }
    if (p.current_period[0]) {
        if (period_parse(p.current_period, &old, err) < 0)
            return -1;
        /* A clock stepped back never reopens an earlier period. */
        if (old.kind != cur.kind || period_cmp(&cur, &old) < 0) {
            if (out)
                *out = r;
            return 0;
        }
    }

    struct balance b;
    if (store_balance_get(st, p.alloc_id, &b, err) < 0)
        return -1;
    int64_t unused = 0;
    if (p.current_period[0]) {
        r.prev_used_sumin = b.used_sumin - p.period_used_open_sumin;
        if (r.prev_used_sumin < 0)
            r.prev_used_sumin = 0;
        /* The old period's unused part is all it did not debit: the free balance AND the
         * holds of jobs still running.  Their charge is debited after the boundary, so it
         * counts as the new period's use; were their holds kept, each release would put SU
         * back on top of base + carry that no boundary entry explains. */
        unused = b.available_sumin > 0 ? b.available_sumin : 0;
        if (b.held_sumin > 0 && __builtin_add_overflow(unused, b.held_sumin, &unused))
            return allot_errorf(err, ALLOT_EINTERNAL, "policy %lld: unused overflows",
                                (long long)p.id);
    }
    r.credit_sumin = p.base_sumin;
    r.total_sumin = p.base_sumin;
    if (p.carryover && p.current_period[0] && kind != PERIOD_TOTAL) {
        if (carryover_total_sumin(p.base_sumin, r.prev_used_sumin, p.carry_factor_ppm,
                                  &r.total_sumin, &r.carry_sumin, err) < 0)
            return -1;
    }
    /* Credit first, then expire: the expiry of the held part is covered by the new credit
     * (running jobs reserve from the new period).  Should the holds exceed the new total,
     * the expiry stops at a zero available balance (the store refuses a negative one). */
    char why[160], s1[STORE_SU_MAX], s2[STORE_SU_MAX], fx[24];
    store_format_su(r.prev_used_sumin, s1, sizeof s1);
    store_format_su(p.base_sumin, s2, sizeof s2);
    /* The factor as the decimal the CLI takes (500000 ppm -> "0.5"). */
    snprintf(fx, sizeof fx, "%lld.%06lld", (long long)(p.carry_factor_ppm / CARRYOVER_PPM),
             (long long)(p.carry_factor_ppm % CARRYOVER_PPM));
    for (size_t n = strlen(fx); n > 0 && (fx[n - 1] == '0' || fx[n - 1] == '.'); n--) {
        char c = fx[n - 1];
        fx[n - 1] = 0;
        if (c == '.')
            break;
    }
    snprintf(why, sizeof why, "carryover from %.16s (used %s of base %s SU; at most %s x base)",
             p.current_period, s1, s2, fx[0] ? fx : "0");
    if (boundary_entry(st, &p, LEDGER_CARRYOVER, r.new_period, "carryover", why, r.carry_sumin,
                       actor, now_s, err) < 0 ||
        boundary_entry(st, &p, LEDGER_CREDIT, r.new_period, "credit", "base credit of the period",
                       r.credit_sumin, actor, now_s, err) < 0)
        return -1;
    if (p.current_period[0]) {
        /* What the store lets expire: the available balance after the new credit (an
         * overdrawn old period has less than the new total). */
        int64_t room = b.available_sumin + r.total_sumin;
        if (room < 0)
            room = 0;
        r.expired_sumin = unused < room ? unused : room;
        expiry_why(why, sizeof why, "", r.expired_sumin, r.prev_used_sumin);
        if (boundary_entry(st, &p, LEDGER_EXPIRY, p.current_period, "expiry", why, r.expired_sumin,
                           actor, now_s, err) < 0)
            return -1;
        db_stmt_t *s = pstmt(st, PP_CLOSE, SQL_PP_CLOSE, err);
        if (!s)
            return -1;
        db_bind_int64(s, 1, now_s);
        db_bind_int64(s, 2, r.prev_used_sumin);
        db_bind_int64(s, 3, r.expired_sumin);
        db_bind_int64(s, 4, p.id);
        db_bind_text(s, 5, p.current_period);
        if (db_run(s, err) < 0)
            return -1;
    }

    int64_t start_s, end_s;
    if (kind == PERIOD_TOTAL) {
        start_s = al.start_s;
        end_s = al.end_s;
    } else if (period_start_utc(&cur, tz, &start_s, err) < 0 ||
               period_end_utc(&cur, tz, &end_s, err) < 0) {
        return -1;
    }
    if (store_balance_get(st, p.alloc_id, &b, err) < 0)
        return -1;
    db_stmt_t *s = pstmt(st, PP_INSERT, SQL_PP_INSERT, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, p.id);
    db_bind_text(s, 2, r.new_period);
    db_bind_int64(s, 3, start_s);
    db_bind_int64(s, 4, end_s);
    db_bind_int64(s, 5, r.credit_sumin);
    db_bind_int64(s, 6, r.carry_sumin);
    db_bind_int64(s, 7, r.total_sumin);
    db_bind_int64(s, 8, b.used_sumin);
    db_bind_int64(s, 9, now_s);
    if (db_run(s, err) < 0)
        return -1;

    /* Commands, in the order the agent applies them: reset first, then the new limit. */
    char payload[ALLOT_TRES_MAX];
    int max = (int)(sizeof r.command_ids / sizeof r.command_ids[0]);
    if (p.reset_raw_usage && kind != PERIOD_TOTAL &&
        policy_command(st, &p, r.new_period, "reset_raw_usage", "RawUsage=0", "reset", now_s,
                       r.command_ids, &r.ncommands, max, err) < 0)
        return -1;
    if (limit_value(&p, r.total_sumin, start_s, end_s, &r.limit_value, err) < 0)
        return -1;
    snprintf(payload, sizeof payload, "%s=billing=%lld", p.limit_type, (long long)r.limit_value);
    if (policy_command(st, &p, r.new_period, "set_limit", payload, "limit", now_s, r.command_ids,
                       &r.ncommands, max, err) < 0)
        return -1;
    if (p.fairshare >= 0) {
        snprintf(payload, sizeof payload, "fairshare=%lld", (long long)p.fairshare);
        if (policy_command(st, &p, r.new_period, "set_fairshare", payload, "fairshare", now_s,
                           r.command_ids, &r.ncommands, max, err) < 0)
            return -1;
    }
    /* A new period starts unthrottled: undo the previous period's actions. */
    if (undo_actions(st, &p, r.new_period, "", now_s, &r, err) < 0)
        return -1;
    s = pstmt(st, P_FLAGS, SQL_P_FLAGS, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, 0);
    db_bind_int64(s, 2, p.id);
    if (db_run(s, err) < 0)
        return -1;

    /* The durable period marker, advanced only from the value this pass read. */
    s = pstmt(st, P_MARKER_CAS, SQL_P_MARKER_CAS, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, r.new_period);
    db_bind_int64(s, 2, p.id);
    db_bind_text(s, 3, p.current_period);
    if (db_run(s, err) < 0)
        return -1;
    if (db_changes(s) != 1)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "policy %lld: period marker moved during the boundary; retry",
                            (long long)p.id);
    r.rolled = 1;
    if (out)
        *out = r;
    return 0;
}

/* ---- credits by hand ---- */

/* A period total as thresholds and limits take it: a negative adjustment by hand may take
 * the recorded total below zero (SU granted before the first period are in the balance but
 * not in a total); nothing is left of the period then. */
static int64_t period_total(int64_t total_sumin)
{
    return total_sumin > 0 ? total_sumin : 0;
}

/* What a ledger entry made by hand adds to the SU granted for the period: a credit, an
 * adjustment (either sign) or a carryover adds, an expiry takes away.  0 for the other
 * kinds: a refund gives back a job's charge, so it lowers the period's use, not its total. */
static int64_t hand_delta(const struct ledger_entry *e)
{
    switch (e->kind) {
    case LEDGER_CREDIT:
    case LEDGER_ADJUSTMENT:
    case LEDGER_CARRYOVER:
        return e->amount_sumin;
    case LEDGER_EXPIRY:
        return -e->amount_sumin;
    default:
        return 0;
    }
}

/* What a GrpTRESMins limit adds for the refunds of the open period: a refund gives a job's
 * charge back to allot's count, but slurmctld keeps the usage it counted for the job, so
 * without it Slurm's limit would hold jobs that allot admits (doc/money.md "Slurm's
 * counters").  Other limit types count no used minutes: 0. */
static int refund_credit_sumin(store_t *st, const struct policy *p, int64_t *out,
                               struct allot_error *err)
{
    *out = 0;
    if (strcmp(p->limit_type, "GrpTRESMins") != 0)
        return 0;
    db_stmt_t *s = pstmt(st, PP_REFUNDS, SQL_PP_REFUNDS, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, p->id);
    db_bind_text(s, 2, p->current_period);
    db_bind_int64(s, 3, p->alloc_id);
    int rc = db_step(s, err);
    if (rc == 1)
        *out = db_column_int64(s, 0);
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

/* The period total of p moved by hand from before to after, or refunds moved from
 * refunds_before to refunds: push the limit again when its value changed.  The command is
 * keyed by the ledger entry that moved it, so two top-ups in one second each push theirs,
 * and the agent applies them in order (the last one wins). */
static int push_hand_limit(store_t *st, const struct policy *p, int64_t before, int64_t after,
                           int64_t refunds_before, int64_t refunds, int64_t entry_id, int64_t now_s,
                           struct allot_error *err)
{
    int64_t was, limit, id;
    int n = 0;
    if (limit_value(p, period_total(before), p->period_start_s, p->period_end_s, &was, err) < 0 ||
        limit_value(p, period_total(after), p->period_start_s, p->period_end_s, &limit, err) < 0)
        return -1;
    if (__builtin_add_overflow(was, refunds_before, &was) ||
        __builtin_add_overflow(limit, refunds, &limit))
        return allot_errorf(err, ALLOT_EINTERNAL, "policy %lld: limit overflows", (long long)p->id);
    if (limit == was)
        return 0;
    char payload[ALLOT_TRES_MAX], tail[64];
    snprintf(payload, sizeof payload, "%s=billing=%lld", p->limit_type, (long long)limit);
    snprintf(tail, sizeof tail, "limit@ledger%lld", (long long)entry_id);
    return policy_command(st, p, p->current_period, "set_limit", payload, tail, now_s, &id, &n, 1,
                          err);
}

int store_policy_hand_credit(store_t *st, const struct ledger_entry *e, struct allot_error *err)
{
    struct policy p;
    struct allocation al;
    struct allot_error lookup = {0};
    int64_t delta = hand_delta(e);
    if (delta == 0 && e->kind != LEDGER_REFUND)
        return 0;
    if (get_one(st, P_GET_ALLOC, SQL_P_GET_ALLOC, e->alloc_id, &p, "allocation", &lookup) < 0) {
        if (lookup.code == ALLOT_ENOENT)
            return 0; /* no policy: no period */
        if (err)
            *err = lookup;
        return -1;
    }
    /* Before the first period a grant belongs to no period (it expires with the first
     * period's unused part); at or after the allocation's end no period runs. */
    if (!p.current_period[0])
        return 0;
    if (store_alloc_read(st, p.alloc_id, &al, NULL, err) < 0)
        return -1;
    if (e->time_s >= al.end_s)
        return 0;
    int64_t after, refunds;
    if (e->kind == LEDGER_REFUND) {
        /* The total stays (a refund lowers the period's use); the limit moves. */
        if (refund_credit_sumin(st, &p, &refunds, err) < 0)
            return -1;
        if (refunds <= 0)
            return 0; /* closed at the allocation's end, or not a GrpTRESMins limit */
        return push_hand_limit(st, &p, p.period_total_sumin, p.period_total_sumin,
                               refunds - e->amount_sumin, refunds, e->id, e->time_s, err);
    }
    if (refund_credit_sumin(st, &p, &refunds, err) < 0)
        return -1;
    if (__builtin_add_overflow(p.period_total_sumin, delta, &after))
        return allot_errorf(err, ALLOT_EINTERNAL, "policy %lld: period total overflows",
                            (long long)p.id);
    /* The period the marker names is the one whose close expires this credit's unused part.
     * (allotd runs a due boundary before a credit, api_alloc.c, so that a top-up made after
     * midnight is the new period's rather than expired with the old one.) */
    db_stmt_t *s = pstmt(st, PP_ADD_TOTAL, SQL_PP_ADD_TOTAL, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, delta);
    db_bind_int64(s, 2, p.id);
    db_bind_text(s, 3, p.current_period);
    if (db_run(s, err) < 0)
        return -1;
    if (db_changes(s) == 0)
        return 0; /* closed at the allocation's end */
    return push_hand_limit(st, &p, p.period_total_sumin, after, refunds, refunds, e->id, e->time_s,
                           err);
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

int store_policy_evaluate(store_t *st, int64_t policy_id, int64_t now_s, const struct period_tz *tz,
                          const char *actor, struct policy_eval *out, struct allot_error *err)
{
    struct policy_eval e;
    struct policy p;
    struct balance b;
    memset(&e, 0, sizeof e);
    if (store_policy_roll(st, policy_id, now_s, tz, actor, &e.roll, err) < 0)
        return -1;
    if (store_policy_get(st, policy_id, &p, err) < 0)
        return -1;
    struct allocation al;
    if (store_alloc_read(st, p.alloc_id, &al, NULL, err) < 0)
        return -1;
    /* Before any period, nothing to evaluate; after the allocation's end its last period is
     * closed and its actions undone (store_policy_roll): nothing may raise them again. */
    if (!p.current_period[0] || now_s >= al.end_s) {
        if (out)
            *out = e;
        return 0;
    }
    if (store_balance_get(st, p.alloc_id, &b, err) < 0)
        return -1;
    e.policy_id = p.id;
    text_copy(e.period, sizeof e.period, p.current_period);
    e.time_s = now_s;
    e.used_sumin = b.used_sumin - p.period_used_open_sumin;
    if (e.used_sumin < 0)
        e.used_sumin = 0;
    e.total_sumin = period_total(p.period_total_sumin); /* base + carry + hand credits */
    e.usage_ppm = usage_ppm(e.used_sumin, e.total_sumin);
    struct carryover_thresholds th = {
        .notify_ppm = p.notify_ppm, .downscale_ppm = p.downscale_ppm, .grace_ppm = p.grace_ppm};
    unsigned flags = 0, raised = 0, cleared = 0;
    if (carryover_flags(e.used_sumin, e.total_sumin, &th, &flags, err) < 0)
        return -1;
    int soon = 0;
    if (forecast_soon(st, &p, &al, &b, now_s, &soon, err) < 0)
        return -1;
    if (soon)
        flags |= CARRYOVER_FORECAST;
    e.prev_flags = p.flags;
    e.new_flags = flags;
    carryover_flags_diff(p.flags, flags, &raised, &cleared);

    int64_t ids[8];
    int n = 0, max = 8;
    char payload[ALLOT_TRES_MAX], tail[ALLOT_KEY_MAX];
    /* Each action's key names the transition and the time, so a flag that is raised, cleared
     * and raised again in one period enqueues each transition once. */
#define ACTION(what, kind_, payload_)                                                              \
    do {                                                                                           \
        append_list(e.actions, sizeof e.actions, what);                                            \
        snprintf(tail, sizeof tail, "%s@%lld", what, (long long)now_s);                            \
        if (policy_command(st, &p, p.current_period, kind_, payload_, tail, now_s, ids, &n, max,   \
                           err) < 0)                                                               \
            return -1;                                                                             \
    } while (0)
    if (raised & CARRYOVER_NOTIFY)
        append_list(e.actions, sizeof e.actions, "notify");
    if (cleared & CARRYOVER_NOTIFY)
        append_list(e.actions, sizeof e.actions, "notify-clear");
    if (raised & CARRYOVER_FORECAST)
        append_list(e.actions, sizeof e.actions, "forecast-notify");
    if (cleared & CARRYOVER_FORECAST)
        append_list(e.actions, sizeof e.actions, "forecast-notify-clear");
    if ((raised & CARRYOVER_DOWNSCALE) && p.slow_qos[0]) {
        snprintf(payload, sizeof payload, "qos=%s", p.slow_qos);
        ACTION("downscale", "set_qos", payload);
    }
    if ((cleared & CARRYOVER_DOWNSCALE) && p.slow_qos[0]) {
        snprintf(payload, sizeof payload, "qos=%s", p.normal_qos[0] ? p.normal_qos : "normal");
        ACTION("downscale-clear", "set_qos", payload);
    }
    if (raised & CARRYOVER_PAUSE)
        ACTION("pause", "set_grpjobs", "GrpJobs=0");
    if (cleared & CARRYOVER_PAUSE) {
        if (unpause_payload(st, &p, payload, err) < 0)
            return -1;
        ACTION("pause-clear", "set_grpjobs", payload);
    }
#undef ACTION
    for (int i = 0; i < n; i++) {
        char id[24];
        snprintf(id, sizeof id, "%lld", (long long)ids[i]);
        append_list(e.command_ids, sizeof e.command_ids, id);
    }
    if (flags != p.flags) {
        db_stmt_t *s = pstmt(st, P_FLAGS, SQL_P_FLAGS, err);
        if (!s)
            return -1;
        db_bind_int64(s, 1, flags);
        db_bind_int64(s, 2, p.id);
        if (db_run(s, err) < 0)
            return -1;
    }
    db_stmt_t *s = pstmt(st, E_ADD, SQL_E_ADD, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, e.policy_id);
    db_bind_text(s, 2, e.period);
    db_bind_int64(s, 3, e.time_s);
    db_bind_int64(s, 4, e.used_sumin);
    db_bind_int64(s, 5, e.total_sumin);
    db_bind_int64(s, 6, e.usage_ppm);
    db_bind_int64(s, 7, e.prev_flags);
    db_bind_int64(s, 8, e.new_flags);
    db_bind_text(s, 9, e.actions);
    db_bind_text(s, 10, e.command_ids);
    if (db_step(s, err) != 1) {
        db_reset(s);
        return err->code ? -1 : allot_errorf(err, ALLOT_EIO, "evaluation: no id returned");
    }
    e.id = db_column_int64(s, 0);
    db_reset(s);
    if (out)
        *out = e;
    return 0;
}

int store_eval_list(store_t *st, const struct eval_filter *f, store_eval_f cb, void *arg,
                    struct allot_error *err)
{
    if (store_ready(st, "evaluation list", err) < 0)
        return -1;
    db_stmt_t *s = pstmt(st, E_LIST, SQL_E_LIST, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, f ? f->policy_id : 0);
    db_bind_text(s, 2, f && f->period ? f->period : "");
    db_bind_int64(s, 3, f && f->limit > 0 ? f->limit : INT64_MAX);
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct policy_eval e;
        read_eval(s, &e);
        int r = cb(&e, arg);
        if (r) {
            db_reset(s);
            return r;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}
