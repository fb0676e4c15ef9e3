/* SPDX-License-Identifier: GPL-3.0-or-later */
/* http.c - request intake and the one reply path (http.h, request.h).
 *
 * libmicrohttpd calls on_request several times per request: first with no data (we
 * create the struct req), then with body chunks (copied, up to REQ_BODY_MAX; beyond that
 * the rest is discarded and the reply is 413), then with no data again: the stages run.
 * A Content-Length over REQ_BODY_MAX is answered 413 at the first call, before any of the
 * body is read, when the client waits to be asked for it (Expect: 100-continue) or the
 * body is over REQ_DISCARD_MAX: libmicrohttpd (0.9.75) then reads none of it and closes
 * the connection after the reply.  A client already sending its body (curl sends up to
 * 1 MiB without asking) must have it read: closing a socket with unread data in it resets
 * the connection, and the reset can reach the client before it has read the 413.  So
 * such a body, like a chunked one, is read and dropped, and the 413 comes after it.
 * A write handler defers its op: the connection is suspended, the op queued; the writer's
 * completion resumes it and MHD calls on_request once more, which builds the reply.
 * Every reply, success or error, leaves through send_reply().
 *
 * Before any handler runs, the request is checked against what its route declares
 * (routes.c): no NUL byte in the path or a query value, no encoded '/' in the path, path
 * ids that are ids, only the query parameters the route reads, each once, and a JSON
 * Content-Type on a body.  libmicrohttpd decodes the path into a C string before routing,
 * so a %00 would silently cut it short ("/v1/accounts/chem%00x" would act on chem) and a
 * %2F would split a segment in two ("/v1/partitions/c1%2Fstd" would act on partition std
 * of c1): on_uri sees the raw request line first and marks such a request, which is
 * refused before routing.  (MHD_OPTION_UNESCAPE_CALLBACK cannot do this: one callback
 * decodes the path and each query key and value alike, and is not told which it has.)
 * Errors libmicrohttpd answers itself, before on_request is called (request line or
 * header section over HTTP_CONN_MEMORY, a malformed request line, header or
 * Content-Length, an unsupported HTTP version, bad chunked encoding), keep its HTML
 * bodies: libmicrohttpd 0.9.75 has no hook to replace them (doc/api.md).
 */
#include "allotd/http.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "allotd/auth.h"
#include "allotd/metrics.h"
#include "allotd/peers.h"
#include "allotd/routes.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

struct http {
    struct MHD_Daemon *tcp;
    struct MHD_Daemon *unx;
    struct MHD_Daemon *op; /* OperatorSocket: no per-peer cap, only trusted callers reach it */
    char unix_path[CONF_STR_MAX];
    char op_path[CONF_STR_MAX];
    struct peers *peers;           /* public listeners' connections per uid / address */
    atomic_llong refused_logged_s; /* the last second a refusal was logged */
    struct allotd *d;
};

enum { STAGE_BODY = 0, STAGE_WAITING, STAGE_WRITTEN };

static atomic_ullong next_req_id;

/* The longest path the stages take, its NUL included (longer: 413). */
#define HTTP_PATH_MAX 1024

/* Escapes refused in a path, and how an error says each. */
enum uri_escape { URI_OK = 0, URI_NUL, URI_SLASH, URI_ESCAPES };
static const char *const uri_escape_text[URI_ESCAPES] = {
    [URI_NUL] = "a NUL byte (%00)",
    [URI_SLASH] = "an encoded '/' (%2F), which no name or id contains",
};

/* on_uri's marks: &uri_marks[e][at] means "the raw path has escape e, decoding to byte `at`
 * of the decoded path".  Given to MHD as the request's first con_cls (so on_uri needs no
 * allocation), a mark is never freed, never written and never a struct req. */
static char uri_marks[URI_ESCAPES][HTTP_PATH_MAX];

