/* SPDX-License-Identifier: GPL-3.0-or-later */
/* job.c - hold, settle, release (doc/design.md §3) on a real SQLite file: the HADM overdraft case,
 * refused holds (failure row, JOB_REFUSED, replay), idempotency of every verb (a replay
 * returns the first outcome and adds no ledger row), NODE_FAIL costs 0, a run that never
 * started gets its whole hold back, a requeued run is a separate job, a run straddling two
 * allocation periods pays from the one holding its hold, post-paid settles, listings and
 * counts; store_check passes after each scenario. */
#include "store_test.h"

#include "libcore/money.h"

#define DAY 86400
#define T0 1767225600 /* 2026-01-01T00:00:00Z */

static struct hold_req hold_req(int64_t job_id, int32_t run, int64_t amount)
{
    struct hold_req r = fx_hold_req(job_id, amount, T0 + 200, 3600);
    r.run = run;
    snprintf(r.qos, sizeof r.qos, "normal");
    r.submit_s = T0 + 100;
    snprintf(r.req_tres, sizeof r.req_tres, "cpu=1,mem=1G,node=1");
    snprintf(r.alloc_tres, sizeof r.alloc_tres, "cpu=1,mem=1G,node=1");
    return r;
}

static struct settle_req settle_req(int64_t job_id, int32_t run, int64_t elapsed_s,
                                    const char *state)
{
    struct settle_req r = fx_settle_req(job_id, T0 + 200, elapsed_s, state, "epilog");
    r.run = run;
    return r;
}

/* chem under science; one cpu allocation for chem on all clusters, credited `amount`. */
static int64_t setup_bank(struct fx *f, int64_t amount)
{
    fx_add_account(f, "science", "root");
    fx_add_account(f, "chem", "science");
    return fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 30 * DAY, amount);
}

static struct balance bal_of(struct fx *f, int64_t id)
{
    struct balance b;
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    return b;
}

static void test_hadm_overdraft(void **state)
{
    struct fx *f = *state;
    /* HADM: two 20 SU holds against a 30 SU balance yield exactly one hold. */
    int64_t id = setup_bank(f, 30 * 60);
    struct hold_req a = hold_req(1, 0, 20 * 60), b = hold_req(2, 0, 20 * 60);
    struct hold_result ra, rb;
    TX(f, store_hold(f->st, &a, &ra, &f->err));
    TX(f, store_hold(f->st, &b, &rb, &f->err));
    assert_false(ra.refused);
    assert_int_equal(ra.job.status, JOB_HELD);
    assert_int_equal(ra.alloc.id, id);
    assert_int_equal(ra.bal.held_sumin, 1200);
    assert_int_equal(ra.bal.available_sumin, 600);
    assert_true(rb.refused);
    assert_int_equal(rb.job.status, JOB_REFUSED);
    assert_int_equal(rb.failure.alloc_id, id);
    assert_int_equal(rb.failure.needed_sumin, 1200);
    assert_int_equal(rb.failure.available_sumin, 600);
    assert_int_equal(rb.failure.held_sumin, 1200);
    assert_true(rb.failure.id > 0);
    assert_string_equal(rb.failure.stage, "hold");
    assert_non_null(strstr(rb.failure.message, "chem"));
    assert_non_null(strstr(rb.failure.message, "20h"));
    assert_non_null(strstr(rb.failure.message, "10h"));
    /* The cost's parts and what to change (doc/design.md §3.5). */
    assert_non_null(strstr(rb.failure.message, "billing 1 x time limit 60 min)"));
    assert_non_null(strstr(rb.failure.message, "Lower the time limit"));
    struct balance bal = bal_of(f, id);
    assert_int_equal(bal.held_sumin, 1200);
    assert_int_equal(bal.available_sumin, 600);
    /* Only one hold entry was written (plus the credit). */
    assert_int_equal(fx_ledger_rows(f), 2);

    /* A replay of the refused run returns the same refusal and writes nothing. */
    struct hold_result again;
    TX(f, store_hold(f->st, &b, &again, &f->err));
    assert_true(again.replay);
    assert_true(again.refused);
    assert_int_equal(again.failure.id, rb.failure.id);
    assert_int_equal(fx_ledger_rows(f), 2);
    fx_check_clean(f);
}

static void test_hold_settle_idempotent(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 6000);
    struct hold_req h = hold_req(10, 0, 60);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_false(hr.replay);
    int rows = fx_ledger_rows(f);
    struct hold_result hr2;
    TX(f, store_hold(f->st, &h, &hr2, &f->err));
    assert_true(hr2.replay);
    assert_false(hr2.refused);
    assert_int_equal(hr2.job.hold_sumin, 60);
    assert_int_equal(hr2.bal.held_sumin, 60);
    assert_int_equal(fx_ledger_rows(f), rows);
    int64_t count = -1;
    OK(f, store_job_count_held(f->st, "c1", "chem", NULL, &count, &f->err));
    assert_int_equal(count, 1);

    /* 1 billing unit for 1801 s: ceil(1801/60) = 31 SU-minutes. */
    struct settle_req s = settle_req(10, 0, 1801, "COMPLETED");
    struct settle_result sr;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_false(sr.replay);
    assert_int_equal(sr.job.status, JOB_SETTLED);
    assert_int_equal(sr.job.charge_sumin, 31);
    assert_string_equal(sr.job.settle_source, "epilog");
    assert_int_equal(sr.bal.held_sumin, 0);
    assert_int_equal(sr.bal.used_sumin, 31);
    assert_int_equal(sr.bal.available_sumin, 6000 - 31);
    rows = fx_ledger_rows(f);
    /* Replays of settle (e.g. epilog then sacct) and of release write nothing. */
    struct settle_result sr2;
    s.elapsed_s = 9999;
    snprintf(s.settle_source, sizeof s.settle_source, "sacct");
    TX(f, store_settle(f->st, &s, &sr2, &f->err));
    assert_true(sr2.replay);
    assert_int_equal(sr2.job.charge_sumin, 31);
    assert_string_equal(sr2.job.settle_source, "epilog");
    TX(f, store_release(f->st, "c1", 10, 0, "admin", "late", T0 + 5000, &sr2, &f->err));
    assert_true(sr2.replay);
    assert_int_equal(fx_ledger_rows(f), rows);
    /* A hold replay after the settle returns the first outcome: the run, now settled. */
    TX(f, store_hold(f->st, &h, &hr2, &f->err));
    assert_true(hr2.replay);
    assert_int_equal(hr2.job.status, JOB_SETTLED);
    assert_int_equal(fx_ledger_rows(f), rows);
    OK(f, store_job_count_held(f->st, NULL, NULL, "alice", &count, &f->err));
    assert_int_equal(count, 0);
    assert_int_equal(bal_of(f, id).available_sumin, 6000 - 31);
    fx_check_clean(f);
}

/* The key (cluster, job id, run) held again by a different job -- slurmctld's job ids
 * started over -- is a conflict naming what differs and the highest job id seen, not a
 * replay that would let the new job run on the old one's hold. */
