/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_policy.c - periodic policies of store.h (doc/design.md §5): adding, reading and
 * listing them, and the commands a policy enqueues in the outbox of store_command.c.  Their
 * periods and boundaries are in store_policy_period.c, their evaluations in
 * store_policy_eval.c; what the three share is store_policy_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libcore/carryover.h"
#include "libcore/period.h"
#include "libstore/store_policy_int.h"
#include "libutil/text.h"

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
static const char SQL_P_FLAGS[] = "UPDATE policies SET flags = $1 WHERE id = $2";

db_stmt_t *store_policy_stmt(store_t *st, enum pstmt id, const char *sql, struct allot_error *err)
{
    return store_stmt(st, STMT_POLICY_FIRST + (int)id, sql, err);
}

static const char *const LIMIT_TYPES[] = {"GrpTRESMins", "MaxTRESMins", "GrpTRES"};

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
    db_stmt_t *s = store_policy_stmt(st, P_SAME_ASSOC, SQL_P_SAME_ASSOC, err);
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

/* The fields of p that need no lookup: period kind (into *kind), limit type, amounts,
 * thresholds, names. */
static int policy_check_fields(const struct policy *p, enum period_kind *kind,
                               struct allot_error *err)
{
    if (period_kind_parse(p->period_kind, kind) < 0)
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
    return model_copy_text(tmp, sizeof tmp, "tres_weights", p->tres_weights, err) < 0 ? -1 : 0;
}

/* What p's allocation (read into *a and *b) and cluster allow: the initial grant, the
 * cluster, no other policy on the allocation nor on the same Slurm association. */
static int policy_check_alloc(store_t *st, const struct policy *p, struct allocation *a,
                              struct balance *b, struct allot_error *err)
{
    struct policy old;
    if (store_alloc_read(st, p->alloc_id, a, b, err) < 0)
        return -1;
    if (initial_check(p, b, err) < 0)
        return -1;
    int ex = store_cluster_exists(st, p->cluster, err);
    if (ex < 0)
        return -1;
    if (!ex)
        return allot_errorf(err, ALLOT_ENOENT, "cluster: '%s' does not exist", p->cluster);
    /* The policy's commands throttle the account on its cluster: for an allocation that pays
     * on one cluster only, any other cluster would be throttled for a budget it never uses. */
    if (a->cluster[0] && strcmp(a->cluster, p->cluster) != 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "cluster: allocation %lld pays for jobs on cluster '%s' only, not "
                            "on '%s'",
                            (long long)p->alloc_id, a->cluster, p->cluster);
    if (store_policy_get_by_alloc(st, p->alloc_id, &old, err) == 0)
        return allot_errorf(err, ALLOT_EEXIST, "allocation %lld already has policy %lld",
                            (long long)p->alloc_id, (long long)old.id);
    if (err->code != ALLOT_ENOENT)
        return -1;
    return policy_assoc_free(st, p, a, err);
}

/* INSERT the policies row of p; p->id set. */
static int policy_insert(store_t *st, struct policy *p, enum period_kind kind,
                         struct allot_error *err)
{
    db_stmt_t *s = store_policy_stmt(st, P_ADD, SQL_P_ADD, err);
    if (!s)
        return -1;
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
    return 0;
}

int store_policy_add(store_t *st, struct policy *p, struct allot_error *err)
{
    enum period_kind kind;
    struct allocation a;
    struct balance b;
    if (store_ready_write(st, "policy add", err) < 0)
        return -1;
    if (policy_check_fields(p, &kind, err) < 0 || policy_check_alloc(st, p, &a, &b, err) < 0)
        return -1;
    if (kind == PERIOD_TOTAL)
        p->reset_raw_usage = 0; /* doc/design.md §5.1: never for total */
    if (p->created_s <= 0)
        p->created_s = (int64_t)time(NULL);
    if (policy_insert(st, p, kind, err) < 0)
        return -1;
    /* Expired in the add's transaction, so the first period's credit finds base alone. */
    if (strcmp(p->initial, "expire") == 0 &&
        store_policy_entry(st, p, LEDGER_EXPIRY, "initial", "expiry",
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
    db_stmt_t *s = store_policy_stmt(st, id, sql, err);
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
    return store_policy_by_alloc(st, alloc_id, out, err);
}

int store_policy_by_alloc(store_t *st, int64_t alloc_id, struct policy *out,
                          struct allot_error *err)
{
    return get_one(st, P_GET_ALLOC, SQL_P_GET_ALLOC, alloc_id, out, "allocation", err);
}

STORE_ROWS(policy, struct policy, store_policy_f, read_policy(s, &row))

int store_policy_list(store_t *st, int64_t after_id, int limit, store_policy_f cb, void *arg,
                      struct allot_error *err)
{
    if (store_ready(st, "policy list", err) < 0)
        return -1;
    db_stmt_t *s = store_policy_stmt(st, P_LIST, SQL_P_LIST, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, after_id);
    db_bind_int64(s, 2, limit > 0 ? limit : INT64_MAX);
    return store_walk(s, policy_row, &(struct policy_walk){cb, arg}, err);
}

int store_policy_set_flags(store_t *st, int64_t id, unsigned flags, struct allot_error *err)
{
    db_stmt_t *s = store_policy_stmt(st, P_FLAGS, SQL_P_FLAGS, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, flags);
    db_bind_int64(s, 2, id);
    return db_run(s, err);
}

/* ---- commands ---- */

int store_policy_command(store_t *st, const struct policy *p, const char *period, const char *kind,
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
int store_policy_unpause_payload(store_t *st, const struct policy *p, char buf[ALLOT_TRES_MAX],
                                 struct allot_error *err)
{
    snprintf(buf, ALLOT_TRES_MAX, "GrpJobs=-1");
    int rc = store_limit_list(st, LIMIT_SCOPE_ACCOUNT, p->account, find_grpjobs, buf, err);
    return rc < 0 ? -1 : 0;
}