/* Whether p (a con_cls) is one of on_uri's marks; its escape and offset into *e, *at. */
static int uri_mark_get(const void *p, enum uri_escape *e, size_t *at)
{
    uintptr_t base = (uintptr_t)&uri_marks[0][0], v = (uintptr_t)p;
    if (!p || v < base || v >= base + sizeof(uri_marks))
        return 0;
    *e = (enum uri_escape)((v - base) / HTTP_PATH_MAX);
    *at = (size_t)((v - base) % HTTP_PATH_MAX);
    return 1;
}

const char *req_query(struct req *r, const char *name)
{
    if (r->query) {
        for (int i = 0; r->query[i] && r->query[i + 1]; i += 2)
            if (strcmp(r->query[i], name) == 0)
                return r->query[i + 1];
        return NULL;
    }
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

store_t *req_reader(struct req *r, struct allot_error *err)
{
    return allotd_reader(r->d, err);
}

int req_defer_write(struct req *r, int (*run)(store_t *, void *, struct allot_error *),
                    void *scratch, req_finish_f finish)
{
    r->op.run = run;
    r->op.arg = scratch;
    r->scratch = scratch;
    r->finish = finish;
    r->stage = STAGE_WAITING;
    return 0;
}

static void req_free(struct req *r)
{
    enum uri_escape e;
    size_t at;
    if (!r || uri_mark_get(r, &e, &at))
        return;
    json_decref(r->in);
    json_decref(r->out);
    free(r->body);
    free(r->text);
    free(r->scratch);
    conf_unref(r->conf);
    free(r);
}

/* Writer thread: the op is durable (or failed); let MHD call us again. */
static void write_done(struct write_op *op)
{
    struct req *r = op->done_arg;
    r->stage = STAGE_WRITTEN;
    MHD_resume_connection(r->conn);
}

/* A reply a browser renders (the dashboard): its CSP, no type sniffing, no Referer with
 * its URL (which may hold a token), and a revalidation on every load.  0, or -1 when MHD
 * refuses a header. */
/* Test builds in TestMode=local: the rows the handler read (store_rows_read), for tests
 * that show a request's cost by counting.  0, or -1 when MHD refuses the header. */
static int add_test_headers(const struct req *r, struct MHD_Response *resp)
{
#ifdef ALLOT_TEST
    if (r->d->test_local) {
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)r->rows_read);
        return MHD_add_response_header(resp, "X-Allot-Rows-Read", v) == MHD_NO ? -1 : 0;
    }
#else
    (void)r;
    (void)resp;
#endif
    return 0;
}

static int add_page_headers(struct MHD_Response *resp, const char *csp)
{
    if (MHD_add_response_header(resp, "Content-Security-Policy", csp) == MHD_NO ||
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff") == MHD_NO ||
        MHD_add_response_header(resp, "Referrer-Policy", "no-referrer") == MHD_NO ||
        MHD_add_response_header(resp, "Cache-Control", "no-cache") == MHD_NO)
        return -1;
    return 0;
}

