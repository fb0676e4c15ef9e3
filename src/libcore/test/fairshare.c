/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/fairshare.c - hand-computed trees for Slurm classic, Fair Tree and flux: a user
 * directly under root beside sub-accounts, ties (user/user, user/account, account/account),
 * zero shares, zero usage, a 3000-level deep tree, and the sshare / view-bank line formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/fairshare.h"

#define EPS 1e-12

static usage_tree_t *build(const struct usage_assoc_spec *s, size_t n)
{
    struct allot_error err = {0};
    usage_tree_t *t = usage_tree_create(s, n, &err);
    if (!t)
        fail_msg("tree: %s", err.msg);
    return t;
}

static void compute(const usage_tree_t *t, enum fairshare_algo algo, uint32_t damp,
                    struct fairshare_row *rows)
{
    struct allot_error err = {0};
    struct fairshare_opts o = {.algo = algo, .dampening = damp};
    if (fairshare_compute(t, &o, rows, &err) < 0)
        fail_msg("compute: %s", err.msg);
}

/* root: A(1){u1 10, u2 30}, B(1){u3 0}, u0(2) 60 directly under root */
static const struct usage_assoc_spec t1[] = {
    {.parent = -1, .shares = 1, .account = "root"},                           /* 0 */
    {.parent = 0, .shares = 1, .account = "A"},                               /* 1 */
    {.parent = 1, .shares = 1, .account = "A", .user = "u1", .usage = 10},    /* 2 */
    {.parent = 1, .shares = 1, .account = "A", .user = "u2", .usage = 30},    /* 3 */
    {.parent = 0, .shares = 1, .account = "B"},                               /* 4 */
    {.parent = 4, .shares = 1, .account = "B", .user = "u3", .usage = 0},     /* 5 */
    {.parent = 0, .shares = 2, .account = "root", .user = "u0", .usage = 60}, /* 6 */
};

static void test_classic(void **state)
{
    (void)state;
    usage_tree_t *t = build(t1, 7);
    struct fairshare_row r[7];
    compute(t, FAIRSHARE_CLASSIC, 1, r);
    assert_true(r[0].raw_usage == 100.0);
    assert_true(r[1].raw_usage == 40.0);
    assert_true(fabs(r[1].norm_shares - 0.25) < EPS);
    assert_true(fabs(r[2].norm_shares - 0.125) < EPS);
    assert_true(fabs(r[5].norm_shares - 0.25) < EPS);
    assert_true(fabs(r[6].norm_shares - 0.5) < EPS);
    /* children of root: UE = U; below: U + (UE_parent - U) * S/S_siblings */
    assert_true(fabs(r[1].effectv_usage - 0.4) < EPS);
    assert_true(fabs(r[2].effectv_usage - 0.25) < EPS);
    assert_true(fabs(r[3].effectv_usage - 0.35) < EPS);
    assert_true(fabs(r[6].effectv_usage - 0.6) < EPS);
    assert_true(fabs(r[1].fairshare - exp2(-1.6)) < EPS);
    assert_true(fabs(r[2].fairshare - 0.25) < EPS);
    assert_true(fabs(r[3].fairshare - exp2(-2.8)) < EPS);
    assert_true(fabs(r[5].fairshare - 1.0) < EPS);
    assert_true(fabs(r[6].fairshare - exp2(-1.2)) < EPS);
    assert_true(isnan(r[2].level_fs));
    compute(t, FAIRSHARE_CLASSIC, 2, r); /* FairShareDampeningFactor=2 */
    assert_true(fabs(r[2].fairshare - 0.5) < EPS);
    usage_tree_destroy(t);
}

static void test_fair_tree(void **state)
{
    (void)state;
    usage_tree_t *t = build(t1, 7);
    struct fairshare_row r[7];
    compute(t, FAIRSHARE_FAIR_TREE, 1, r);
    assert_true(fabs(r[1].level_fs - 0.625) < EPS);
    assert_true(isinf(r[4].level_fs));
    assert_true(fabs(r[6].level_fs - 0.5 / 0.6) < EPS);
    assert_true(fabs(r[2].level_fs - 2.0) < EPS);
    /* order B(inf) > u0 > A: u3, u0, u1, u2 */
    assert_int_equal(r[5].rank, 4);
    assert_int_equal(r[6].rank, 3);
    assert_int_equal(r[2].rank, 2);
    assert_int_equal(r[3].rank, 1);
    assert_true(r[5].fairshare == 1.0);
    assert_true(r[6].fairshare == 0.75);
    assert_true(r[2].fairshare == 0.5);
    assert_true(r[3].fairshare == 0.25);
    assert_true(isnan(r[1].fairshare));
    usage_tree_destroy(t);
}

