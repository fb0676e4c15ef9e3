/* SPDX-License-Identifier: GPL-3.0-or-later */
/* policy.c - periodic policies (doc/design.md §5): the boundary transaction runs exactly once per
 * period across store restarts, clock jumps (forward over several periods and back), replays
 * and a zone offset; carryover numbers (base 1000, use 300 -> 1500); total never resets;
 * thresholds raise and clear actions; the command outbox's claim/lease/result rules. */
#include "store_test.h"

#include "libcore/carryover.h"
#include "libcore/period.h"

#define DAY INT64_C(86400)
/* 2026-01-01T00:00:00Z, 2026-07-15T12:00:00Z, 2026-08-01T00:00:00Z */
#define T_2026 INT64_C(1767225600)
#define T_JUL15 INT64_C(1784116800)
#define T_AUG1 INT64_C(1785542400)

static int64_t setup_base(struct fx *f, const char *period_kind, int64_t base, int64_t *alloc_out);
static int64_t setup(struct fx *f, const char *period_kind, int64_t *alloc_out)
{
    return setup_base(f, period_kind, 1000, alloc_out);
}

/* A policy on alloc for c1 with the defaults and slow/normal QOS, not yet added. */
static struct policy policy_on(int64_t alloc, const char *period_kind, int64_t base)
{
    struct policy p;
    memset(&p, 0, sizeof p);
    p.alloc_id = alloc;
    snprintf(p.cluster, sizeof p.cluster, "c1");
    snprintf(p.period_kind, sizeof p.period_kind, "%s", period_kind);
    p.base_sumin = base;
    p.carryover = 1;
    p.carry_factor_ppm = CARRYOVER_DEFAULT_FACTOR_PPM;
    p.grace_ppm = CARRYOVER_DEFAULT_GRACE_PPM;
    p.notify_ppm = CARRYOVER_DEFAULT_NOTIFY_PPM;
    p.downscale_ppm = CARRYOVER_DEFAULT_DOWNSCALE_PPM;
    snprintf(p.slow_qos, sizeof p.slow_qos, "slow");
    snprintf(p.normal_qos, sizeof p.normal_qos, "normal");
    p.reset_raw_usage = 1;
    snprintf(p.limit_type, sizeof p.limit_type, "GrpTRESMins");
    p.fairshare = -1;
    return p;
}

static int64_t setup_base(struct fx *f, const char *period_kind, int64_t base, int64_t *alloc_out)
{
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    fx_add_account(f, "chem", "root");
    int64_t alloc = fx_add_alloc(f, "chem", "cpu", "c1", T_2026, T_2026 + 400 * DAY, 0);
    struct policy p = policy_on(alloc, period_kind, base);
    TX(f, store_policy_add(f->st, &p, &f->err));
    if (alloc_out)
        *alloc_out = alloc;
    return p.id;
}

/* Post-paid use of `charge` SU-minutes by a job starting at start_s. */
static void use(struct fx *f, int64_t job_id, int64_t start_s, int64_t charge)
{
    struct settle_req r;
    struct settle_result res;
    memset(&r, 0, sizeof r);
    snprintf(r.cluster, sizeof r.cluster, "c1");
    r.job_id = job_id;
    r.start_s = start_s;
    r.end_s = start_s + 60;
    r.elapsed_s = 60;
    snprintf(r.slurm_state, sizeof r.slurm_state, "COMPLETED");
    r.charge_sumin = charge;
    snprintf(r.settle_source, sizeof r.settle_source, "test");
    snprintf(r.user, sizeof r.user, "alice");
    snprintf(r.account, sizeof r.account, "chem");
    snprintf(r.resource, sizeof r.resource, "cpu");
    r.now_s = start_s + 60;
    TX(f, store_settle(f->st, &r, &res, &f->err));
}

static struct policy_roll roll(struct fx *f, int64_t id, int64_t now_s, const struct period_tz *tz)
{
    struct policy_roll r;
    TX(f, store_policy_roll(f->st, id, now_s, tz, "test", &r, &f->err));
    return r;
}

struct kind_count {
    enum ledger_kind kind;
    int n;
    int64_t sum;
};
static int count_kind(const struct ledger_entry *e, void *arg)
{
    struct kind_count *k = arg;
    if (e->kind == k->kind) {
        k->n++;
        k->sum += e->amount_sumin;
    }
    return 0;
}
static struct kind_count ledger_kind(struct fx *f, int64_t alloc, enum ledger_kind kind)
{
    struct kind_count k = {.kind = kind};
    struct ledger_filter lf = {.alloc_id = alloc};
    OK(f, store_ledger_list(f->st, &lf, count_kind, &k, &f->err));
    return k;
}

struct cmd_count {
    const char *kind;
    const char *period;
    int n;
    struct command last;
};
static int count_cmd(const struct command *c, void *arg)
{
    struct cmd_count *k = arg;
    if ((!k->kind || strcmp(c->kind, k->kind) == 0) &&
        (!k->period || strcmp(c->period, k->period) == 0)) {
        k->n++;
        k->last = *c;
    }
    return 0;
}
static struct cmd_count commands(struct fx *f, const char *kind, const char *period)
{
    struct cmd_count k = {.kind = kind, .period = period};
    struct command_filter cf = {.state = -1};
    OK(f, store_command_list(f->st, &cf, count_cmd, &k, &f->err));
    return k;
}

/* A settle reports whether its allocation has a policy (settle_result.no_policy), and
 * allotd skips the threshold check when it says none: so it must never say none for an
 * allocation that has one, on either backend (on PostgreSQL store_job_batch answers it;
 * the verbs never say none). */
static void test_settle_sees_policy(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    assert_int_equal(roll(f, id, T_JUL15, NULL).credit_sumin, 1000);
    struct hold_req h = fx_hold_req(7, 10, T_JUL15 + 60, 600);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_false(hr.refused);
    assert_int_equal(hr.alloc.id, alloc);
    struct settle_req r = fx_settle_req(7, T_JUL15 + 60, 60, "COMPLETED", "test");
    struct settle_result res;
    struct store_job_op one = {.settle = &r, .settle_res = &res};
    fx_job_batch_all(f, &one, 1); /* a batch of one, as allotd's writer sends a lone settle */
    assert_false(res.replay);
    assert_int_equal(res.job.charge_sumin, 1);
    assert_int_equal(res.alloc.id, alloc);
    assert_false(res.no_policy);

    /* Two settles in one batch (PostgreSQL takes both in one statement). */
    struct settle_req sq[2];
    struct settle_result sres[2];
    struct store_job_op ops[2];
    memset(ops, 0, sizeof ops);
    for (int k = 0; k < 2; k++) {
        h.job_id = 8 + k;
        TX(f, store_hold(f->st, &h, &hr, &f->err));
        sq[k] = r;
        sq[k].job_id = 8 + k;
        ops[k].settle = &sq[k];
        ops[k].settle_res = &sres[k];
    }
    fx_job_batch_all(f, ops, 2);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(sres[k].job.charge_sumin, 1);
        assert_false(sres[k].no_policy);
    }
}

