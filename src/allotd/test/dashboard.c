/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/dashboard.c - unit tests of the embedded web dashboard (api_dashboard.c, dashboard.h):
 * the files are all there with their content types; index.html loads only its own scripts and
 * style sheet and has nothing the Content-Security-Policy would block (inline script or
 * style, on*= handlers, javascript: URLs), so the page does not break silently in a browser;
 * the scripts build no markup from strings; a name not in the table is refused untouched. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "allot/error.h"
#include "allotd/dashboard.h"

static const struct {
    const char *name, *ctype;
} files[] = {
    {"index.html", "text/html; charset=utf-8"},
    {"dashboard.js", "text/javascript; charset=utf-8"},
    {"dashboard.css", "text/css; charset=utf-8"},
    {"views.js", "text/javascript; charset=utf-8"},
};

static struct dashboard_asset find(const char *name)
{
    struct dashboard_asset a = {0};
    struct allot_error err = {0};
    if (dashboard_find(name, &a, &err) < 0)
        fail_msg("%s: %s", name, err.msg);
    return a;
}

static void test_files(void **state)
{
    assert_int_equal(dashboard_file_count, sizeof(files) / sizeof(files[0]));
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        struct dashboard_asset a = find(files[i].name);
        assert_true(a.len > 100);
        assert_string_equal(a.ctype, files[i].ctype);
        /* Whole text: NUL-terminated, no NUL inside (the server sends len bytes). */
        assert_int_equal(a.data[a.len], '\0');
        assert_int_equal(strlen(a.data), a.len);
    }
    for (size_t i = 1; i < dashboard_file_count; i++)
        assert_true(strcmp(dashboard_files[i - 1].name, dashboard_files[i].name) < 0);
}

static const char *const unknown[] = {
    "",
    "..",
    "../index.html",
    "./index.html",
    "/index.html",
    "nope.js",
    "index.htm",
    "Index.html",
    "DASHBOARD.JS",
    "dashboard.js/",
    "dashboard.js.map",
    ".js",
    "dashboard",
    "index.html%00",
    "dashboard/dashboard.js",
};

static void test_unknown(void **state)
{
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        struct dashboard_asset a = {"untouched", 7, "x"};
        struct allot_error err = {0};
        if (dashboard_find(unknown[i], &a, &err) != -1)
            fail_msg("'%s' was found", unknown[i]);
        assert_int_equal(err.code, ALLOT_ENOENT);
        assert_string_equal(a.data, "untouched");
        assert_int_equal(a.len, 7);
        assert_string_equal(a.ctype, "x");
    }
    struct dashboard_asset a = {0};
    struct allot_error err = {0};
    assert_int_equal(dashboard_find(NULL, &a, &err), -1);
    assert_int_equal(err.code, ALLOT_ENOENT);
}

/* Case-insensitive search in the first n bytes of s. */
static const char *find_ci(const char *s, size_t n, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= n; i++)
        if (strncasecmp(s + i, what, w) == 0)
            return s + i;
    return NULL;
}

/* Check one tag's attributes (text between "<name" and ">"): no on*= handler, no style=,
 * no javascript: URL. */
static void check_attrs(const char *tag, size_t n)
{
    size_t i = 0;
    while (i < n && !isspace((unsigned char)tag[i]))
        i++; /* the tag name */
    while (i < n) {
        while (i < n && (isspace((unsigned char)tag[i]) || tag[i] == '/'))
            i++;
        size_t name = i;
        while (i < n && !isspace((unsigned char)tag[i]) && tag[i] != '=' && tag[i] != '/')
            i++;
        size_t name_len = i - name;
        if (name_len >= 2 && strncasecmp(tag + name, "on", 2) == 0)
            fail_msg("index.html: event handler attribute %.*s", (int)name_len, tag + name);
        if (name_len == 5 && strncasecmp(tag + name, "style", 5) == 0)
            fail_msg("index.html: style attribute (blocked by the CSP)");
        while (i < n && isspace((unsigned char)tag[i]))
            i++;
        if (i < n && tag[i] == '=') {
            i++;
            while (i < n && isspace((unsigned char)tag[i]))
                i++;
            size_t v = i;
            if (i < n && (tag[i] == '"' || tag[i] == '\'')) {
                char q = tag[i++];
                v = i;
                while (i < n && tag[i] != q)
                    i++;
                if (find_ci(tag + v, i - v, "javascript:"))
                    fail_msg("index.html: javascript: URL");
                i++;
            } else {
                while (i < n && !isspace((unsigned char)tag[i]))
                    i++;
                if (find_ci(tag + v, i - v, "javascript:"))
                    fail_msg("index.html: javascript: URL");
            }
        }
    }
}

static void test_index_csp(void **state)
{
    struct dashboard_asset a = find("index.html");
    const char *s = a.data, *end = a.data + a.len;
    assert_non_null(strstr(s, "<script src=\"dashboard/dashboard.js\""));
    assert_non_null(strstr(s, "<script src=\"dashboard/views.js\""));
    assert_non_null(strstr(s, "<link rel=\"stylesheet\" href=\"dashboard/dashboard.css\">"));
    assert_null(find_ci(s, a.len, "<style"));
    int scripts = 0;
    while ((s = strchr(s, '<')) != NULL) {
        if (strncmp(s, "<!--", 4) == 0) {
            const char *c = strstr(s, "-->");
            assert_non_null(c);
            s = c + 3;
            continue;
        }
        const char *gt = memchr(s, '>', (size_t)(end - s));
        assert_non_null(gt);
        if (isalpha((unsigned char)s[1]))
            check_attrs(s + 1, (size_t)(gt - s - 1));
        if (strncasecmp(s, "<script", 7) == 0) {
            /* Only <script src=...></script>: an inline body would not run under the CSP. */
            scripts++;
            assert_non_null(find_ci(s, (size_t)(gt - s), " src="));
            assert_int_equal(strncasecmp(gt + 1, "</script>", 9), 0);
        }
        s = gt + 1;
    }
    assert_int_equal(scripts, 2);
}

/* The script makes its DOM node by node: markup from strings could carry bank data into
 * HTML, and eval-like calls are refused by the CSP. */
static void test_js_builds_no_markup(void **state)
{
    static const char *const banned[] = {
        "innerHTML",   "outerHTML",    "insertAdjacentHTML",   "document.write",
        "eval(",       "new Function", "setAttribute('style'", "setAttribute(\"style\"",
        "javascript:",
    };
    static const char *const scripts[] = {"dashboard.js", "views.js"};
    for (size_t k = 0; k < sizeof(scripts) / sizeof(scripts[0]); k++) {
        struct dashboard_asset js = find(scripts[k]);
        for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
            if (find_ci(js.data, js.len, banned[i]))
                fail_msg("%s uses %s", scripts[k], banned[i]);
    }
    struct dashboard_asset a = find("dashboard.js");
    /* It reads the token the way `allot dashboard` hands it over. */
    assert_non_null(strstr(a.data, "'allot-token'"));
    assert_non_null(strstr(a.data, "'Bearer '"));
    assert_non_null(strstr(a.data, "history.replaceState"));
}

static void test_csp(void **state)
{
    assert_non_null(strstr(dashboard_csp, "default-src 'none'"));
    assert_non_null(strstr(dashboard_csp, "script-src 'self'"));
    assert_non_null(strstr(dashboard_csp, "frame-ancestors 'none'"));
    assert_null(strstr(dashboard_csp, "unsafe"));
    assert_null(strchr(dashboard_csp, '\n'));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files),     cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_index_csp), cmocka_unit_test(test_js_builds_no_markup),
        cmocka_unit_test(test_csp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
