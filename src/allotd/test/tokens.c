/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/tokens.c - the dashboard's token table (tokens.h): a token finds its grant until it
 * expires and never after; any other text (one digit off, upper case, short, long, empty)
 * finds nothing; tokens are distinct; the table refuses the TOKENS_MAX+1-th live token and
 * reuses the slot of an expired one; a user's TOKENS_PER_USER+1-th token replaces that
 * user's oldest and leaves everyone else's alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allotd/tokens.h"

#define NOW 1767225600

static struct token_grant grant(const char *user, int role, int64_t expires_s)
{
    struct token_grant g = {.role = role, .expires_s = expires_s};
    snprintf(g.user, sizeof(g.user), "%s", user);
    return g;
}

static void test_find_until_expiry(void **state)
{
    (void)state;
    struct tokens *t = tokens_new();
    struct allot_error err = {0};
    char hex[TOKEN_HEX_LEN + 1];
    struct token_grant g = grant("alice", 1, NOW + 60), out;
    assert_int_equal(tokens_add(t, &g, NOW, hex, &err), 0);
    assert_int_equal(strlen(hex), TOKEN_HEX_LEN);
    assert_int_equal(strspn(hex, "0123456789abcdef"), TOKEN_HEX_LEN);
    assert_int_equal(tokens_find(t, hex, NOW, &out), 1);
    assert_string_equal(out.user, "alice");
    assert_int_equal(out.role, 1);
    assert_int_equal(out.expires_s, NOW + 60);
    assert_int_equal(tokens_find(t, hex, NOW + 59, &out), 1);
    assert_int_equal(tokens_find(t, hex, NOW + 60, &out), 0); /* expired at expires_s */
    tokens_free(t);
}