static void test_month_exactly_once(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);

    struct policy_roll r = roll(f, id, T_JUL15, NULL);
    assert_int_equal(r.rolled, 1);
    assert_string_equal(r.new_period, "2026-07");
    assert_string_equal(r.old_period, "");
    assert_int_equal(r.credit_sumin, 1000);
    assert_int_equal(r.carry_sumin, 0); /* nothing to carry into the first period */
    assert_int_equal(r.limit_value, 1200);
    assert_int_equal(r.ncommands, 2);
    assert_int_equal(commands(f, "reset_raw_usage", "2026-07").n, 1);
    struct cmd_count lim = commands(f, "set_limit", "2026-07");
    assert_int_equal(lim.n, 1);
    assert_string_equal(lim.last.payload, "GrpTRESMins=billing=1200");
    assert_string_equal(lim.last.target, "chem");

    /* Same period again (next tick): nothing. */
    r = roll(f, id, T_JUL15 + 600, NULL);
    assert_int_equal(r.rolled, 0);
    use(f, 1, T_JUL15 + 3600, 300);

    /* Boundary: base 1000, use 300 -> carry 500 (cap 50%), total 1500, 700 unused expire. */
    r = roll(f, id, T_AUG1 + 5, NULL);
    assert_int_equal(r.rolled, 1);
    assert_string_equal(r.old_period, "2026-07");
    assert_string_equal(r.new_period, "2026-08");
    assert_int_equal(r.prev_used_sumin, 300);
    assert_int_equal(r.expired_sumin, 700);
    assert_int_equal(r.carry_sumin, 500);
    assert_int_equal(r.total_sumin, 1500);
    assert_int_equal(r.limit_value, 1800);

    /* allotd restarted: a new connection ticking again in August does nothing. */
    store_close(f->st);
    f->st = fx_open_store(f);
    for (int i = 0; i < 5; i++)
        assert_int_equal(roll(f, id, T_AUG1 + 600 * (i + 1), NULL).rolled, 0);
    /* Clock stepped back into July: nothing either. */
    assert_int_equal(roll(f, id, T_JUL15, NULL).rolled, 0);

    assert_int_equal(ledger_kind(f, alloc, LEDGER_CARRYOVER).n, 1);
    assert_int_equal(ledger_kind(f, alloc, LEDGER_CREDIT).n, 2);
    assert_int_equal(ledger_kind(f, alloc, LEDGER_EXPIRY).n, 1);
    assert_int_equal(commands(f, "reset_raw_usage", "2026-08").n, 1);
    assert_int_equal(commands(f, "reset_raw_usage", NULL).n, 2);
    struct balance b;
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.available_sumin, 1500);

    /* Agent or allotd down for months: a jump to November processes November once, with
     * August's use (0) as the previous period's: carry 500. */
    r = roll(f, id, T_AUG1 + 100 * DAY, NULL);
    assert_int_equal(r.rolled, 1);
    assert_string_equal(r.new_period, "2026-11");
    assert_int_equal(r.prev_used_sumin, 0);
    assert_int_equal(r.carry_sumin, 500);
    assert_int_equal(r.expired_sumin, 1500);
    assert_int_equal(roll(f, id, T_AUG1 + 100 * DAY + 1, NULL).rolled, 0);
    assert_int_equal(commands(f, "reset_raw_usage", NULL).n, 3);

    int problems = store_check(f->st, NULL, NULL, &f->err);
    assert_int_equal(problems, 0);
}

struct find_comment {
    enum ledger_kind kind;
    char comment[ALLOT_TEXT_MAX];
};
static int find_comment(const struct ledger_entry *e, void *arg)
{
    struct find_comment *k = arg;
    if (e->kind == k->kind)
        snprintf(k->comment, sizeof k->comment, "%s", e->comment);
    return 0;
}
/* The comment of the last ledger entry of kind on alloc. */
static const char *comment_of(struct fx *f, int64_t alloc, enum ledger_kind kind)
{
    static struct find_comment k;
    struct ledger_filter lf = {.alloc_id = alloc};
    memset(&k, 0, sizeof k);
    k.kind = kind;
    OK(f, store_ledger_list(f->st, &lf, find_comment, &k, &f->err));
    return k.comment;
}

/* Job 2 of chem starts an hour before August and holds 500 SU-minutes. */
static void hold_job2(struct fx *f)
{
    struct hold_req h = fx_hold_req(2, 500, T_AUG1 - 3600, 30000);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_false(hr.refused);
}

/* A job running across the boundary: its hold is not the old period's use, so the hold is
 * part of the old period's unused and expires with it; the job's charge is the new period's
 * use.  Before the fix only the free part expired and the hold's release after the boundary
 * put the whole hold back on top of base + carry (SU from nowhere). */
static void test_hold_across_boundary(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    roll(f, id, T_JUL15, NULL);
    use(f, 1, T_JUL15 + 60, 300);
    hold_job2(f);

    /* use 300 -> carry 500, total 1500; unused 700 = 200 free + 500 held expires. */
    struct policy_roll r = roll(f, id, T_AUG1 + 5, NULL);
    assert_int_equal(r.prev_used_sumin, 300);
    assert_int_equal(r.carry_sumin, 500);
    assert_int_equal(r.total_sumin, 1500);
    assert_int_equal(r.expired_sumin, 700);
    /* What a PI reads in the ledger. */
    assert_string_equal(comment_of(f, alloc, LEDGER_CARRYOVER),
                        "policy 1 period 2026-08: carryover from 2026-07 (used 5h of base 16h40m "
                        "SU; at most 0.5 x base)");
    assert_string_equal(comment_of(f, alloc, LEDGER_EXPIRY),
                        "policy 1 period 2026-07: closed; unused 11h40m SU expires (used 5h SU)");
    struct balance b;
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.held_sumin, 500);
    assert_int_equal(b.available_sumin, 1000); /* the running job reserves from August */

    /* The job ends in August after 100 minutes: August has 1500 - 100 left, no more. */
    struct settle_req s;
    struct settle_result res;
    memset(&s, 0, sizeof s);
    snprintf(s.cluster, sizeof s.cluster, "c1");
    s.job_id = 2;
    s.start_s = T_AUG1 - 3600; /* hold_job2's start */
    s.end_s = s.start_s + 6000;
    s.elapsed_s = 6000;
    snprintf(s.slurm_state, sizeof s.slurm_state, "COMPLETED");
    s.charge_sumin = -1;
    snprintf(s.settle_source, sizeof s.settle_source, "test");
    snprintf(s.actor, sizeof s.actor, "slurm");
    s.now_s = s.end_s;
    TX(f, store_settle(f->st, &s, &res, &f->err));
    assert_int_equal(res.job.charge_sumin, 100);
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.held_sumin, 0);
    assert_int_equal(b.available_sumin, 1400);

    /* September: August's use is that job's 100 -> carry 500, and August's 1400 expire. */
    r = roll(f, id, T_AUG1 + 31 * DAY + 5, NULL);
    assert_int_equal(r.prev_used_sumin, 100);
    assert_int_equal(r.expired_sumin, 1400);
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.available_sumin, 1500);
    assert_int_equal(store_check(f->st, NULL, NULL, &f->err), 0);
}

