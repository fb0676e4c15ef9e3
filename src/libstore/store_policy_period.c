/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_policy_period.c - the periods of a periodic policy (store.h, doc/design.md §5):
 * the boundary transaction that closes one period and opens the next, the period rows, and
 * what a credit by hand changes in the open period.
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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/carryover.h"
#include "libcore/period.h"
#include "libstore/store_policy_int.h"
#include "libutil/text.h"

static const char SQL_P_MARKER_CAS[] =
    "UPDATE policies SET current_period = $1 WHERE id = $2 AND current_period = $3";
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

static void read_period(db_stmt_t *s, struct policy_period_row *r)
{
    memset(r, 0, sizeof *r);
    db_column_copy(s, 0, r->period, sizeof r->period);
    r->start_s = db_column_int64(s, 1);
    r->end_s = db_column_int64(s, 2);
    r->base_sumin = db_column_int64(s, 3);
    r->carry_sumin = db_column_int64(s, 4);
    r->total_sumin = db_column_int64(s, 5);
    r->used_open_sumin = db_column_int64(s, 6);
    r->opened_s = db_column_int64(s, 7);
    r->closed_s = db_column_int64(s, 8);
    r->used_sumin = db_column_int64(s, 9);
    r->expired_sumin = db_column_int64(s, 10);
}

STORE_ROWS(period, struct policy_period_row, store_policy_period_f, read_period(s, &row))

int store_policy_periods(store_t *st, int64_t policy_id, store_policy_period_f cb, void *arg,
                         struct allot_error *err)
{
    if (store_ready(st, "policy periods", err) < 0)
        return -1;
    db_stmt_t *s = store_policy_stmt(st, PP_LIST, SQL_PP_LIST, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, policy_id);
    return store_walk(s, period_row, &(struct period_walk){cb, arg}, err);
}

/* ---- boundary ---- */