static void test_flux(void **state)
{
    (void)state;
    usage_tree_t *t = build(t1, 7);
    struct fairshare_row r[7];
    compute(t, FAIRSHARE_FLUX, 1, r);
    assert_true(fabs(r[1].level_fs - 0.625) < EPS);
    assert_true(r[4].level_fs == 18446744073709551616.0);
    assert_true(r[5].fairshare == 1.0);
    assert_true(r[6].fairshare == 0.75);
    assert_true(r[2].fairshare == 0.5);
    assert_true(r[3].fairshare == 0.25);
    usage_tree_destroy(t);
}

/* Fair Tree ties: u4, A and B tie at LevelFS 1 under root.  u4 (user first) takes rank 4;
 * A and B merge their children; the first of them starts tied with u4 (rule 3). */
static void test_fair_tree_ties(void **state)
{
    (void)state;
    const struct usage_assoc_spec s[] = {
        {.parent = -1, .account = "root"},                                        /* 0 */
        {.parent = 0, .shares = 1, .account = "A"},                               /* 1 */
        {.parent = 1, .shares = 1, .account = "A", .user = "u1", .usage = 2},     /* 2 */
        {.parent = 1, .shares = 1, .account = "A", .user = "u2", .usage = 8},     /* 3 */
        {.parent = 0, .shares = 1, .account = "B"},                               /* 4 */
        {.parent = 4, .shares = 1, .account = "B", .user = "u3", .usage = 10},    /* 5 */
        {.parent = 0, .shares = 1, .account = "root", .user = "u4", .usage = 10}, /* 6 */
    };
    struct fairshare_row r[7];
    usage_tree_t *t = build(s, 7); /* A 10, B 10, u4 10: all LevelFS 1 */
    compute(t, FAIRSHARE_FAIR_TREE, 1, r);
    assert_true(r[1].level_fs == r[4].level_fs);
    assert_true(r[1].level_fs == r[6].level_fs);
    assert_int_equal(r[6].rank, 4); /* u4 */
    assert_int_equal(r[2].rank, 4); /* u1: LevelFS 2.5, first of the merged list: tied */
    assert_int_equal(r[5].rank, 2); /* u3: LevelFS 1 */
    assert_int_equal(r[3].rank, 1); /* u2: LevelFS 0.625 */
    usage_tree_destroy(t);

    /* two users with equal LevelFS share a rank; the next one gets the rank without ties */
    const struct usage_assoc_spec u[] = {
        {.parent = -1, .account = "root"},
        {.parent = 0, .shares = 1, .account = "root", .user = "a", .usage = 5},
        {.parent = 0, .shares = 1, .account = "root", .user = "b", .usage = 5},
        {.parent = 0, .shares = 1, .account = "root", .user = "c", .usage = 10},
    };
    t = build(u, 4);
    compute(t, FAIRSHARE_FAIR_TREE, 1, r);
    assert_int_equal(r[1].rank, 3);
    assert_int_equal(r[2].rank, 3);
    assert_int_equal(r[3].rank, 1);
    compute(t, FAIRSHARE_FLUX, 1, r);
    assert_int_equal(r[1].rank, 3);
    assert_int_equal(r[2].rank, 3);
    assert_int_equal(r[3].rank, 1);
    usage_tree_destroy(t);
}

static void test_zero_shares(void **state)
{
    (void)state;
    const struct usage_assoc_spec s[] = {
        {.parent = -1, .account = "root"},
        {.parent = 0, .shares = 0, .account = "A"},
        {.parent = 1, .shares = 1, .account = "A", .user = "u1", .usage = 0},
        {.parent = 0, .shares = 1, .account = "B"},
        {.parent = 3, .shares = 1, .account = "B", .user = "u2", .usage = 100},
        {.parent = 3, .shares = 0, .account = "B", .user = "u3", .usage = 0},
    };
    usage_tree_t *t = build(s, 6);
    struct fairshare_row r[6];
    compute(t, FAIRSHARE_FAIR_TREE, 1, r);
    assert_true(r[1].level_fs == 0.0);
    assert_true(r[5].level_fs == 0.0); /* no shares beats no usage */
    assert_int_equal(r[4].rank, 3);    /* B first: u2 (LevelFS 1) then u3 (0) */
    assert_int_equal(r[5].rank, 2);
    assert_int_equal(r[2].rank, 1); /* A has no shares: last, u1 LevelFS inf inside */
    compute(t, FAIRSHARE_CLASSIC, 1, r);
    assert_true(r[1].fairshare == 0.0);
    assert_true(r[2].fairshare == 0.0); /* NormShares 0 through the parent */
    assert_true(r[5].fairshare == 0.0);
    compute(t, FAIRSHARE_FLUX, 1, r);
    assert_true(r[1].level_fs == 0.0);
    assert_int_equal(r[4].rank, 3);
    assert_int_equal(r[5].rank, 2);
    assert_int_equal(r[2].rank, 1);
    usage_tree_destroy(t);
}

