/* SPDX-License-Identifier: GPL-3.0-or-later */
/* step.c - store_step_add/list (store_step.c): one row per (cluster, job, step, attempt),
 * a replay with the same record is harmless, a different record conflicts and changes
 * nothing, bad fields are refused by name, and the list filters by cluster, job and user.
 * Runs on SQLite and (store_step_pg) PostgreSQL. */
#include "store_test.h"

static struct step_record mk(const char *cluster, int64_t job, const char *name, int64_t attempt,
                             const char *user, const char *record)
{
    struct step_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.cluster, sizeof r.cluster, "%s", cluster);
    r.job_id = job;
    snprintf(r.step_name, sizeof r.step_name, "%s", name);
    r.attempt = attempt;
    snprintf(r.user, sizeof r.user, "%s", user);
    snprintf(r.status, sizeof r.status, "completed");
    r.return_code = 0;
    r.exec_ms = 1234;
    r.record = record;
    snprintf(r.actor, sizeof r.actor, "alice");
    r.created_s = 1000;
    return r;
}

struct seen {
    int n;
    char names[8][ALLOT_NAME_MAX];
    char records[8][64];
    int64_t attempts[8];
};

static int on_step(const struct step_record *r, void *arg)
{
    struct seen *s = arg;
    if (s->n < 8) {
        snprintf(s->names[s->n], sizeof s->names[0], "%s", r->step_name);
        snprintf(s->records[s->n], sizeof s->records[0], "%s", r->record);
        s->attempts[s->n] = r->attempt;
    }
    s->n++;
    return 0;
}

static void test_add_replay_conflict(void **state)
{
    struct fx *f = *state;
    int replay = -1;
    struct step_record r = mk("c1", 42, "prep", 1, "alice", "{\"a\":1}");
    TX(f, store_step_add(f->st, &r, &replay, &f->err));
    assert_int_equal(replay, 0);

    /* Same content again (another actor, later): a replay returning the first row. */
    struct step_record again = mk("c1", 42, "prep", 1, "alice", "{\"a\":1}");
    snprintf(again.actor, sizeof again.actor, "root");
    again.created_s = 2000;
    TX(f, store_step_add(f->st, &again, &replay, &f->err));
    assert_int_equal(replay, 1);
    assert_string_equal(again.actor, "alice");
    assert_int_equal(again.created_s, 1000);

    /* Different content under the same key: refused, the first record stands. */
    struct step_record other = mk("c1", 42, "prep", 1, "alice", "{\"a\":2}");
    TX_FAILS(f, ALLOT_ECONFLICT, store_step_add(f->st, &other, &replay, &f->err));

    /* Another attempt, another step, another job, another cluster: new rows. */
    struct step_record a2 = mk("c1", 42, "prep", 2, "alice", "{\"a\":2}");
    struct step_record s2 = mk("c1", 42, "solve", 1, "alice", "{\"b\":1}");
    struct step_record j2 = mk("c1", 43, "prep", 1, "bob", "{\"c\":1}");
    struct step_record c2 = mk("c2", 42, "prep", 1, "carol", "{\"d\":1}");
    TX(f, store_step_add(f->st, &a2, &replay, &f->err));
    TX(f, store_step_add(f->st, &s2, &replay, &f->err));
    TX(f, store_step_add(f->st, &j2, &replay, &f->err));
    TX(f, store_step_add(f->st, &c2, &replay, &f->err));

    struct seen s = {0};
    struct step_filter flt = {.cluster = "c1", .job_id = 42};
    OK(f, store_step_list(f->st, &flt, on_step, &s, &f->err));
    assert_int_equal(s.n, 3);
    assert_string_equal(s.names[0], "prep");
    assert_int_equal(s.attempts[0], 1);
    assert_string_equal(s.records[0], "{\"a\":1}");
    assert_string_equal(s.names[1], "prep");
    assert_int_equal(s.attempts[1], 2);
    assert_string_equal(s.names[2], "solve");

    memset(&s, 0, sizeof s);
    struct step_filter by_user = {.user = "bob"};
    OK(f, store_step_list(f->st, &by_user, on_step, &s, &f->err));
    assert_int_equal(s.n, 1);
    assert_string_equal(s.records[0], "{\"c\":1}");

    memset(&s, 0, sizeof s);
    struct step_filter all = {.limit = 2};
    OK(f, store_step_list(f->st, &all, on_step, &s, &f->err));
    assert_int_equal(s.n, 2);

    memset(&s, 0, sizeof s);
    OK(f, store_step_list(f->st, NULL, on_step, &s, &f->err));
    assert_int_equal(s.n, 5);
}

static void test_bad_fields(void **state)
{
    struct fx *f = *state;
    int replay;
    struct step_record r = mk("c1", 0, "prep", 1, "alice", "{}");
    TX_FAILS(f, ALLOT_EINVAL, store_step_add(f->st, &r, &replay, &f->err));
    assert_non_null(strstr(f->err.msg, "job_id"));
    r = mk("c1", 1, "bad name", 1, "alice", "{}");
    TX_FAILS(f, ALLOT_EINVAL, store_step_add(f->st, &r, &replay, &f->err));
    assert_non_null(strstr(f->err.msg, "step_name"));
    r = mk("c1", 1, "prep", 0, "alice", "{}");
    TX_FAILS(f, ALLOT_EINVAL, store_step_add(f->st, &r, &replay, &f->err));
    r = mk("c1", 1, "prep", 1, "alice", "");
    TX_FAILS(f, ALLOT_EINVAL, store_step_add(f->st, &r, &replay, &f->err));
    r = mk("c1", 1, "prep", 1, "alice", "{}");
    snprintf(r.status, sizeof r.status, "weird");
    TX_FAILS(f, ALLOT_EINVAL, store_step_add(f->st, &r, &replay, &f->err));
    char *big = malloc(STORE_STEP_RECORD_MAX + 2);
    assert_non_null(big);
    memset(big, 'x', STORE_STEP_RECORD_MAX + 1);
    big[STORE_STEP_RECORD_MAX + 1] = '\0';
    r = mk("c1", 1, "prep", 1, "alice", big);
    TX_FAILS(f, ALLOT_ETOOBIG, store_step_add(f->st, &r, &replay, &f->err));
    free(big);
    /* Outside a transaction a write verb is refused. */
    r = mk("c1", 1, "prep", 1, "alice", "{}");
    assert_int_equal(store_step_add(f->st, &r, &replay, &f->err), -1);

    struct seen s = {0};
    OK(f, store_step_list(f->st, NULL, on_step, &s, &f->err));
    assert_int_equal(s.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_replay_conflict, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_fields, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
