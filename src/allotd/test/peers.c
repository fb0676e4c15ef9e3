/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/peers.c - per-peer connection counts (peers.h): a peer gets its cap and no more,
 * a connection that leaves makes room again, peers do not share counts, and keys that come
 * and go many times over (every slot reused) are still found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "allotd/peers.h"

static void test_cap_and_leave(void **state)
{
    (void)state;
    struct peers *p = peers_new(3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(peers_enter(p, 1000), 1);
    assert_int_equal(peers_enter(p, 1000), 0); /* the fourth of uid 1000 */
    assert_int_equal(peers_count(p, 1000), 3);
    assert_int_equal(peers_enter(p, 1001), 1);                /* another peer is not affected */
    assert_int_equal(peers_enter(p, (1ULL << 63) | 1000), 1); /* an address, not uid 1000 */
    peers_leave(p, 1000);
    assert_int_equal(peers_enter(p, 1000), 1);
    assert_int_equal(peers_count(p, 1000), 3);
    assert_int_equal(peers_count(p, 1001), 1);
    peers_free(p);
}

static void test_churn(void **state)
{
    (void)state;
    struct peers *p = peers_new(2);
    /* Far more distinct keys than slots, each entering and leaving: tombstones are reused
     * and a live key is always found. */
    const uint64_t held = 1ULL << 62; /* a peer that stays connected throughout */
    for (uint64_t k = 0; k < 5 * PEERS_SLOTS; k++) {
        assert_int_equal(peers_enter(p, k), 1);
        assert_int_equal(peers_enter(p, held), k < 2 ? 1 : 0);
        assert_int_equal(peers_count(p, held), k < 1 ? 1 : 2);
        peers_leave(p, k);
        assert_int_equal(peers_count(p, k), 0);
    }
    /* A full table of live keys: the next new key is refused, a known one still counted. */
    struct peers *q = peers_new(1);
    for (uint64_t k = 0; k < PEERS_SLOTS; k++)
        assert_int_equal(peers_enter(q, k + 1), 1);
    assert_int_equal(peers_enter(q, PEERS_SLOTS + 1), 0);
    peers_leave(q, 5);
    assert_int_equal(peers_enter(q, PEERS_SLOTS + 1), 1);
    peers_free(q);
    peers_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cap_and_leave),
        cmocka_unit_test(test_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
