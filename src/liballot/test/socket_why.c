/* SPDX-License-Identifier: GPL-3.0-or-later */
/* socket_why.c - unit tests of a failed unix: connect's message (liballot/socket_why.c):
 * through allot_request on real paths (none there, a socket nobody listens on, a regular
 * file, a file above the socket) the error names the socket and the cause, never curl's
 * "localhost port 80"; and the text of every cause, permission included (root passes
 * permission checks, so the integration test t1026 runs that one as a plain user). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "allot/allot.h"
#include "liballot/client_int.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/allot-sockwhy.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char p[128];
    static const char *const names[] = {"bound.sock", "file"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    return rmdir(dir);
}

/* One GET through a client on unix:path; the error it fails with. */
static struct allot_error request_on(const char *path)
{
    char url[160];
    struct allot_error err = {0};
    snprintf(url, sizeof url, "unix:%s", path);
    allot_client_t *c = allot_client_create(url, &err);
    assert_non_null(c);
    assert_int_equal(allot_client_set_timeout_ms(c, 2000, &err), 0);
    assert_int_equal(allot_client_set_test_user(c, "root", &err), 0); /* no munged here */
    int status = 0;
    char *reply = NULL;
    assert_int_equal(allot_request(c, "GET", "/v1/whoami", NULL, &status, &reply, &err), -1);
    assert_null(reply);
    allot_client_destroy(c);
    return err;
}

static void expect_msg(const struct allot_error *e, const char *path, const char *cause)
{
    char want[256];
    snprintf(want, sizeof want, "cannot reach allotd: connect to unix socket %s: %s (", path,
             cause);
    if (strncmp(e->msg, want, strlen(want)) != 0)
        fail_msg("got '%s', want it to start with '%s'", e->msg, want);
    assert_null(strstr(e->msg, "port 80"));
    assert_int_equal(e->code, ALLOT_EUNAVAIL);
}

static void test_missing(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/none.sock", dir);
    struct allot_error e = request_on(p);
    expect_msg(&e, p, "no such file");
    assert_int_equal(client_socket_errno(p), ENOENT);
}

static void test_nobody_listens(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/bound.sock", dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    assert_true(strlen(p) < sizeof sa.sun_path);
    memcpy(sa.sun_path, p, strlen(p) + 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0); /* bound, no listen */
    struct allot_error e = request_on(p);
    expect_msg(&e, p, "connection refused");
    close(fd);
    /* A regular file in the socket's place: the same, nothing listens there. */
    snprintf(p, sizeof p, "%s/file", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    e = request_on(p);
    expect_msg(&e, p, "connection refused");
    /* A file where a directory of the path should be. */
    char below[160];
    snprintf(below, sizeof below, "%s/s.sock", p);
    e = request_on(below);
    expect_msg(&e, below, "not a directory");
}

static void test_texts(void **state)
{
    (void)state;
    char buf[512];
    client_socket_why("/run/allot/allotd.sock", EACCES, buf, sizeof buf);
    assert_string_equal(buf, "connect to unix socket /run/allot/allotd.sock: permission denied "
                             "(this user may not write to the socket or search a directory "
                             "above it; allotd makes the socket mode 0666, so look at its "
                             "directories)");
    client_socket_why("/s", ENOENT, buf, sizeof buf);
    assert_string_equal(buf, "connect to unix socket /s: no such file (is allotd running, with "
                             "ListenSocket set to this path?)");
    client_socket_why("/s", ECONNREFUSED, buf, sizeof buf);
    assert_non_null(strstr(buf, "/s: connection refused (nothing listens on it"));
    /* Any other cause: the system's words. */
    client_socket_why("/s", EMFILE, buf, sizeof buf);
    assert_string_equal(buf, "connect to unix socket /s: Too many open files");
    /* Bounded by the caller's buffer, always terminated. */
    char small[16];
    client_socket_why("/s", ENOENT, small, sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_nobody_listens),
        cmocka_unit_test(test_texts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