static void test_hold_other_job_same_id(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 6000);
    struct hold_req h = hold_req(10, 0, 60), top = hold_req(77, 0, 60);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    TX(f, store_hold(f->st, &top, &hr, &f->err));
    int rows = fx_ledger_rows(f);

    struct hold_req other = h;
    snprintf(other.user, sizeof other.user, "bob");
    TX_FAILS(f, ALLOT_ECONFLICT, store_hold(f->st, &other, &hr, &f->err));
    assert_non_null(strstr(f->err.msg, "user: job 10 run 0 on cluster 'c1'"));
    assert_non_null(strstr(f->err.msg, "user 'alice'"));
    assert_non_null(strstr(f->err.msg, "user 'bob'"));
    assert_non_null(strstr(f->err.msg, "FirstJobId in slurm.conf above 77"));
    other = h;
    snprintf(other.account, sizeof other.account, "phys");
    TX_FAILS(f, ALLOT_ECONFLICT, store_hold(f->st, &other, &hr, &f->err));
    assert_non_null(strstr(f->err.msg, "account: "));
    other = h;
    snprintf(other.partition, sizeof other.partition, "gpu");
    TX_FAILS(f, ALLOT_ECONFLICT, store_hold(f->st, &other, &hr, &f->err));
    assert_non_null(strstr(f->err.msg, "partition: "));
    other = h;
    other.submit_s += 86400;
    TX_FAILS(f, ALLOT_ECONFLICT, store_hold(f->st, &other, &hr, &f->err));
    assert_non_null(strstr(f->err.msg, "submit: "));
    assert_non_null(strstr(f->err.msg, "submitted 2026-01-01T00:01:40Z"));
    assert_non_null(strstr(f->err.msg, "submitted 2026-01-02T00:01:40Z"));
    assert_int_equal(fx_ledger_rows(f), rows);

    /* The same job is still a replay when the caller does not know its submit time, or
     * asks with another price (the first outcome stands). */
    other = h;
    other.submit_s = 0;
    other.time_limit_s = 7200;
    other.amount_sumin = 120;
    TX(f, store_hold(f->st, &other, &hr, &f->err));
    assert_true(hr.replay);
    assert_int_equal(hr.job.hold_sumin, 60);
    assert_int_equal(fx_ledger_rows(f), rows);
    assert_int_equal(bal_of(f, id).held_sumin, 120);
    fx_check_clean(f);
}

static void test_node_fail_and_billing(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 6000);
    struct hold_req h = hold_req(20, 0, 120);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    struct settle_req s = settle_req(20, 0, 3000, "NODE_FAIL");
    struct settle_result sr;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 0);
    assert_int_equal(sr.bal.used_sumin, 0);
    assert_int_equal(sr.bal.held_sumin, 0);
    /* A held run pays at the billing its hold was priced at, whatever billing the settle
     * brings (sacct's integer one, say): 1 unit x 120 s -> 2 minutes, not 2.5 x 120 s -> 5. */
    h = hold_req(21, 0, 120);
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    s = settle_req(21, 0, 120, "COMPLETED");
    s.billing_micro = 2500000;
    snprintf(s.alloc_tres, sizeof s.alloc_tres, "cpu=3");
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 2);
    assert_int_equal(sr.job.billing_micro, 1000000);
    assert_string_equal(sr.job.alloc_tres, "cpu=3");
    /* An explicit charge is taken as given. */
    h = hold_req(22, 0, 120);
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    s = settle_req(22, 0, 60, "COMPLETED");
    s.charge_sumin = 77;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 77);
    assert_int_equal(bal_of(f, id).used_sumin, 79);
    fx_check_clean(f);
}

/* A held run never pays more than its hold (the job's maximum cost, doc/design.md §3.3): ten hours
 * on a 5 SU-minute hold cost 5, the allocation never goes below zero, and the batch path
 * (PostgreSQL's statement) charges the same. */
static void test_settle_capped_at_hold(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 12);
    struct hold_req h = hold_req(30, 0, 5);
    struct hold_result hr;
    struct store_job_op hop = {.hold = &h, .hold_res = &hr};
    fx_job_batch_all(f, &hop, 1);
    assert_false(hr.refused);
    /* PostgreSQL's batch leaves a capped settle to store_settle, which records the cap. */
    struct settle_req s = settle_req(30, 0, 36000, "TIMEOUT");
    struct settle_result sr;
    struct store_job_op sop = {.settle = &s, .settle_res = &sr};
    OK(f, store_job_batch(f->st, &sop, 1, &f->err));
    assert_false(sop.done);
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 5);
    assert_true(sr.capped_from_sumin > 5);
    assert_int_equal(sr.bal.used_sumin, 5);
    assert_int_equal(sr.bal.held_sumin, 0);
    /* An explicit charge above the hold is capped too; the rest of the credit stays. */
    h = hold_req(31, 0, 7);
    fx_job_batch_all(f, &hop, 1);
    assert_false(hr.refused);
    s = settle_req(31, 0, 60, "COMPLETED");
    s.charge_sumin = 100;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 7);
    assert_int_equal(sr.capped_from_sumin, 100);
    struct balance b = bal_of(f, id);
    assert_int_equal(b.used_sumin, 12);
    assert_int_equal(b.available_sumin, 0);
    fx_check_clean(f);
}

/* A time limit changed while the run is held: a raise holds the difference (checked), a cut
 * releases it, each one appended entry; the same limit again is a replay; a raise the
 * allocation cannot cover moves nothing and records a failure with the denial text; the
 * settle then releases exactly what is held and caps at the new hold; a run not held is a
 * conflict, an unknown one not found.  The bank stays consistent (store_check). */
static void test_hold_adjust(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 200);
    struct hold_req h = hold_req(50, 0, 60); /* billing 1, 60 min */
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    struct hold_adjust_req q = {.cluster = "c1",
                                .job_id = 50,
                                .run = 0,
                                .time_limit_s = 7200,
                                .actor = "slurm",
                                .now_s = T0 + 300};
    struct hold_adjust_result ar;
    TX(f, store_hold_adjust(f->st, &q, &ar, &f->err));
    assert_false(ar.refused);
    assert_false(ar.replay);
    assert_int_equal(ar.delta_sumin, 60);
    assert_int_equal(ar.job.hold_sumin, 120);
    assert_int_equal(ar.job.time_limit_s, 7200);
    assert_int_equal(bal_of(f, id).held_sumin, 120);
    TX(f, store_hold_adjust(f->st, &q, &ar, &f->err));
    assert_true(ar.replay);
    assert_int_equal(bal_of(f, id).held_sumin, 120);
    /* 300 min = 300 SU-min; 200 - 120 + 120 = 200 is all this run could have: refused. */
    q.time_limit_s = 300 * 60;
    TX(f, store_hold_adjust(f->st, &q, &ar, &f->err));
    assert_true(ar.refused);
    assert_int_equal(ar.failure.needed_sumin, 300);
    assert_int_equal(ar.failure.available_sumin, 200);
    assert_non_null(
        strstr(ar.failure.message, "time limit not raised: job 50 run 0: account chem"));
    assert_non_null(strstr(ar.failure.message, "available 3h20m SU"));
    struct job j;
    OK(f, store_job_get(f->st, "c1", 50, 0, &j, &f->err));
    assert_int_equal(j.hold_sumin, 120);
    assert_int_equal(j.time_limit_s, 7200);
    /* A cut releases the excess. */
    q.time_limit_s = 1800;
    TX(f, store_hold_adjust(f->st, &q, &ar, &f->err));
    assert_int_equal(ar.delta_sumin, -90);
    assert_int_equal(bal_of(f, id).held_sumin, 30);
    assert_int_equal(bal_of(f, id).available_sumin, 170);
    /* The settle releases the 30 held and charges at most them. */
    struct settle_req s = settle_req(50, 0, 3600, "TIMEOUT");
    struct settle_result sr;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 30);
    assert_int_equal(sr.capped_from_sumin, 60);
    assert_int_equal(bal_of(f, id).held_sumin, 0);
    assert_int_equal(bal_of(f, id).used_sumin, 30);
    TX_FAILS(f, ALLOT_ECONFLICT, store_hold_adjust(f->st, &q, &ar, &f->err));
    q.job_id = 51;
    TX_FAILS(f, ALLOT_ENOENT, store_hold_adjust(f->st, &q, &ar, &f->err));
    q.job_id = 50;
    q.time_limit_s = 0;
    TX_FAILS(f, ALLOT_EINVAL, store_hold_adjust(f->st, &q, &ar, &f->err));
    fx_check_clean(f);
}