/* flux-accounting guide's view-bank tree, no usage anywhere. */
static const struct usage_assoc_spec fluxdoc[] = {
    {.parent = -1, .shares = 1, .account = "root"},                      /* 0 */
    {.parent = 0, .shares = 1, .account = "bank_A"},                     /* 1 */
    {.parent = 1, .shares = 1, .account = "bank_A", .user = "user_1"},   /* 2 */
    {.parent = 0, .shares = 1, .account = "bank_B"},                     /* 3 */
    {.parent = 3, .shares = 1, .account = "bank_B", .user = "user_2"},   /* 4 */
    {.parent = 3, .shares = 1, .account = "bank_B", .user = "user_3"},   /* 5 */
    {.parent = 0, .shares = 1, .account = "bank_C"},                     /* 6 */
    {.parent = 6, .shares = 1, .account = "bank_C_a"},                   /* 7 */
    {.parent = 7, .shares = 1, .account = "bank_C_a", .user = "user_4"}, /* 8 */
    {.parent = 6, .shares = 1, .account = "bank_C_b"},                   /* 9 */
    {.parent = 9, .shares = 1, .account = "bank_C_b", .user = "user_5"}, /* 10 */
    {.parent = 9, .shares = 1, .account = "bank_C_b", .user = "user_6"}, /* 11 */
};

static void test_zero_usage(void **state)
{
    (void)state;
    usage_tree_t *t = build(fluxdoc, 12);
    struct fairshare_row r[12];
    /* Fair Tree: everything ties at inf, all tied accounts merge: every user ranks 6 */
    compute(t, FAIRSHARE_FAIR_TREE, 1, r);
    for (size_t i = 0; i < 12; i++)
        if (usage_tree_is_user(t, i))
            assert_true(r[i].fairshare == 1.0);
    /* flux: users of the merged level come before the merged sub-accounts and the tie does
     * not cross levels, so user_1..3 rank 6 and user_4..6 rank 3 */
    compute(t, FAIRSHARE_FLUX, 1, r);
    assert_true(r[2].fairshare == 1.0);
    assert_true(r[4].fairshare == 1.0);
    assert_true(r[5].fairshare == 1.0);
    assert_true(r[8].fairshare == 0.5);
    assert_true(r[10].fairshare == 0.5);
    assert_true(r[11].fairshare == 0.5);
    /* classic: no usage, F = 2^0 = 1 */
    compute(t, FAIRSHARE_CLASSIC, 1, r);
    assert_true(r[8].fairshare == 1.0);
    usage_tree_destroy(t);
}

/* A chain of accounts, each with one user (usage 1) and the next account.  Users rank in
 * depth order; the last two tie (user and account have equal LevelFS at the bottom). */
static void test_deep(void **state)
{
    (void)state;
    enum { D = 3000 };
    struct usage_assoc_spec *s = calloc(2 * D + 1, sizeof(*s));
    char(*names)[16] = calloc(2 * D + 1, sizeof(*names));
    assert_non_null(s);
    assert_non_null(names);
    s[0] = (struct usage_assoc_spec){.parent = -1, .account = "root"};
    int64_t acct = 0;
    for (int k = 1; k <= D; k++) {
        size_t a = (size_t)(2 * k - 1), u = (size_t)(2 * k);
        snprintf(names[a], sizeof(names[a]), "a%d", k);
        snprintf(names[u], sizeof(names[u]), "u%d", k);
        s[a] = (struct usage_assoc_spec){.parent = acct, .shares = 1, .account = names[a]};
        s[u] = (struct usage_assoc_spec){
            .parent = (int64_t)a, .shares = 1, .account = names[a], .user = names[u], .usage = 1};
        acct = (int64_t)a;
    }
    usage_tree_t *t = build(s, 2 * D + 1);
    struct fairshare_row *r = calloc(2 * D + 1, sizeof(*r));
    assert_non_null(r);
    assert_int_equal(usage_tree_depth(t, 2 * D), D + 1);
    compute(t, FAIRSHARE_FAIR_TREE, 1, r);
    for (int k = 1; k < D; k++)
        assert_int_equal(r[2 * k].rank, D - k + 1);
    assert_int_equal(r[2 * D].rank, 2);
    compute(t, FAIRSHARE_FLUX, 1, r);
    assert_int_equal(r[2].rank, D);
    compute(t, FAIRSHARE_CLASSIC, 1, r);
    assert_true(r[2 * D].fairshare >= 0.0);
    assert_true(r[0].raw_usage == (double)D);
    usage_tree_destroy(t);
    free(r);
    free(s);
    free(names);
}

