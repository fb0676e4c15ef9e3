/* SPDX-License-Identifier: GPL-3.0-or-later */
/* routes.h - the ONE table of allotd's API: method, path pattern, access, handler.
 * Patterns are literal segments and `{}` placeholders (one path segment each, captured
 * in order into r->param).  Threads: the table is constant; routes_* are reentrant. */
#ifndef ALLOTD_ROUTES_H
#define ALLOTD_ROUTES_H

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
/* Whether role may call a route of this access; the reason when not. */
int routes_allowed(enum access a, enum role role);

#endif
