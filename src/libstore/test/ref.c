/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref.c - reference-data verbs of store.h on a real SQLite file: clusters, the account
 * tree (add/get/modify/remove, cycles, depth-first listing, ancestors), users, associations,
 * QOS, partitions and limits, each on success and on every error path. */
#include "store_test.h"

static int collect_accounts(const struct account *a, void *arg)
{
    char *out = arg;
    strcat(out, a->name);
    strcat(out, " ");
    return 0;
}

static int stop_after_first(const struct account *a, void *arg)
{
    (void)a;
    (*(int *)arg)++;
    return 7;
}

static void test_clusters(void **state)
{
    struct fx *f = *state;
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    TX(f, store_cluster_add(f->st, "c2", &f->err));
    TX_FAILS(f, ALLOT_EEXIST, store_cluster_add(f->st, "c1", &f->err));
    TX_FAILS(f, ALLOT_EINVAL, store_cluster_add(f->st, "bad name", &f->err));
    TX_FAILS(f, ALLOT_ENOENT, store_cluster_remove(f->st, "c9", &f->err));
    fx_add_account(f, "chem", "root");
    fx_add_alloc(f, "chem", "cpu", "c2", 0, 100, 0);
    TX_FAILS(f, ALLOT_ECONFLICT, store_cluster_remove(f->st, "c2", &f->err));
    TX(f, store_cluster_remove(f->st, "c1", &f->err));
    struct account a;
    OK(f, store_account_get(f->st, "chem", &a, &f->err));
}

static int list_clusters(const char *name, void *arg)
{
    strcat((char *)arg, name);
    strcat((char *)arg, " ");
    return 0;
}

static void test_cluster_list(void **state)
{
    struct fx *f = *state;
    TX(f, store_cluster_add(f->st, "zeta", &f->err));
    TX(f, store_cluster_add(f->st, "alpha", &f->err));
    char out[64] = "";
    OK(f, store_cluster_list(f->st, list_clusters, out, &f->err));
    assert_string_equal(out, "alpha zeta ");
}

static void test_account_tree(void **state)
{
    struct fx *f = *state;
    int64_t sci = fx_add_account(f, "science", "root");
    assert_true(sci > 1);
    fx_add_account(f, "chem", "science");
    fx_add_account(f, "bio", "science");
    fx_add_account(f, "arts", "");
    fx_add_account(f, "organic", "chem");

    struct account a = fx_account("chem", "science");
    TX_FAILS(f, ALLOT_EEXIST, store_account_add(f->st, &a, &f->err));
    a = fx_account("x", "nope");
    TX_FAILS(f, ALLOT_EINVAL, store_account_add(f->st, &a, &f->err));
    assert_non_null(strstr(f->err.msg, "parent"));
    a = fx_account("-x", "root");
    TX_FAILS(f, ALLOT_EINVAL, store_account_add(f->st, &a, &f->err));
    a = fx_account("y", "root");
    a.shares = -1;
    TX_FAILS(f, ALLOT_EINVAL, store_account_add(f->st, &a, &f->err));
    a.shares = INT64_C(4294967296); /* past Slurm's uint32: fair-share would read it as 0 */
    TX_FAILS(f, ALLOT_EINVAL, store_account_add(f->st, &a, &f->err));
    assert_non_null(strstr(f->err.msg, "4294967295"));

    struct account got;
    OK(f, store_account_get(f->st, "arts", &got, &f->err));
    assert_string_equal(got.parent, "root");
    FAILS(f, ALLOT_ENOENT, store_account_get(f->st, "nope", &got, &f->err));

    char out[256] = "";
    OK(f, store_account_list(f->st, collect_accounts, out, &f->err));
    assert_string_equal(out, "root arts science bio chem organic ");
    int calls = 0;
    assert_int_equal(store_account_list(f->st, stop_after_first, &calls, &f->err), 7);
    assert_int_equal(calls, 1);

    struct account chain[8];
    int n = 0;
    OK(f, store_account_ancestors(f->st, "organic", chain, 8, &n, &f->err));
    assert_int_equal(n, 4);
    assert_string_equal(chain[0].name, "organic");
    assert_string_equal(chain[1].name, "chem");
    assert_string_equal(chain[2].name, "science");
    assert_string_equal(chain[3].name, "root");
    FAILS(f, ALLOT_ETOOBIG, store_account_ancestors(f->st, "organic", chain, 2, &n, &f->err));
    FAILS(f, ALLOT_ENOENT, store_account_ancestors(f->st, "nope", chain, 8, &n, &f->err));
}

