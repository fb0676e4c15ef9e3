/* SPDX-License-Identifier: GPL-3.0-or-later */
/* plugin_conf.c - unit tests of the plugins' allot.conf reading (common/plugin_conf.c): the
 * URL they derive and when they rely on Unix-socket peer credentials instead of MUNGE
 * (SocketPeerAuth=yes and a unix: URL only), and StartRefusal / StartRetryDelay.  Real files
 * in a private temp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
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

static void test_start_refusal(void **state)
{
    (void)state;
    plugin_conf_t pc;
    struct allot_error err = {0};
    /* Default: a refused start waits, retried every 60 s. */
    load("StorageLoc=/tmp/x.db\n", &pc);
    assert_int_equal(pc.start_cancel, 0);
    assert_int_equal(pc.start_retry_s, 60);
    load("StorageLoc=/tmp/x.db\nStartRefusal=cancel\nStartRetryDelay=2\n", &pc);
    assert_int_equal(pc.start_cancel, 1);
    assert_int_equal(pc.start_retry_s, 2);
    /* A delay under 2 s could spin a job through runs; an unknown mode is an error. */
    char path[] = "/tmp/plugin_conf_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *bad = "StorageLoc=/tmp/x.db\nStartRetryDelay=1\n";
    assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
    assert_int_equal(close(fd), 0);
    assert_int_equal(plugin_conf_load(path, &pc, &err), -1);
    assert_non_null(strstr(err.msg, "StartRetryDelay"));
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    bad = "StorageLoc=/tmp/x.db\nStartRefusal=requeue\n";
    assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
    assert_int_equal(close(fd), 0);
    assert_int_equal(plugin_conf_load(path, &pc, &err), -1);
    assert_non_null(strstr(err.msg, "StartRefusal"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peer_auth),
        cmocka_unit_test(test_start_refusal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
