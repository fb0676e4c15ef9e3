/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/whatif.c - the what-if replay on small histories whose answers are worked out by hand
 * in the comments: a partition's billing weight changed, an allocation's amount lowered until
 * a known job is refused at a known time, MAX_TRES on and off on a multi-TRES job, a shorter
 * half-life moving fair-share, a monthly policy with carryover and thresholds, and bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/whatif.h"

#define T 1800000000LL /* any instant will do */
#define HOUR 3600
#define DAY 86400
#define BIG 100000000

/* root -> chem, phys; alice in chem, bob in phys; partitions batch (cpu) and gpu (gpu). */
static const struct whatif_account accounts[] = {
    {"root", WHATIF_NONE, 1},
    {"chem", 0, 1},
    {"phys", 0, 1},
};
static const struct whatif_user users[] = {{"alice", 1, 1}, {"bob", 2, 1}};
static const struct whatif_partition parts[] = {{"c1", "batch", "cpu"}, {"c1", "gpu", "gpu"}};
enum { ALICE = 0, BOB = 1, BATCH = 0, GPU = 1 };

static const struct whatif_alloc allocs[] = {
    {1, 1, "cpu", "", T - DAY, T + 100 * DAY, BIG},
    {2, 1, "gpu", "", T - DAY, T + 100 * DAY, BIG},
    {3, 2, "cpu", "c1", T - DAY, T + 100 * DAY, BIG},
    {4, 2, "gpu", "", T - DAY, T + 100 * DAY, BIG},
};

static struct whatif_job job(int64_t id, uint32_t user, uint32_t part, int64_t start,
                             int64_t elapsed, int64_t limit, const char *tres)
{
    return (struct whatif_job){
        .job_id = id,
        .user = user,
        .partition = part,
        .start_s = start,
        .end_s = start + elapsed,
        .elapsed_s = elapsed,
        .time_limit_s = limit,
        .alloc_tres = tres,
        .usage_factor = 1.0,
    };
}

static struct whatif_input input(const struct whatif_job *jobs, size_t n)
{
    return (struct whatif_input){
        .accounts = accounts,
        .naccounts = 3,
        .users = users,
        .nusers = 2,
        .partitions = parts,
        .npartitions = 2,
        .allocs = allocs,
        .nallocs = 4,
        .jobs = jobs,
        .njobs = n,
    };
}

static void weights(struct billing_weights w[2], const char *batch, const char *gpu, int max_tres)
{
    assert_int_equal(billing_weights_parse(batch, max_tres, &w[0], NULL), 0);
    assert_int_equal(billing_weights_parse(gpu, max_tres, &w[1], NULL), 0);
}

static void run(const struct whatif_input *in, const struct billing_weights *w,
                const int64_t *amounts, int64_t halflife, struct whatif_result *out)
{
    struct whatif_scenario s = {
        .weights = w,
        .amounts_sumin = amounts,
        .decay = {.halflife_s = halflife},
        .fairshare = {.algo = FAIRSHARE_CLASSIC},
    };
    struct allot_error err = {0};
    int rc = whatif_run(in, &s, out, &err);
    if (rc < 0)
        fail_msg("whatif_run: %s", err.msg);
}

/* gpu's GRES/gpu weight 4 -> 8; batch unchanged.  Charges, ceil(billing x elapsed / 60):
 *   j1 alice batch cpu=4, 3600 s:           4 x 60                     = 240 both
 *   j2 alice gpu cpu=8,gpu=2, 1800 s: before (8 + 2x4 = 16) x 30       = 480
 *                                     after  (8 + 2x8 = 24) x 30       = 720
 *   j3 bob gpu cpu=2,gpu=1, 90 s:     before (2 + 4 = 6) x 90 / 60     = 9
 *                                     after  (2 + 8 = 10) x 90 / 60    = 15
 *   j4 bob batch cpu=1, 61 s:         ceil(1 x 61 / 60)                = 2 both
 * chem: 240 + 480 = 720 -> 240 + 720 = 960 (+240); phys: 9 + 2 = 11 -> 15 + 2 = 17 (+6). */