static void test_account_modify_cycle(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "science", "root");
    fx_add_account(f, "chem", "science");
    fx_add_account(f, "organic", "chem");
    fx_add_account(f, "arts", "root");

    struct account a = fx_account("science", "organic");
    TX_FAILS(f, ALLOT_ECONFLICT, store_account_modify(f->st, &a, &f->err));
    assert_non_null(strstr(f->err.msg, "cycle"));
    a = fx_account("science", "science");
    TX_FAILS(f, ALLOT_ECONFLICT, store_account_modify(f->st, &a, &f->err));
    a = fx_account("root", "arts");
    TX_FAILS(f, ALLOT_ECONFLICT, store_account_modify(f->st, &a, &f->err));
    a = fx_account("ghost", "root");
    TX_FAILS(f, ALLOT_ENOENT, store_account_modify(f->st, &a, &f->err));
    a = fx_account("chem", "nope");
    TX_FAILS(f, ALLOT_EINVAL, store_account_modify(f->st, &a, &f->err));

    a = fx_account("chem", "arts");
    a.shares = 40;
    snprintf(a.description, sizeof a.description, "chemistry");
    TX(f, store_account_modify(f->st, &a, &f->err));
    struct account got;
    OK(f, store_account_get(f->st, "chem", &got, &f->err));
    assert_string_equal(got.parent, "arts");
    assert_int_equal(got.shares, 40);
    assert_string_equal(got.description, "chemistry");
    /* root may change its shares and text, not its parent. */
    a = fx_account("root", "");
    a.shares = 5;
    TX(f, store_account_modify(f->st, &a, &f->err));
    OK(f, store_account_get(f->st, "root", &got, &f->err));
    assert_int_equal(got.shares, 5);
    assert_string_equal(got.parent, "");
}

static void test_account_remove(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "science", "root");
    fx_add_account(f, "chem", "science");
    TX_FAILS(f, ALLOT_ECONFLICT, store_account_remove(f->st, "root", &f->err));
    TX_FAILS(f, ALLOT_ECONFLICT, store_account_remove(f->st, "science", &f->err));
    TX_FAILS(f, ALLOT_ENOENT, store_account_remove(f->st, "nope", &f->err));
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", 0, 100, 0);
    TX_FAILS(f, ALLOT_ECONFLICT, store_account_remove(f->st, "chem", &f->err));
    TX(f, store_alloc_remove(f->st, id, &f->err));
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    struct user u = {.name = "alice", .uid = 1000};
    TX(f, store_user_add(f->st, &u, &f->err));
    struct assoc as = {.cluster = "c1", .account = "chem", .user = "alice", .shares = 1};
    TX(f, store_assoc_add(f->st, &as, &f->err));
    TX_FAILS(f, ALLOT_ECONFLICT, store_account_remove(f->st, "chem", &f->err));
    TX(f, store_assoc_remove(f->st, "c1", "chem", "alice", "", &f->err));
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "GrpJobs", "10", &f->err));
    TX(f, store_account_remove(f->st, "chem", &f->err));
    struct account got;
    FAILS(f, ALLOT_ENOENT, store_account_get(f->st, "chem", &got, &f->err));
    TX(f, store_account_remove(f->st, "science", &f->err));
}

static int count_users(const struct user *u, void *arg)
{
    (void)u;
    (*(int *)arg)++;
    return 0;
}

