/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sync.c - store_sync_replace/drifts/states (store_sync.c): a pass replaces the cluster's
 * drifts (one seen again keeps its first_seen_s, one no longer found is gone), totals add
 * up over passes, other clusters are untouched, and a bad mode, kind, status, unknown
 * cluster or control character is refused by name and changes nothing.
 * Runs on SQLite and (store_sync_pg) PostgreSQL. */
#include "store_test.h"

static struct sync_drift mk(const char *kind, const char *object, const char *field,
                            const char *slurm, const char *allot)
{
    struct sync_drift d;
    memset(&d, 0, sizeof d);
    snprintf(d.kind, sizeof d.kind, "%s", kind);
    snprintf(d.object, sizeof d.object, "%s", object);
    snprintf(d.field, sizeof d.field, "%s", field);
    snprintf(d.slurm_value, sizeof d.slurm_value, "%s", slurm);
    snprintf(d.allot_value, sizeof d.allot_value, "%s", allot);
    snprintf(d.status, sizeof d.status, "reported");
    return d;
}

struct seen {
    int n;
    struct sync_drift d[8];
    struct sync_state s[4];
    int ns;
};

static int on_drift(const struct sync_drift *d, void *arg)
{
    struct seen *s = arg;
    if (s->n < 8)
        s->d[s->n] = *d;
    s->n++;
    return 0;
}

static int on_state(const struct sync_state *x, void *arg)
{
    struct seen *s = arg;
    if (s->ns < 4)
        s->s[s->ns] = *x;
    s->ns++;
    return 0;
}

static void test_replace(void **state)
{
    struct fx *f = *state;
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    TX(f, store_cluster_add(f->st, "c2", &f->err));
    struct sync_drift a[2] = {mk("partition", "big", "billing_weights", "CPU=4.0", "CPU=1.0"),
                              mk("user", "alice", "exists", "default_account=chem", "")};
    TX(f, store_sync_replace(f->st, "c1", "report", 1000, a, 2, 0, &f->err));
    struct sync_drift other = mk("assoc", "chem/bob/", "exists", "present", "");
    TX(f, store_sync_replace(f->st, "c2", "follow", 1000, &other, 1, 5, &f->err));
    /* Second pass on c1: alice resolved (1), big seen again with a new value. */
    struct sync_drift b = mk("partition", "big", "billing_weights", "CPU=2.5", "CPU=1.0");
    TX(f, store_sync_replace(f->st, "c1", "follow", 2000, &b, 1, 1, &f->err));

    struct seen s = {0};
    OK(f, store_sync_drifts(f->st, "c1", on_drift, &s, &f->err));
    assert_int_equal(s.n, 1);
    assert_string_equal(s.d[0].object, "big");
    assert_string_equal(s.d[0].slurm_value, "CPU=2.5");
    assert_int_equal(s.d[0].first_seen_s, 1000);
    assert_int_equal(s.d[0].last_seen_s, 2000);
    OK(f, store_sync_states(f->st, NULL, on_state, &s, &f->err));
    assert_int_equal(s.ns, 2);
    assert_string_equal(s.s[0].cluster, "c1");
    assert_string_equal(s.s[0].mode, "follow");
    assert_int_equal(s.s[0].synced_s, 2000);
    assert_int_equal(s.s[0].found_total, 2 + 2);
    assert_int_equal(s.s[0].resolved_total, 1);
    assert_int_equal(s.s[0].drifts, 1);
    assert_int_equal(s.s[1].drifts, 1);
    assert_int_equal(s.s[1].resolved_total, 5);

    /* An empty pass clears the cluster's set. */
    TX(f, store_sync_replace(f->st, "c1", "follow", 3000, NULL, 0, 1, &f->err));
    memset(&s, 0, sizeof s);
    OK(f, store_sync_drifts(f->st, NULL, on_drift, &s, &f->err));
    assert_int_equal(s.n, 1);
    assert_string_equal(s.d[0].cluster, "c2");
}

static void test_refused(void **state)
{
    struct fx *f = *state;
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    struct sync_drift d = mk("partition", "big", "max_time", "00:30:00", "00:10:00");
    TX(f, store_sync_replace(f->st, "c1", "report", 1000, &d, 1, 0, &f->err));
    TX_FAILS(f, ALLOT_EINVAL, store_sync_replace(f->st, "c1", "mirror", 1, &d, 1, 0, &f->err));
    assert_non_null(strstr(f->err.msg, "mode"));
    struct sync_drift bad = mk("node", "n1", "state", "", "");
    TX_FAILS(f, ALLOT_EINVAL, store_sync_replace(f->st, "c1", "report", 1, &bad, 1, 0, &f->err));
    assert_non_null(strstr(f->err.msg, "drifts[0]: kind"));
    bad = mk("user", "a", "exists", "x\ny", "");
    TX_FAILS(f, ALLOT_EINVAL, store_sync_replace(f->st, "c1", "report", 1, &bad, 1, 0, &f->err));
    assert_non_null(strstr(f->err.msg, "slurm"));
    bad = mk("user", "a", "exists", "", "");
    snprintf(bad.status, sizeof bad.status, "fixed");
    TX_FAILS(f, ALLOT_EINVAL, store_sync_replace(f->st, "c1", "report", 1, &bad, 1, 0, &f->err));
    assert_non_null(strstr(f->err.msg, "status"));
    TX_FAILS(f, ALLOT_ENOENT, store_sync_replace(f->st, "nope", "report", 1, &d, 1, 0, &f->err));
    /* Outside a transaction a write verb is refused. */
    assert_int_equal(store_sync_replace(f->st, "c1", "report", 1, &d, 1, 0, &f->err), -1);

    struct seen s = {0};
    OK(f, store_sync_drifts(f->st, "c1", on_drift, &s, &f->err));
    assert_int_equal(s.n, 1);
    assert_string_equal(s.d[0].field, "max_time");
    OK(f, store_sync_states(f->st, "c1", on_state, &s, &f->err));
    assert_int_equal(s.ns, 1);
    assert_int_equal(s.s[0].generation, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replace, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_refused, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