/* The one reply path: r->out / r->text on success, or err as the JSON error body. */
static enum MHD_Result send_reply(struct req *r, int rc, struct allot_error *err)
{
    if (rc < 0) {
        int status = allot_error_http_status(err->code);
        if (err->code == ALLOT_EINVAL && strncmp(err->msg, "method:", 7) == 0)
            status = 405;
        else if (err->code == ALLOT_EINVAL && strncmp(err->msg, "Content-Type:", 13) == 0)
            status = 415;
        json_decref(r->out);
        json_t *e = json_pack("{s:s, s:s}", "code", allot_errname(err->code), "message", err->msg);
        if (!e) {
            /* A message quoting the request's bytes (a decoded %FF) need not be UTF-8, which
             * jansson refuses: the reply would lose its error object.  Bytes >= 0x80 become
             * '?' (the message is still valid UTF-8 then). */
            for (char *c = err->msg; *c; c++)
                if ((unsigned char)*c >= 0x80)
                    *c = '?';
            e = json_pack("{s:s, s:s}", "code", allot_errname(err->code), "message", err->msg);
        }
        /* "field: ..." names the field: of bad input, or what was too large (body, path). */
        const char *colon = strchr(err->msg, ':');
        if (colon && colon - err->msg < 64 &&
            (err->code == ALLOT_EINVAL || err->code == ALLOT_ETOOBIG)) {
            char field[64];
            memcpy(field, err->msg, (size_t)(colon - err->msg));
            field[colon - err->msg] = '\0';
            if (!strchr(field, ' '))
                json_object_set_new(e, "field", json_string(field));
        }
        /* Outcome unknown: whether the same request again finds out (an idempotent verb). */
        if (err->code == ALLOT_EINDOUBT)
            json_object_set_new(e, "retry_safe", json_boolean(r->op.idempotent));
        r->out = json_pack("{s:o}", "error", e);
        r->status = status;
        free(r->text);
        r->text = NULL;
        if (status >= 500 || log_threshold >= LOG_LVL_DEBUG) {
            /* The path and the message carry the caller's text: quoted, it stays one field. */
            char url[512], msg[sizeof(err->msg) + 64];
            log_at(status >= 500 ? LOG_LVL_ERROR : LOG_LVL_DEBUG,
                   "msg=\"request failed\" req=%llu route=\"%s %s\" user=%s status=%d "
                   "error=\"%s\"",
                   (unsigned long long)r->id, r->method, log_quote(url, sizeof(url), r->url),
                   r->who.user[0] ? r->who.user : "-", status,
                   log_quote(msg, sizeof(msg), err->msg));
        }
    }
    if (!r->status)
        r->status = 200;
    struct MHD_Response *resp;
    if (r->text) {
        resp = MHD_create_response_from_buffer(r->text_len, r->text, MHD_RESPMEM_MUST_FREE);
        r->text = NULL;
    } else {
        /* Encode straight into the reply buffer (json_dumpb: no intermediate string, one
         * allocation); a reply larger than the first guess is encoded again at its size. */
        json_t *out = r->out ? r->out : json_object();
        if (!r->out)
            r->out = out; /* freed with the request */
        size_t cap = 4096;
        char *body = xmalloc(cap);
        size_t n = json_dumpb(out, body, cap - 1, JSON_COMPACT);
        if (n == 0) {
            fputs("allotd: cannot encode a reply\n", stderr);
            abort();
        }
        if (n > cap - 1) {
            cap = n + 1;
            body = xrealloc(body, cap);
            if (json_dumpb(out, body, cap - 1, JSON_COMPACT) != n) {
                fputs("allotd: cannot encode a reply\n", stderr);
                abort();
            }
        }
        body[n] = '\n';
        resp = MHD_create_response_from_buffer(n + 1, body, MHD_RESPMEM_MUST_FREE);
        r->ctype = "application/json";
    }
    if (!resp)
        return MHD_NO;
    /* MHD refuses only a malformed header; then drop the connection rather than reply
     * without it (a 413 kept alive would have its unread body taken for the next request). */
    if (MHD_add_response_header(resp, "Content-Type", r->ctype ? r->ctype : "application/json") ==
            MHD_NO ||
        (r->close_conn && MHD_add_response_header(resp, "Connection", "close") == MHD_NO) ||
        (r->csp && add_page_headers(resp, r->csp) < 0) || add_test_headers(r, resp) < 0) {
        MHD_destroy_response(resp);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    if (r->d->metrics)
        metrics_request(r->d->metrics, r->route, r->status, metrics_now_us() - r->t0_us,
                        routes_hot(r->route));
    return ret;
}

/* Content-Type: application/json, any case, optionally followed by parameters
 * ("; charset=utf-8"); any other media type is refused. */
static int is_json_type(const char *ct)
{
    static const char json[] = "application/json";
    const size_t n = sizeof(json) - 1;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    if (strncasecmp(ct, json, n) != 0)
        return 0;
    ct += n;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}

/* A body must say it is JSON.  Missing with a body is refused too: every allot client
 * (liballot, the test and bench tools) sends it, and curl -d without it sends a form type.
 * A body-less POST needs none (liballot's POST with no body lets curl add a form type). */
static int check_content_type(struct req *r, struct allot_error *err)
{
    if (r->body_len == 0)
        return 0;
    const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
    if (!ct)
        return allot_errorf(err, ALLOT_EINVAL,
                            "Content-Type: required with a body (application/json)");
    if (!is_json_type(ct))
        return allot_errorf(err, ALLOT_EINVAL,
                            "Content-Type: '%.100s' is not supported (application/json)", ct);
    return 0;
}

struct query_check {
    struct req *r;
    struct allot_error *err;
    uint64_t seen; /* bit i: the route's i-th query parameter was given */
    int rc;
};

/* One query argument (MHD_KeyValueIteratorN): known to the route, given once, with a value
 * and no NUL byte (MHD's sizes are the decoded lengths, so a %00 shows as a size larger than
 * the C string).  MHD_NO stops at the first fault. */
static enum MHD_Result check_query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                       size_t key_size, const char *value, size_t value_size)
{
    struct query_check *q = cls;
    (void)kind;
    int i = strlen(key) == key_size ? routes_query_find(q->r->route, key, key_size) : -1;
    if (i < 0) {
        const char *names = routes_query_names(q->r->route);
        if (strlen(key) != key_size || strpbrk(key, ": ") || key_size > 48)
            q->rc = allot_errorf(q->err, ALLOT_EINVAL,
                                 "query: a parameter name is not one %s takes (%s)",
                                 routes_name(q->r->route), names[0] ? names : "none");
        else
            q->rc = allot_errorf(q->err, ALLOT_EINVAL, "%s: unknown query parameter; %s takes %s",
                                 key, routes_name(q->r->route), names[0] ? names : "none");
        return MHD_NO;
    }
    if (i < 64 && (q->seen & (UINT64_C(1) << i))) {
        q->rc = allot_errorf(q->err, ALLOT_EINVAL, "%s: given more than once", key);
        return MHD_NO;
    }
    if (i < 64)
        q->seen |= UINT64_C(1) << i;
    if (!value) {
        q->rc = allot_errorf(q->err, ALLOT_EINVAL, "%s: needs a value (%s=...)", key, key);
        return MHD_NO;
    }
    if (strlen(value) != value_size) {
        q->rc = allot_errorf(q->err, ALLOT_EINVAL, "%s: contains a NUL byte (%%00)", key);
        return MHD_NO;
    }
    return MHD_YES;
}