static void test_users(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    fx_add_account(f, "bio", "root");
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    struct user u = {.name = "alice", .uid = 1000, .default_account = "chem"};
    TX(f, store_user_add(f->st, &u, &f->err));
    TX_FAILS(f, ALLOT_EEXIST, store_user_add(f->st, &u, &f->err));
    struct user bad = {.name = "bob", .uid = -5};
    TX_FAILS(f, ALLOT_EINVAL, store_user_add(f->st, &bad, &f->err));
    struct user noacct = {.name = "bob", .uid = 1001, .default_account = "nope"};
    TX_FAILS(f, ALLOT_ENOENT, store_user_add(f->st, &noacct, &f->err));
    assert_non_null(strstr(f->err.msg, "default_account"));

    struct user got;
    OK(f, store_user_get(f->st, "alice", &got, &f->err));
    assert_int_equal(got.uid, 1000);
    assert_string_equal(got.default_account, "chem");
    FAILS(f, ALLOT_ENOENT, store_user_get(f->st, "bob", &got, &f->err));

    /* With associations, the default account must be one of them. */
    struct assoc as = {.cluster = "c1", .account = "chem", .user = "alice", .shares = 1};
    TX(f, store_assoc_add(f->st, &as, &f->err));
    struct user m = {.name = "alice", .uid = 1000, .default_account = "bio"};
    TX_FAILS(f, ALLOT_EINVAL, store_user_modify(f->st, &m, &f->err));
    m.uid = 2000;
    snprintf(m.default_account, sizeof m.default_account, "chem");
    TX(f, store_user_modify(f->st, &m, &f->err));
    OK(f, store_user_get(f->st, "alice", &got, &f->err));
    assert_int_equal(got.uid, 2000);
    struct user ghost = {.name = "ghost", .uid = 1};
    TX_FAILS(f, ALLOT_ENOENT, store_user_modify(f->st, &ghost, &f->err));
    /* Removing the association that carries the default account, while others remain, is
     * refused; a user with associations cannot be removed. */
    struct assoc as2 = {.cluster = "c1", .account = "bio", .user = "alice", .shares = 1};
    TX(f, store_assoc_add(f->st, &as2, &f->err));
    TX_FAILS(f, ALLOT_ECONFLICT, store_assoc_remove(f->st, "c1", "chem", "alice", "", &f->err));
    TX_FAILS(f, ALLOT_ECONFLICT, store_user_remove(f->st, "alice", &f->err));
    snprintf(m.default_account, sizeof m.default_account, "bio");
    TX(f, store_user_modify(f->st, &m, &f->err));
    TX(f, store_assoc_remove(f->st, "c1", "chem", "alice", "", &f->err));
    TX(f, store_assoc_remove(f->st, "c1", "bio", "alice", "", &f->err));
    int n = 0;
    OK(f, store_user_list(f->st, count_users, &n, &f->err));
    assert_int_equal(n, 1);
    TX(f, store_user_remove(f->st, "alice", &f->err));
    TX_FAILS(f, ALLOT_ENOENT, store_user_remove(f->st, "alice", &f->err));
}

static int collect_assocs(const struct assoc *a, void *arg)
{
    char *out = arg;
    strcat(out, a->account);
    strcat(out, "/");
    strcat(out, a->user);
    strcat(out, "/");
    strcat(out, a->partition);
    strcat(out, " ");
    return 0;
}