/* An overdrawn period (a post-paid settle after a hold) with a job still running: the
 * expiry of its hold stops at a zero available balance, and the boundary still happens. */
static void test_hold_overdrawn_boundary(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    roll(f, id, T_JUL15, NULL);
    hold_job2(f);
    use(f, 1, T_AUG1 - 600, 1200); /* post-paid: available 1000 - 500 - 1200 = -700 */
    struct policy_roll r = roll(f, id, T_AUG1 + 5, NULL);
    assert_int_equal(r.rolled, 1);
    assert_int_equal(r.total_sumin, 1000);
    assert_int_equal(r.expired_sumin, 300);
    struct balance b;
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.available_sumin, 0);
    assert_int_equal(store_check(f->st, NULL, NULL, &f->err), 0);
}

/* The largest base policy add takes (10^15 SU-minutes): base + carry is 1.5 x 10^15, more
 * than one ledger entry may carry, so the unused part of such a period expires in several
 * entries; the boundaries must not fail for ever. */
static void test_largest_base(void **state)
{
    struct fx *f = *state;
    const int64_t max = INT64_C(1000000000000000);
    int64_t alloc;
    int64_t id = setup_base(f, "month", max, &alloc);
    roll(f, id, T_JUL15, NULL);
    struct policy_roll r = roll(f, id, T_AUG1 + 5, NULL);
    assert_int_equal(r.total_sumin, max + max / 2);
    r = roll(f, id, T_AUG1 + 31 * DAY + 5, NULL); /* September: 1.5e15 unused expire */
    assert_int_equal(r.rolled, 1);
    assert_int_equal(r.expired_sumin, max + max / 2);
    struct kind_count k = ledger_kind(f, alloc, LEDGER_EXPIRY);
    assert_int_equal(k.sum, max + max + max / 2);
    struct balance b;
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.available_sumin, max + max / 2);
    assert_int_equal(roll(f, id, T_AUG1 + 31 * DAY + 600, NULL).rolled, 0);
    assert_int_equal(ledger_kind(f, alloc, LEDGER_EXPIRY).sum, k.sum);
    assert_int_equal(store_check(f->st, NULL, NULL, &f->err), 0);
}

/* The operator set GrpJobs=50 on the account: lifting a pause gives that back, not
 * "unlimited" (GrpJobs=-1 would silently drop the operator's limit in Slurm). */
static void test_unpause_restores_grpjobs(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "GrpJobs", "50", &f->err));
    struct policy_eval e;
    TX(f, store_policy_evaluate(f->st, id, T_JUL15, NULL, "test", &e, &f->err));
    use(f, 1, T_JUL15 + 60, 1300);
    TX(f, store_policy_evaluate(f->st, id, T_JUL15 + 120, NULL, "test", &e, &f->err));
    assert_true(e.new_flags & CARRYOVER_PAUSE);
    assert_string_equal(commands(f, "set_grpjobs", "2026-07").last.payload, "GrpJobs=0");
    TX(f, store_policy_evaluate(f->st, id, T_AUG1 + 5, NULL, "tick", &e, &f->err));
    struct cmd_count gj = commands(f, "set_grpjobs", "2026-08");
    assert_int_equal(gj.n, 1);
    assert_string_equal(gj.last.payload, "GrpJobs=50");
    /* A pause cleared inside a period (a refund) restores it the same way. */
    use(f, 2, T_AUG1 + 600, 1900); /* 1900 of 1000 (use 1300 -> no carry): paused */
    TX(f, store_policy_evaluate(f->st, id, T_AUG1 + 700, NULL, "test", &e, &f->err));
    assert_true(e.new_flags & CARRYOVER_PAUSE);
    struct ledger_entry r;
    memset(&r, 0, sizeof r);
    r.alloc_id = alloc;
    r.kind = LEDGER_REFUND;
    r.amount_sumin = 1900;
    snprintf(r.comment, sizeof r.comment, "test refund");
    TX(f, store_credit(f->st, &r, NULL, &f->err));
    TX(f, store_policy_evaluate(f->st, id, T_AUG1 + 800, NULL, "test", &e, &f->err));
    assert_false(e.new_flags & CARRYOVER_PAUSE);
    gj = commands(f, "set_grpjobs", "2026-08");
    assert_int_equal(gj.n, 3);
    assert_string_equal(gj.last.payload, "GrpJobs=50");
}

static int count_rows(const struct policy_eval *e, void *arg)
{
    (void)e;
    (*(int *)arg)++;
    return 0;
}

/* The allocation ends mid-period while the account is downscaled and paused: its last
 * period is closed once (the unused part expires, with an entry that says why), the slow QOS
 * and the pause are undone (else a renewed allocation would start throttled), and nothing is
 * evaluated or re-raised afterwards. */