/* What the route declares a request may carry besides its body (routes.c). */
static int check_request(struct req *r, struct allot_error *err)
{
    if (routes_check_params(r->route, r, err) < 0)
        return -1;
    struct query_check q = {.r = r, .err = err};
    MHD_get_connection_values_n(r->conn, MHD_GET_ARGUMENT_KIND, check_query_arg, &q);
    if (q.rc < 0)
        return -1;
    return check_content_type(r, err);
}

/* The largest body a request may carry (request.h). */
static size_t body_max(const char *method, const char *url)
{
    if (strcmp(method, "POST") == 0 &&
        (strcmp(url, "/v1/import/slurm") == 0 || strcmp(url, "/v1/jobs/import") == 0 ||
         strcmp(url, "/v1/jobs/settle/bulk") == 0))
        return REQ_IMPORT_BODY_MAX;
    return REQ_BODY_MAX;
}

static int too_big(const struct req *r, struct allot_error *err)
{
    return allot_errorf(err, ALLOT_ETOOBIG, "body: larger than %zu bytes",
                        body_max(r->method, r->url));
}

/* The stages after the body: route, check, authenticate, authorize, handle. */
static int run_stages(struct req *r, struct allot_error *err)
{
    if (r->too_big)
        return too_big(r, err);
    /* MHD gives the path without its query and decoded: a '?' in it was a %3F, part of a
     * segment (cutting there would act on "chem" for "chem%3Fx"). */
    size_t n = strlen(r->url);
    if (n >= HTTP_PATH_MAX)
        return allot_errorf(err, ALLOT_ETOOBIG, "path: longer than %d bytes", HTTP_PATH_MAX - 1);
    if (r->path_escape)
        return routes_path_escape(r->url, r->path_escape_at, uri_escape_text[r->path_escape], err);
    r->route = routes_match(r->method, r->url, r, err);
    if (r->route < 0)
        return -1;
    if (check_request(r, err) < 0)
        return -1;
    enum access a = routes_access(r->route);
    if (a != ACCESS_PUBLIC) {
        if (auth_request(r, err) < 0)
            return -1;
        if (!routes_allowed(a, r->who.role))
            return auth_refuse(r, err);
    }
#ifdef ALLOT_TEST
    int64_t rows0 = store_rows_read();
    int rc = routes_handler(r->route)(r, err);
    r->rows_read = store_rows_read() - rows0;
    return rc;
#else
    return routes_handler(r->route)(r, err);
#endif
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct allotd *d = cls;
    struct req *r = *con_cls;
    enum uri_escape esc = URI_OK;
    size_t esc_at = 0;
    if (!r || uri_mark_get(r, &esc, &esc_at)) {
        r = xcalloc(1, sizeof(*r));
        r->path_escape = esc;
        r->path_escape_at = esc_at;
        r->d = d;
        r->conn = conn;
        r->method = method;
        r->url = url;
        r->route = -1;
        r->t0_us = metrics_now_us();
        r->id = atomic_fetch_add(&next_req_id, 1) + 1;
        r->conf = allotd_conf_get(d);
        *con_cls = r;
        /* MHD has checked Content-Length is digits.  A reply queued now, before the body,
         * makes MHD skip the body and close the connection after the reply: a client that
         * waits for "100 Continue" need not send (nor allotd read) what would be dropped.
         * Any other body up to REQ_DISCARD_MAX is on its way: it is read and dropped (below),
         * then answered. */
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        unsigned long long len = cl ? strtoull(cl, NULL, 10) : 0;
        if (len > body_max(method, url)) {
            const char *expect = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Expect");
            r->too_big = 1;
            r->close_conn = 1;
            if ((expect && strcasecmp(expect, "100-continue") == 0) || len > REQ_DISCARD_MAX) {
                struct allot_error err = {0};
                return send_reply(r, too_big(r, &err), &err);
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size, max = body_max(r->method, r->url);
        if (!r->too_big && r->body_len + n > max)
            r->too_big = 1;
        if (!r->too_big) {
            if (r->body_len + n + 1 > r->body_cap) {
                r->body_cap = r->body_len + n + 1 < 4096 ? 4096 : (r->body_len + n + 1) * 2;
                if (r->body_cap > max + 1)
                    r->body_cap = max + 1;
                r->body = xrealloc(r->body, r->body_cap);
            }
            memcpy(r->body + r->body_len, upload_data, n);
            r->body_len += n;
            r->body[r->body_len] = '\0';
        }
        *upload_data_size = 0; /* consumed (or discarded when too big) */
        return MHD_YES;
    }
    struct allot_error err = {0};
    if (r->stage == STAGE_WRITTEN) {
        int rc = r->op.rc < 0 ? (err = r->op.err, -1) : r->finish(r, &err);
        return send_reply(r, rc, &err);
    }
    int rc = run_stages(r, &err);
    if (rc == 0 && r->stage == STAGE_WAITING) {
        r->op.done = write_done;
        r->op.done_arg = r;
        MHD_suspend_connection(conn);
        if (writer_submit(d->writer, &r->op, 5000, &err) == 0)
            return MHD_YES;
        /* Not queued: reply with the error once resumed. */
        r->op.rc = -1;
        r->op.err = err;
        r->stage = STAGE_WRITTEN;
        MHD_resume_connection(conn);
        return MHD_YES;
    }
    return send_reply(r, rc, &err);
}

/* The escape %XX at p (two hex digits, as MHD decodes them; anything else after a '%' MHD
 * keeps as it is), and which refused one it is: URI_OK for any other escape, -1 for none. */
static int uri_escape_at(const char *p)
{
    if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]))
        return -1;
    if (p[1] == '0' && p[2] == '0')
        return URI_NUL;
    if (p[1] == '2' && (p[2] == 'F' || p[2] == 'f'))
        return URI_SLASH;
    return URI_OK;
}

