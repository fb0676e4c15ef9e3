/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/usage.c - association tree: construction, validation errors, CSR children, pre-order,
 * depths, names, sshare display order, charging settled jobs and evaluating usage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "libcore/usage.h"

/* root; chem (0) with zed, amy; bio; bob directly under root */
static const struct usage_assoc_spec tree1[] = {
    {.parent = -1, .shares = 1, .account = "root"},                           /* 0 */
    {.parent = 0, .shares = 3, .account = "chem"},                            /* 1 */
    {.parent = 1, .shares = 1, .account = "chem", .user = "zed", .usage = 5}, /* 2 */
    {.parent = 1, .shares = 2, .account = "chem", .user = "amy", .usage = 7}, /* 3 */
    {.parent = 0, .shares = 1, .account = "bio"},                             /* 4 */
    {.parent = 0, .shares = 2, .account = "root", .user = "bob", .usage = 1}, /* 5 */
};

static void test_build(void **state)
{
    (void)state;
    struct allot_error err = {0};
    usage_tree_t *t = usage_tree_create(tree1, 6, &err);
    assert_non_null(t);
    assert_int_equal(usage_tree_count(t), 6);
    assert_int_equal(usage_tree_user_count(t), 3);
    assert_int_equal(usage_tree_root(t), 0);
    assert_int_equal(usage_tree_parent(t, 0), USAGE_NONE);
    assert_int_equal(usage_tree_parent(t, 3), 1);
    assert_int_equal(usage_tree_depth(t, 0), 0);
    assert_int_equal(usage_tree_depth(t, 5), 1);
    assert_int_equal(usage_tree_depth(t, 3), 2);
    assert_string_equal(usage_tree_account(t, 2), "chem");
    assert_string_equal(usage_tree_user(t, 2), "zed");
    assert_null(usage_tree_user(t, 4));
    assert_true(usage_tree_is_user(t, 5));
    assert_false(usage_tree_is_user(t, 1));
    assert_int_equal(usage_tree_shares(t, 3), 2);
    size_t cnt;
    const uint32_t *ch = usage_tree_children(t, 0, &cnt);
    assert_int_equal(cnt, 3);
    assert_int_equal(ch[0], 1);
    assert_int_equal(ch[1], 4);
    assert_int_equal(ch[2], 5);
    usage_tree_children(t, 2, &cnt);
    assert_int_equal(cnt, 0);
    const uint32_t *pre = usage_tree_preorder(t);
    const uint32_t want_pre[] = {0, 1, 2, 3, 4, 5};
    assert_memory_equal(pre, want_pre, sizeof(want_pre));
    uint32_t order[6];
    assert_int_equal(usage_tree_display_order(t, order, &err), 0);
    /* users first by name (bob), then accounts by name (bio, chem: amy, zed) */
    const uint32_t want_disp[] = {0, 5, 4, 1, 3, 2};
    assert_memory_equal(order, want_disp, sizeof(want_disp));
    assert_true(usage_tree_own_usage(t, 3) == 7.0);
    usage_tree_destroy(t);
    usage_tree_destroy(NULL);
}

static void expect_invalid(const struct usage_assoc_spec *s, size_t n, const char *needle)
{
    struct allot_error err = {0};
    usage_tree_t *t = usage_tree_create(s, n, &err);
    assert_null(t);
    assert_int_equal(err.code, ALLOT_EINVAL);
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

static void test_invalid(void **state)
{
    (void)state;
    expect_invalid(tree1, 0, "need 1..");
    struct usage_assoc_spec s[4];
    memcpy(s, tree1, sizeof(s));
    s[1].parent = -1;
    expect_invalid(s, 4, "2 roots");
    memcpy(s, tree1, sizeof(s));
    s[2].parent = 9;
    expect_invalid(s, 4, "association 2: parent 9 out of range");
    memcpy(s, tree1, sizeof(s));
    s[3].parent = 2;
    expect_invalid(s, 4, "is a user association");
    memcpy(s, tree1, sizeof(s));
    s[1].account = "";
    expect_invalid(s, 4, "account name is empty");
    memcpy(s, tree1, sizeof(s));
    s[2].usage = -1;
    expect_invalid(s, 4, "usage must be finite");
    const struct usage_assoc_spec userroot[] = {{.parent = -1, .account = "r", .user = "x"}};
    expect_invalid(userroot, 1, "the root cannot be a user");
    /* a cycle: 1 -> 2 -> 1 detached from the root */
    const struct usage_assoc_spec cyc[] = {
        {.parent = -1, .account = "root"},
        {.parent = 2, .account = "a"},
        {.parent = 1, .account = "b"},
    };
    expect_invalid(cyc, 3, "not reachable from the root");
}

static void test_charge_evaluate(void **state)
{
    (void)state;
    struct allot_error err = {0};
    struct decay_params p = {.halflife_s = 3600, .reset = DECAY_RESET_NONE};
    usage_tree_t *t = usage_tree_create(tree1, 6, &err);
    assert_non_null(t);
    assert_int_equal(usage_tree_charge(t, 3, &p, 1000000, 120.0, 1.0, false, &err), 0);
    assert_int_equal(usage_tree_charge(t, 3, &p, 1000000 + 3600, 60.0, 1.0, false, &err), 0);
    assert_int_equal(usage_tree_charge(t, 9, &p, 0, 1.0, 1.0, false, &err), -1);
    assert_int_equal(usage_tree_charge(t, 2, &p, 0, -1.0, 1.0, false, &err), -1);
    assert_non_null(strstr(err.msg, "association 2"));
    usage_tree_evaluate(t, &p, 1000000 + 3600);
    assert_true(fabs(usage_tree_own_usage(t, 3) - 120.0) < 1e-12);
    assert_true(usage_tree_own_usage(t, 2) == 0.0);
    assert_int_equal(usage_tree_set_usage(t, 2, 4.5, &err), 0);
    assert_true(usage_tree_own_usage(t, 2) == 4.5);
    assert_int_equal(usage_tree_set_usage(t, 2, INFINITY, &err), -1);
    assert_int_equal(usage_tree_set_usage(t, 6, 1.0, &err), -1);
    usage_tree_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_charge_evaluate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