static void test_allocation_end(void **state)
{
    struct fx *f = *state;
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    fx_add_account(f, "chem", "root");
    int64_t end = T_JUL15 + 5 * DAY;
    int64_t alloc = fx_add_alloc(f, "chem", "cpu", "c1", T_2026, end, 0);
    struct policy p = policy_on(alloc, "month", 1000);
    TX(f, store_policy_add(f->st, &p, &f->err));
    struct policy_eval e;
    TX(f, store_policy_evaluate(f->st, p.id, T_JUL15, NULL, "test", &e, &f->err));
    use(f, 1, T_JUL15 + 60, 900);
    TX(f, store_policy_evaluate(f->st, p.id, T_JUL15 + 120, NULL, "test", &e, &f->err));
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY);
    use(f, 2, T_JUL15 + 180, 50);
    TX(f, store_policy_evaluate(f->st, p.id, T_JUL15 + 300, NULL, "test", &e, &f->err));

    /* Ended: 50 SU-minutes unused expire once; the QOS is restored. */
    TX(f, store_policy_evaluate(f->st, p.id, end + 60, NULL, "tick", &e, &f->err));
    assert_int_equal(e.roll.rolled, 0);
    assert_int_equal(e.roll.expired_sumin, 50);
    struct kind_count k = ledger_kind(f, alloc, LEDGER_EXPIRY);
    assert_int_equal(k.n, 1);
    assert_int_equal(k.sum, 50);
    assert_string_equal(comment_of(f, alloc, LEDGER_EXPIRY),
                        "policy 1 period 2026-07: closed at the allocation's end; unused 50m SU "
                        "expires (used 15h50m SU)");
    struct balance b;
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.available_sumin, 0);
    struct policy q;
    OK(f, store_policy_get(f->st, p.id, &q, &f->err));
    assert_int_equal(q.flags, 0);
    assert_int_equal(commands(f, "set_qos", "2026-07").n, 0); /* never downscaled */

    /* Ticks after the end: no second expiry, no evaluation row, no action. */
    int before = 0;
    struct eval_filter ef = {.policy_id = p.id};
    OK(f, store_eval_list(f->st, &ef, count_rows, &before, &f->err));
    for (int i = 1; i <= 3; i++)
        TX(f, store_policy_evaluate(f->st, p.id, end + 60 + i * 600, NULL, "tick", &e, &f->err));
    int after = 0;
    OK(f, store_eval_list(f->st, &ef, count_rows, &after, &f->err));
    assert_int_equal(after, before);
    assert_int_equal(ledger_kind(f, alloc, LEDGER_EXPIRY).n, 1);
    assert_int_equal(store_check(f->st, NULL, NULL, &f->err), 0);
}

/* Same, with the account downscaled when the allocation ends: the slow QOS is undone. */
static void test_allocation_end_restores(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    struct allocation a;
    OK(f, store_alloc_get(f->st, alloc, &a, NULL, &f->err));
    struct policy_eval e;
    TX(f, store_policy_evaluate(f->st, id, T_JUL15, NULL, "test", &e, &f->err));
    use(f, 1, T_JUL15 + 60, 1300); /* 130 %: downscale and pause */
    TX(f, store_policy_evaluate(f->st, id, T_JUL15 + 120, NULL, "test", &e, &f->err));
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE | CARRYOVER_PAUSE);
    TX(f, store_policy_evaluate(f->st, id, a.end_s, NULL, "tick", &e, &f->err));
    struct cmd_count qos = commands(f, "set_qos", NULL);
    assert_int_equal(qos.n, 2);
    assert_string_equal(qos.last.payload, "qos=normal");
    struct cmd_count gj = commands(f, "set_grpjobs", NULL);
    assert_int_equal(gj.n, 2);
    assert_string_equal(gj.last.payload, "GrpJobs=-1");
    TX(f, store_policy_evaluate(f->st, id, a.end_s + 600, NULL, "tick", &e, &f->err));
    assert_int_equal(commands(f, "set_qos", NULL).n, 2);
    assert_int_equal(commands(f, "set_grpjobs", NULL).n, 2);
}

/* The marker lost (as a cache can lose it): the ledger keys and command keys still
 * refuse a second credit and a second reset for the period. */
static void test_marker_lost(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    roll(f, id, T_JUL15, NULL);
    /* There is no verb to rewind the marker; what a lost marker would replay is the
     * period's keyed writes, and both are refused as replays. */
    struct ledger_entry e;
    int replay = 0;
    memset(&e, 0, sizeof e);
    e.alloc_id = alloc;
    e.kind = LEDGER_CREDIT;
    e.amount_sumin = 1000;
    snprintf(e.idem_key, sizeof e.idem_key, "policy:%lld:2026-07:credit", (long long)id);
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    assert_int_equal(replay, 1);
    struct command c;
    memset(&c, 0, sizeof c);
    snprintf(c.cluster, sizeof c.cluster, "c1");
    snprintf(c.kind, sizeof c.kind, "reset_raw_usage");
    snprintf(c.target, sizeof c.target, "chem");
    snprintf(c.idem_key, sizeof c.idem_key, "policy:%lld:2026-07:reset", (long long)id);
    TX(f, store_command_add(f->st, &c, T_JUL15, &replay, &f->err));
    assert_int_equal(replay, 1);
    assert_int_equal(commands(f, "reset_raw_usage", NULL).n, 1);
}

static void test_total_never_resets(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "total", &alloc);
    struct policy p;
    OK(f, store_policy_get(f->st, id, &p, &f->err));
    assert_int_equal(p.reset_raw_usage, 0);
    struct policy_roll r = roll(f, id, T_JUL15, NULL);
    assert_int_equal(r.rolled, 1);
    assert_string_equal(r.new_period, "total");
    assert_int_equal(r.credit_sumin, 1000);
    for (int i = 1; i < 12; i++)
        assert_int_equal(roll(f, id, T_JUL15 + i * 40 * DAY, NULL).rolled, 0);
    assert_int_equal(commands(f, "reset_raw_usage", NULL).n, 0);
    assert_int_equal(ledger_kind(f, alloc, LEDGER_CREDIT).n, 1);
    assert_int_equal(ledger_kind(f, alloc, LEDGER_CARRYOVER).n, 0);
}

static int64_t plus_one_hour(int64_t utc_s, void *arg)
{
    (void)utc_s;
    (void)arg;
    return 3600;
}

/* The period clock runs in the configured zone: 23:30Z on 31 July is August in UTC+1. */
static void test_time_zone(void **state)
{
    struct fx *f = *state;
    int64_t id = setup(f, "quarter", NULL);
    struct period_tz tz = {.utc_offset_s = plus_one_hour};
    assert_string_equal(roll(f, id, T_AUG1 - 31 * DAY, &tz).new_period, "2026-Q3");
    /* 2026-09-30T23:30Z = 2026-10-01T00:30 local: Q4 in the zone, Q3 in UTC. */
    int64_t t = T_AUG1 + 61 * DAY - 1800;
    struct policy_roll r = roll(f, id, t, NULL);
    assert_int_equal(r.rolled, 0);
    r = roll(f, id, t, &tz);
    assert_int_equal(r.rolled, 1);
    assert_string_equal(r.new_period, "2026-Q4");
}

static int count_eval(const struct policy_eval *e, void *arg)
{
    assert_string_equal(e->period, "2026-07");
    (*(int *)arg)++;
    return 0;
}