/* MHD_OPTION_URI_LOG_CALLBACK: the raw request target, before MHD splits off the query and
 * decodes the path.  Returns the request's first con_cls: the mark of the first refused
 * escape in the path (a %00, the only escape MHD decodes to a NUL, or a %2F, which it
 * decodes to a '/' that routing would take for a segment boundary), else NULL.  No
 * allocation: it runs for every request, including those MHD then refuses itself. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    size_t decoded = 0; /* escapes before p: each decodes to one byte, two fewer than sent */
    /* strpbrk: libc's vectorised scan, as this runs on the hold/settle hot path too. */
    for (const char *p = uri ? strpbrk(uri, "%?") : NULL; p && *p == '%';
         p = strpbrk(p + 1, "%?")) {
        int e = uri_escape_at(p);
        if (e < 0)
            continue;
        if (e != URI_OK) {
            /* Past HTTP_PATH_MAX the path is refused as too long before its escapes. */
            size_t at = (size_t)(p - uri) - 2 * decoded;
            return &uri_marks[e][at < HTTP_PATH_MAX ? at : HTTP_PATH_MAX - 1];
        }
        decoded++;
        p += 2;
    }
    return NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    req_free(*con_cls);
    *con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '"'))
        buf[--n] = '\0';
    log_debug("msg=\"libmicrohttpd: %s\"", buf);
}

