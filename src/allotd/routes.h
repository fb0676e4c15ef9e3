/* SPDX-License-Identifier: GPL-3.0-or-later */
/* routes.h - the ONE table of allotd's API: method, path pattern, access, handler, and
 * what a request may carry besides its body: the names and kinds of its path parameters
 * and the query parameters it accepts.
 * Patterns are literal segments and `{}` placeholders (one path segment each, captured
 * in order into r->param).  Threads: the table is constant; routes_* are reentrant. */
#ifndef ALLOT_ALLOTD_ROUTES_H
#define ALLOT_ALLOTD_ROUTES_H

#include "allotd/request.h"

#define ROUTES_MAX 128

enum access {
    ACCESS_PUBLIC = 0, /* no credential needed (/healthz, /metrics) */
    ACCESS_ANY,        /* any authenticated caller; handlers filter what users see */
    ACCESS_READALL,    /* admin, operator, superuser */
    ACCESS_OPERATOR,   /* operator or superuser: job verbs */
    ACCESS_SUPER,      /* superuser: bank changes */
};

typedef int (*route_f)(struct req *r, struct allot_error *err);

/* Find the route of (method, path): its index and captured params into r->param.
 * -1 with err: ENOENT (404) for an unknown path, EINVAL with "method" for a known path
 * with another method (reported as 405 by http.c). */
int routes_match(const char *method, const char *path, struct req *r, struct allot_error *err);
enum access routes_access(int route);
route_f routes_handler(int route);
/* "POST /v1/jobs/hold" style name for logs and metrics; NULL out of range. */
const char *routes_name(int route);
int routes_count(void);
/* 1 for routes whose latency goes to the hold/settle histogram. */
int routes_hot(int route);
/* Check route's captured path parameters (r->param) against their declared kinds: a
 * parameter declared an id must be decimal digits of an integer 1..INT64_MAX.  -1 with
 * EINVAL naming the parameter ("id: '12abc' is not an id ..."). */
int routes_check_params(int route, const struct req *r, struct allot_error *err);
/* The index of query parameter key[0..key_len) among route's accepted ones; -1 when the
 * route does not take it.  routes_query_names: the accepted names, space-separated ("" for
 * none), for error messages. */
int routes_query_find(int route, const char *key, size_t key_len);
const char *routes_query_names(int route);
/* A request path whose byte at offset `at` (of the decoded path) was sent as an escape the
 * API refuses: what says which ("a NUL byte (%00)": libmicrohttpd's decoded path is a C
 * string that ends at that byte, so at is its length; "an encoded '/' (%2F) ...": the
 * decoded path has a '/' there that is not a segment boundary).  Always -1 with EINVAL
 * naming the path parameter the byte is in ("name: contains a NUL byte (%00)"), or "path"
 * when it is in no route's parameter (a fixed segment). */
int routes_path_escape(const char *path, size_t at, const char *what, struct allot_error *err);
/* Whether role may call a route of this access; the reason when not. */
int routes_allowed(enum access a, enum role role);

#endif