/* A settle without an end time ends the run at start + elapsed (usage by end time counts
 * it), or at the settle if that is earlier; an end before the run's start is refused and
 * writes nothing. */
static void test_settle_end(void **state)
{
    struct fx *f = *state;
    setup_bank(f, 6000);
    struct hold_req h = hold_req(40, 0, 120);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    struct settle_req s = settle_req(40, 0, 90, "COMPLETED");
    s.start_s = 0;
    s.end_s = h.start_s - 1;
    struct settle_result sr;
    int rows = fx_ledger_rows(f);
    BEGIN(f);
    assert_int_equal(store_settle(f->st, &s, &sr, &f->err), -1);
    assert_int_equal(f->err.code, ALLOT_EINVAL);
    assert_non_null(strstr(f->err.msg, "end"));
    store_rollback(f->st);
    struct store_job_op sop = {.settle = &s, .settle_res = &sr};
    OK(f, store_job_batch(f->st, &sop, 1, &f->err));
    assert_int_equal(sop.done, 0); /* the batch leaves it to the verb, which says why */
    assert_int_equal(fx_ledger_rows(f), rows);
    s.end_s = 0;
    fx_job_batch_all(f, &sop, 1);
    assert_int_equal(sr.job.start_s, h.start_s);
    assert_int_equal(sr.job.end_s, h.start_s + 90);
    struct job j;
    OK(f, store_job_get(f->st, "c1", 40, 0, &j, &f->err));
    assert_int_equal(j.end_s, h.start_s + 90);
    /* Settled 30 s after its start with 90 s elapsed (a start taken from the hold, clocks
     * apart): it ends at the settle, not 60 s in the future; elapsed is still charged. */
    h = hold_req(41, 0, 120);
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    s = settle_req(41, 0, 90, "COMPLETED");
    s.start_s = 0;
    s.end_s = 0;
    s.now_s = h.start_s + 30;
    fx_job_batch_all(f, &sop, 1);
    assert_int_equal(sr.job.end_s, h.start_s + 30);
    assert_int_equal(sr.job.elapsed_s, 90);
    assert_int_equal(sr.job.charge_sumin, 2);
    OK(f, store_job_get(f->st, "c1", 41, 0, &j, &f->err));
    assert_int_equal(j.end_s, h.start_s + 30);
    fx_check_clean(f);
}

/* Charges at rounding edges and large values at the held billing, whether or not the
 * settle brings another (which a held run ignores); the settle's answer must equal the job
 * as stored and the balance as stored.  Each hold and settle goes through store_job_batch as a
 * batch of one, as the writer sends it: on PostgreSQL its statement computes the charge in SQL, so
 * this compares that with money_charge_sumin (on SQLite the verbs run). */
static void test_settle_charge_vectors(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, INT64_C(1000000000000000)); /* the largest amount */
    static const struct {
        int64_t billing, elapsed;
        int settle_billing; /* the settle names another billing, which must not count */
    } v[] = {
        {1000000, 55, 0},      {1000000, 60, 0},
        {1000000, 61, 1},      {1, 1, 0},
        {0, 3600, 0},          {2500000, 60, 1},
        {59999999, 1, 0},      {60000001, 1, 1},
        {999999, 60000000, 0}, {9000000000000, 100000000, 1},
        {123456789, 86399, 0}, {7, 0, 1},
    };
    int64_t used = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        int64_t job = 500 + (int64_t)i, want;
        OK(f, money_charge_sumin(v[i].billing, v[i].elapsed, &want, &f->err));
        /* The hold covers the charge, so the cap at the hold does not bind here. */
        struct hold_req h = hold_req(job, 0, want + 1);
        h.billing_micro = v[i].billing;
        struct hold_result hr;
        struct store_job_op hop = {.hold = &h, .hold_res = &hr};
        fx_job_batch_all(f, &hop, 1);
        assert_false(hr.refused);
        struct settle_req s = settle_req(job, 0, v[i].elapsed, "COMPLETED");
        if (v[i].settle_billing)
            s.billing_micro = v[i].billing + 1000000;
        struct settle_result sr;
        struct store_job_op sop = {.settle = &s, .settle_res = &sr};
        fx_job_batch_all(f, &sop, 1);
        used += want;
        assert_false(sr.replay);
        assert_int_equal(sr.job.charge_sumin, want);
        assert_int_equal(sr.job.billing_micro, v[i].billing);
        assert_int_equal(sr.alloc.id, id);
        assert_string_equal(sr.alloc.account, "chem");
        assert_int_equal(sr.bal.used_sumin, used);
        assert_int_equal(sr.bal.held_sumin, 0);
        struct job j;
        OK(f, store_job_get(f->st, "c1", job, 0, &j, &f->err));
        assert_memory_equal(&j, &sr.job, sizeof j);
        struct balance b = bal_of(f, id);
        assert_int_equal(b.used_sumin, sr.bal.used_sumin);
        assert_int_equal(b.available_sumin, sr.bal.available_sumin);
        /* No policy on this allocation: the settle says so (PostgreSQL's batch statement
         * and the verb alike). */
        assert_int_equal(sr.no_policy, 1);
    }
    /* A charge beyond the largest amount is refused and writes nothing: the batch leaves
     * it to the verb, which says why. */
    struct hold_req h = hold_req(600, 0, 10);
    h.billing_micro = 1000000000000000;
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    int rows = fx_ledger_rows(f);
    struct settle_req s = settle_req(600, 0, 1000000000, "COMPLETED");
    struct settle_result sr;
    struct store_job_op sop = {.settle = &s, .settle_res = &sr};
    OK(f, store_job_batch(f->st, &sop, 1, &f->err));
    assert_int_equal(sop.done, 0);
    assert_int_equal(fx_ledger_rows(f), rows);
    BEGIN(f);
    allot_error_clear(&f->err);
    assert_int_equal(store_settle(f->st, &s, &sr, &f->err), -1);
    assert_int_equal(f->err.code, ALLOT_EINVAL);
    store_rollback(f->st);
    assert_int_equal(fx_ledger_rows(f), rows);
    assert_int_equal(bal_of(f, id).held_sumin, 10);
    fx_check_clean(f);
}