static int bind_tcp(const char *hostport, struct allot_error *err)
{
    char host[256];
    int port;
    if (conf_hostport_split(hostport, host, sizeof(host), &port, err) < 0)
        return -1;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(host, portstr, &hints, &ai);
    if (rc != 0)
        return allot_errorf(err, ALLOT_EIO, "ListenAddr %s: %s", hostport, gai_strerror(rc));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1024) < 0) {
        allot_errorf(err, ALLOT_EIO, "ListenAddr %s: %s", hostport, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    return fd;
}

static int bind_unix(const char *key, const char *path, mode_t mode, gid_t gid,
                     struct allot_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return allot_errorf(err, ALLOT_EINVAL, "%s: path longer than %zu bytes", key,
                            sizeof(sa.sun_path) - 1);
    strcpy(sa.sun_path, path);
    struct stat stbuf;
    /* A stale socket from a killed allotd would make bind fail: remove sockets only. */
    if (lstat(path, &stbuf) == 0) {
        if (!S_ISSOCK(stbuf.st_mode))
            return allot_errorf(err, ALLOT_EIO, "%s %s: exists and is not a socket", key, path);
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) || chmod(path, mode) < 0 ||
        listen(fd, 1024) < 0) {
        allot_errorf(err, ALLOT_EIO, "%s %s: %s", key, path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Per-connection memory pool.  MHD zeroes the pool between the requests of a keep-alive
 * connection, so its default 32 KB cost ~45k instructions per request in memset; requests
 * here are small (headers, a URL under 1 KB: bodies are copied out as they arrive) and
 * 16 KB leaves room for a MUNGE credential header and MHD's read buffer. */
#define HTTP_CONN_MEMORY (16 * 1024)

/* A peer's key for struct peers: the uid on a Unix socket, the address on TCP (IPv4 and
 * IPv6 folded to 64 bits; the top bit marks TCP so no uid and address collide).  -1 when
 * the connection tells neither. */
static int peer_key(struct MHD_Connection *conn, uint64_t *key)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return -1;
    int fd = ci->connect_fd, domain = 0;
    socklen_t len = sizeof(domain);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
        return -1;
    if (domain == AF_UNIX) {
        struct ucred cred;
        len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred))
            return -1;
        *key = (uint64_t)cred.uid;
        return 0;
    }
    struct sockaddr_storage sa;
    len = sizeof(sa);
    if (getpeername(fd, (struct sockaddr *)&sa, &len) < 0)
        return -1;
    uint64_t k = 0;
    if (sa.ss_family == AF_INET) {
        k = ((const struct sockaddr_in *)&sa)->sin_addr.s_addr;
    } else if (sa.ss_family == AF_INET6) {
        const unsigned char *b = ((const struct sockaddr_in6 *)&sa)->sin6_addr.s6_addr;
        for (int i = 0; i < 16; i++)
            k = k * 1099511628211ULL + b[i];
    } else {
        return -1;
    }
    *key = k | (1ULL << 63);
    return 0;
}

