/* SPDX-License-Identifier: GPL-3.0-or-later */
/* reply.c - unit tests of the mapping from allotd error replies to struct allot_error
 * (liballot/reply.c): every code name round-trips, field prefixes, non-protocol bodies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "liballot/client_int.h"

static void test_every_code_round_trips(void **state)
{
    (void)state;
    for (int code = ALLOT_EINVAL; code < ALLOT_ERRNUM_MAX; code++) {
        char body[256];
        struct allot_error err = {0};
        snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"why %d\"}}",
                 allot_errname(code), code);
        assert_int_equal(client_reply_error(allot_error_http_status(code), body, &err), -1);
        assert_int_equal(err.code, code);
        char want[32];
        snprintf(want, sizeof(want), "why %d", code);
        assert_string_equal(err.msg, want);
    }
}

static const struct {
    int status;
    const char *body;
    enum allot_errnum code;
    const char *msg;
} cases[] = {
    /* The field is prefixed unless the message already names it. */
    {400, "{\"error\":{\"code\":\"EINVAL\",\"message\":\"must be positive\",\"field\":\"su\"}}",
     ALLOT_EINVAL, "su: must be positive"},
    {400, "{\"error\":{\"code\":\"EINVAL\",\"message\":\"su: must be positive\",\"field\":\"su\"}}",
     ALLOT_EINVAL, "su: must be positive"},
    {404, "{\"error\":{\"code\":\"ENOENT\",\"message\":\"account 'x' not found\"}}", ALLOT_ENOENT,
     "account 'x' not found"},
    {402,
     "{\"admitted\":false,\"error\":{\"code\":\"EFUNDS\",\"message\":\"m\"},\"message\":\"x\"}",
     ALLOT_EFUNDS, "m"},
    /* No usable body: the code follows the status, the message quotes the body. */
    {404, "<html>\nnot here</html>", ALLOT_ENOENT,
     "allotd answered HTTP 404: <html> not here</html>"},
    {503, "", ALLOT_EUNAVAIL, "allotd answered HTTP 503 with no body"},
    {418, NULL, ALLOT_EPROTO, "allotd answered HTTP 418 with no body"},
    {500, "{\"error\":{\"code\":\"EINTERNAL\"}}", ALLOT_EINTERNAL,
     "allotd answered HTTP 500: {\"error\":{\"code\":\"EINTERNAL\"}}"},
    /* An unknown code name from a newer daemon: the status decides. */
    {409, "{\"error\":{\"code\":\"ENEWTHING\",\"message\":\"later\"}}", ALLOT_ECONFLICT, "later"},
    /* "OK" is not an error code: a protocol error. */
    {400, "{\"error\":{\"code\":\"OK\",\"message\":\"odd\"}}", ALLOT_EPROTO, "odd"},
    {401, "{\"error\":\"flat string\"}", ALLOT_EAUTH,
     "allotd answered HTTP 401: {\"error\":\"flat string\"}"},
};

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct allot_error err = {0};
        assert_int_equal(client_reply_error(cases[i].status, cases[i].body, &err), -1);
        if (err.code != cases[i].code || strcmp(err.msg, cases[i].msg) != 0)
            fail_msg("case %zu: got %s '%s', want %s '%s'", i, allot_errname(err.code), err.msg,
                     allot_errname(cases[i].code), cases[i].msg);
    }
}

static void test_null_err(void **state)
{
    (void)state;
    assert_int_equal(client_reply_error(400, "{}", NULL), -1);
}

static void test_status_table(void **state)
{
    (void)state;
    assert_int_equal(client_status_errnum(400), ALLOT_EINVAL);
    assert_int_equal(client_status_errnum(401), ALLOT_EAUTH);
    assert_int_equal(client_status_errnum(402), ALLOT_EFUNDS);
    assert_int_equal(client_status_errnum(403), ALLOT_EPERM);
    assert_int_equal(client_status_errnum(404), ALLOT_ENOENT);
    assert_int_equal(client_status_errnum(409), ALLOT_ECONFLICT);
    assert_int_equal(client_status_errnum(413), ALLOT_ETOOBIG);
    assert_int_equal(client_status_errnum(500), ALLOT_EINTERNAL);
    assert_int_equal(client_status_errnum(503), ALLOT_EUNAVAIL);
    assert_int_equal(client_status_errnum(302), ALLOT_EPROTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_round_trips),
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_null_err),
        cmocka_unit_test(test_status_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