static void test_thresholds(void **state)
{
    struct fx *f = *state;
    int64_t id = setup(f, "month", NULL);
    struct policy_eval e;
    TX(f, store_policy_evaluate(f->st, id, T_JUL15, NULL, "test", &e, &f->err));
    assert_int_equal(e.roll.rolled, 1);
    assert_int_equal(e.new_flags, 0);
    use(f, 1, T_JUL15 + 10, 850);
    TX(f, store_policy_evaluate(f->st, id, T_JUL15 + 600, NULL, "test", &e, &f->err));
    assert_int_equal(e.used_sumin, 850);
    assert_int_equal(e.usage_ppm, 850000);
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY);
    assert_string_equal(e.actions, "notify");
    assert_string_equal(e.command_ids, "");
    use(f, 2, T_JUL15 + 20, 150);
    TX(f, store_policy_evaluate(f->st, id, T_JUL15 + 1200, NULL, "test", &e, &f->err));
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE);
    assert_string_equal(e.actions, "downscale");
    struct command c;
    OK(f, store_command_get(f->st, strtoll(e.command_ids, NULL, 10), &c, &f->err));
    assert_string_equal(c.kind, "set_qos");
    assert_string_equal(c.payload, "qos=slow");
    use(f, 3, T_JUL15 + 30, 200);
    TX(f, store_policy_evaluate(f->st, id, T_JUL15 + 1800, NULL, "test", &e, &f->err));
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE | CARRYOVER_PAUSE);
    assert_string_equal(e.actions, "pause");
    /* Unchanged usage: no new action. */
    TX(f, store_policy_evaluate(f->st, id, T_JUL15 + 2400, NULL, "test", &e, &f->err));
    assert_string_equal(e.actions, "");
    /* A dry run (evaluate, then roll back) changes nothing. */
    BEGIN(f);
    OK(f, store_policy_evaluate(f->st, id, T_AUG1 + 10, NULL, "test", &e, &f->err));
    assert_int_equal(e.roll.rolled, 1);
    store_rollback(f->st);
    struct policy p;
    OK(f, store_policy_get(f->st, id, &p, &f->err));
    assert_string_equal(p.current_period, "2026-07");
    /* The new period restores the QOS and unpauses, and clears the flags. */
    TX(f, store_policy_evaluate(f->st, id, T_AUG1 + 10, NULL, "test", &e, &f->err));
    assert_int_equal(e.roll.rolled, 1);
    assert_int_equal(e.new_flags, 0);
    assert_int_equal(commands(f, "set_qos", "2026-08").n, 1);
    assert_string_equal(commands(f, "set_qos", "2026-08").last.payload, "qos=normal");
    assert_int_equal(commands(f, "set_grpjobs", "2026-08").n, 1);
    struct eval_filter ef = {.policy_id = id, .period = "2026-07"};
    int n = 0;
    OK(f, store_eval_list(f->st, &ef, count_eval, &n, &f->err));
    assert_int_equal(n, 5); /* history filtered by period: July's evaluations only */
}

struct claim_acc {
    int n;
    int64_t ids[16];
};
static int claim_cb(const struct command *c, void *arg)
{
    struct claim_acc *a = arg;
    assert_int_equal(c->state, COMMAND_SENT);
    if (a->n < 16)
        a->ids[a->n++] = c->id;
    return 0;
}

static void test_outbox(void **state)
{
    struct fx *f = *state;
    int64_t id = setup(f, "month", NULL);
    roll(f, id, T_JUL15, NULL); /* reset + limit */
    int64_t last = 0, oldest = 0, waiting = 0;
    OK(f, store_agent_status(f->st, "c1", &last, &oldest, &waiting, &f->err));
    assert_int_equal(last, 0);
    assert_int_equal(waiting, 2);
    assert_int_equal(oldest, T_JUL15);

    struct claim_acc a = {0};
    TX(f, store_command_claim(f->st, "c1", T_JUL15 + 5, 300, 10, claim_cb, &a, &f->err));
    assert_int_equal(a.n, 2);
    assert_true(a.ids[0] < a.ids[1]);
    /* Within the lease: nothing more to hand out. */
    struct claim_acc b = {0};
    TX(f, store_command_claim(f->st, "c1", T_JUL15 + 10, 300, 10, claim_cb, &b, &f->err));
    assert_int_equal(b.n, 0);
    /* The agent confirms the first; it died before answering the second. */
    int replay = 0;
    TX(f, store_command_result(f->st, a.ids[0], COMMAND_CONFIRMED, "verified RawUsage=0",
                               T_JUL15 + 20, &replay, &f->err));
    assert_int_equal(replay, 0);
    /* The same result again (its answer was lost) is a replay; the other state is a
     * conflict and changes nothing. */
    TX(f, store_command_result(f->st, a.ids[0], COMMAND_CONFIRMED, "verified again", T_JUL15 + 21,
                               &replay, &f->err));
    assert_int_equal(replay, 1);
    replay = 1;
    TX_FAILS(f, ALLOT_ECONFLICT,
             store_command_result(f->st, a.ids[0], COMMAND_FAILED, "late duplicate", T_JUL15 + 22,
                                  &replay, &f->err));
    assert_non_null(strstr(f->err.msg, "already confirmed"));
    assert_int_equal(replay, 0);
    struct command c;
    OK(f, store_command_get(f->st, a.ids[0], &c, &f->err));
    assert_int_equal(c.state, COMMAND_CONFIRMED);
    assert_string_equal(c.result, "verified RawUsage=0");
    struct claim_acc d = {0};
    TX(f, store_command_claim(f->st, "c1", T_JUL15 + 400, 300, 10, claim_cb, &d, &f->err));
    assert_int_equal(d.n, 1);
    assert_int_equal(d.ids[0], a.ids[1]);
    OK(f, store_command_get(f->st, a.ids[1], &c, &f->err));
    assert_int_equal(c.attempts, 2);
    TX(f, store_command_result(f->st, a.ids[1], COMMAND_FAILED,
                               " Unknown option: GrpTRESMinz=billing=1200", T_JUL15 + 401, &replay,
                               &f->err));
    OK(f, store_command_get(f->st, a.ids[1], &c, &f->err));
    assert_int_equal(c.state, COMMAND_FAILED);
    assert_string_equal(c.result, " Unknown option: GrpTRESMinz=billing=1200");
    OK(f, store_agent_status(f->st, "c1", &last, &oldest, &waiting, &f->err));
    assert_int_equal(last, T_JUL15 + 400);
    assert_int_equal(waiting, 0);
    FAILS(f, ALLOT_ENOENT, store_command_get(f->st, 999, &c, &f->err));
}

