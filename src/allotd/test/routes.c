/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/routes.c - unit tests of routes.c: matching with captured parameters, 404 versus
 * 405, the same answers as a plain scan of the table (what the key prefilter must not
 * change), names, the parameter a refused path escape is in, and which roles may call each
 * kind of route. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* A scan without the key prefilter, from the table as routes_name shows it. */
static int plain_match(const char *pattern, const char *path)
{
    while (*pattern) {
        if (pattern[0] == '{' && pattern[1] == '}') {
            const char *e = path;
            while (*e && *e != '/')
                e++;
            if (e == path || (size_t)(e - path) >= REQ_PARAM_LEN)
                return 0;
            path = e;
            pattern += 2;
        } else if (*pattern++ != *path++) {
            return 0;
        }
    }
    return *path == '\0';
}

/* The first route whose pattern matches path and whose method is method's; else -1, with
 * *known set when some route's pattern matched the path. */
static int plain_scan(const char *method, const char *path, int *known)
{
    *known = 0;
    for (int i = 0; i < routes_count(); i++) {
        const char *name = routes_name(i), *sp = strchr(name, ' ');
        if (!plain_match(sp + 1, path))
            continue;
        *known = 1;
        if (strlen(method) == (size_t)(sp - name) &&
            strncmp(name, method, (size_t)(sp - name)) == 0)
            return i;
    }
    return -1;
}

static void check_same(const char *method, const char *path)
{
    struct req r;
    struct allot_error err = {0};
    memset(&r, 0, sizeof(r));
    int known, want = plain_scan(method, path, &known);
    int got = routes_match(method, path, &r, &err);
    if (got != want)
        fail_msg("%s '%s': routes_match %d, a plain scan %d", method, path, got, want);
    if (got < 0 && err.code != (known ? ALLOT_EINVAL : ALLOT_ENOENT))
        fail_msg("%s '%s': error %d ('%s'), path %s", method, path, err.code, err.msg,
                 known ? "known" : "unknown");
}

/* Every route's pattern with its {} filled in, each prefix of it, and each with one byte
 * changed, under every method: the same route (or the same 404/405) as a plain scan. */
static void test_same_as_plain_scan(void **state)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"};
    static const char *const short_paths[] = {"", "/", "/v", "/v1", "/v1/", "/v1/j", "/h"};
    size_t nm = sizeof(methods) / sizeof(methods[0]);
    for (size_t k = 0; k < sizeof(short_paths) / sizeof(short_paths[0]); k++)
        for (size_t m = 0; m < nm; m++)
            check_same(methods[m], short_paths[k]);
    int tried = 0;
    for (int i = 0; i < routes_count(); i++) {
        const char *pattern = strchr(routes_name(i), ' ') + 1;
        char path[256];
        size_t n = 0;
        for (const char *p = pattern; *p && n + 3 < sizeof(path);) {
            if (p[0] == '{' && p[1] == '}') {
                path[n++] = '1';
                path[n++] = '7';
                p += 2;
            } else {
                path[n++] = *p++;
            }
        }
        path[n] = '\0';
        for (size_t m = 0; m < nm; m++) {
            check_same(methods[m], path);
            for (size_t cut = 0; cut < n; cut++) {
                char edited[256];
                memcpy(edited, path, n + 1);
                edited[cut] = '\0';
                check_same(methods[m], edited); /* a prefix */
                memcpy(edited, path, n + 1);
                edited[cut] = edited[cut] == 'x' ? 'y' : 'x';
                check_same(methods[m], edited); /* one byte changed */
                tried += 3;
            }
        }
    }
    assert_true(tried > 1000);
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
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_misses),
        cmocka_unit_test(test_same_as_plain_scan),
        cmocka_unit_test(test_long_segment),
        cmocka_unit_test(test_path_escape_names_parameter),
        cmocka_unit_test(test_allowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
