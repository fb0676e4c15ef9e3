/* SPDX-License-Identifier: GPL-3.0-or-later */
/* setopt.c - unit tests of the request set-up: a libcurl option that does not take (lack of
 * memory) fails the request with ENOMEM before anything is sent, rather than sending it
 * elsewhere (no Unix socket path: TCP to localhost:80) or without its time bound.  Linked
 * with --wrap=curl_easy_setopt to fail one chosen option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <curl/curl.h>

#include "allot/allot.h"

static CURLoption fail_opt = (CURLoption)-1;

CURLcode __real_curl_easy_setopt(CURL *h, CURLoption opt, ...);
CURLcode __wrap_curl_easy_setopt(CURL *h, CURLoption opt, ...);

/* Forward the one argument by its type class (curl.h: option number / 10000). */
CURLcode __wrap_curl_easy_setopt(CURL *h, CURLoption opt, ...)
{
    va_list ap;
    CURLcode rc;

    if (opt == fail_opt)
        return CURLE_OUT_OF_MEMORY;
    va_start(ap, opt);
    if (opt < CURLOPTTYPE_OBJECTPOINT)
        rc = __real_curl_easy_setopt(h, opt, va_arg(ap, long));
    else if (opt < CURLOPTTYPE_OFF_T)
        rc = __real_curl_easy_setopt(h, opt, va_arg(ap, void *));
    else if (opt < CURLOPTTYPE_BLOB)
        rc = __real_curl_easy_setopt(h, opt, va_arg(ap, curl_off_t));
    else
        rc = __real_curl_easy_setopt(h, opt, va_arg(ap, void *));
    va_end(ap);
    return rc;
}

static void expect_setup_failure(const char *url, CURLoption opt)
{
    struct allot_error err = {0};
    char *reply = NULL;
    int status = -1;
    allot_client_t *c = allot_client_create(url, &err);

    assert_non_null(c);
    assert_int_equal(allot_client_set_timeout_ms(c, 500, &err), 0);
    assert_int_equal(allot_client_set_test_user(c, "root", &err), 0); /* no munged here */
    fail_opt = opt;
    assert_int_equal(allot_request(c, "POST", "/v1/jobs/settle", "{}", &status, &reply, &err), -1);
    fail_opt = (CURLoption)-1;
    assert_int_equal(err.code, ALLOT_ENOMEM);
    assert_non_null(strstr(err.msg, "cannot set up the request"));
    assert_int_equal(status, 0);
    assert_null(reply);
    allot_client_destroy(c);
}

static void test_unix_socket_option_fails(void **state)
{
    (void)state;
    expect_setup_failure("unix:/nonexistent/allotd.sock", CURLOPT_UNIX_SOCKET_PATH);
}

static void test_timeout_option_fails(void **state)
{
    (void)state;
    expect_setup_failure("unix:/nonexistent/allotd.sock", CURLOPT_TIMEOUT_MS);
    expect_setup_failure("http://127.0.0.1:1", CURLOPT_CONNECTTIMEOUT_MS);
    expect_setup_failure("http://127.0.0.1:1", CURLOPT_POSTFIELDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unix_socket_option_fails),
        cmocka_unit_test(test_timeout_option_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