/* A policy on an allocation already granted SU: refused unless initial= says what becomes
 * of the grant; "add" keeps it beside the first base (600 + 1000), "expire" lets its free
 * balance expire in the add's transaction (the first period holds 1000), an allocation
 * without a grant needs nothing, any other word is refused.  A refusal writes nothing. */
static void test_add_initial(void **state)
{
    struct fx *f = *state;
    struct allocation a;
    struct balance b;
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    fx_add_account(f, "chem", "root");
    int64_t granted = fx_add_alloc(f, "chem", "cpu", "c1", T_2026, T_2026 + 400 * DAY, 600);
    struct policy p = policy_on(granted, "month", 1000);
    TX_FAILS(f, ALLOT_EINVAL, store_policy_add(f->st, &p, &f->err));
    assert_non_null(strstr(f->err.msg, "initial: allocation"));
    assert_non_null(strstr(f->err.msg, "already granted 10h SU"));
    FAILS(f, ALLOT_ENOENT, store_policy_get_by_alloc(f->st, granted, &p, &f->err));
    snprintf(p.initial, sizeof p.initial, "keep");
    TX_FAILS(f, ALLOT_EINVAL, store_policy_add(f->st, &p, &f->err));
    assert_non_null(strstr(f->err.msg, "'keep' is not add or expire"));
    snprintf(p.initial, sizeof p.initial, "add");
    TX(f, store_policy_add(f->st, &p, &f->err));
    roll(f, p.id, T_JUL15, NULL);
    OK(f, store_alloc_get(f->st, granted, &a, &b, &f->err));
    assert_int_equal(b.granted_sumin, 1600);
    assert_int_equal(ledger_kind(f, granted, LEDGER_EXPIRY).n, 0);

    fx_add_account(f, "bio", "root");
    int64_t bio = fx_add_alloc(f, "bio", "cpu", "c1", T_2026, T_2026 + 400 * DAY, 600);
    p = policy_on(bio, "month", 1000);
    snprintf(p.initial, sizeof p.initial, "expire");
    snprintf(p.actor, sizeof p.actor, "alice");
    TX(f, store_policy_add(f->st, &p, &f->err));
    struct kind_count x = ledger_kind(f, bio, LEDGER_EXPIRY);
    assert_int_equal(x.n, 1);
    assert_int_equal(x.sum, 600);
    roll(f, p.id, T_JUL15, NULL);
    OK(f, store_alloc_get(f->st, bio, &a, &b, &f->err));
    assert_int_equal(b.granted_sumin, 1000);
    assert_int_equal(b.available_sumin, 1000);

    fx_add_account(f, "geo", "root");
    p = policy_on(fx_add_alloc(f, "geo", "cpu", "c1", T_2026, T_2026 + 400 * DAY, 0), "month",
                  1000);
    TX(f, store_policy_add(f->st, &p, &f->err));
}

static void test_add_errors(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    struct policy p;
    OK(f, store_policy_get(f->st, id, &p, &f->err));
    assert_string_equal(p.account, "chem");
    TX_FAILS(f, ALLOT_EEXIST, store_policy_add(f->st, &p, &f->err));
    snprintf(p.period_kind, sizeof p.period_kind, "week");
    TX_FAILS(f, ALLOT_EINVAL, store_policy_add(f->st, &p, &f->err));
    snprintf(p.period_kind, sizeof p.period_kind, "month");
    snprintf(p.limit_type, sizeof p.limit_type, "GrpCPUMins");
    TX_FAILS(f, ALLOT_EINVAL, store_policy_add(f->st, &p, &f->err));
    snprintf(p.limit_type, sizeof p.limit_type, "GrpTRES");
    p.alloc_id = 4242;
    TX_FAILS(f, ALLOT_ENOENT, store_policy_add(f->st, &p, &f->err));
    FAILS(f, ALLOT_ENOENT, store_policy_get(f->st, 4242, &p, &f->err));

    /* A second allocation, paying for jobs on c1 only. */
    TX(f, store_cluster_add(f->st, "c2", &f->err));
    p.alloc_id = fx_add_alloc(f, "chem", "gpu", "c1", T_2026, T_2026 + 400 * DAY, 0);
    /* carryover_factor above 1 can carry no more than factor 1 (carry <= unused <= base):
     * "carryover_factor=50" meant as 50 % would silently carry 100 %. */
    p.carry_factor_ppm = 1500000;
    TX_FAILS(f, ALLOT_EINVAL, store_policy_add(f->st, &p, &f->err));
    assert_non_null(strstr(f->err.msg, "carryover_factor"));
    p.carry_factor_ppm = CARRYOVER_PPM; /* 100 % is allowed */
    /* The allocation pays only for c1: limits pushed to c2 would throttle the account where
     * this budget is never spent. */
    snprintf(p.cluster, sizeof p.cluster, "c2");
    TX_FAILS(f, ALLOT_EINVAL, store_policy_add(f->st, &p, &f->err));
    assert_non_null(strstr(f->err.msg, "c1"));
    snprintf(p.cluster, sizeof p.cluster, "c1");
    /* chem's cpu policy already drives chem's association on c1 in this time: a second
     * policy would push its limits, QOS and fair-share over the first one's. */
    TX_FAILS(f, ALLOT_ECONFLICT, store_policy_add(f->st, &p, &f->err));
    char want[128];
    snprintf(want, sizeof want, "policy %lld (allocation %lld) already drives account 'chem'",
             (long long)id, (long long)alloc);
    assert_non_null(strstr(f->err.msg, want));
    /* Another account's allocation, or chem's after the first one ends, is free. */
    fx_add_account(f, "bio", "root");
    p.alloc_id = fx_add_alloc(f, "bio", "gpu", "c1", T_2026, T_2026 + 400 * DAY, 0);
    TX(f, store_policy_add(f->st, &p, &f->err));
    struct allocation first;
    OK(f, store_alloc_get(f->st, alloc, &first, NULL, &f->err));
    p.alloc_id = fx_add_alloc(f, "chem", "cpu", "", first.end_s, first.end_s + 30 * DAY, 0);
    TX(f, store_policy_add(f->st, &p, &f->err));
}

