/* SPDX-License-Identifier: GPL-3.0-or-later */
/* conn.c - unit tests of the client's connection handling against a scripted HTTP server on
 * a Unix socket (the transport the Slurm plugins use): a server that closes a kept-alive
 * connection between two requests costs the second request nothing (one fresh connection,
 * the request received once), and a reply cut short (fewer bytes than its Content-Length)
 * is an error (EUNAVAIL, retried by the plugins), never a short success; keep-alive reuses
 * one connection and, turned off, opens one per request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "allot/allot.h"

/* What the server does with each request, in order. */
enum act {
    ACT_KEEP,  /* answer in full, keep the connection */
    ACT_CLOSE, /* answer in full, then close (an idle keep-alive connection it drops) */
    ACT_SHORT, /* promise a longer body than it sends, then close */
};

#define SCRIPT_MAX 8
#define BODY "{\"settled\":true,\"replay\":false}"

static struct server {
    int fd;
    char path[108];
    enum act script[SCRIPT_MAX];
    int nscript;
    int requests;    /* requests received in full */
    int connections; /* connections accepted */
    pthread_t thread;
} srv;

/* Read one request (headers and Content-Length body).  1, or 0 at EOF / error. */
static int read_request(int fd)
{
    char buf[8192];
    size_t len = 0;
    char *end = NULL;

    while (!end) {
        if (len + 1 >= sizeof(buf))
            return 0;
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n <= 0)
            return 0;
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t body = 0, have = len - (size_t)(end + 4 - buf);
    for (char *l = buf; l && l < end; l = strstr(l, "\r\n") ? strstr(l, "\r\n") + 2 : NULL)
        if (strncasecmp(l, "Content-Length:", 15) == 0)
            body = strtoul(l + 15, NULL, 10);
    while (have < body) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0)
            return 0;
        have += (size_t)n;
    }
    return 1;
}

/* Runs on the server thread: no cmocka assertion here (they must run on the test's). */
static void answer(int fd, enum act a)
{
    char out[512];
    size_t blen = strlen(BODY);
    int n = snprintf(out, sizeof(out),
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     a == ACT_SHORT ? blen + 100 : blen, BODY);
    if (n > 0 && (size_t)n < sizeof(out) && write(fd, out, (size_t)n) != n)
        srv.requests = -1000; /* makes the test's count fail */
}

static void *serve(void *arg)
{
    (void)arg;
    int step = 0;

    while (step < srv.nscript) {
        int c = accept(srv.fd, NULL, NULL);
        if (c < 0)
            break;
        srv.connections++;
        while (step < srv.nscript && read_request(c)) {
            enum act a = srv.script[step++];
            srv.requests++;
            answer(c, a);
            if (a != ACT_KEEP)
                break;
        }
        close(c);
    }
    return NULL;
}

static void server_start(const enum act *script, int n)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    memset(&srv, 0, sizeof(srv));
    snprintf(srv.path, sizeof(srv.path), "/tmp/liballot_conn.%d.sock", (int)getpid());
    unlink(srv.path);
    memcpy(srv.script, script, sizeof(*script) * (size_t)n);
    srv.nscript = n;
    srv.fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(srv.fd >= 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", srv.path);
    assert_int_equal(bind(srv.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(srv.fd, 4), 0);
    assert_int_equal(pthread_create(&srv.thread, NULL, serve, NULL), 0);
}

static void server_stop(void)
{
    pthread_join(srv.thread, NULL);
    close(srv.fd);
    unlink(srv.path);
}

static allot_client_t *client(void)
{
    struct allot_error err = {0};
    char url[128];

    snprintf(url, sizeof(url), "unix:%s", srv.path);
    allot_client_t *c = allot_client_create(url, &err);
    assert_non_null(c);
    assert_int_equal(allot_client_set_timeout_ms(c, 2000, &err), 0);
    assert_int_equal(allot_client_set_test_user(c, "root", &err), 0); /* no munged here */
    return c;
}

static void test_server_closes_kept_connection(void **state)
{
    (void)state;
    const enum act script[] = {ACT_CLOSE, ACT_KEEP};
    struct allot_error err = {0};
    char *reply = NULL;
    int status = 0;

    server_start(script, 2);
    allot_client_t *c = client();
    assert_int_equal(allot_request(c, "POST", "/v1/jobs/settle", "{}", &status, &reply, &err), 0);
    assert_string_equal(reply, BODY);
    free(reply);
    assert_int_equal(allot_request(c, "POST", "/v1/jobs/settle", "{}", &status, &reply, &err), 0);
    assert_int_equal(status, 200);
    assert_string_equal(reply, BODY);
    free(reply);
    allot_client_destroy(c);
    server_stop();
    assert_int_equal(srv.connections, 2);
    assert_int_equal(srv.requests, 2); /* nothing sent twice */
}

/* Two requests on a kept-alive client share one connection (the default); with keep-alive
 * off (allot_client_set_keepalive 0) each has its own, and turned on again they share. */
static int connections_for_two(int keepalive)
{
    const enum act script[] = {ACT_KEEP, ACT_KEEP};
    struct allot_error err = {0};
    char *reply = NULL;
    int status = 0;

    server_start(script, 2);
    allot_client_t *c = client();
    if (keepalive >= 0)
        allot_client_set_keepalive(c, keepalive);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(allot_request(c, "POST", "/v1/jobs/settle", "{}", &status, &reply, &err),
                         0);
        assert_int_equal(status, 200);
        assert_string_equal(reply, BODY);
        free(reply);
    }
    allot_client_destroy(c);
    server_stop();
    assert_int_equal(srv.requests, 2);
    return srv.connections;
}

static void test_keepalive(void **state)
{
    (void)state;
    assert_int_equal(connections_for_two(-1), 1); /* default: kept */
    assert_int_equal(connections_for_two(0), 2);
    assert_int_equal(connections_for_two(1), 1);
}

static void test_reply_cut_short(void **state)
{
    (void)state;
    const enum act script[] = {ACT_SHORT};
    struct allot_error err = {0};
    char *reply = (char *)"untouched";
    int status = -1;

    server_start(script, 1);
    allot_client_t *c = client();
    assert_int_equal(allot_request(c, "POST", "/v1/jobs/settle", "{}", &status, &reply, &err), -1);
    assert_int_equal(err.code, ALLOT_EUNAVAIL);
    assert_non_null(strstr(err.msg, srv.path));
    assert_int_equal(status, 0);
    assert_null(reply);
    allot_client_destroy(c);
    server_stop();
    assert_int_equal(srv.requests, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_closes_kept_connection),
        cmocka_unit_test(test_reply_cut_short),
        cmocka_unit_test(test_keepalive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