/* MHD_OPTION_NOTIFY_CONNECTION of the public listeners: a peer's connection beyond
 * ConnectionsPerPeer is shut down at once (MHD then reads its end and closes it), so idle
 * connections of one local user cannot fill the listener for everyone else.  The counted
 * ones carry their key + 1 in socket_context. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http *h = cls;
    uint64_t key;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (*socket_context) {
            peers_leave(h->peers, (uint64_t)(uintptr_t)*socket_context - 1);
            *socket_context = NULL;
        }
        return;
    }
    *socket_context = NULL;
    if (peer_key(conn, &key) < 0)
        return; /* nothing to count it by: MHD's own limit still bounds it */
    if (peers_enter(h->peers, key)) {
        *socket_context = (void *)(uintptr_t)(key + 1);
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci)
        (void)shutdown(ci->connect_fd, SHUT_RDWR);
    long long now = (long long)time(NULL), last = atomic_load(&h->refused_logged_s);
    if (now != last && atomic_compare_exchange_strong(&h->refused_logged_s, &last, now)) {
        if (key >> 63)
            log_warn("msg=\"connection refused: the peer address holds ConnectionsPerPeer "
                     "connections already\" listener=tcp");
        else
            log_warn("msg=\"connection refused: the peer uid holds ConnectionsPerPeer "
                     "connections already\" listener=unix uid=%llu",
                     (unsigned long long)key);
    }
}

/* The idle time after which a connection is closed: short on the public listeners, where
 * a connection that sends nothing only holds a slot; longer on OperatorSocket, whose
 * callers keep their connections between jobs. */
#define HTTP_IDLE_PUBLIC_S 30
#define HTTP_IDLE_OPERATOR_S 120

static struct MHD_Daemon *start_mhd(struct http *h, int fd, unsigned threads, int public)
{
    return MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, h->d, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE,
        threads, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h->d, MHD_OPTION_NOTIFY_CONNECTION,
        public ? on_connection : NULL, h, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(public ? HTTP_IDLE_PUBLIC_S : HTTP_IDLE_OPERATOR_S), MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)4096, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h->d, MHD_OPTION_URI_LOG_CALLBACK, on_uri, h->d,
        MHD_OPTION_END);
}