static void test_billing_weight(void **state)
{
    (void)state;
    struct whatif_job jobs[] = {
        job(1, ALICE, BATCH, T, HOUR, 2 * HOUR, "cpu=4,mem=4G,node=1"),
        job(2, ALICE, GPU, T + 10, 1800, HOUR, "cpu=8,gres/gpu=2,node=1"),
        job(3, BOB, GPU, T + 20, 90, 600, "cpu=2,gres/gpu=1,node=1"),
        job(4, BOB, BATCH, T + 30, 61, 0, "cpu=1,node=1"),
    };
    struct whatif_input in = input(jobs, 4);
    struct billing_weights before[2], after[2];
    weights(before, "CPU=1.0", "CPU=1.0,GRES/gpu=4.0", 0);
    weights(after, "CPU=1.0", "CPU=1.0,GRES/gpu=8.0", 0);
    struct whatif_result b, a;
    run(&in, before, NULL, 0, &b);
    run(&in, after, NULL, 0, &a);
    assert_int_equal(b.accounts[1].charged_sumin, 720);
    assert_int_equal(a.accounts[1].charged_sumin, 960);
    assert_int_equal(b.accounts[2].charged_sumin, 11);
    assert_int_equal(a.accounts[2].charged_sumin, 17);
    assert_int_equal(b.accounts[0].charged_sumin, 0); /* nobody runs in root itself */
    assert_int_equal(b.total.charged_sumin, 731);
    assert_int_equal(a.total.charged_sumin, 977);
    assert_int_equal(a.users[ALICE].t.charged_sumin, 960);
    assert_int_equal(a.users[BOB].t.jobs, 2);
    assert_int_equal(a.total.refused, 0);
    /* Each allocation's use: chem gpu 480 -> 720, phys gpu 9 -> 15, the cpu ones unchanged. */
    assert_int_equal(b.allocs[1].used_sumin, 480);
    assert_int_equal(a.allocs[1].used_sumin, 720);
    assert_int_equal(a.allocs[3].used_sumin, 15);
    assert_int_equal(a.allocs[0].used_sumin, 240);
    assert_int_equal(a.allocs[2].used_sumin, 2);
    assert_int_equal(a.allocs[1].exhausted_s, 0);
    assert_int_equal(b.at_s, T + HOUR); /* fair-share at the last end: j1's */
    whatif_result_free(&b);
    whatif_result_free(&a);
}

/* chem's gpu allocation lowered from BIG to 1500.  Three gpu jobs of alice, cpu=8,gpu=2
 * (billing 16), 1800 s run, 3600 s limit: hold 16 x 60 = 960, charge 16 x 30 = 480.
 *   T:        available 1500 >= 960: held;     ends T+1800, used 480
 *   T+3600:   available 1500 - 480 = 1020 >= 960: held; ends T+5400, used 960
 *   T+7200:   available 1500 - 960 = 540 < 960: refused at T+7200, needed 960, available 540.
 * The allocation runs out at T+7200 (the refusal); chem is charged 960 instead of 1440. */