/* store_job_batch: one batch of settles and holds of every kind.  PostgreSQL takes the
 * common cases in one statement and commits them (which ones is asserted, and that another
 * connection sees them); SQLite takes none.  The rest run through the verbs afterwards, in
 * one transaction, each in a savepoint as the writer runs them; the end state must be the same
 * numbers on both backends, the answers of taken ops must equal what is stored, and store_check
 * must pass. */
static void test_job_batch(void **state)
{
    struct fx *f = *state;
    int64_t chem = setup_bank(f, 600);
    int64_t sci = fx_add_alloc(f, "science", "cpu", "", T0, T0 + 30 * DAY, 1000);
    fx_add_account(f, "bio", "science"); /* no allocation of its own: science pays */
    struct hold_result hr;
    struct settle_result sr;
    for (int64_t job = 1; job <= 4; job++) {
        struct hold_req h = hold_req(job, 0, 60);
        TX(f, store_hold(f->st, &h, &hr, &f->err));
    }
    struct settle_req s4 = settle_req(4, 0, 60, "COMPLETED");
    TX(f, store_settle(f->st, &s4, &sr, &f->err));
    /* chem before: granted 600, used 1, held 180 (runs 1-3). */

    enum { N = 14 };
    struct hold_req hq[N];
    struct settle_req sq[N];
    struct hold_result hres[N];
    struct settle_result sres[N];
    struct store_job_op ops[N];
    memset(ops, 0, sizeof ops);
    static const struct {
        char kind;
        int64_t job, amount_or_elapsed;
        const char *what; /* hold: account; settle: state */
        int taken;        /* on PostgreSQL */
    } v[N] = {
        {'s', 1, 600, "COMPLETED", 1},                                /* charge 10, releases 60 */
        {'h', 10, 100, "chem", 1},     {'s', 2, 600, "NODE_FAIL", 1}, /* charge 0 */
        {'h', 11, 50, "bio", 0},                                      /* paid by an ancestor */
        {'h', 1, 60, "chem", 0},                                      /* a replay */
        {'s', 4, 60, "COMPLETED", 0},                                 /* a replay */
        {'h', 12, 200, "chem", 1},     {'h', 13, 10000, "chem", 0},   /* refused */
        {'h', 14, 10, "chem", 0},      /* after a hold that did not fit: left for the verb */
        {'s', 99, 60, "COMPLETED", 0}, /* never held, no who/where: EINVAL from the verb */
        {'h', 15, 15, "chem", 0},      /* named twice */
        {'h', 15, 15, "chem", 0},      {'s', 3, 120, "COMPLETED", 0}, /* named twice: charge 2 */
        {'s', 3, 120, "COMPLETED", 0},
    };
    for (int k = 0; k < N; k++) {
        if (v[k].kind == 'h') {
            hq[k] = hold_req(v[k].job, 0, v[k].amount_or_elapsed);
            snprintf(hq[k].account, sizeof hq[k].account, "%s", v[k].what);
            ops[k].hold = &hq[k];
            ops[k].hold_res = &hres[k];
        } else {
            sq[k] = settle_req(v[k].job, 0, v[k].amount_or_elapsed, v[k].what);
            ops[k].settle = &sq[k];
            ops[k].settle_res = &sres[k];
        }
    }
    int rows = fx_ledger_rows(f);
    OK(f, store_job_batch(f->st, ops, N, &f->err));
    int pg = f->pg_schema[0] != 0, taken = 0;
    for (int k = 0; k < N; k++) {
        assert_int_equal(ops[k].done, pg ? v[k].taken : 0);
        taken += ops[k].done;
    }
    /* What it took is committed: another connection sees it before the rest runs. */
    store_t *other = fx_open_store(f);
    struct balance ob;
    OK(f, store_alloc_get(other, chem, NULL, &ob, &f->err));
    assert_int_equal(ob.used_sumin, pg ? 11 : 1);
    assert_int_equal(ob.held_sumin, pg ? 180 - 120 + 300 : 180);
    store_close(other);
    BEGIN(f);
    int failed = 0;
    for (int k = 0; k < N; k++) {
        if (ops[k].done)
            continue;
        OK(f, store_savepoint(f->st, &f->err));
        int rc = ops[k].hold ? store_hold(f->st, ops[k].hold, &hres[k], &f->err)
                             : store_settle(f->st, ops[k].settle, &sres[k], &f->err);
        if (rc < 0) {
            assert_int_equal(v[k].job, 99);
            assert_int_equal(f->err.code, ALLOT_EINVAL);
            store_savepoint_rollback(f->st);
            failed++;
        } else {
            OK(f, store_savepoint_release(f->st, &f->err));
        }
    }
    COMMIT(f);
    assert_int_equal(failed, 1);
    assert_int_equal(taken, pg ? 4 : 0);

    /* The outcomes, whichever path ran them. */
    assert_int_equal(sres[0].job.charge_sumin, 10);
    assert_int_equal(sres[2].job.charge_sumin, 0);
    assert_true(sres[5].replay);
    assert_int_equal(sres[5].job.charge_sumin, 1);
    assert_true(hres[4].replay);
    assert_false(hres[3].refused);
    assert_int_equal(hres[3].alloc.id, sci);
    assert_true(hres[7].refused);
    assert_false(hres[8].refused);
    assert_true(hres[10].replay != hres[11].replay);
    assert_true(sres[12].replay != sres[13].replay);
    for (int k = 0; k < N; k++) {
        if (!v[k].taken)
            continue;
        struct job j;
        OK(f, store_job_get(f->st, "c1", v[k].job, 0, &j, &f->err));
        const struct job *got = v[k].kind == 'h' ? &hres[k].job : &sres[k].job;
        assert_int_equal(j.status, got->status);
        assert_int_equal(j.hold_sumin, got->hold_sumin);
        assert_int_equal(j.charge_sumin, got->charge_sumin);
        assert_int_equal(j.alloc_id, got->alloc_id);
        assert_string_equal(j.payer_account, got->payer_account);
        assert_int_equal(j.updated_s, got->updated_s);
        assert_int_equal(j.billing_micro, got->billing_micro);
        assert_int_equal(v[k].kind == 'h' ? hres[k].alloc.id : sres[k].alloc.id, chem);
    }
    if (pg) { /* balances right after each taken op: settles first, then holds */
        assert_int_equal(sres[0].bal.used_sumin, 11);
        assert_int_equal(sres[0].bal.held_sumin, 120);
        assert_int_equal(sres[2].bal.held_sumin, 60);
        assert_int_equal(hres[1].bal.held_sumin, 160);
        assert_int_equal(hres[6].bal.held_sumin, 360);
        assert_int_equal(hres[6].bal.available_sumin, 600 - 11 - 360);
        assert_true(sres[0].no_policy);
    }
    /* chem: used 1 + 10 + 0 + 2; held: run 10 (100), 12 (200), 14 (10), 15 (15). */
    struct balance b = bal_of(f, chem);
    assert_int_equal(b.used_sumin, 13);
    assert_int_equal(b.held_sumin, 325);
    assert_int_equal(bal_of(f, sci).held_sumin, 50);
    /* Ledger: releases 1, 2, 3; debits 1, 3; holds 10, 11, 12, 14, 15. */
    assert_int_equal(fx_ledger_rows(f), rows + 10);
    fx_check_clean(f);
}