/* OperatorSocketGroup's gid; (gid_t)-1 (leave allotd's own) when the key is empty. */
static int operator_gid(const char *name, gid_t *gid, struct allot_error *err)
{
    *gid = (gid_t)-1;
    if (!name[0])
        return 0;
    struct group gr, *res = NULL;
    char buf[4096];
    int rc = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
    if (rc != 0 || !res)
        return allot_errorf(err, ALLOT_EINVAL, "OperatorSocketGroup: no group '%s'%s%s", name,
                            rc ? ": " : "", rc ? strerror(rc) : "");
    *gid = gr.gr_gid;
    return 0;
}

unsigned http_threads(const struct allot_conf *c)
{
    if (c->threads > 0)
        return (unsigned)c->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    n = n < 1 ? 1 : n > 64 ? 64 : n;
    return (unsigned)(strcmp(c->storage_type, "pg") == 0 ? 4 * n : n);
}

struct http *http_start(struct allotd *d, const struct allot_conf *c, struct allot_error *err)
{
    struct http *h = xcalloc(1, sizeof(*h));
    h->d = d;
    h->peers = peers_new((int)c->connections_per_peer);
    unsigned threads = http_threads(c);
    if (c->listen_addr[0]) {
        int fd = bind_tcp(c->listen_addr, err);
        if (fd < 0)
            goto fail;
        h->tcp = start_mhd(h, fd, threads, 1);
        if (!h->tcp) {
            close(fd);
            allot_errorf(err, ALLOT_EIO, "ListenAddr %s: cannot start the HTTP server",
                         c->listen_addr);
            goto fail;
        }
    }
    if (c->listen_socket[0]) {
        /* 0666: anyone may connect; each request still needs its own credential. */
        int fd = bind_unix("ListenSocket", c->listen_socket, 0666, (gid_t)-1, err);
        if (fd < 0)
            goto fail;
        text_copy(h->unix_path, sizeof(h->unix_path), c->listen_socket);
        h->unx = start_mhd(h, fd, threads, 1);
        if (!h->unx) {
            close(fd);
            allot_errorf(err, ALLOT_EIO, "ListenSocket %s: cannot start the HTTP server",
                         c->listen_socket);
            goto fail;
        }
    }
    if (c->operator_socket[0]) {
        /* 0660: allotd's user and OperatorSocketGroup only; requests still authenticate. */
        gid_t gid;
        if (operator_gid(c->operator_socket_group, &gid, err) < 0)
            goto fail;
        int fd = bind_unix("OperatorSocket", c->operator_socket, 0660, gid, err);
        if (fd < 0)
            goto fail;
        text_copy(h->op_path, sizeof(h->op_path), c->operator_socket);
        h->op = start_mhd(h, fd, threads, 0);
        if (!h->op) {
            close(fd);
            allot_errorf(err, ALLOT_EIO, "OperatorSocket %s: cannot start the HTTP server",
                         c->operator_socket);
            goto fail;
        }
    }
    return h;
fail:
    http_stop(h);
    return NULL;
}

void http_quiesce(struct http *h)
{
    if (!h)
        return;
    /* MHD_quiesce_daemon returns the listen fd, which is then ours to close. */
    if (h->tcp) {
        MHD_socket fd = MHD_quiesce_daemon(h->tcp);
        if (fd != MHD_INVALID_SOCKET)
            close(fd);
    }
    if (h->unx) {
        MHD_socket fd = MHD_quiesce_daemon(h->unx);
        if (fd != MHD_INVALID_SOCKET)
            close(fd);
    }
    if (h->op) {
        MHD_socket fd = MHD_quiesce_daemon(h->op);
        if (fd != MHD_INVALID_SOCKET)
            close(fd);
    }
}

void http_stop(struct http *h)
{
    if (!h)
        return;
    if (h->tcp)
        MHD_stop_daemon(h->tcp);
    if (h->unx)
        MHD_stop_daemon(h->unx);
    if (h->op)
        MHD_stop_daemon(h->op);
    if (h->unix_path[0])
        unlink(h->unix_path);
    if (h->op_path[0])
        unlink(h->op_path);
    peers_free(h->peers);
    free(h);
}