static void test_refusal(void **state)
{
    (void)state;
    struct whatif_job jobs[] = {
        job(11, ALICE, GPU, T, 1800, HOUR, "cpu=8,gres/gpu=2"),
        job(12, ALICE, GPU, T + HOUR, 1800, HOUR, "cpu=8,gres/gpu=2"),
        job(13, ALICE, GPU, T + 2 * HOUR, 1800, HOUR, "cpu=8,gres/gpu=2"),
    };
    struct whatif_input in = input(jobs, 3);
    struct billing_weights w[2];
    weights(w, "CPU=1.0", "CPU=1.0,GRES/gpu=4.0", 0);
    const int64_t lowered[] = {BIG, 1500, BIG, BIG};
    struct whatif_result b, a;
    run(&in, w, NULL, 0, &b);
    run(&in, w, lowered, 0, &a);
    assert_int_equal(b.total.refused, 0);
    assert_int_equal(b.accounts[1].charged_sumin, 1440);
    assert_int_equal(a.total.refused, 1);
    assert_int_equal(a.nrefusals, 1);
    assert_int_equal(a.refusals[0].job, 2); /* job 13 */
    assert_int_equal(a.refusals[0].alloc, 1);
    assert_int_equal(a.refusals[0].time_s, T + 2 * HOUR);
    assert_int_equal(a.refusals[0].needed_sumin, 960);
    assert_int_equal(a.refusals[0].available_sumin, 540);
    assert_int_equal(a.allocs[1].exhausted_s, T + 2 * HOUR);
    assert_int_equal(a.allocs[1].granted_sumin, 1500);
    assert_int_equal(a.allocs[1].used_sumin, 960);
    assert_int_equal(a.accounts[1].charged_sumin, 960);
    assert_int_equal(a.users[ALICE].t.refused, 1);
    /* Lowered to 960: the first job's hold takes all 960 and it is charged 480; at T+3600
     * the second finds 480 < 960 and is refused (run out then), and so is the third. */
    const int64_t exact[] = {BIG, 960, BIG, BIG};
    struct whatif_result e;
    run(&in, w, exact, 0, &e);
    assert_int_equal(e.allocs[1].exhausted_s, T + HOUR);
    assert_int_equal(e.nrefusals, 2);
    assert_int_equal(e.refusals[0].available_sumin, 480);
    assert_int_equal(e.refusals[1].time_s, T + 2 * HOUR);
    /* 1920: the third finds 1920 - 960 = 960, enough; used ends at 1440, never run out. */
    const int64_t enough[] = {BIG, 1920, BIG, BIG};
    struct whatif_result u;
    run(&in, w, enough, 0, &u);
    assert_int_equal(u.nrefusals, 0);
    assert_int_equal(u.allocs[1].used_sumin, 1440);
    assert_int_equal(u.allocs[1].exhausted_s, 0);
    whatif_result_free(&u);
    /* One job whose charge is its hold (1800 s of a 1800 s limit: 480) on exactly 480: the
     * allocation runs out at its end, T+1800, with nothing refused. */
    struct whatif_job one[] = {job(14, ALICE, GPU, T, 1800, 1800, "cpu=8,gres/gpu=2")};
    struct whatif_input in1 = input(one, 1);
    const int64_t just[] = {BIG, 480, BIG, BIG};
    run(&in1, w, just, 0, &u);
    assert_int_equal(u.nrefusals, 0);
    assert_int_equal(u.allocs[1].exhausted_s, T + 1800);
    whatif_result_free(&u);
    whatif_result_free(&b);
    whatif_result_free(&a);
    whatif_result_free(&e);
}

/* cpu=8, mem=64G, gpu=1 under CPU=1.0,Mem=0.25G,GRES/gpu=4.0 for 600 s:
 *   sum:      8 + 64 x 0.25 + 1 x 4 = 28 -> 28 x 10 = 280
 *   MAX_TRES: max(8, 16, 4)        = 16 -> 16 x 10 = 160. */
static void test_max_tres(void **state)
{
    (void)state;
    struct whatif_job jobs[] = {job(21, BOB, GPU, T, 600, 600, "cpu=8,mem=64G,gres/gpu=1,node=1")};
    struct whatif_input in = input(jobs, 1);
    struct billing_weights sum[2], max[2];
    weights(sum, "CPU=1.0", "CPU=1.0,Mem=0.25G,GRES/gpu=4.0", 0);
    weights(max, "CPU=1.0", "CPU=1.0,Mem=0.25G,GRES/gpu=4.0", 1);
    struct whatif_result b, a;
    run(&in, sum, NULL, 0, &b);
    run(&in, max, NULL, 0, &a);
    assert_int_equal(b.accounts[2].charged_sumin, 280);
    assert_int_equal(a.accounts[2].charged_sumin, 160);
    whatif_result_free(&b);
    whatif_result_free(&a);
}

/* alice uses 100 at T, bob 100 at T + 10 days; fair-share (classic) at T + 10 days.
 * No decay: each has U = 1/2 against S = 1/2 x 1 = 1/2, F = 2^-(0.5/0.5) = 0.5 both.
 * Half-life 1 day: alice's 100 decays to 100/1024, so U_alice = 1/1025, U_bob = 1024/1025
 * and F_alice = 2^-(2/1025), F_bob = 2^-(2048/1025): alice moves up, bob down. */