/* Order of two periods of the same kind: <0, 0, >0. */
static int period_cmp(const struct period *a, const struct period *b)
{
    if (a->year != b->year)
        return a->year < b->year ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The comment tells a PI why the balance moved (why: its tail). */
int store_policy_entry(store_t *st, const struct policy *p, enum ledger_kind kind,
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
        if (store_policy_command(st, p, period, "set_qos", payload, tail, now_s, r->command_ids,
                                 &r->ncommands, max, err) < 0)
            return -1;
    }
    if (p->flags & CARRYOVER_PAUSE) {
        snprintf(tail, sizeof tail, "%sunpause", prefix);
        if (store_policy_unpause_payload(st, p, payload, err) < 0 ||
            store_policy_command(st, p, period, "set_grpjobs", payload, tail, now_s, r->command_ids,
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

/* Close period p->current_period at now_s: what it used and what expired (r). */
static int period_close(store_t *st, const struct policy *p, int64_t now_s,
                        const struct policy_roll *r, struct allot_error *err)
{
    db_stmt_t *s = store_policy_stmt(st, PP_CLOSE, SQL_PP_CLOSE, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, now_s);
    db_bind_int64(s, 2, r->prev_used_sumin);
    db_bind_int64(s, 3, r->expired_sumin);
    db_bind_int64(s, 4, p->id);
    db_bind_text(s, 5, p->current_period);
    return db_run(s, err);
}

/* The allocation has ended inside period p->current_period: close that period once (its
 * free balance expires; holds of jobs still running stay, for their settles) and undo an
 * active downscale or pause, so that the account's next allocation does not start
 * throttled.  Nothing happens when the period row is already closed. */
static int close_at_end(store_t *st, const struct policy *p, const char *actor, int64_t now_s,
                        struct policy_roll *r, struct allot_error *err)
{
    db_stmt_t *s = store_policy_stmt(st, PP_CLOSED, SQL_PP_CLOSED, err);
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
    if (store_policy_entry(st, p, LEDGER_EXPIRY, p->current_period, "end-expiry", why,
                           r->expired_sumin, actor, now_s, err) < 0)
        return -1;
    if (period_close(st, p, now_s, r, err) < 0)
        return -1;
    if (undo_actions(st, p, p->current_period, "end-", now_s, r, err) < 0)
        return -1;
    return store_policy_set_flags(st, p->id, 0, err);
}

/* The period of kind now_s falls in (*cur), formatted into r->new_period.  1 when p's
 * boundary into it is due, 0 when p is already in it or in a later one (a clock stepped
 * back never reopens an earlier period), -1 on error. */
static int roll_due(const struct policy *p, enum period_kind kind, int64_t now_s,
                    const struct period_tz *tz, struct period *cur, struct policy_roll *r,
                    struct allot_error *err)
{
    if (kind == PERIOD_TOTAL) {
        *cur = (struct period){.kind = PERIOD_TOTAL};
    } else if (period_of(kind, now_s, tz, cur, err) < 0) {
        return -1;
    }
    if (period_format(cur, r->new_period, sizeof r->new_period, err) < 0)
        return -1;
    if (strcmp(p->current_period, r->new_period) == 0)
        return 0;
    if (p->current_period[0]) {
        struct period old;
        if (period_parse(p->current_period, &old, err) < 0)
            return -1;
        if (old.kind != cur->kind || period_cmp(cur, &old) < 0)
            return 0;
    }
    return 1;
}

/* The comment of the carryover entry: "carryover from 2026-10 (used 300 of base 1,000 SU;
 * at most 0.5 x base)". */
static void carry_why(char *buf, size_t len, const struct policy *p, int64_t prev_used_sumin)
{
    char s1[STORE_SU_MAX], s2[STORE_SU_MAX], fx[24];
    store_format_su(prev_used_sumin, s1, sizeof s1);
    store_format_su(p->base_sumin, s2, sizeof s2);
    /* The factor as the decimal the CLI takes (500000 ppm -> "0.5"). */
    snprintf(fx, sizeof fx, "%lld.%06lld", (long long)(p->carry_factor_ppm / CARRYOVER_PPM),
             (long long)(p->carry_factor_ppm % CARRYOVER_PPM));
    for (size_t n = strlen(fx); n > 0 && (fx[n - 1] == '0' || fx[n - 1] == '.'); n--) {
        char c = fx[n - 1];
        fx[n - 1] = 0;
        if (c == '.')
            break;
    }
    snprintf(buf, len, "carryover from %.16s (used %s of base %s SU; at most %s x base)",
             p->current_period, s1, s2, fx[0] ? fx : "0");
}

/* The boundary's ledger entries: the new period's carry and base credit, then the old
 * period's expiry and close (none before the first period).  Fills r's prev_used, credit,
 * carry, total and expired. */
static int roll_entries(store_t *st, const struct policy *p, enum period_kind kind,
                        const char *actor, int64_t now_s, struct policy_roll *r,
                        struct allot_error *err)
{
    struct balance b;
    if (store_balance_get(st, p->alloc_id, &b, err) < 0)
        return -1;
    int64_t unused = 0;
    if (p->current_period[0]) {
        r->prev_used_sumin = b.used_sumin - p->period_used_open_sumin;
        if (r->prev_used_sumin < 0)
            r->prev_used_sumin = 0;
        /* The old period's unused part is all it did not debit: the free balance AND the
         * holds of jobs still running.  Their charge is debited after the boundary, so it
         * counts as the new period's use; were their holds kept, each release would put SU
         * back on top of base + carry that no boundary entry explains. */
        unused = b.available_sumin > 0 ? b.available_sumin : 0;
        if (b.held_sumin > 0 && __builtin_add_overflow(unused, b.held_sumin, &unused))
            return allot_errorf(err, ALLOT_EINTERNAL, "policy %lld: unused overflows",
                                (long long)p->id);
    }
    r->credit_sumin = p->base_sumin;
    r->total_sumin = p->base_sumin;
    if (p->carryover && p->current_period[0] && kind != PERIOD_TOTAL) {
        if (carryover_total_sumin(p->base_sumin, r->prev_used_sumin, p->carry_factor_ppm,
                                  &r->total_sumin, &r->carry_sumin, err) < 0)
            return -1;
    }
    /* Credit first, then expire: the expiry of the held part is covered by the new credit
     * (running jobs reserve from the new period).  Should the holds exceed the new total,
     * the expiry stops at a zero available balance (the store refuses a negative one). */
    char why[160];
    carry_why(why, sizeof why, p, r->prev_used_sumin);
    if (store_policy_entry(st, p, LEDGER_CARRYOVER, r->new_period, "carryover", why, r->carry_sumin,
                           actor, now_s, err) < 0 ||
        store_policy_entry(st, p, LEDGER_CREDIT, r->new_period, "credit",
                           "base credit of the period", r->credit_sumin, actor, now_s, err) < 0)
        return -1;
    if (!p->current_period[0])
        return 0;
    /* What the store lets expire: the available balance after the new credit (an
     * overdrawn old period has less than the new total). */
    int64_t room = b.available_sumin + r->total_sumin;
    if (room < 0)
        room = 0;
    r->expired_sumin = unused < room ? unused : room;
    expiry_why(why, sizeof why, "", r->expired_sumin, r->prev_used_sumin);
    if (store_policy_entry(st, p, LEDGER_EXPIRY, p->current_period, "expiry", why, r->expired_sumin,
                           actor, now_s, err) < 0)
        return -1;
    return period_close(st, p, now_s, r, err);
}

/* Insert the row of the new period cur (r->new_period): [*start_s, *end_s) is the
 * allocation's time for a total policy; its used_open is the allocation's use after the
 * boundary's entries. */
static int period_open(store_t *st, const struct policy *p, const struct allocation *al,
                       const struct period *cur, const struct period_tz *tz, int64_t now_s,
                       const struct policy_roll *r, int64_t *start_s, int64_t *end_s,
                       struct allot_error *err)
{
    if (cur->kind == PERIOD_TOTAL) {
        *start_s = al->start_s;
        *end_s = al->end_s;
    } else if (period_start_utc(cur, tz, start_s, err) < 0 ||
               period_end_utc(cur, tz, end_s, err) < 0) {
        return -1;
    }
    struct balance b;
    if (store_balance_get(st, p->alloc_id, &b, err) < 0)
        return -1;
    db_stmt_t *s = store_policy_stmt(st, PP_INSERT, SQL_PP_INSERT, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, p->id);
    db_bind_text(s, 2, r->new_period);
    db_bind_int64(s, 3, *start_s);
    db_bind_int64(s, 4, *end_s);
    db_bind_int64(s, 5, r->credit_sumin);
    db_bind_int64(s, 6, r->carry_sumin);
    db_bind_int64(s, 7, r->total_sumin);
    db_bind_int64(s, 8, b.used_sumin);
    db_bind_int64(s, 9, now_s);
    return db_run(s, err);
}

/* The new period's commands, in the order the agent applies them: reset first, then the
 * new limit and fair-share, then undo the previous period's actions (a new period starts
 * unthrottled) and clear the policy's flags. */
static int roll_commands(store_t *st, const struct policy *p, enum period_kind kind,
                         int64_t start_s, int64_t end_s, int64_t now_s, struct policy_roll *r,
                         struct allot_error *err)
{
    char payload[ALLOT_TRES_MAX];
    int max = (int)(sizeof r->command_ids / sizeof r->command_ids[0]);
    if (p->reset_raw_usage && kind != PERIOD_TOTAL &&
        store_policy_command(st, p, r->new_period, "reset_raw_usage", "RawUsage=0", "reset", now_s,
                             r->command_ids, &r->ncommands, max, err) < 0)
        return -1;
    if (limit_value(p, r->total_sumin, start_s, end_s, &r->limit_value, err) < 0)
        return -1;
    snprintf(payload, sizeof payload, "%s=billing=%lld", p->limit_type, (long long)r->limit_value);
    if (store_policy_command(st, p, r->new_period, "set_limit", payload, "limit", now_s,
                             r->command_ids, &r->ncommands, max, err) < 0)
        return -1;
    if (p->fairshare >= 0) {
        snprintf(payload, sizeof payload, "fairshare=%lld", (long long)p->fairshare);
        if (store_policy_command(st, p, r->new_period, "set_fairshare", payload, "fairshare", now_s,
                                 r->command_ids, &r->ncommands, max, err) < 0)
            return -1;
    }
    if (undo_actions(st, p, r->new_period, "", now_s, r, err) < 0)
        return -1;
    return store_policy_set_flags(st, p->id, 0, err);
}

/* The durable period marker, advanced to r->new_period only from the value this pass read
 * (p->current_period): ECONFLICT when another pass moved it meanwhile. */
static int marker_advance(store_t *st, const struct policy *p, const struct policy_roll *r,
                          struct allot_error *err)
{
    db_stmt_t *s = store_policy_stmt(st, P_MARKER_CAS, SQL_P_MARKER_CAS, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, r->new_period);
    db_bind_int64(s, 2, p->id);
    db_bind_text(s, 3, p->current_period);
    if (db_run(s, err) < 0)
        return -1;
    if (db_changes(s) != 1)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "policy %lld: period marker moved during the boundary; retry",
                            (long long)p->id);
    return 0;
}

int store_policy_roll(store_t *st, int64_t policy_id, int64_t now_s, const struct period_tz *tz,
                      const char *actor, struct policy_roll *out, struct allot_error *err)
{
    struct policy p;
    struct policy_roll r;
    enum period_kind kind;
    struct period cur;
    struct allocation al;
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
    if (store_alloc_read(st, p.alloc_id, &al, NULL, err) < 0)
        return -1;
    text_copy(r.old_period, sizeof r.old_period, p.current_period);
    /* Periods run only while the allocation is active: no credit before it starts or
     * after it ends. */
    int due = 0;
    if (now_s < al.start_s || now_s >= al.end_s) {
        if (now_s >= al.end_s && p.current_period[0] &&
            close_at_end(st, &p, actor, now_s, &r, err) < 0)
            return -1;
    } else if ((due = roll_due(&p, kind, now_s, tz, &cur, &r, err)) < 0) {
        return -1;
    }
    if (due) {
        int64_t start_s, end_s;
        if (roll_entries(st, &p, kind, actor, now_s, &r, err) < 0 ||
            period_open(st, &p, &al, &cur, tz, now_s, &r, &start_s, &end_s, err) < 0 ||
            roll_commands(st, &p, kind, start_s, end_s, now_s, &r, err) < 0 ||
            marker_advance(st, &p, &r, err) < 0)
            return -1;
        r.rolled = 1;
    }
    if (out)
        *out = r;
    return 0;
}

/* ---- credits by hand ---- */

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
    db_stmt_t *s = store_policy_stmt(st, PP_REFUNDS, SQL_PP_REFUNDS, err);
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
    if (limit_value(p, store_policy_period_total(before), p->period_start_s, p->period_end_s, &was,
                    err) < 0 ||
        limit_value(p, store_policy_period_total(after), p->period_start_s, p->period_end_s, &limit,
                    err) < 0)
        return -1;
    if (__builtin_add_overflow(was, refunds_before, &was) ||
        __builtin_add_overflow(limit, refunds, &limit))
        return allot_errorf(err, ALLOT_EINTERNAL, "policy %lld: limit overflows", (long long)p->id);
    if (limit == was)
        return 0;
    char payload[ALLOT_TRES_MAX], tail[64];
    snprintf(payload, sizeof payload, "%s=billing=%lld", p->limit_type, (long long)limit);
    snprintf(tail, sizeof tail, "limit@ledger%lld", (long long)entry_id);
    return store_policy_command(st, p, p->current_period, "set_limit", payload, tail, now_s, &id,
                                &n, 1, err);
}

int store_policy_hand_credit(store_t *st, const struct ledger_entry *e, struct allot_error *err)
{
    struct policy p;
    struct allocation al;
    struct allot_error lookup = {0};
    int64_t delta = hand_delta(e);
    if (delta == 0 && e->kind != LEDGER_REFUND)
        return 0;
    if (store_policy_by_alloc(st, e->alloc_id, &p, &lookup) < 0) {
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
    db_stmt_t *s = store_policy_stmt(st, PP_ADD_TOTAL, SQL_PP_ADD_TOTAL, err);
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