/* The reconcile marker moves forward only; counts add up; unknown cluster refused. */
static void test_reconcile_mark(void **state)
{
    struct fx *f = *state;
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    struct reconcile_mark m;
    OK(f, store_reconcile_get(f->st, "c1", &m, &f->err));
    assert_int_equal(m.until_s, 0);
    TX(f, store_reconcile_set(f->st, "c1", T_JUL15, 3, 1, "job 7: no allocation", T_JUL15 + 9,
                              &f->err));
    TX(f, store_reconcile_set(f->st, "c1", T_JUL15 - 60, 0, 0, "", T_JUL15 + 10, &f->err));
    OK(f, store_reconcile_get(f->st, "c1", &m, &f->err));
    assert_int_equal(m.until_s, T_JUL15);
    assert_int_equal(m.updated_s, T_JUL15 + 10);
    assert_int_equal(m.settled, 3);
    assert_int_equal(m.unknown, 1);
    assert_string_equal(m.report, "");
    TX(f, store_reconcile_set(f->st, "c1", T_AUG1, 2, 0, "x", T_AUG1, &f->err));
    OK(f, store_reconcile_get(f->st, "c1", &m, &f->err));
    assert_int_equal(m.until_s, T_AUG1);
    assert_int_equal(m.settled, 5);
    assert_string_equal(m.report, "x");
    TX_FAILS(f, ALLOT_ENOENT,
             store_reconcile_set(f->st, "nope", T_AUG1, 0, 0, "", T_AUG1, &f->err));
    TX_FAILS(f, ALLOT_EINVAL, store_reconcile_set(f->st, "c1", 0, 0, 0, "", T_AUG1, &f->err));
}

/* ---- credits by hand during a period ---- */

/* A credit (kind LEDGER_CREDIT) or adjustment made by hand at time_s, as `allot credit`
 * makes it; key "" = none. */
static struct ledger_entry hand(struct fx *f, int64_t alloc, enum ledger_kind kind, int64_t amount,
                                int64_t time_s, const char *key)
{
    struct ledger_entry e;
    int replay = 0;
    memset(&e, 0, sizeof e);
    e.alloc_id = alloc;
    e.kind = kind;
    e.amount_sumin = amount;
    e.time_s = time_s;
    snprintf(e.actor, sizeof e.actor, "admin");
    snprintf(e.comment, sizeof e.comment, "committee top-up");
    snprintf(e.idem_key, sizeof e.idem_key, "%s", key);
    TX(f, store_credit(f->st, &e, &replay, &f->err));
    assert_int_equal(replay, 0);
    return e;
}

static struct policy_eval eval_at(struct fx *f, int64_t id, int64_t now_s)
{
    struct policy_eval e;
    TX(f, store_policy_evaluate(f->st, id, now_s, NULL, "test", &e, &f->err));
    return e;
}

struct period_rows {
    int n;
    struct policy_period_row r[4];
};
static int collect_period(const struct policy_period_row *r, void *arg)
{
    struct period_rows *k = arg;
    if (k->n < 4)
        k->r[k->n++] = *r;
    return 0;
}
static struct period_rows periods(struct fx *f, int64_t id)
{
    struct period_rows k = {0};
    OK(f, store_policy_periods(f->st, id, collect_period, &k, &f->err));
    return k;
}

/* Paused and downscaled at 130 % of base 1000; the committee tops the project up by 500:
 * 1300 of 1500 is under 100 %, so the pause and the slow QOS are lifted in the credit's own
 * transaction (as allotd runs it), with the commands the other un-pause paths queue: the
 * normal QOS and the account's own GrpJobs, after the limit raised to 1500 x 1.2. */
static void test_topup_lifts_pause(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "GrpJobs", "50", &f->err));
    eval_at(f, id, T_JUL15);
    use(f, 1, T_JUL15 + 60, 1300);
    struct policy_eval e = eval_at(f, id, T_JUL15 + 120);
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE | CARRYOVER_PAUSE);
    assert_string_equal(commands(f, "set_grpjobs", "2026-07").last.payload, "GrpJobs=0");
    assert_string_equal(commands(f, "set_qos", "2026-07").last.payload, "qos=slow");

    struct ledger_entry c;
    memset(&c, 0, sizeof c);
    c.alloc_id = alloc;
    c.kind = LEDGER_CREDIT;
    c.amount_sumin = 500;
    c.time_s = T_JUL15 + 180;
    snprintf(c.actor, sizeof c.actor, "admin");
    int replay = 0;
    BEGIN(f);
    OK(f, store_credit(f->st, &c, &replay, &f->err));
    OK(f, store_policy_evaluate(f->st, id, c.time_s, NULL, "admin", &e, &f->err));
    COMMIT(f);
    assert_int_equal(e.total_sumin, 1500);
    assert_int_equal(e.used_sumin, 1300);
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY);
    assert_string_equal(e.actions, "downscale-clear,pause-clear");
    struct cmd_count qos = commands(f, "set_qos", "2026-07");
    assert_int_equal(qos.n, 2);
    assert_string_equal(qos.last.payload, "qos=normal");
    struct cmd_count gj = commands(f, "set_grpjobs", "2026-07");
    assert_int_equal(gj.n, 2);
    assert_string_equal(gj.last.payload, "GrpJobs=50");
    struct cmd_count lim = commands(f, "set_limit", "2026-07");
    assert_int_equal(lim.n, 2);
    assert_string_equal(lim.last.payload, "GrpTRESMins=billing=1800");
    assert_true(lim.last.id < qos.last.id); /* the agent raises the limit before it unpauses */
    /* The next tick changes nothing more. */
    e = eval_at(f, id, T_JUL15 + 600);
    assert_string_equal(e.actions, "");
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY);
    fx_check_clean(f);
}

/* A top-up before any threshold is reached moves them all: 1700 of base 1000 + 1000 by hand
 * is 85 % (notify), not 170 % (pause).  A negative adjustment by hand lowers the total the
 * same way: 1700 of 1700 downscales. */
static void test_topup_moves_thresholds(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    eval_at(f, id, T_JUL15);
    hand(f, alloc, LEDGER_CREDIT, 1000, T_JUL15 + 60, "ticket-1");
    struct policy_eval e = eval_at(f, id, T_JUL15 + 120);
    assert_int_equal(e.total_sumin, 2000);
    assert_int_equal(e.new_flags, 0);
    use(f, 1, T_JUL15 + 180, 1700);
    e = eval_at(f, id, T_JUL15 + 300);
    assert_int_equal(e.usage_ppm, 850000);
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY);
    assert_string_equal(e.actions, "notify");
    assert_int_equal(commands(f, "set_qos", NULL).n, 0);
    assert_int_equal(commands(f, "set_grpjobs", NULL).n, 0);

    hand(f, alloc, LEDGER_ADJUSTMENT, -300, T_JUL15 + 360, "");
    e = eval_at(f, id, T_JUL15 + 420);
    assert_int_equal(e.total_sumin, 1700);
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY | CARRYOVER_DOWNSCALE);
    assert_string_equal(e.actions, "downscale");
    struct policy p;
    OK(f, store_policy_get(f->st, id, &p, &f->err));
    assert_int_equal(p.period_total_sumin, 1700);
    struct period_rows k = periods(f, id);
    assert_int_equal(k.n, 1);
    assert_int_equal(k.r[0].base_sumin, 1000);
    assert_int_equal(k.r[0].carry_sumin, 0);
    assert_int_equal(k.r[0].total_sumin, 1700);
}