static void test_halflife(void **state)
{
    (void)state;
    /* billing 1 for 6000 s = 100 SU-minutes each */
    struct whatif_job jobs[] = {
        job(31, ALICE, BATCH, T - 6000, 6000, 6000, "cpu=1"),
        job(32, BOB, BATCH, T + 10 * DAY - 6000, 6000, 6000, "cpu=1"),
    };
    struct whatif_input in = input(jobs, 2);
    struct billing_weights w[2];
    weights(w, "", "", 0);
    struct whatif_result b, a;
    run(&in, w, NULL, 0, &b);
    run(&in, w, NULL, DAY, &a);
    assert_int_equal(a.at_s, T + 10 * DAY);
    assert_true(fabs(b.users[ALICE].fairshare - 0.5) < 1e-12);
    assert_true(fabs(b.users[BOB].fairshare - 0.5) < 1e-12);
    assert_true(fabs(a.users[ALICE].fairshare - pow(2, -2.0 / 1025)) < 1e-12);
    assert_true(fabs(a.users[BOB].fairshare - pow(2, -2048.0 / 1025)) < 1e-12);
    /* Money is not touched by the half-life. */
    assert_int_equal(a.accounts[1].charged_sumin, 100);
    assert_int_equal(a.accounts[2].charged_sumin, 100);
    whatif_result_free(&b);
    whatif_result_free(&a);
}

/* A monthly policy on chem's gpu allocation: base 1000, carry factor 0.5, the default
 * thresholds.  gpu jobs cpu=8,gpu=2 (billing 16), 1 h limit: hold 960; charge 480 for 30 min,
 * 960 for an hour.  T is 2027-01-15 08:00 UTC; February starts at FEB.
 *   January, total 1000:   A at T: 1000 >= 960, charged 480
 *                          B at T+1h: 1000 - 480 = 520 < 960: refused (runs out at T+1h)
 *   February: unused 1000 - 480 = 520, carry min(520, 0.5 x 1000) = 500: total 1500
 *                          C at FEB+1d10h: 1500 >= 960, charged 480
 *                          D an hour later: 1020 >= 960, charged 960: 1440 of 1500 = 96 %,
 *                            notify (80 %) at its end; downscale (100 %) never
 *                          E an hour later: 60 < 960: refused.
 * Granted 1000 + 1500 = 2500 over 2 periods, used 480 + 480 + 960 = 1920. */
static void test_policy(void **state)
{
    (void)state;
    const int64_t FEB = 1801440000, C = FEB + DAY + 10 * HOUR;
    struct whatif_job jobs[] = {
        job(61, ALICE, GPU, T, 1800, HOUR, "cpu=8,gres/gpu=2"),
        job(62, ALICE, GPU, T + HOUR, 1800, HOUR, "cpu=8,gres/gpu=2"),
        job(63, ALICE, GPU, C, 1800, HOUR, "cpu=8,gres/gpu=2"),
        job(64, ALICE, GPU, C + HOUR, HOUR, HOUR, "cpu=8,gres/gpu=2"),
        job(65, ALICE, GPU, C + 2 * HOUR, 1800, HOUR, "cpu=8,gres/gpu=2"),
    };
    struct whatif_input in = input(jobs, 5);
    struct billing_weights w[2];
    weights(w, "CPU=1.0", "CPU=1.0,GRES/gpu=4.0", 0);
    struct whatif_policy pol[4] = {0};
    pol[1] = (struct whatif_policy){
        .on = true,
        .kind = PERIOD_MONTH,
        .base_sumin = 1000,
        .factor_ppm = 500000,
        .th = {.notify_ppm = 800000, .downscale_ppm = 1000000, .grace_ppm = 200000},
    };
    struct whatif_scenario s = {.weights = w, .policies = pol};
    struct whatif_result r;
    struct allot_error err = {0};
    if (whatif_run(&in, &s, &r, &err) < 0)
        fail_msg("whatif_run: %s", err.msg);
    const struct whatif_alloc_result *a = &r.allocs[1];
    assert_int_equal(r.nrefusals, 2);
    assert_int_equal(r.refusals[0].job, 1);
    assert_int_equal(r.refusals[0].available_sumin, 520);
    assert_int_equal(r.refusals[1].job, 4);
    assert_int_equal(r.refusals[1].time_s, C + 2 * HOUR);
    assert_int_equal(r.refusals[1].available_sumin, 60);
    assert_int_equal(a->periods, 2);
    assert_int_equal(a->granted_sumin, 2500);
    assert_int_equal(a->used_sumin, 1920);
    assert_int_equal(a->exhausted_s, T + HOUR);
    assert_int_equal(a->notify_s, C + 2 * HOUR);
    assert_int_equal(a->downscale_s, 0);
    assert_int_equal(a->pause_s, 0);
    assert_int_equal(r.accounts[1].charged_sumin, 1920);
    /* No carryover: February's total is the base, 1000; D finds 1000 - 480 = 520 and is
     * refused, E too (520 < 960). */
    pol[1].factor_ppm = 0;
    whatif_result_free(&r);
    if (whatif_run(&in, &s, &r, &err) < 0)
        fail_msg("whatif_run: %s", err.msg);
    assert_int_equal(r.nrefusals, 3);
    assert_int_equal(r.allocs[1].granted_sumin, 2000);
    assert_int_equal(r.allocs[1].used_sumin, 960);
    whatif_result_free(&r);
}