/* A settle naming another user, account or partition than its held run's record is never
 * taken by the batch; the verb refuses it (ECONFLICT) and the hold stands.  Naming the
 * run's own does not keep the batch from taking it. */
static void test_job_batch_other_job(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 600);
    struct hold_req h = hold_req(20, 0, 60);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    int pg = f->pg_schema[0] != 0, rows = fx_ledger_rows(f);
    static const char *const field[] = {"user", "account", "partition"};
    for (int i = 0; i < 3; i++) {
        struct settle_req s = settle_req(20, 0, 60, "COMPLETED");
        char *dst = i == 0 ? s.user : i == 1 ? s.account : s.partition;
        snprintf(dst, ALLOT_NAME_MAX, "other");
        struct settle_result sr;
        struct store_job_op op = {.settle = &s, .settle_res = &sr};
        OK(f, store_job_batch(f->st, &op, 1, &f->err));
        assert_int_equal(op.done, 0);
        TX_FAILS(f, ALLOT_ECONFLICT, store_settle(f->st, &s, &sr, &f->err));
        assert_non_null(strstr(f->err.msg, field[i]));
        assert_non_null(strstr(f->err.msg, "this settle is for"));
    }
    assert_int_equal(fx_ledger_rows(f), rows);
    assert_int_equal(bal_of(f, id).held_sumin, 60);

    struct settle_req s = settle_req(20, 0, 60, "COMPLETED");
    snprintf(s.user, sizeof s.user, "alice");
    snprintf(s.account, sizeof s.account, "chem");
    snprintf(s.partition, sizeof s.partition, "cpu");
    struct settle_result sr;
    struct store_job_op op = {.settle = &s, .settle_res = &sr};
    OK(f, store_job_batch(f->st, &op, 1, &f->err));
    assert_int_equal(op.done, pg);
    if (!pg)
        TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.status, JOB_SETTLED);
    assert_int_equal(sr.job.charge_sumin, 1);
    assert_int_equal(bal_of(f, id).held_sumin, 0);
    fx_check_clean(f);
}

/* The guards of store_job_batch's statement (schema 0013): it commits in the same round
 * trip, so when a balance row refuses its change, or a settled run's row is not updated,
 * the statement must fail by itself and nothing of it may stand.  Triggers that silently
 * skip every UPDATE of a table stand in for rows changed under the write lock.
 * PostgreSQL only (SQLite takes no batch). */
static void test_job_batch_guard(void **state)
{
    struct fx *f = *state;
    if (!f->pg_schema[0])
        skip();
    int64_t id = setup_bank(f, 600);
    struct hold_req h = hold_req(800, 0, 60);
    struct hold_result hr;
    struct store_job_op op = {.hold = &h, .hold_res = &hr};
    int rows = fx_ledger_rows(f);
    assert_int_equal(fx_pg_exec(f->pg_conninfo,
                                "CREATE FUNCTION skip_row() RETURNS trigger LANGUAGE plpgsql"
                                " AS $$ BEGIN RETURN NULL; END $$;"
                                "CREATE TRIGGER skip_balance BEFORE UPDATE ON alloc_balance"
                                " FOR EACH ROW EXECUTE FUNCTION skip_row()"),
                     0);
    allot_error_clear(&f->err);
    assert_int_equal(store_job_batch(f->st, &op, 1, &f->err), -1);
    assert_non_null(strstr(f->err.msg, "1 of 1 balance rows refused"));
    assert_int_equal(op.done, 0);
    assert_int_equal(fx_ledger_rows(f), rows);
    struct job j;
    FAILS(f, ALLOT_ENOENT, store_job_get(f->st, "c1", 800, 0, &j, &f->err));
    assert_int_equal(bal_of(f, id).held_sumin, 0);
    /* Without the trigger the same op goes through, once. */
    assert_int_equal(fx_pg_exec(f->pg_conninfo, "DROP TRIGGER skip_balance ON alloc_balance"), 0);
    fx_job_batch_all(f, &op, 1);
    assert_int_equal(bal_of(f, id).held_sumin, 60);
    assert_int_equal(fx_ledger_rows(f), rows + 1);

    /* A settle whose run's row is not updated (a trigger skips it): the statement has no
     * row to answer with, and the guard must still fail it, balance and ledger untouched. */
    assert_int_equal(fx_pg_exec(f->pg_conninfo, "CREATE TRIGGER skip_job BEFORE UPDATE ON jobs"
                                                " FOR EACH ROW EXECUTE FUNCTION skip_row()"),
                     0);
    struct settle_req s = settle_req(800, 0, 60, "COMPLETED");
    struct settle_result sr;
    struct store_job_op sop = {.settle = &s, .settle_res = &sr};
    allot_error_clear(&f->err);
    assert_int_equal(store_job_batch(f->st, &sop, 1, &f->err), -1);
    assert_non_null(strstr(f->err.msg, "1 of 1 job rows refused"));
    assert_int_equal(sop.done, 0);
    assert_int_equal(fx_ledger_rows(f), rows + 1);
    assert_int_equal(bal_of(f, id).held_sumin, 60);
    assert_int_equal(bal_of(f, id).used_sumin, 0);
    assert_int_equal(fx_pg_exec(f->pg_conninfo, "DROP TRIGGER skip_job ON jobs"), 0);
    fx_job_batch_all(f, &sop, 1);
    assert_int_equal(sr.job.status, JOB_SETTLED);
    assert_int_equal(bal_of(f, id).held_sumin, 0);
    fx_check_clean(f);
}

/* Free-text fields reach PostgreSQL's batch statement inside array literals: quotes,
 * backslashes, braces, commas, spaces, the word NULL and an empty string must arrive
 * exactly as given. */