static void test_format_sshare(void **state)
{
    (void)state;
    usage_tree_t *t = build(t1, 7);
    struct fairshare_row r[7];
    char line[256];
    uint32_t order[7];
    struct allot_error err = {0};
    compute(t, FAIRSHARE_FAIR_TREE, 1, r);
    assert_int_equal(usage_tree_display_order(t, order, &err), 0);
    const char *want[] = {
        /* root's NormUsage blank, as a live sshare prints it (t3600) */
        "root|||0.000000|100||1.000000||||",
        " root|u0|2|0.500000|60|0.600000|0.600000|0.750000|0.833333||",
        " A||1|0.250000|40|0.400000|0.400000||0.625000||",
        "  A|u1|1|0.500000|10|0.100000|0.250000|0.500000|2.000000||",
        "  A|u2|1|0.500000|30|0.300000|0.750000|0.250000|0.666667||",
        " B||1|0.250000|0|0.000000|0.000000||inf||",
        "  B|u3|1|1.000000|0|0.000000|0.000000|1.000000|inf||",
    };
    for (size_t k = 0; k < 7; k++) {
        int n = fairshare_format_sshare(t, r, FAIRSHARE_FAIR_TREE, order[k], NULL, NULL, line,
                                        sizeof(line), &err);
        assert_true(n > 0);
        assert_string_equal(line, want[k]);
    }
    assert_string_equal(fairshare_sshare_header(FAIRSHARE_FAIR_TREE),
                        "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|"
                        "FairShare|LevelFS|GrpTRESMins|TRESRunMins");
    compute(t, FAIRSHARE_CLASSIC, 1, r);
    fairshare_format_sshare(t, r, FAIRSHARE_CLASSIC, 2, "cpu=10", "cpu=0", line, sizeof(line),
                            &err);
    assert_string_equal(line, "  A|u1|1|0.125000|10|0.100000|0.250000|0.250000|cpu=10|cpu=0");
    /* classic root row: NormShares 1, NormUsage blank, EffectvUsage 1 (22.05.8's sshare) */
    fairshare_format_sshare(t, r, FAIRSHARE_CLASSIC, order[0], NULL, NULL, line, sizeof(line),
                            &err);
    assert_string_equal(line, "root|||1.000000|100||1.000000|0.500000||");
    assert_int_equal(
        fairshare_format_sshare(t, r, FAIRSHARE_CLASSIC, 2, NULL, NULL, line, 10, &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    usage_tree_destroy(t);
}

static void test_format_flux(void **state)
{
    (void)state;
    usage_tree_t *t = build(fluxdoc, 12);
    struct fairshare_row r[12];
    char line[256];
    struct allot_error err = {0};
    compute(t, FAIRSHARE_FLUX, 1, r);
    /* layout of the guide's `flux account view-bank root -t` */
    assert_string_equal(fairshare_flux_header(),
                        "Account                         Username           RawShares"
                        "            RawUsage           Fairshare");
    fairshare_format_flux(t, r, 0, line, sizeof(line), &err);
    assert_string_equal(line, "root                                                       1"
                              "                 0.0");
    fairshare_format_flux(t, r, 7, line, sizeof(line), &err);
    assert_string_equal(line, "  bank_C_a                                                 1"
                              "                 0.0");
    fairshare_format_flux(t, r, 8, line, sizeof(line), &err);
    assert_string_equal(line, "   bank_C_a                       user_4                   1"
                              "                 0.0                 0.5");
    char num[32];
    const struct {
        double v;
        const char *s;
    } py[] = {{16000.0, "16000.0"}, {0.5, "0.5"}, {1e-05, "1e-05"},
              {1.5e16, "1.5e+16"},  {0.1, "0.1"}, {2.0 / 3, "0.6666666666666666"},
              {INFINITY, "inf"}};
    for (size_t k = 0; k < sizeof(py) / sizeof(py[0]); k++) {
        fairshare_format_pyfloat(py[k].v, num, sizeof(num));
        assert_string_equal(num, py[k].s);
    }
    usage_tree_destroy(t);
}

static void test_bad_algo(void **state)
{
    (void)state;
    usage_tree_t *t = build(t1, 7);
    struct fairshare_row r[7];
    struct allot_error err = {0};
    struct fairshare_opts o = {.algo = (enum fairshare_algo)7};
    assert_int_equal(fairshare_compute(t, &o, r, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    usage_tree_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classic),     cmocka_unit_test(test_fair_tree),
        cmocka_unit_test(test_flux),        cmocka_unit_test(test_fair_tree_ties),
        cmocka_unit_test(test_zero_shares), cmocka_unit_test(test_zero_usage),
        cmocka_unit_test(test_deep),        cmocka_unit_test(test_format_sshare),
        cmocka_unit_test(test_format_flux), cmocka_unit_test(test_bad_algo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