static void test_assocs(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    fx_add_account(f, "bio", "root");
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    TX(f, store_cluster_add(f->st, "c2", &f->err));
    struct user u = {.name = "alice", .uid = 1000};
    TX(f, store_user_add(f->st, &u, &f->err));
    struct user u2 = {.name = "bob", .uid = 1001};
    TX(f, store_user_add(f->st, &u2, &f->err));
    /* An association's QOS must exist; the default must be in its list. */
    struct assoc noq = {.cluster = "c1", .account = "chem", .user = "alice", .qos = "normal"};
    TX_FAILS(f, ALLOT_ENOENT, store_assoc_add(f->st, &noq, &f->err));
    struct qos q1 = {.name = "normal", .usage_factor_ppm = 1000000, .limit_factor_ppm = -1};
    struct qos q2 = {.name = "long", .usage_factor_ppm = 1000000, .limit_factor_ppm = -1};
    TX(f, store_qos_add(f->st, &q1, &f->err));
    TX(f, store_qos_add(f->st, &q2, &f->err));
    snprintf(noq.qos, sizeof noq.qos, "long");
    snprintf(noq.default_qos, sizeof noq.default_qos, "normal");
    TX_FAILS(f, ALLOT_EINVAL, store_assoc_add(f->st, &noq, &f->err));

    struct assoc a = {.cluster = "c1",
                      .account = "chem",
                      .user = "alice",
                      .shares = 3,
                      .default_qos = "normal",
                      .qos = "normal,long"};
    TX(f, store_assoc_add(f->st, &a, &f->err));
    assert_true(a.id > 0);
    TX_FAILS(f, ALLOT_EEXIST, store_assoc_add(f->st, &a, &f->err));
    struct assoc p = a;
    snprintf(p.partition, sizeof p.partition, "gpu");
    TX(f, store_assoc_add(f->st, &p, &f->err));
    struct assoc b = {.cluster = "c2", .account = "bio", .user = "bob", .shares = 1};
    TX(f, store_assoc_add(f->st, &b, &f->err));
    /* A QOS an association names cannot be removed (admission would fail on it). */
    TX_FAILS(f, ALLOT_ECONFLICT, store_qos_remove(f->st, "long", &f->err));

    struct assoc bad = a;
    snprintf(bad.cluster, sizeof bad.cluster, "c9");
    TX_FAILS(f, ALLOT_ENOENT, store_assoc_add(f->st, &bad, &f->err));
    bad = a;
    snprintf(bad.account, sizeof bad.account, "nope");
    TX_FAILS(f, ALLOT_ENOENT, store_assoc_add(f->st, &bad, &f->err));
    bad = a;
    snprintf(bad.user, sizeof bad.user, "nobody");
    TX_FAILS(f, ALLOT_ENOENT, store_assoc_add(f->st, &bad, &f->err));
    bad = a;
    bad.shares = -2;
    TX_FAILS(f, ALLOT_EINVAL, store_assoc_add(f->st, &bad, &f->err));

    struct assoc got;
    OK(f, store_assoc_get(f->st, "c1", "chem", "alice", "", &got, &f->err));
    assert_int_equal(got.shares, 3);
    assert_string_equal(got.qos, "normal,long");
    FAILS(f, ALLOT_ENOENT, store_assoc_get(f->st, "c1", "bio", "alice", "", &got, &f->err));

    a.shares = 9;
    TX(f, store_assoc_modify(f->st, &a, &f->err));
    OK(f, store_assoc_get(f->st, "c1", "chem", "alice", "", &got, &f->err));
    assert_int_equal(got.shares, 9);

    char out[256] = "";
    struct assoc_filter all = {0};
    OK(f, store_assoc_list(f->st, &all, collect_assocs, out, &f->err));
    assert_string_equal(out, "chem/alice/ chem/alice/gpu bio/bob/ ");
    out[0] = '\0';
    struct assoc_filter byuser = {.user = "alice", .cluster = "c1"};
    OK(f, store_assoc_list(f->st, &byuser, collect_assocs, out, &f->err));
    assert_string_equal(out, "chem/alice/ chem/alice/gpu ");
    out[0] = '\0';
    struct assoc_filter byacct = {.account = "bio"};
    OK(f, store_assoc_list(f->st, &byacct, collect_assocs, out, &f->err));
    assert_string_equal(out, "bio/bob/ ");

    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ASSOC, "c1:chem:alice:gpu", "MaxJobs", "4", &f->err));
    TX(f, store_assoc_remove(f->st, "c1", "chem", "alice", "gpu", &f->err));
    TX_FAILS(f, ALLOT_ENOENT, store_assoc_remove(f->st, "c1", "chem", "alice", "gpu", &f->err));
    /* Its limits went with it. */
    TX_FAILS(
        f, ALLOT_ENOENT,
        store_limit_set(f->st, LIMIT_SCOPE_ASSOC, "c1:chem:alice:gpu", "MaxJobs", "4", &f->err));
}

static int collect_qos(const struct qos *q, void *arg)
{
    strcat((char *)arg, q->name);
    strcat((char *)arg, " ");
    return 0;
}

static void test_qos(void **state)
{
    struct fx *f = *state;
    struct qos q = {.name = "normal",
                    .priority = 10,
                    .flags = "DenyOnLimit",
                    .usage_factor_ppm = 1000000,
                    .limit_factor_ppm = -1};
    TX(f, store_qos_add(f->st, &q, &f->err));
    TX_FAILS(f, ALLOT_EEXIST, store_qos_add(f->st, &q, &f->err));
    struct qos bad = q;
    snprintf(bad.name, sizeof bad.name, "x");
    bad.usage_factor_ppm = -1;
    TX_FAILS(f, ALLOT_EINVAL, store_qos_add(f->st, &bad, &f->err));
    struct qos slow = {.name = "slow", .usage_factor_ppm = 500000, .limit_factor_ppm = 2000000};
    TX(f, store_qos_add(f->st, &slow, &f->err));
    struct qos got;
    OK(f, store_qos_get(f->st, "slow", &got, &f->err));
    assert_int_equal(got.usage_factor_ppm, 500000);
    assert_int_equal(got.limit_factor_ppm, 2000000);
    q.priority = INT64_C(4294967296); /* Slurm's QOS priority is a uint32 */
    TX_FAILS(f, ALLOT_EINVAL, store_qos_modify(f->st, &q, &f->err));
    assert_non_null(strstr(f->err.msg, "priority: must be 0..4294967295"));
    q.priority = 99;
    TX(f, store_qos_modify(f->st, &q, &f->err));
    OK(f, store_qos_get(f->st, "normal", &got, &f->err));
    assert_int_equal(got.priority, 99);
    assert_string_equal(got.flags, "DenyOnLimit");
    struct qos ghost = {.name = "ghost", .usage_factor_ppm = 1, .limit_factor_ppm = -1};
    TX_FAILS(f, ALLOT_ENOENT, store_qos_modify(f->st, &ghost, &f->err));
    char out[64] = "";
    OK(f, store_qos_list(f->st, collect_qos, out, &f->err));
    assert_string_equal(out, "normal slow ");
    TX(f, store_qos_remove(f->st, "slow", &f->err));
    TX_FAILS(f, ALLOT_ENOENT, store_qos_remove(f->st, "slow", &f->err));
    FAILS(f, ALLOT_ENOENT, store_qos_get(f->st, "slow", &got, &f->err));
}

