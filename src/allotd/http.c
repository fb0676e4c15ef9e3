/* SPDX-License-Identifier: GPL-3.0-or-later */
/* http.c - request intake and the one reply path (http.h, request.h).
 *
 * libmicrohttpd calls on_request several times per request: first with no data (we
 * create the struct req), then with body chunks (copied, up to REQ_BODY_MAX; beyond that
 * the rest is discarded and the reply is 413), then with no data again: the stages run.
 * A write handler defers its op: the connection is suspended, the op queued; the writer's
 * completion resumes it and MHD calls on_request once more, which builds the reply.
 * Every reply, success or error, leaves through send_reply().
 */
#include "allotd/http.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "allotd/auth.h"
#include "allotd/metrics.h"
#include "allotd/routes.h"
#include "libutil/log.h"
#include "libutil/xalloc.h"

struct http {
    struct MHD_Daemon *tcp;
    struct MHD_Daemon *unx;
    char unix_path[CONF_STR_MAX];
    struct allotd *d;
};

enum { STAGE_BODY = 0, STAGE_WAITING, STAGE_WRITTEN };

static atomic_ullong next_req_id;

const char *req_query(struct req *r, const char *name)
{
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
    if (!r)
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

/* The one reply path: r->out / r->text on success, or err as the JSON error body. */
static enum MHD_Result send_reply(struct req *r, int rc, struct allot_error *err)
{
    if (rc < 0) {
        int status = allot_error_http_status(err->code);
        if (err->code == ALLOT_EINVAL && strncmp(err->msg, "method:", 7) == 0)
            status = 405;
        json_decref(r->out);
        json_t *e = json_pack("{s:s, s:s}", "code", allot_errname(err->code), "message",
                              err->msg);
        const char *colon = strchr(err->msg, ':');
        if (colon && colon - err->msg < 64 && err->code == ALLOT_EINVAL) {
            char field[64];
            memcpy(field, err->msg, (size_t)(colon - err->msg));
            field[colon - err->msg] = '\0';
            if (!strchr(field, ' '))
                json_object_set_new(e, "field", json_string(field));
        }
        r->out = json_pack("{s:o}", "error", e);
        r->status = status;
        free(r->text);
        r->text = NULL;
        log_at(status >= 500 ? LOG_LVL_ERROR : LOG_LVL_DEBUG,
               "msg=\"request failed\" req=%llu route=\"%s %s\" user=%s status=%d error=\"%s\"",
               (unsigned long long)r->id, r->method, r->url, r->who.user[0] ? r->who.user : "-",
               status, err->msg);
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
    MHD_add_response_header(resp, "Content-Type", r->ctype ? r->ctype : "application/json");
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    if (r->d->metrics)
        metrics_request(r->d->metrics, r->route, r->status, metrics_now_us() - r->t0_us,
                        routes_hot(r->route));
    return ret;
}

/* The stages after the body: authenticate, route, authorize, handle. */
static int run_stages(struct req *r, struct allot_error *err)
{
    if (r->too_big)
        return allot_errorf(err, ALLOT_ETOOBIG, "body: larger than %d bytes", REQ_BODY_MAX);
    char path[1024];
    const char *q = strchr(r->url, '?');
    size_t n = q ? (size_t)(q - r->url) : strlen(r->url);
    if (n >= sizeof(path))
        return allot_errorf(err, ALLOT_ETOOBIG, "path: longer than %zu bytes", sizeof(path) - 1);
    memcpy(path, r->url, n);
    path[n] = '\0';
    r->route = routes_match(r->method, path, r, err);
    if (r->route < 0)
        return -1;
    enum access a = routes_access(r->route);
    if (a != ACCESS_PUBLIC) {
        if (auth_request(r, err) < 0)
            return -1;
        if (!routes_allowed(a, r->who.role))
            return allot_errorf(err, ALLOT_EPERM, "%s may not call %s (role %s)", r->who.user,
                                routes_name(r->route), auth_role_name(r->who.role));
    }
    return routes_handler(r->route)(r, err);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    struct allotd *d = cls;
    struct req *r = *con_cls;
    if (!r) {
        r = xcalloc(1, sizeof(*r));
        r->d = d;
        r->conn = conn;
        r->method = method;
        r->url = url;
        r->route = -1;
        r->t0_us = metrics_now_us();
        r->id = atomic_fetch_add(&next_req_id, 1) + 1;
        r->conf = allotd_conf_get(d);
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > REQ_BODY_MAX)
            r->too_big = 1;
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        if (!r->too_big && r->body_len + n > REQ_BODY_MAX)
            r->too_big = 1;
        if (!r->too_big) {
            if (r->body_len + n + 1 > r->body_cap) {
                r->body_cap = r->body_len + n + 1 < 4096 ? 4096 : (r->body_len + n + 1) * 2;
                if (r->body_cap > REQ_BODY_MAX + 1)
                    r->body_cap = REQ_BODY_MAX + 1;
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
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
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

static int bind_unix(const char *path, struct allot_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return allot_errorf(err, ALLOT_EINVAL, "ListenSocket: path longer than %zu bytes",
                            sizeof(sa.sun_path) - 1);
    strcpy(sa.sun_path, path);
    struct stat stbuf;
    /* A stale socket from a killed allotd would make bind fail: remove sockets only. */
    if (lstat(path, &stbuf) == 0) {
        if (!S_ISSOCK(stbuf.st_mode))
            return allot_errorf(err, ALLOT_EIO, "ListenSocket %s: exists and is not a socket",
                                path);
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        chmod(path, 0666) < 0 || listen(fd, 1024) < 0) {
        /* 0666: anyone may connect; each request still needs its own credential. */
        allot_errorf(err, ALLOT_EIO, "ListenSocket %s: %s", path, strerror(errno));
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

static struct MHD_Daemon *start_mhd(struct allotd *d, int fd, unsigned threads)
{
    return MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
            MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, d, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_NOTIFY_COMPLETED, on_completed, d,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)4096, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, d, MHD_OPTION_END);
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
    unsigned threads = http_threads(c);
    if (c->listen_addr[0]) {
        int fd = bind_tcp(c->listen_addr, err);
        if (fd < 0)
            goto fail;
        h->tcp = start_mhd(d, fd, threads);
        if (!h->tcp) {
            close(fd);
            allot_errorf(err, ALLOT_EIO, "ListenAddr %s: cannot start the HTTP server",
                         c->listen_addr);
            goto fail;
        }
    }
    if (c->listen_socket[0]) {
        int fd = bind_unix(c->listen_socket, err);
        if (fd < 0)
            goto fail;
        snprintf(h->unix_path, sizeof(h->unix_path), "%s", c->listen_socket);
        h->unx = start_mhd(d, fd, threads);
        if (!h->unx) {
            close(fd);
            allot_errorf(err, ALLOT_EIO, "ListenSocket %s: cannot start the HTTP server",
                         c->listen_socket);
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
}

void http_stop(struct http *h)
{
    if (!h)
        return;
    if (h->tcp)
        MHD_stop_daemon(h->tcp);
    if (h->unx)
        MHD_stop_daemon(h->unx);
    if (h->unix_path[0])
        unlink(h->unix_path);
    free(h);
}