static void test_other_texts_find_nothing(void **state)
{
    (void)state;
    struct tokens *t = tokens_new();
    struct allot_error err = {0};
    char hex[TOKEN_HEX_LEN + 1], other[TOKEN_HEX_LEN + 2];
    struct token_grant g = grant("bob", 2, NOW + 60), out;
    assert_int_equal(tokens_add(t, &g, NOW, hex, &err), 0);
    for (int i = 0; i < TOKEN_HEX_LEN; i++) { /* one digit off, anywhere */
        memcpy(other, hex, sizeof(hex));
        other[i] = other[i] == '0' ? '1' : '0';
        assert_int_equal(tokens_find(t, other, NOW, &out), 0);
    }
    memcpy(other, hex, sizeof(hex));
    for (int i = 0; other[i]; i++)
        if (other[i] >= 'a')
            other[i] = (char)(other[i] - 'a' + 'A');
    if (strcmp(other, hex) != 0) /* all digits would leave nothing to fold */
        assert_int_equal(tokens_find(t, other, NOW, &out), 0);
    memcpy(other, hex, sizeof(hex));
    other[TOKEN_HEX_LEN - 1] = '\0'; /* short */
    assert_int_equal(tokens_find(t, other, NOW, &out), 0);
    memcpy(other, hex, sizeof(hex));
    other[TOKEN_HEX_LEN] = '0'; /* long */
    other[TOKEN_HEX_LEN + 1] = '\0';
    assert_int_equal(tokens_find(t, other, NOW, &out), 0);
    assert_int_equal(tokens_find(t, "", NOW, &out), 0);
    assert_int_equal(tokens_find(t, NULL, NOW, &out), 0);
    /* A free slot's zero key is not a token. */
    memset(other, '0', TOKEN_HEX_LEN);
    other[TOKEN_HEX_LEN] = '\0';
    assert_int_equal(tokens_find(t, other, NOW, &out), 0);
    assert_int_equal(tokens_find(t, hex, NOW, &out), 1);
    tokens_free(t);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void test_capacity_and_reuse(void **state)
{
    (void)state;
    struct tokens *t = tokens_new();
    struct allot_error err = {0};
    static char hex[TOKENS_MAX][TOKEN_HEX_LEN + 1];
    for (int i = 0; i < TOKENS_MAX; i++) {
        /* One user each (the per-user cap is not what this fills); the first one expires
         * early, the rest stay. */
        char user[16];
        snprintf(user, sizeof(user), "u%d", i);
        struct token_grant g = grant(user, 1, i == 0 ? NOW + 10 : NOW + 1000);
        assert_int_equal(tokens_add(t, &g, NOW, hex[i], &err), 0);
    }
    static char sorted[TOKENS_MAX][TOKEN_HEX_LEN + 1];
    memcpy(sorted, hex, sizeof(hex));
    qsort(sorted, TOKENS_MAX, sizeof(sorted[0]), by_text);
    for (int i = 1; i < TOKENS_MAX; i++) /* no two of the 4096 alike */
        assert_string_not_equal(sorted[i], sorted[i - 1]);
    char extra[TOKEN_HEX_LEN + 1];
    struct token_grant g = grant("v", 1, NOW + 1000), out;
    assert_int_equal(tokens_add(t, &g, NOW, extra, &err), -1);
    assert_int_equal(err.code, ALLOT_EUNAVAIL);
    /* Once the first expired, its slot takes the new one; the others still answer. */
    assert_int_equal(tokens_add(t, &g, NOW + 10, extra, &err), 0);
    assert_int_equal(tokens_find(t, extra, NOW + 10, &out), 1);
    assert_string_equal(out.user, "v");
    assert_int_equal(tokens_find(t, hex[0], NOW + 10, &out), 0);
    assert_int_equal(tokens_find(t, hex[TOKENS_MAX - 1], NOW + 10, &out), 1);
    assert_string_equal(out.user, "u4095");
    tokens_free(t);
}

static void test_per_user_cap(void **state)
{
    (void)state;
    struct tokens *t = tokens_new();
    struct allot_error err = {0};
    char bob[TOKEN_HEX_LEN + 1], mine[TOKENS_PER_USER + 2][TOKEN_HEX_LEN + 1];
    struct token_grant b = grant("bob", 1, NOW + 1000), out;
    assert_int_equal(tokens_add(t, &b, NOW, bob, &err), 0);
    /* alice asks for two more than her share, each later than the last. */
    for (int i = 0; i < TOKENS_PER_USER + 2; i++) {
        struct token_grant g = grant("alice", 1, NOW + 1000 + i);
        assert_int_equal(tokens_add(t, &g, NOW + i, mine[i], &err), 0);
    }
    /* Her two oldest ended, in order; the newest TOKENS_PER_USER answer. */
    assert_int_equal(tokens_find(t, mine[0], NOW, &out), 0);
    assert_int_equal(tokens_find(t, mine[1], NOW, &out), 0);
    for (int i = 2; i < TOKENS_PER_USER + 2; i++) {
        assert_int_equal(tokens_find(t, mine[i], NOW, &out), 1);
        assert_string_equal(out.user, "alice");
    }
    /* bob's token was never hers to replace. */
    assert_int_equal(tokens_find(t, bob, NOW, &out), 1);
    assert_string_equal(out.user, "bob");
    /* Thousands more of hers still leave room for others. */
    for (int i = 0; i < TOKENS_MAX; i++) {
        struct token_grant g = grant("alice", 1, NOW + 2000);
        char hex[TOKEN_HEX_LEN + 1];
        assert_int_equal(tokens_add(t, &g, NOW, hex, &err), 0);
    }
    /* She holds TOKENS_PER_USER slots and bob one: every other slot takes another user's
     * token, and the one after those finds the store full. */
    for (int i = 0; i < TOKENS_MAX - TOKENS_PER_USER - 1; i++) {
        char user[16], hex[TOKEN_HEX_LEN + 1];
        snprintf(user, sizeof(user), "c%d", i);
        struct token_grant c = grant(user, 1, NOW + 1000);
        assert_int_equal(tokens_add(t, &c, NOW, hex, &err), 0);
    }
    char full[TOKEN_HEX_LEN + 1];
    struct token_grant c = grant("carol", 1, NOW + 1000);
    assert_int_equal(tokens_add(t, &c, NOW, full, &err), -1);
    assert_int_equal(err.code, ALLOT_EUNAVAIL);
    tokens_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_until_expiry),
        cmocka_unit_test(test_other_texts_find_nothing),
        cmocka_unit_test(test_capacity_and_reuse),
        cmocka_unit_test(test_per_user_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