static int collect_parts(const struct partition *p, void *arg)
{
    strcat((char *)arg, p->cluster);
    strcat((char *)arg, ":");
    strcat((char *)arg, p->name);
    strcat((char *)arg, " ");
    return 0;
}

static void test_partitions(void **state)
{
    struct fx *f = *state;
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    TX(f, store_cluster_add(f->st, "c2", &f->err));
    struct qos q = {.name = "gpuq", .usage_factor_ppm = 1000000, .limit_factor_ppm = -1};
    TX(f, store_qos_add(f->st, &q, &f->err));
    struct partition p = {.cluster = "c1",
                          .name = "gpu",
                          .resource = "gpu",
                          .billing_weights = "CPU=0.0625,Mem=0.03125G,GRES/gpu=1.0",
                          .max_tres = 1,
                          .qos = "gpuq",
                          .default_time_s = 3600,
                          .max_time_s = -1};
    TX(f, store_partition_add(f->st, &p, &f->err));
    TX_FAILS(f, ALLOT_EEXIST, store_partition_add(f->st, &p, &f->err));
    struct partition bad = p;
    snprintf(bad.cluster, sizeof bad.cluster, "c9");
    TX_FAILS(f, ALLOT_ENOENT, store_partition_add(f->st, &bad, &f->err));
    bad = p;
    snprintf(bad.qos, sizeof bad.qos, "nope");
    TX_FAILS(f, ALLOT_ENOENT, store_partition_add(f->st, &bad, &f->err));
    bad = p;
    bad.max_tres = 2;
    TX_FAILS(f, ALLOT_EINVAL, store_partition_add(f->st, &bad, &f->err));
    bad = p;
    bad.resource[0] = '\0';
    TX_FAILS(f, ALLOT_EINVAL, store_partition_add(f->st, &bad, &f->err));
    struct partition cpu = {.cluster = "c2",
                            .name = "cpu",
                            .resource = "cpu",
                            .default_time_s = -1,
                            .max_time_s = 86400};
    TX(f, store_partition_add(f->st, &cpu, &f->err));

    struct partition got;
    OK(f, store_partition_get(f->st, "c1", "gpu", &got, &f->err));
    assert_string_equal(got.billing_weights, "CPU=0.0625,Mem=0.03125G,GRES/gpu=1.0");
    assert_int_equal(got.max_tres, 1);
    FAILS(f, ALLOT_ENOENT, store_partition_get(f->st, "c2", "gpu", &got, &f->err));
    p.max_tres = 0;
    p.max_time_s = 7200;
    TX(f, store_partition_modify(f->st, &p, &f->err));
    OK(f, store_partition_get(f->st, "c1", "gpu", &got, &f->err));
    assert_int_equal(got.max_tres, 0);
    assert_int_equal(got.max_time_s, 7200);
    char out[64] = "";
    OK(f, store_partition_list(f->st, NULL, collect_parts, out, &f->err));
    assert_string_equal(out, "c1:gpu c2:cpu ");
    out[0] = '\0';
    OK(f, store_partition_list(f->st, "c2", collect_parts, out, &f->err));
    assert_string_equal(out, "c2:cpu ");
    /* In use by an association: refused, naming it, until the association goes. */
    fx_add_account(f, "chem", "root");
    struct user u = {.name = "alice", .uid = 1000};
    TX(f, store_user_add(f->st, &u, &f->err));
    struct assoc as = {
        .cluster = "c2", .account = "chem", .user = "alice", .partition = "cpu", .shares = 1};
    TX(f, store_assoc_add(f->st, &as, &f->err));
    TX_FAILS(f, ALLOT_ECONFLICT, store_partition_remove(f->st, "c2", "cpu", &f->err));
    assert_non_null(strstr(f->err.msg, "in use by 1 associations (account:user chem:alice)"));
    TX(f, store_assoc_remove(f->st, "c2", "chem", "alice", "cpu", &f->err));
    TX(f, store_partition_remove(f->st, "c2", "cpu", &f->err));
    TX_FAILS(f, ALLOT_ENOENT, store_partition_remove(f->st, "c2", "cpu", &f->err));
}

