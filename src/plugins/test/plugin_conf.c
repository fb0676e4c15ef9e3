/* SPDX-License-Identifier: GPL-3.0-or-later */
/* plugin_conf.c - unit tests of the plugins' allot.conf reading (common/plugin_conf.c): the
 * URL they derive and when they rely on Unix-socket peer credentials instead of MUNGE
 * (SocketPeerAuth=yes and a unix: URL only).  Real files in a private temp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugins/common/plugin_conf.h"

/* Write text to a fresh file and load it as the plugins do. */
static void load(const char *text, plugin_conf_t *pc)
{
    char path[] = "/tmp/plugin_conf_test.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
    struct allot_error err = {0};
    int rc = plugin_conf_load(path, pc, &err);
    unlink(path);
    if (rc < 0)
        fail_msg("plugin_conf_load: %s", err.msg);
}

static void test_peer_auth(void **state)
{
    (void)state;
    plugin_conf_t pc;
    /* Default key value (yes), URL from ListenSocket: peer credentials. */
    load("StorageLoc=/tmp/x.db\nListenSocket=/run/allot/allotd.sock\n", &pc);
    assert_string_equal(pc.url, "unix:/run/allot/allotd.sock");
    assert_int_equal(pc.peer_auth, 1);
    allot_client_t *c = plugin_client_create(&pc, NULL);
    assert_non_null(c);
    allot_client_destroy(c);
    /* SocketPeerAuth=no: MUNGE even on the socket. */
    load("StorageLoc=/tmp/x.db\nListenSocket=/run/allot/allotd.sock\nSocketPeerAuth=no\n", &pc);
    assert_int_equal(pc.peer_auth, 0);
    /* A TCP URL never skips MUNGE, whatever the key says. */
    load("StorageLoc=/tmp/x.db\nListenAddr=127.0.0.1:8760\n", &pc);
    assert_string_equal(pc.url, "http://127.0.0.1:8760");
    assert_int_equal(pc.peer_auth, 0);
    c = plugin_client_create(&pc, NULL);
    assert_non_null(c);
    allot_client_destroy(c);
    load("StorageLoc=/tmp/x.db\nListenSocket=/run/a.sock\nAllotdUrl=http://127.0.0.1:1\n", &pc);
    assert_int_equal(pc.peer_auth, 0);
    /* OperatorSocket is preferred to ListenSocket; AllotdUrl to both. */
    load("StorageLoc=/tmp/x.db\nListenSocket=/run/a.sock\nOperatorSocket=/run/op.sock\n", &pc);
    assert_string_equal(pc.url, "unix:/run/op.sock");
    assert_int_equal(pc.peer_auth, 1);
    load("StorageLoc=/tmp/x.db\nOperatorSocket=/run/op.sock\nAllotdUrl=unix:/run/b.sock\n", &pc);
    assert_string_equal(pc.url, "unix:/run/b.sock");
    /* An explicit unix: AllotdUrl counts like the socket default. */
    load("StorageLoc=/tmp/x.db\nListenAddr=127.0.0.1:8760\nAllotdUrl=unix:/run/b.sock\n", &pc);
    assert_int_equal(pc.peer_auth, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peer_auth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