/* The pushed limit is (base + carry + hand credits) x 60 x (1 + grace) TRES-minutes (here
 * in SU-minutes x 1.2): each top-up pushes it again, once; a replayed credit, a refund (use
 * given back, not a grant) and a grant made before the first period push nothing. */
static void test_topup_pushes_limit(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    hand(f, alloc, LEDGER_CREDIT, 300, T_JUL15 - 20 * DAY, ""); /* before the first period */
    assert_int_equal(commands(f, "set_limit", NULL).n, 0);
    struct policy_roll r = roll(f, id, T_JUL15, NULL);
    assert_int_equal(r.total_sumin, 1000);
    assert_int_equal(r.limit_value, 1200);

    struct ledger_entry c = hand(f, alloc, LEDGER_CREDIT, 500, T_JUL15 + 60, "ticket-7");
    struct cmd_count lim = commands(f, "set_limit", "2026-07");
    assert_int_equal(lim.n, 2);
    assert_string_equal(lim.last.payload, "GrpTRESMins=billing=1800");
    assert_string_equal(lim.last.target, "chem");
    char key[ALLOT_KEY_MAX];
    snprintf(key, sizeof key, "policy:%lld:2026-07:limit@ledger%lld", (long long)id,
             (long long)c.id);
    assert_string_equal(lim.last.idem_key, key);

    /* The same credit again (its key): a replay, nothing pushed. */
    int replay = 0;
    struct ledger_entry again = c;
    again.id = 0;
    TX(f, store_credit(f->st, &again, &replay, &f->err));
    assert_int_equal(replay, 1);
    use(f, 1, T_JUL15 + 120, 100);
    struct ledger_entry rf;
    memset(&rf, 0, sizeof rf);
    rf.alloc_id = alloc;
    rf.kind = LEDGER_REFUND;
    rf.amount_sumin = 100;
    rf.time_s = T_JUL15 + 180;
    TX(f, store_credit(f->st, &rf, NULL, &f->err));
    /* The refund leaves the total but raises the limit by itself: slurmctld still counts
     * the usage allot gave back, so its limit would otherwise hold jobs allot admits. */
    lim = commands(f, "set_limit", "2026-07");
    assert_int_equal(lim.n, 3);
    assert_string_equal(lim.last.payload, "GrpTRESMins=billing=1900");

    /* Two more in the same second: each pushes its value, the refund still counted. */
    hand(f, alloc, LEDGER_CREDIT, 250, T_JUL15 + 240, "");
    hand(f, alloc, LEDGER_CREDIT, 250, T_JUL15 + 240, "");
    lim = commands(f, "set_limit", "2026-07");
    assert_int_equal(lim.n, 5);
    assert_string_equal(lim.last.payload, "GrpTRESMins=billing=2500");
    struct policy_eval e = eval_at(f, id, T_JUL15 + 300);
    assert_int_equal(e.total_sumin, 2000);
}

/* The period's close with top-ups: the carry is still of base alone (unused = base - use,
 * at most 0.5 x base), and what is left of a top-up expires with the rest of the unused part.
 * July: base 1000 + 500 by hand, use 600: carry min(400, 500) = 400, expiry 900.  August:
 * 1400 + 200 by hand, use 1500: no carry, expiry 100. */
static void test_topup_period_close(void **state)
{
    struct fx *f = *state;
    int64_t alloc;
    int64_t id = setup(f, "month", &alloc);
    roll(f, id, T_JUL15, NULL);
    hand(f, alloc, LEDGER_CREDIT, 500, T_JUL15 + 60, "");
    use(f, 1, T_JUL15 + 120, 600);
    struct policy_roll r = roll(f, id, T_AUG1 + 5, NULL);
    assert_int_equal(r.prev_used_sumin, 600);
    assert_int_equal(r.carry_sumin, 400);
    assert_int_equal(r.total_sumin, 1400);
    assert_int_equal(r.expired_sumin, 900);
    assert_int_equal(r.limit_value, 1680);
    assert_string_equal(comment_of(f, alloc, LEDGER_CARRYOVER),
                        "policy 1 period 2026-08: carryover from 2026-07 (used 10h of base "
                        "16h40m SU; at most 0.5 x base)");
    struct balance b;
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.available_sumin, 1400);

    hand(f, alloc, LEDGER_CREDIT, 200, T_AUG1 + DAY, "");
    use(f, 2, T_AUG1 + 2 * DAY, 1500);
    struct policy_eval e = eval_at(f, id, T_AUG1 + 2 * DAY + 120);
    assert_int_equal(e.total_sumin, 1600);
    assert_int_equal(e.new_flags, CARRYOVER_NOTIFY);
    r = roll(f, id, T_AUG1 + 31 * DAY + 5, NULL);
    assert_int_equal(r.prev_used_sumin, 1500);
    assert_int_equal(r.carry_sumin, 0);
    assert_int_equal(r.total_sumin, 1000);
    assert_int_equal(r.expired_sumin, 100);
    OK(f, store_alloc_get(f->st, alloc, NULL, &b, &f->err));
    assert_int_equal(b.available_sumin, 1000);

    /* Each period's row keeps what it was given: base, carry, and the total with top-ups. */
    struct period_rows k = periods(f, id);
    assert_int_equal(k.n, 3);
    assert_string_equal(k.r[0].period, "2026-07");
    assert_int_equal(k.r[0].total_sumin, 1500);
    assert_int_equal(k.r[0].used_sumin, 600);
    assert_int_equal(k.r[0].expired_sumin, 900);
    assert_int_equal(k.r[1].carry_sumin, 400);
    assert_int_equal(k.r[1].total_sumin, 1600);
    assert_int_equal(k.r[1].expired_sumin, 100);
    assert_int_equal(k.r[2].total_sumin, 1000);
    fx_check_clean(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_month_exactly_once, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_settle_sees_policy, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_marker_lost, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_unpause_restores_grpjobs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_largest_base, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hold_overdrawn_boundary, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_allocation_end, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_allocation_end_restores, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hold_across_boundary, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_total_never_resets, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_time_zone, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_thresholds, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_outbox, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_add_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_mark, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_topup_lifts_pause, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_topup_moves_thresholds, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_topup_pushes_limit, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_topup_period_close, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_add_initial, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