static void test_job_batch_text(void **state)
{
    struct fx *f = *state;
    setup_bank(f, 6000);
    static const char *odd[] = {"cpu=1,\"gres\"=a\\b {x}", "NULL", "", " spaced , out "};
    enum { N = 4 };
    struct hold_req hq[N];
    struct hold_result hres[N];
    struct store_job_op ops[N];
    memset(ops, 0, sizeof ops);
    for (int k = 0; k < N; k++) {
        hq[k] = hold_req(700 + k, 0, 10);
        snprintf(hq[k].req_tres, sizeof hq[k].req_tres, "%s", odd[k]);
        snprintf(hq[k].alloc_tres, sizeof hq[k].alloc_tres, "%s", odd[(k + 1) % N]);
        ops[k].hold = &hq[k];
        ops[k].hold_res = &hres[k];
    }
    fx_job_batch_all(f, ops, N);
    struct settle_req sq[N];
    struct settle_result sres[N];
    memset(ops, 0, sizeof ops);
    for (int k = 0; k < N; k++) {
        sq[k] = settle_req(700 + k, 0, 60, "COMPLETED");
        snprintf(sq[k].slurm_state, sizeof sq[k].slurm_state, "%s",
                 k ? odd[k] : "NODE_FAIL \\ \"x\"");
        snprintf(sq[k].alloc_tres, sizeof sq[k].alloc_tres, "%s", odd[(k + 2) % N]);
        ops[k].settle = &sq[k];
        ops[k].settle_res = &sres[k];
    }
    fx_job_batch_all(f, ops, N);
    for (int k = 0; k < N; k++) {
        struct job j;
        OK(f, store_job_get(f->st, "c1", 700 + k, 0, &j, &f->err));
        assert_string_equal(j.req_tres, odd[k]);
        /* An empty alloc_tres at settle keeps the one recorded at hold. */
        assert_string_equal(j.alloc_tres,
                            odd[(k + 2) % N][0] ? odd[(k + 2) % N] : odd[(k + 1) % N]);
        assert_string_equal(j.slurm_state, sq[k].slurm_state);
        assert_string_equal(sres[k].job.slurm_state, sq[k].slurm_state);
        assert_string_equal(sres[k].job.req_tres, odd[k]);
    }
    fx_check_clean(f);
}

static void test_release_never_started(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 600);
    struct hold_req h = hold_req(30, 0, 500);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_int_equal(bal_of(f, id).available_sumin, 100);
    struct settle_result sr;
    TX(f, store_release(f->st, "c1", 30, 0, "slurm", "never started", T0 + 300, &sr, &f->err));
    assert_false(sr.replay);
    assert_int_equal(sr.job.status, JOB_RELEASED);
    assert_int_equal(sr.bal.available_sumin, 600);
    assert_int_equal(sr.bal.held_sumin, 0);
    int rows = fx_ledger_rows(f);
    TX(f, store_release(f->st, "c1", 30, 0, "slurm", "", T0 + 301, &sr, &f->err));
    assert_true(sr.replay);
    /* Settling a released run is a replay too. */
    struct settle_req s = settle_req(30, 0, 60, "CANCELLED");
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_true(sr.replay);
    assert_int_equal(sr.job.status, JOB_RELEASED);
    assert_int_equal(fx_ledger_rows(f), rows);
    TX_FAILS(f, ALLOT_ENOENT,
             store_release(f->st, "c1", 31, 0, "slurm", "", T0 + 300, &sr, &f->err));
    TX_FAILS(f, ALLOT_EINVAL,
             store_release(f->st, "c1", 0, 0, "slurm", "", T0 + 300, &sr, &f->err));
    fx_check_clean(f);
}

static void test_requeue_is_new_run(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 1000);
    struct hold_req h0 = hold_req(40, 0, 100), h1 = hold_req(40, 1, 100);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h0, &hr, &f->err));
    struct settle_req s0 = settle_req(40, 0, 120, "REQUEUED");
    struct settle_result sr;
    TX(f, store_settle(f->st, &s0, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 2);
    TX(f, store_hold(f->st, &h1, &hr, &f->err));
    assert_false(hr.replay);
    assert_int_equal(hr.job.run, 1);
    assert_int_equal(hr.job.status, JOB_HELD);
    struct job j0, j1;
    OK(f, store_job_get(f->st, "c1", 40, 0, &j0, &f->err));
    OK(f, store_job_get(f->st, "c1", 40, 1, &j1, &f->err));
    assert_int_equal(j0.status, JOB_SETTLED);
    assert_int_equal(j1.status, JOB_HELD);
    FAILS(f, ALLOT_ENOENT, store_job_get(f->st, "c1", 40, 2, &j1, &f->err));
    struct balance b = bal_of(f, id);
    assert_int_equal(b.used_sumin, 2);
    assert_int_equal(b.held_sumin, 100);
    fx_check_clean(f);
}

static void test_straddle(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    int64_t a = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 1000);
    int64_t b = fx_add_alloc(f, "chem", "cpu", "", T0 + DAY, T0 + 2 * DAY, 1000);
    /* Starts an hour before A ends, ends two hours later, in B's period. */
    struct hold_req h = hold_req(50, 0, 300);
    h.start_s = T0 + DAY - 3600;
    h.now_s = h.start_s;
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_int_equal(hr.alloc.id, a);
    struct settle_req s = settle_req(50, 0, 3 * 3600, "COMPLETED");
    s.start_s = h.start_s;
    s.end_s = h.start_s + 3 * 3600;
    s.now_s = s.end_s;
    struct settle_result sr;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.alloc.id, a);
    assert_int_equal(sr.job.charge_sumin, 180);
    assert_int_equal(bal_of(f, a).used_sumin, 180);
    assert_int_equal(bal_of(f, b).used_sumin, 0);
    fx_check_clean(f);
}

/* organic under chem under science. */
static void add_three_levels(struct fx *f)
{
    fx_add_account(f, "science", "root");
    fx_add_account(f, "chem", "science");
    fx_add_account(f, "organic", "chem");
}

static void test_nearest_ancestor_pays(void **state)
{
    struct fx *f = *state;
    add_three_levels(f);
    int64_t sci = fx_add_alloc(f, "science", "cpu", "", T0, T0 + DAY, 1000);
    int64_t chem = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 1000);
    struct hold_req h = hold_req(60, 0, 100);
    snprintf(h.account, sizeof h.account, "organic");
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_int_equal(hr.alloc.id, chem);
    assert_string_equal(hr.job.payer_account, "chem");
    assert_string_equal(hr.job.account, "organic");
    assert_int_equal(bal_of(f, chem).held_sumin, 100);
    assert_int_equal(bal_of(f, sci).held_sumin, 0);
    fx_check_clean(f);
}

/* The payer walk past the account's own allocation: a resource only the grandparent has is
 * paid two steps up, one only the parent has one step up, and the account's own comes
 * first; one no account on the chain has is refused and names the resource. */
static void test_payer_walk(void **state)
{
    struct fx *f = *state;
    add_three_levels(f);
    int64_t sci_gpu = fx_add_alloc(f, "science", "gpu", "", T0, T0 + DAY, 1000);
    int64_t chem_cpu = fx_add_alloc(f, "chem", "cpu", "", T0, T0 + DAY, 1000);
    int64_t org_mem = fx_add_alloc(f, "organic", "mem", "", T0, T0 + DAY, 1000);
    const struct {
        const char *resource;
        const int64_t *alloc;
        const char *payer;
    } v[] = {{"gpu", &sci_gpu, "science"},
             {"cpu", &chem_cpu, "chem"},
             {"mem", &org_mem, "organic"},
             {"disk", NULL, ""}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        struct hold_req h = hold_req(80 + (int64_t)i, 0, 100);
        snprintf(h.account, sizeof h.account, "organic");
        snprintf(h.resource, sizeof h.resource, "%s", v[i].resource);
        struct hold_result hr;
        TX(f, store_hold(f->st, &h, &hr, &f->err));
        assert_string_equal(hr.job.payer_account, v[i].payer);
        if (!v[i].alloc) {
            assert_true(hr.refused);
            assert_int_equal(hr.alloc.id, 0);
            assert_non_null(
                strstr(hr.failure.message, "account organic has no disk allocation on cluster c1"));
            continue;
        }
        assert_false(hr.refused);
        assert_int_equal(hr.alloc.id, *v[i].alloc);
        assert_string_equal(hr.alloc.account, v[i].payer);
        assert_int_equal(hr.bal.held_sumin, 100);
        assert_int_equal(bal_of(f, *v[i].alloc).held_sumin, 100);
    }
    /* The same walk where the allocation is not active yet: refused. */
    struct hold_req h = hold_req(90, 0, 100);
    snprintf(h.account, sizeof h.account, "organic");
    snprintf(h.resource, sizeof h.resource, "gpu");
    h.start_s = h.now_s = T0 + 2 * DAY;
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_true(hr.refused);
    fx_check_clean(f);
}

