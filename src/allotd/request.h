/* SPDX-License-Identifier: GPL-3.0-or-later */
/* request.h - one HTTP request as it travels the stages of STYLE §2: decode (http.c),
 * authenticate (auth.c), route and authorize (routes.c), validate and execute (api_*.c, in
 * one transaction through the writer for writes), encode (http.c, the one reply path).
 *
 * A handler (route_f) returns 0 after putting its reply in r->out (status r->status,
 * default 200), or after calling req_defer_write() for a write, or -1 with err: the one
 * reply path turns err into the status of error.h's table and the JSON error body.
 * Ownership: r->out, r->scratch and r->text belong to the request and are freed with it.
 * Threads: a request is handled by one HTTP worker at a time; a deferred write runs its
 * op on the writer thread while the connection is suspended.
 */
#ifndef ALLOT_ALLOTD_REQUEST_H
#define ALLOT_ALLOTD_REQUEST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "allotd/allotd.h"
#include "allotd/writer.h"
#include "libcore/model.h"

#define REQ_BODY_MAX (64 * 1024) /* doc/api.md: bodies are at most 64 KiB */
/* ... except POST /v1/import/slurm, which carries a whole `sacctmgr dump` (a site's
 * thousands of associations) so that it is applied in one transaction, and POST
 * /v1/jobs/import, thousands of sacct rows a request (a year of a busy cluster in tens), and
 * POST /v1/jobs/settle/bulk, up to 10,000 settles. */
#define REQ_IMPORT_BODY_MAX (16 * 1024 * 1024)
/* A body over REQ_BODY_MAX sent without waiting for "100 Continue" is read and dropped
 * before its 413 when it is at most this long (http.c); curl asks only above 1 MiB. */
#define REQ_DISCARD_MAX (1024 * 1024)
#define REQ_PARAMS_MAX 3
#define REQ_PARAM_LEN 256

enum role { ROLE_NONE = 0, ROLE_USER, ROLE_OPERATOR, ROLE_ADMIN, ROLE_SUPERUSER };

struct caller {
    char user[ALLOT_NAME_MAX]; /* effective user (after X-Allot-As) */
    char real[ALLOT_NAME_MAX]; /* who authenticated */
    int64_t uid;               /* of the real user; -1 with AuthType=none */
    enum role role;            /* of the effective user, never above the real one */
};

struct req;
typedef int (*req_finish_f)(struct req *r, struct allot_error *err);

struct req {
    struct allotd *d;
    struct allot_conf *conf; /* a reference held for the request's life */
    void *conn;              /* struct MHD_Connection */
    const char *method;
    const char *url;
    /* A request run in process (api_whatif.c): its query as (name, value) pairs ending in
     * NULL, read instead of the connection's; NULL for a request from the network. */
    const char *const *query;
    uint64_t id; /* req= in logs */
    int64_t t0_us;
    int64_t rows_read; /* test builds: rows the handler's statements returned */
    /* The raw path had an escape the API refuses (http.c on_uri): path_escape says which
     * (0: none), path_escape_at where it is in the decoded url. */
    int path_escape;
    size_t path_escape_at;
    /* Body. */
    char *body;
    size_t body_len, body_cap;
    int too_big;
    json_t *in; /* the parsed body (object), NULL until json_body() */
    /* Routing. */
    int route;
    char param[REQ_PARAMS_MAX][REQ_PARAM_LEN];
    struct caller who;
    /* Deferred write. */
    int stage; /* http.c's */
    struct write_op op;
    req_finish_f finish;
    void *scratch;
    /* Reply. */
    int close_conn; /* reply with Connection: close (the body was never read) */
    int status;
    json_t *out;
    char *text; /* non-JSON reply (metrics); ctype says what it is */
    size_t text_len;
    const char *ctype;
    const char *csp; /* a page for browsers: its Content-Security-Policy (static), sent with
                      * nosniff, no-referrer and no-cache; NULL for API replies */
};

/* A query argument (?name=value), borrowed from the connection; NULL when absent. */
const char *req_query(struct req *r, const char *name);

/* Hand a write to the writer: run(st, scratch) runs in a savepoint of the next group
 * commit; after the commit, finish(r) builds the reply (or the op's error is the reply).
 * scratch is xmalloc'd by the handler and now owned by the request.  Always returns 0. */
int req_defer_write(struct req *r, int (*run)(store_t *, void *, struct allot_error *),
                    void *scratch, req_finish_f finish);

/* The calling thread's read store (allotd_reader). */
store_t *req_reader(struct req *r, struct allot_error *err);

#endif
