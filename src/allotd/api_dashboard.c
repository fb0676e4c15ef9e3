/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_dashboard.c - GET /dashboard and GET /dashboard/{file}: the web dashboard's page, its
 * script and its style sheet, compiled in (dashboard.h).
 *
 * Both routes are public: they serve the same constant bytes to everyone and never any
 * data.  The page authenticates its own API calls with the read-only token of its link
 * (doc/allotd.md "Web dashboard").  Every reply of theirs carries dashboard_csp, which
 * http.c sends with the other browser headers (request.h r->csp).
 *
 * The page refers to its files and to the API by relative URLs ("dashboard/dashboard.js",
 * "v1/balances"), so that it also works behind a proxy that mounts allotd under a prefix;
 * those resolve only from /dashboard itself, which is why /dashboard/index.html is a 404. */
#include "allotd/dashboard.h"

#include <string.h>

#include "allotd/api.h"
#include "libutil/xalloc.h"

const char dashboard_csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
                             "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
                             "frame-ancestors 'none'; form-action 'none'";

/* Content types by file name ending; a file of any other type is never served. */
static const struct {
    const char *ext;
    const char *ctype;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
};

static const char *ctype_of(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        size_t e = strlen(types[i].ext);
        /* A bare ".js" is no file name. */
        if (n > e && strcmp(name + n - e, types[i].ext) == 0)
            return types[i].ctype;
    }
    return NULL;
}

int dashboard_find(const char *name, struct dashboard_asset *out, struct allot_error *err)
{
    /* Only exact names of the table match: "", "..", "a/b" and "%2e%2e" never do. */
    const char *ctype = name ? ctype_of(name) : NULL;
    for (size_t i = 0; ctype && i < dashboard_file_count; i++) {
        if (strcmp(dashboard_files[i].name, name) == 0) {
            out->data = dashboard_files[i].data;
            out->len = dashboard_files[i].len;
            out->ctype = ctype;
            return 0;
        }
    }
    return allot_errorf(err, ALLOT_ENOENT, "dashboard: no file '%s'", name ? name : "");
}

/* Reply with a copy of the file (r->text is the request's to free). */
static int serve(struct req *r, const char *name, struct allot_error *err)
{
    struct dashboard_asset a;
    if (dashboard_find(name, &a, err) < 0)
        return -1;
    r->text = xmalloc(a.len ? a.len : 1);
    memcpy(r->text, a.data, a.len);
    r->text_len = a.len;
    r->ctype = a.ctype;
    r->csp = dashboard_csp;
    return 0;
}

int api_dashboard_page(struct req *r, struct allot_error *err)
{
    return serve(r, "index.html", err);
}

int api_dashboard_asset(struct req *r, struct allot_error *err)
{
    if (strcmp(r->param[0], "index.html") == 0)
        return allot_errorf(err, ALLOT_ENOENT,
                            "dashboard: no file 'index.html' (the page is /dashboard)");
    return serve(r, r->param[0], err);
}