/* A settle answers with its allocation and the balance after it (read with the run, before
 * the settle's own move): the same as a read of the allocation afterwards, for a settle
 * that debits less than its hold, one that costs nothing (NODE_FAIL), its replay, the
 * settle of a run refused for want of funds (its allocation named, nothing moved) and a
 * post-paid settle. */
static void assert_answer_stored(struct fx *f, const struct settle_result *sr, int64_t alloc)
{
    struct allocation a;
    struct balance b;
    assert_int_equal(sr->job.alloc_id, alloc);
    OK(f, store_alloc_get(f->st, alloc, &a, &b, &f->err));
    assert_memory_equal(&sr->alloc, &a, sizeof a);
    assert_int_equal(sr->bal.alloc_id, b.alloc_id);
    assert_int_equal(sr->bal.granted_sumin, b.granted_sumin);
    assert_int_equal(sr->bal.used_sumin, b.used_sumin);
    assert_int_equal(sr->bal.held_sumin, b.held_sumin);
    assert_int_equal(sr->bal.available_sumin, b.available_sumin);
}

static void test_settle_answer_is_stored(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 1000);
    struct hold_result hr;
    struct settle_result sr;
    for (int64_t job = 1; job <= 3; job++) { /* three runs held, 60 each */
        struct hold_req h = hold_req(job, 0, 60);
        TX(f, store_hold(f->st, &h, &hr, &f->err));
        assert_false(hr.refused);
    }
    struct settle_req s = settle_req(1, 0, 600, "COMPLETED"); /* 10 of the 60 */
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_false(sr.replay);
    assert_int_equal(sr.job.charge_sumin, 10);
    assert_int_equal(sr.bal.used_sumin, 10);
    assert_int_equal(sr.bal.held_sumin, 120);
    assert_int_equal(sr.bal.available_sumin, 1000 - 10 - 120);
    assert_answer_stored(f, &sr, id);
    s = settle_req(2, 0, 600, "NODE_FAIL");
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 0);
    assert_int_equal(sr.bal.held_sumin, 60);
    assert_answer_stored(f, &sr, id);
    s = settle_req(1, 0, 600, "COMPLETED"); /* a replay, after another settle moved held */
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_true(sr.replay);
    assert_answer_stored(f, &sr, id);

    struct hold_req big = hold_req(4, 0, 5000); /* more than is available: refused */
    TX(f, store_hold(f->st, &big, &hr, &f->err));
    assert_true(hr.refused);
    assert_int_equal(hr.job.alloc_id, id);
    int rows = fx_ledger_rows(f);
    s = settle_req(4, 0, 600, "COMPLETED");
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 0);
    assert_int_equal(fx_ledger_rows(f), rows);
    assert_answer_stored(f, &sr, id);

    s = settle_req(5, 0, 120, "COMPLETED"); /* never held: post-paid, debited at start */
    snprintf(s.user, sizeof s.user, "alice");
    snprintf(s.account, sizeof s.account, "chem");
    snprintf(s.resource, sizeof s.resource, "cpu");
    s.billing_micro = 1000000;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 2);
    assert_answer_stored(f, &sr, id);
    assert_int_equal(sr.bal.used_sumin, 12);
    fx_check_clean(f);
}

static int count_failures(const struct failure *fl, void *arg)
{
    (void)fl;
    (*(int *)arg)++;
    return 0;
}

static void test_refused_no_payer(void **state)
{
    struct fx *f = *state;
    setup_bank(f, 1000);
    struct hold_req h = hold_req(70, 0, 100);
    snprintf(h.resource, sizeof h.resource, "gpu");
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_true(hr.refused);
    assert_int_equal(hr.job.status, JOB_REFUSED);
    assert_int_equal(hr.failure.alloc_id, 0);
    assert_int_equal(hr.alloc.id, 0);
    assert_non_null(strstr(hr.failure.message, "job 70 run 0: account chem has no gpu allocation"));
    assert_int_equal(fx_ledger_rows(f), 1);
    /* A refused run settles to charge 0 and releases nothing. */
    struct settle_req s = settle_req(70, 0, 600, "COMPLETED");
    struct settle_result sr;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.status, JOB_SETTLED);
    assert_int_equal(sr.job.charge_sumin, 0);
    assert_int_equal(fx_ledger_rows(f), 1);
    int n = 0;
    struct failure_filter ff = {.account = "chem"};
    OK(f, store_failure_list(f->st, &ff, count_failures, &n, &f->err));
    assert_int_equal(n, 1);
    fx_check_clean(f);
}

static void test_post_paid_settle(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 10);
    /* Never held (reconciled from sacct): debited without a funds check. */
    struct settle_req s = settle_req(80, 0, 3600, "COMPLETED");
    snprintf(s.user, sizeof s.user, "alice");
    snprintf(s.account, sizeof s.account, "chem");
    snprintf(s.partition, sizeof s.partition, "cpu");
    snprintf(s.resource, sizeof s.resource, "cpu");
    snprintf(s.settle_source, sizeof s.settle_source, "sacct");
    s.billing_micro = 1000000;
    s.time_limit_s = 7200;
    struct settle_result sr;
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_int_equal(sr.job.charge_sumin, 60);
    assert_int_equal(sr.alloc.id, id);
    assert_int_equal(sr.bal.available_sumin, -50);
    int rows = fx_ledger_rows(f);
    TX(f, store_settle(f->st, &s, &sr, &f->err));
    assert_true(sr.replay);
    assert_int_equal(fx_ledger_rows(f), rows);
    /* The overdrawn allocation refuses the next hold. */
    struct hold_req h = hold_req(81, 0, 1);
    struct hold_result hr;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_true(hr.refused);
    /* No payer for a never-held run: ENOENT, nothing written. */
    s = settle_req(82, 0, 60, "COMPLETED");
    snprintf(s.user, sizeof s.user, "alice");
    snprintf(s.account, sizeof s.account, "chem");
    snprintf(s.resource, sizeof s.resource, "gpu");
    TX_FAILS(f, ALLOT_ENOENT, store_settle(f->st, &s, &sr, &f->err));
    /* Missing who/where for a never-held run: EINVAL. */
    s = settle_req(83, 0, 60, "COMPLETED");
    TX_FAILS(f, ALLOT_EINVAL, store_settle(f->st, &s, &sr, &f->err));
    fx_check_clean(f);
}

