/* SPDX-License-Identifier: GPL-3.0-or-later */
/* url.c - unit tests of liballot's address parsing and URL encoding (liballot/url.c):
 * table-driven accepted and refused URLs, and the request path's client-side checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allot/allot.h"
#include "liballot/client_int.h"

static const struct {
    const char *url;
    const char *base;
    const char *socket;
} good[] = {
    {"http://127.0.0.1:8760", "http://127.0.0.1:8760", NULL},
    {"http://127.0.0.1:8760/", "http://127.0.0.1:8760", NULL},
    {"http://localhost", "http://localhost", NULL},
    {"https://bank.example.org:443/allot//", "https://bank.example.org:443/allot", NULL},
    {"http://[::1]:8760", "http://[::1]:8760", NULL},
    {"unix:/run/allot/allotd.sock", "http://localhost", "/run/allot/allotd.sock"},
    {"unix:/tmp/x/", "http://localhost", "/tmp/x"},
};

static const struct {
    const char *url;
    const char *needle; /* part of the message */
} bad[] = {
    {"", "empty"},
    {"ftp://host", "expected http"},
    {"127.0.0.1:8760", "expected http"},
    {"unix:relative.sock", "absolute"},
    {"http://", "missing host"},
    {"http://:80", "missing host"},
    {"http://host:0", "port"},
    {"http://host:65536", "port"},
    {"http://host:123456", "port"},
    {"http://host:80x", "unexpected"},
    {"http://us er@host", "bad character"},
    {"http://host/p?q=1", "path prefix"},
    {"http://[::1", "IPv6"},
};

static void test_good_urls(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char *base = NULL, *sock = NULL;
        struct allot_error err = {0};
        assert_int_equal(client_url_parse(good[i].url, &base, &sock, &err), 0);
        assert_string_equal(base, good[i].base);
        if (good[i].socket)
            assert_string_equal(sock, good[i].socket);
        else
            assert_null(sock);
        free(base);
        free(sock);
    }
}

static void test_bad_urls(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *base = (char *)"untouched", *sock = (char *)"untouched";
        struct allot_error err = {0};
        assert_int_equal(client_url_parse(bad[i].url, &base, &sock, &err), -1);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_non_null(strstr(err.msg, "url"));
        if (!strstr(err.msg, bad[i].needle))
            fail_msg("url '%s': message '%s' lacks '%s'", bad[i].url, err.msg, bad[i].needle);
        assert_string_equal(base, "untouched");
        assert_string_equal(sock, "untouched");
    }
}

static void test_long_socket_path(void **state)
{
    char url[200] = "unix:/";
    struct allot_error err = {0};
    char *base = NULL, *sock = NULL;
    (void)state;
    memset(url + 6, 'a', 120);
    url[126] = '\0';
    assert_int_equal(client_url_parse(url, &base, &sock, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
}

static void test_urlencode(void **state)
{
    (void)state;
    char *s = allot_urlencode("chem-1.a_b~", NULL);
    assert_string_equal(s, "chem-1.a_b~");
    free(s);
    s = allot_urlencode("a b/c?d=e&f%", NULL);
    assert_string_equal(s, "a%20b%2Fc%3Fd%3De%26f%25");
    free(s);
    s = allot_urlencode(NULL, NULL);
    assert_string_equal(s, "");
    free(s);
}

static void test_client_create(void **state)
{
    struct allot_error err = {0};
    (void)state;
    allot_client_t *c = allot_client_create("unix:/run/x.sock/", &err);
    assert_non_null(c);
    assert_string_equal(allot_client_url(c), "unix:/run/x.sock");
    assert_int_equal(allot_client_set_timeout_ms(c, 0, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(allot_client_set_timeout_ms(c, ALLOT_MAX_TIMEOUT_MS + 1, &err), -1);
    assert_int_equal(allot_client_set_timeout_ms(c, 250, &err), 0);
    assert_int_equal(allot_client_set_run_as(c, "-x", &err), -1);
    assert_int_equal(allot_client_set_run_as(c, "alice", &err), 0);
    assert_int_equal(allot_client_set_run_as(c, NULL, &err), 0);
    assert_int_equal(allot_client_set_munge_socket(c, "rel/path", &err), -1);
    /* Client-side request checks fail before any credential or connection. */
    assert_int_equal(allot_request(c, "BREW", "/v1/x", NULL, NULL, NULL, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(allot_request(c, "GET", "v1/x", NULL, NULL, NULL, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    allot_client_destroy(c);
    allot_client_destroy(NULL);

    assert_null(allot_client_create("gopher://x", &err));
    assert_int_equal(err.code, ALLOT_EINVAL);

    setenv("ALLOT_URL", "http://127.0.0.1:9", 1);
    c = allot_client_create(NULL, &err);
    assert_non_null(c);
    assert_string_equal(allot_client_url(c), "http://127.0.0.1:9");
    allot_client_destroy(c);
    unsetenv("ALLOT_URL");
    c = allot_client_create("", &err);
    assert_non_null(c);
    assert_string_equal(allot_client_url(c), ALLOT_DEFAULT_URL);
    allot_client_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_urls),        cmocka_unit_test(test_bad_urls),
        cmocka_unit_test(test_long_socket_path), cmocka_unit_test(test_urlencode),
        cmocka_unit_test(test_client_create),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
