/* SPDX-License-Identifier: GPL-3.0-or-later */
/* submit.c - hold-at-submit verbs (store_submit.c) on a real SQLite file: a provisional hold
 * moves to the real run without new credit even when the balance is exhausted; a token held
 * for another user is left alone (and the real hold is checked on its own); a token unknown
 * (swept) gives an ordinary hold; bad tokens are refused; the sweep releases only provisional
 * holds older than the TTL, at most MAX per pass, and is a no-op when repeated. */
#include "store_test.h"

#define DAY 86400
#define T0 1767225600 /* 2026-01-01T00:00:00Z */
#define TOK(n) (STORE_SUBMIT_TOKEN_MIN + (n))

static struct hold_req req(int64_t job_id, const char *user, int64_t amount, int64_t now_s)
{
    struct hold_req r = fx_hold_req(job_id, amount, now_s, 3600);
    snprintf(r.user, sizeof r.user, "%s", user);
    r.submit_s = now_s;
    return r;
}

static int64_t setup_bank(struct fx *f, int64_t amount)
{
    fx_add_account(f, "chem", "root");
    return fx_add_alloc(f, "chem", "cpu", "", T0, T0 + 30 * DAY, amount);
}

static struct balance bal_of(struct fx *f, int64_t id)
{
    struct balance b;
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    return b;
}

static enum job_status status_of(struct fx *f, int64_t job_id)
{
    struct job j;
    OK(f, store_job_get(f->st, "c1", job_id, 0, &j, &f->err));
    return j.status;
}

static void test_bind_needs_no_new_credit(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 60);
    struct hold_req p = req(TOK(1), "alice", 60, T0 + 100), r = req(7, "alice", 60, T0 + 200);
    struct hold_result res;
    TX(f, store_hold(f->st, &p, &res, &f->err));
    assert_false(res.refused);
    assert_int_equal(bal_of(f, id).available_sumin, 0);
    /* The balance is exhausted, yet the bind holds: the provisional credit moves. */
    TX(f, store_submit_bind(f->st, TOK(1), &r, &res, &f->err));
    assert_false(res.refused);
    assert_false(res.replay);
    assert_int_equal(status_of(f, TOK(1)), JOB_RELEASED);
    assert_int_equal(status_of(f, 7), JOB_HELD);
    assert_int_equal(bal_of(f, id).held_sumin, 60);
    /* A replayed bind adds nothing. */
    TX(f, store_submit_bind(f->st, TOK(1), &r, &res, &f->err));
    assert_true(res.replay);
    assert_int_equal(bal_of(f, id).held_sumin, 60);
    fx_check_clean(f);
}

static void test_bind_other_user_or_unknown(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 100);
    struct hold_req p = req(TOK(2), "alice", 60, T0 + 100);
    struct hold_result res;
    TX(f, store_hold(f->st, &p, &res, &f->err));
    /* bob cannot take alice's provisional credit: it stays held, his hold is checked alone. */
    struct hold_req b = req(8, "bob", 60, T0 + 200);
    TX(f, store_submit_bind(f->st, TOK(2), &b, &res, &f->err));
    assert_true(res.refused);
    assert_int_equal(status_of(f, TOK(2)), JOB_HELD);
    assert_int_equal(bal_of(f, id).held_sumin, 60);
    /* An unknown token (swept, or never taken) is an ordinary hold. */
    struct hold_req c = req(9, "alice", 30, T0 + 200);
    TX(f, store_submit_bind(f->st, TOK(3), &c, &res, &f->err));
    assert_false(res.refused);
    assert_int_equal(bal_of(f, id).held_sumin, 90);
    /* Bad tokens, and a token as the real job id, are refused. */
    TX_FAILS(f, ALLOT_EINVAL, store_submit_bind(f->st, 5, &c, &res, &f->err));
    struct hold_req t = req(TOK(4), "alice", 1, T0 + 200);
    TX_FAILS(f, ALLOT_EINVAL, store_submit_bind(f->st, TOK(2), &t, &res, &f->err));
    assert_false(store_submit_token_valid(STORE_SUBMIT_TOKEN_MIN - 1));
    assert_true(store_submit_token_valid(STORE_SUBMIT_TOKEN_MAX));
    fx_check_clean(f);
}

static void test_sweep(void **state)
{
    struct fx *f = *state;
    int64_t id = setup_bank(f, 1000);
    struct hold_result res;
    struct hold_req old1 = req(TOK(10), "alice", 10, T0 + 100);
    struct hold_req old2 = req(TOK(11), "alice", 10, T0 + 100);
    struct hold_req young = req(TOK(12), "alice", 10, T0 + 1000);
    struct hold_req real = req(12, "alice", 10, T0 + 100); /* a real job is never swept */
    TX(f, store_hold(f->st, &old1, &res, &f->err));
    TX(f, store_hold(f->st, &old2, &res, &f->err));
    TX(f, store_hold(f->st, &young, &res, &f->err));
    TX(f, store_hold(f->st, &real, &res, &f->err));
    assert_int_equal(bal_of(f, id).held_sumin, 40);
    int n = -1;
    /* TTL 500 at T0 + 1100: the two from T0 + 100 are due, one per pass with max = 1. */
    TX(f, store_submit_sweep(f->st, 500, "allotd", T0 + 1100, 1, &n, &f->err));
    assert_int_equal(n, 1);
    TX(f, store_submit_sweep(f->st, 500, "allotd", T0 + 1100, 100, &n, &f->err));
    assert_int_equal(n, 1);
    TX(f, store_submit_sweep(f->st, 500, "allotd", T0 + 1100, 100, &n, &f->err));
    assert_int_equal(n, 0);
    assert_int_equal(status_of(f, TOK(10)), JOB_RELEASED);
    assert_int_equal(status_of(f, TOK(11)), JOB_RELEASED);
    assert_int_equal(status_of(f, TOK(12)), JOB_HELD);
    assert_int_equal(status_of(f, 12), JOB_HELD);
    assert_int_equal(bal_of(f, id).held_sumin, 20);
    TX_FAILS(f, ALLOT_EINVAL, store_submit_sweep(f->st, 0, "allotd", T0, 1, &n, &f->err));
    fx_check_clean(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bind_needs_no_new_credit, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bind_other_user_or_unknown, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_sweep, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