/* A job with no allocation up to the root is refused (alloc WHATIF_NONE); NODE_FAIL costs 0;
 * the charge is capped at the hold; a zero-length job is started before it ends. */
static void test_rules(void **state)
{
    (void)state;
    struct whatif_job jobs[] = {
        job(41, ALICE, BATCH, T - 3 * DAY, 60, 60, "cpu=1"), /* before every allocation */
        job(42, ALICE, BATCH, T, 600, 600, "cpu=4"),
        job(43, ALICE, BATCH, T, 7200, 3600, "cpu=1"), /* ran past its limit */
        job(44, BOB, BATCH, T, 0, 60, "cpu=1"),
    };
    jobs[1].node_fail = true;
    struct whatif_input in = input(jobs, 4);
    struct billing_weights w[2];
    weights(w, "", "", 0);
    struct whatif_result r;
    run(&in, w, NULL, 0, &r);
    assert_int_equal(r.nrefusals, 1);
    assert_int_equal(r.refusals[0].job, 0);
    assert_int_equal(r.refusals[0].alloc, WHATIF_NONE);
    assert_int_equal(r.accounts[1].charged_sumin, 60); /* 0 + min(120, 60) */
    assert_int_equal(r.accounts[1].jobs, 2);
    assert_int_equal(r.accounts[2].jobs, 1);
    assert_int_equal(r.accounts[2].charged_sumin, 0);
    whatif_result_free(&r);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct whatif_job jobs[] = {job(51, ALICE, BATCH, T, 60, 60, "cpu=x")};
    struct whatif_input in = input(jobs, 1);
    struct billing_weights w[2];
    weights(w, "", "", 0);
    struct whatif_scenario s = {.weights = w};
    struct whatif_result r;
    struct allot_error err = {0};
    assert_int_equal(whatif_run(&in, &s, &r, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_non_null(strstr(err.msg, "job 51"));
    jobs[0] = job(51, 7, BATCH, T, 60, 60, "cpu=1"); /* no such user */
    assert_int_equal(whatif_run(&in, &s, &r, &err), -1);
    assert_non_null(strstr(err.msg, "job 51"));
    struct whatif_account cyc[] = {{"root", WHATIF_NONE, 1}, {"a", 2, 1}, {"b", 1, 1}};
    in.accounts = cyc;
    jobs[0].user = 0;
    assert_int_equal(whatif_run(&in, &s, &r, &err), -1);
    assert_non_null(strstr(err.msg, "cycle"));
    const int64_t negative[] = {BIG, -1, BIG, BIG};
    in.accounts = accounts;
    s.amounts_sumin = negative;
    assert_int_equal(whatif_run(&in, &s, &r, &err), -1);
    assert_non_null(strstr(err.msg, "negative"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_billing_weight), cmocka_unit_test(test_refusal),
        cmocka_unit_test(test_max_tres),       cmocka_unit_test(test_halflife),
        cmocka_unit_test(test_rules),          cmocka_unit_test(test_policy),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
