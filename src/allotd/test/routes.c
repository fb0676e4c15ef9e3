/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/routes.c - unit tests of routes.c: matching with captured parameters, 404 versus
 * 405, names, the parameter a refused path escape is in, and which roles may call each
 * kind of route. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "allotd/routes.h"

static void test_match(void **state)
{
    struct req r;
    struct allot_error err = {0};
    memset(&r, 0, sizeof(r));
    int i = routes_match("GET", "/v1/partitions/c1/std", &r, &err);
    assert_true(i >= 0);
    assert_string_equal(routes_name(i), "GET /v1/partitions/{}/{}");
    assert_string_equal(r.param[0], "c1");
    assert_string_equal(r.param[1], "std");
    i = routes_match("POST", "/v1/allocations/17/credit", &r, &err);
    assert_true(i >= 0);
    assert_string_equal(r.param[0], "17");
    assert_int_equal(routes_access(i), ACCESS_SUPER);
    i = routes_match("POST", "/v1/jobs/hold", &r, &err);
    assert_true(routes_hot(i));
    assert_int_equal(routes_access(i), ACCESS_OPERATOR);
}

static const struct {
    const char *method, *path;
    enum allot_errnum code;
    const char *msg;
} misses[] = {
    {"GET", "/v1/nosuch", ALLOT_ENOENT, "no such path"},
    {"GET", "/v1/partitions/c1", ALLOT_ENOENT, "no such path"},
    {"GET", "/v1/partitions/c1/std/x", ALLOT_ENOENT, "no such path"},
    {"GET", "/v1/accounts/", ALLOT_ENOENT, "no such path"},
    {"PUT", "/v1/accounts", ALLOT_EINVAL, "method: PUT is not allowed"},
    {"GET", "/v1/jobs/hold", ALLOT_EINVAL, "method: GET is not allowed on /v1/jobs/hold"},
    {"POST", "/healthz", ALLOT_EINVAL, "method:"},
};

static void test_misses(void **state)
{
    for (size_t k = 0; k < sizeof(misses) / sizeof(misses[0]); k++) {
        struct req r;
        struct allot_error err = {0};
        memset(&r, 0, sizeof(r));
        assert_int_equal(routes_match(misses[k].method, misses[k].path, &r, &err), -1);
        assert_int_equal(err.code, misses[k].code);
        if (!strstr(err.msg, misses[k].msg))
            fail_msg("%s %s: '%s'", misses[k].method, misses[k].path, err.msg);
    }
}

static void test_long_segment(void **state)
{
    char path[600] = "/v1/accounts/";
    memset(path + strlen(path), 'a', 400);
    path[413] = '\0';
    struct req r;
    struct allot_error err = {0};
    memset(&r, 0, sizeof(r));
    assert_int_equal(routes_match("GET", path, &r, &err), -1); /* longer than a param */
}

/* routes_path_escape: the parameter a refused escape is in, "path" in a fixed segment. */
static const struct {
    const char *path; /* decoded */
    size_t at;        /* where the escape's byte is */
    const char *msg;
} escapes[] = {
    {"/v1/accounts/chem", 17, "name: contains E"},   /* a NUL: the path ends there */
    {"/v1/accounts/chem/x", 17, "name: contains E"}, /* chem%2Fx */
    {"/v1/partitions/c1/std", 17, "cluster: contains E"},
    {"/v1/partitions/c1/std/x", 21, "name: contains E"},
    {"/v1/allocations/5/credit", 17, "id: contains E"},
    {"/v1/jobs/c1/7", 11, "cluster: contains E"},
    {"/v1/jobs/c1/7/8", 13, "job_id: contains E"},
    {"/v1/accounts/x", 3, "path: contains E"}, /* v1%2Faccounts */
    {"/v1/acc", 7, "path: contains E"},
    {"/", 0, "path: contains E"},
    {"", 0, "path: contains E"},
};

static void test_path_escape_names_parameter(void **state)
{
    for (size_t k = 0; k < sizeof(escapes) / sizeof(escapes[0]); k++) {
        struct allot_error err = {0};
        assert_int_equal(routes_path_escape(escapes[k].path, escapes[k].at, "E", &err), -1);
        assert_int_equal(err.code, ALLOT_EINVAL);
        if (strcmp(err.msg, escapes[k].msg) != 0)
            fail_msg("%s at %zu: want '%s', got '%s'", escapes[k].path, escapes[k].at,
                     escapes[k].msg, err.msg);
    }
}

static void test_allowed(void **state)
{
    assert_true(routes_allowed(ACCESS_PUBLIC, ROLE_NONE));
    assert_false(routes_allowed(ACCESS_ANY, ROLE_NONE));
    assert_true(routes_allowed(ACCESS_ANY, ROLE_USER));
    assert_false(routes_allowed(ACCESS_READALL, ROLE_USER));
    assert_true(routes_allowed(ACCESS_READALL, ROLE_ADMIN));
    assert_true(routes_allowed(ACCESS_OPERATOR, ROLE_OPERATOR));
    assert_false(routes_allowed(ACCESS_OPERATOR, ROLE_ADMIN));
    assert_true(routes_allowed(ACCESS_OPERATOR, ROLE_SUPERUSER));
    assert_false(routes_allowed(ACCESS_SUPER, ROLE_ADMIN));
    assert_true(routes_allowed(ACCESS_SUPER, ROLE_SUPERUSER));
    assert_true(routes_count() <= ROUTES_MAX);
    assert_null(routes_name(routes_count()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),        cmocka_unit_test(test_misses),
        cmocka_unit_test(test_long_segment), cmocka_unit_test(test_path_escape_names_parameter),
        cmocka_unit_test(test_allowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