static void test_bad_requests(void **state)
{
    struct fx *f = *state;
    setup_bank(f, 1000);
    struct hold_result hr;
    struct settle_result sr;
    struct hold_req h = hold_req(90, 0, 0);
    TX_FAILS(f, ALLOT_EINVAL, store_hold(f->st, &h, &hr, &f->err));
    h = hold_req(0, 0, 10);
    TX_FAILS(f, ALLOT_EINVAL, store_hold(f->st, &h, &hr, &f->err));
    h = hold_req(90, -1, 10);
    TX_FAILS(f, ALLOT_EINVAL, store_hold(f->st, &h, &hr, &f->err));
    h = hold_req(90, 0, 10);
    h.user[0] = '\0';
    TX_FAILS(f, ALLOT_EINVAL, store_hold(f->st, &h, &hr, &f->err));
    h = hold_req(90, 0, 10);
    memset(h.req_tres, 'x', sizeof h.req_tres);
    TX_FAILS(f, ALLOT_EINVAL, store_hold(f->st, &h, &hr, &f->err));
    struct settle_req s = settle_req(90, 0, -5, "COMPLETED");
    TX_FAILS(f, ALLOT_EINVAL, store_settle(f->st, &s, &sr, &f->err));
    s = settle_req(90, 0, 5, "COMPLETED");
    s.charge_sumin = -2;
    TX_FAILS(f, ALLOT_EINVAL, store_settle(f->st, &s, &sr, &f->err));
    /* Outside a transaction. */
    h = hold_req(90, 0, 10);
    FAILS(f, ALLOT_EINTERNAL, store_hold(f->st, &h, &hr, &f->err));
    assert_int_equal(fx_ledger_rows(f), 1);
}

static int collect_jobs(const struct job *j, void *arg)
{
    char *out = arg;
    char buf[64];
    snprintf(buf, sizeof buf, "%lld.%d:%s ", (long long)j->job_id, (int)j->run,
             model_job_status_name(j->status));
    strcat(out, buf);
    return 0;
}

static void test_job_list_and_failures(void **state)
{
    struct fx *f = *state;
    setup_bank(f, 100);
    struct hold_result hr;
    struct hold_req h = hold_req(1, 0, 50);
    h.now_s = T0 + 10;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    h = hold_req(2, 0, 80);
    h.now_s = T0 + 20;
    snprintf(h.user, sizeof h.user, "bob");
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    assert_true(hr.refused);
    h = hold_req(3, 0, 10);
    h.now_s = T0 + 30;
    TX(f, store_hold(f->st, &h, &hr, &f->err));
    char out[256] = "";
    struct job_filter all = {.status = -1};
    OK(f, store_job_list(f->st, &all, collect_jobs, out, &f->err));
    assert_string_equal(out, "3.0:held 2.0:refused 1.0:held ");
    out[0] = '\0';
    struct job_filter held = {.status = JOB_HELD, .limit = 1};
    OK(f, store_job_list(f->st, &held, collect_jobs, out, &f->err));
    assert_string_equal(out, "3.0:held ");
    out[0] = '\0';
    struct job_filter bob = {.status = -1, .user = "bob", .cluster = "c1"};
    OK(f, store_job_list(f->st, &bob, collect_jobs, out, &f->err));
    assert_string_equal(out, "2.0:refused ");
    struct job_filter bad = {.status = 9};
    FAILS(f, ALLOT_EINVAL, store_job_list(f->st, &bad, collect_jobs, out, &f->err));

    /* Admission failures are recorded by the caller. */
    struct failure fl = {.cluster = "c1",
                         .user = "bob",
                         .account = "chem",
                         .stage = "admit",
                         .needed_sumin = 500,
                         .available_sumin = 50,
                         .message = "needs 500 SU-minutes"};
    TX(f, store_failure_add(f->st, &fl, &f->err));
    assert_true(fl.id > 0);
    assert_true(fl.time_s > 0);
    struct failure badf = fl;
    snprintf(badf.stage, sizeof badf.stage, "later");
    TX_FAILS(f, ALLOT_EINVAL, store_failure_add(f->st, &badf, &f->err));
    int n = 0;
    struct failure_filter byuser = {.user = "bob"};
    OK(f, store_failure_list(f->st, &byuser, count_failures, &n, &f->err));
    assert_int_equal(n, 2);
    /* One job's failures: only job 2's refused hold, not the job-less admission failure. */
    n = 0;
    struct failure_filter job2 = {.cluster = "c1", .job_id = 2};
    OK(f, store_failure_list(f->st, &job2, count_failures, &n, &f->err));
    assert_int_equal(n, 1);
    n = 0;
    struct failure_filter job3 = {.cluster = "c1", .job_id = 3};
    OK(f, store_failure_list(f->st, &job3, count_failures, &n, &f->err));
    assert_int_equal(n, 0);
    struct failure_filter other = {.cluster = "c2", .job_id = 2};
    OK(f, store_failure_list(f->st, &other, count_failures, &n, &f->err));
    assert_int_equal(n, 0);
    n = 0;
    struct failure_filter one = {.limit = 1};
    OK(f, store_failure_list(f->st, &one, count_failures, &n, &f->err));
    assert_int_equal(n, 1);
    fx_check_clean(f);
}

static void test_savepoint_isolates_hold(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 100);
    /* Group commit: request 1 kept, request 2 rolled back, request 3 kept. */
    BEGIN(f);
    struct hold_result hr;
    struct hold_req h1 = hold_req(1, 0, 30), h2 = hold_req(2, 0, 30), h3 = hold_req(3, 0, 30);
    OK(f, store_savepoint(f->st, &f->err));
    OK(f, store_hold(f->st, &h1, &hr, &f->err));
    OK(f, store_savepoint_release(f->st, &f->err));
    OK(f, store_savepoint(f->st, &f->err));
    OK(f, store_hold(f->st, &h2, &hr, &f->err));
    store_savepoint_rollback(f->st);
    OK(f, store_savepoint(f->st, &f->err));
    OK(f, store_hold(f->st, &h3, &hr, &f->err));
    OK(f, store_savepoint_release(f->st, &f->err));
    COMMIT(f);
    struct job j;
    FAILS(f, ALLOT_ENOENT, store_job_get(f->st, "c1", 2, 0, &j, &f->err));
    assert_int_equal(bal_of(f, id).held_sumin, 60);
    assert_int_equal(fx_ledger_rows(f), 3);
    fx_check_clean(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hadm_overdraft, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hold_settle_idempotent, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hold_other_job_same_id, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_node_fail_and_billing, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_settle_charge_vectors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_settle_capped_at_hold, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_settle_end, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hold_adjust, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_batch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_batch_text, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_batch_guard, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_batch_other_job, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_release_never_started, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_requeue_is_new_run, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_straddle, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_nearest_ancestor_pays, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_payer_walk, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_settle_answer_is_stored, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_refused_no_payer, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_post_paid_settle, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_list_and_failures, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_savepoint_isolates_hold, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