static int collect_limits(const struct limit_value *l, void *arg)
{
    char *out = arg;
    strcat(out, l->owner);
    strcat(out, ":");
    strcat(out, l->name);
    strcat(out, "=");
    strcat(out, l->value);
    strcat(out, " ");
    return 0;
}

static void test_limits(void **state)
{
    struct fx *f = *state;
    fx_add_account(f, "chem", "root");
    TX(f, store_cluster_add(f->st, "c1", &f->err));
    struct qos q = {.name = "normal", .usage_factor_ppm = 1000000, .limit_factor_ppm = -1};
    TX(f, store_qos_add(f->st, &q, &f->err));
    struct partition p = {
        .cluster = "c1", .name = "cpu", .resource = "cpu", .default_time_s = -1, .max_time_s = -1};
    TX(f, store_partition_add(f->st, &p, &f->err));

    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "GrpTRES", "cpu=100", &f->err));
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "GrpJobs", "10", &f->err));
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "GrpJobs", "20", &f->err));
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_QOS, "normal", "MaxWall", "3600", &f->err));
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_PARTITION, "c1:cpu", "MaxNodes", "4", &f->err));
    TX_FAILS(f, ALLOT_ENOENT,
             store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "nope", "GrpJobs", "1", &f->err));
    TX_FAILS(f, ALLOT_ENOENT,
             store_limit_set(f->st, LIMIT_SCOPE_QOS, "nope", "GrpJobs", "1", &f->err));
    TX_FAILS(f, ALLOT_ENOENT,
             store_limit_set(f->st, LIMIT_SCOPE_PARTITION, "c1:gpu", "MaxNodes", "1", &f->err));
    TX_FAILS(f, ALLOT_EINVAL,
             store_limit_set(f->st, LIMIT_SCOPE_PARTITION, "c1", "MaxNodes", "1", &f->err));
    TX_FAILS(f, ALLOT_EINVAL,
             store_limit_set(f->st, LIMIT_SCOPE_ASSOC, "c1:chem", "MaxJobs", "1", &f->err));
    TX_FAILS(f, ALLOT_EINVAL,
             store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "bad name", "1", &f->err));
    TX_FAILS(f, ALLOT_EINVAL,
             store_limit_set(f->st, (enum limit_scope)9, "chem", "x", "1", &f->err));

    char out[256] = "";
    OK(f, store_limit_list(f->st, LIMIT_SCOPE_ACCOUNT, NULL, collect_limits, out, &f->err));
    assert_string_equal(out, "chem:GrpJobs=20 chem:GrpTRES=cpu=100 ");
    out[0] = '\0';
    OK(f, store_limit_list(f->st, LIMIT_SCOPE_PARTITION, "c1:cpu", collect_limits, out, &f->err));
    assert_string_equal(out, "c1:cpu:MaxNodes=4 ");
    /* "" removes. */
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "GrpJobs", "", &f->err));
    TX(f, store_limit_set(f->st, LIMIT_SCOPE_ACCOUNT, "chem", "GrpTRES", NULL, &f->err));
    out[0] = '\0';
    OK(f, store_limit_list(f->st, LIMIT_SCOPE_ACCOUNT, "chem", collect_limits, out, &f->err));
    assert_string_equal(out, "");
    /* Removing the owner removes its limits. */
    TX(f, store_qos_remove(f->st, "normal", &f->err));
    out[0] = '\0';
    OK(f, store_limit_list(f->st, LIMIT_SCOPE_QOS, NULL, collect_limits, out, &f->err));
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clusters, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_cluster_list, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_account_tree, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_account_modify_cycle, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_account_remove, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_users, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_assocs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qos, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_partitions, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_limits, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
