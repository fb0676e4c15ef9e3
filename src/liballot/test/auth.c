/* SPDX-License-Identifier: GPL-3.0-or-later */
/* auth.c - unit tests of the client's authentication choice (allot_client_set_auth and
 * $ALLOT_AUTH): peer credentials only on unix: URLs, MUNGE stays the default, bad values
 * are refused with EINVAL naming the problem.  That a peer-auth request really carries no
 * credential and is accepted is tested against a real allotd in t1025-socket-peer-auth.t. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allot/allot.h"

static void test_peer_needs_unix(void **state)
{
    (void)state;
    struct allot_error err = {0};
    allot_client_t *c = allot_client_create("http://127.0.0.1:8760", &err);
    assert_non_null(c);
    assert_int_equal(allot_client_set_auth(c, ALLOT_AUTH_PEER, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_non_null(strstr(err.msg, "unix:"));
    assert_int_equal(allot_client_set_auth(c, ALLOT_AUTH_MUNGE, &err), 0);
    allot_client_destroy(c);

    c = allot_client_create("unix:/run/allot/allotd.sock", &err);
    assert_non_null(c);
    assert_int_equal(allot_client_set_auth(c, ALLOT_AUTH_PEER, &err), 0);
    assert_int_equal(allot_client_set_auth(c, ALLOT_AUTH_MUNGE, &err), 0);
    assert_int_equal(allot_client_set_auth(c, (enum allot_auth)7, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    allot_client_destroy(c);
}

static void test_env(void **state)
{
    (void)state;
    struct allot_error err = {0};
    assert_int_equal(setenv("ALLOT_AUTH", "peer", 1), 0);
    allot_client_t *c = allot_client_create("unix:/run/allot/allotd.sock", &err);
    assert_non_null(c);
    allot_client_destroy(c);
    /* "peer" in the environment against a TCP URL is a mistake, not a silent fallback. */
    c = allot_client_create("http://127.0.0.1:8760", &err);
    assert_null(c);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_non_null(strstr(err.msg, "ALLOT_AUTH"));
    assert_int_equal(setenv("ALLOT_AUTH", "kerberos", 1), 0);
    c = allot_client_create("unix:/run/allot/allotd.sock", &err);
    assert_null(c);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_non_null(strstr(err.msg, "kerberos"));
    assert_int_equal(setenv("ALLOT_AUTH", "munge", 1), 0);
    c = allot_client_create("http://127.0.0.1:8760", &err);
    assert_non_null(c);
    allot_client_destroy(c);
    assert_int_equal(unsetenv("ALLOT_AUTH"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peer_needs_unix),
        cmocka_unit_test(test_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
