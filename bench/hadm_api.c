/* SPDX-License-Identifier: GPL-3.0-or-later */
/* hadm_api.c - the HADM baseline (bench/hadm_baseline.sql) behind an HTTP API, as HADM
 * runs it (every pre-debit and debit is a web request to a Flask application that calls the
 * stored procedure).  bench/pg_bench.sh drives
 * it with the same bank_loadgen that drives allotd, so the comparison includes an API layer
 * on both sides.  libmicrohttpd in C is far cheaper per request than Flask: generous to the
 * baseline.
 *
 *   hadm_api --conninfo STR --listen 127.0.0.1:PORT [--threads N]
 *
 * Design: MHD thread-per-connection; each connection is one "API worker" (a sync Flask or
 * gunicorn worker) holding ONE libpq connection, opened on the worker's first hold/settle
 * request with both statements prepared once, closed when the HTTP connection ends
 * (MHD_OPTION_NOTIFY_CONNECTION).  The worker is the connection's socket context, so it is
 * only ever touched by that connection's thread.  --threads N caps the concurrent
 * connections (= workers = PostgreSQL sessions); default 128.
 *
 * Routes (the bodies bench/bank_loadgen.c sends to allotd):
 *   POST /v1/jobs/hold    {"job_id":N,"account":"acctK","time_limit_s":T,"billing":B,...}
 *       SELECT hadm.predebit(K + 1, N, 0, ceil(B * T / 60)): allocation K + 1 because
 *       pg_bench.sh creates acct0's allocation as id 1; uid 0.  true -> 200 {"ok":true},
 *       false -> 402 {"error":"insufficient balance"}.
 *   POST /v1/jobs/settle  {"job_id":N,"elapsed_s":E,...}
 *       SELECT hadm.debit(N, ceil(1 * E / 60)).  Billing is taken as 1: the baseline keeps
 *       no job table beyond its pre-debits, and bank_loadgen always holds with billing 1.
 *       true -> 200 {"ok":true}; false (no executing pre-debit) -> 404.
 *   anything else -> 404.  Bad JSON or fields -> 400; body over 8 KiB -> 413; a PostgreSQL
 *   error -> 500 {"error":"<message>"} (a broken session is dropped, reopened next time).
 * Nothing is printed per request.  SIGTERM/SIGINT stop the daemon (MHD closes every
 * connection, each worker's PostgreSQL session with it) and exit 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hadm_session.h"

#define HADM_API_BODY_MAX 8192

/* One API worker: the state of one HTTP connection (one MHD thread). */
struct worker {
    PGconn *pg;  /* NULL until the first hold/settle, or after a break */
    int too_big; /* the current body passed HADM_API_BODY_MAX */
    size_t body_len;
    char body[HADM_API_BODY_MAX]; /* not NUL-terminated: jansson gets the length */
};

static const char *g_conninfo;

static const char RESP_OK[] = "{\"ok\":true}";
static const char RESP_SHORT[] = "{\"error\":\"insufficient balance\"}";

/* Queue a JSON response; body is copied.  MHD_NO only when MHD itself fails. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *body)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    enum MHD_Result ret = MHD_NO;
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") == MHD_YES)
        ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* {"error": msg} with msg JSON-escaped (PostgreSQL messages carry quotes). */
static enum MHD_Result reply_error(struct MHD_Connection *conn, unsigned status, const char *msg)
{
    json_t *o = json_pack("{s:s}", "error", msg);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return reply(conn, status, "{\"error\":\"(message not encodable)\"}");
    enum MHD_Result ret = reply(conn, status, text);
    free(text);
    return ret;
}

/* PostgreSQL's messages end in a newline; copy without it into buf. */
static const char *pg_msg(char *buf, size_t size, const char *msg)
{
    snprintf(buf, size, "%s", msg && *msg ? msg : "unknown PostgreSQL error");
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return buf;
}

/* Open and prepare the worker's session if it has none.  0, or -1 with err filled. */
static int worker_connect(struct worker *w, char *err, size_t err_size)
{
    if (w->pg)
        return 0;
    PGconn *pg = hadm_session_open(g_conninfo, err, err_size);
    if (!pg)
        return -1;
    w->pg = pg;
    return 0;
}

/* Run a prepared call returning one boolean: 1 true, 0 false, -1 error (err filled; a
 * session that is no longer usable is closed so the next request opens a fresh one). */
static int worker_call(struct worker *w, const char *name, int n, const char *const *v, char *err,
                       size_t err_size)
{
    if (worker_connect(w, err, err_size) < 0)
        return -1;
    PGresult *r = PQexecPrepared(w->pg, name, n, v, NULL, NULL, 0);
    int rc = -1;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQnfields(r) == 1 &&
        !PQgetisnull(r, 0, 0))
        rc = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    else if (r && PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY))
        pg_msg(err, err_size, PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
    else
        pg_msg(err, err_size, r ? PQresultErrorMessage(r) : PQerrorMessage(w->pg));
    PQclear(r);
    if (rc < 0 && PQstatus(w->pg) != CONNECTION_OK) {
        PQfinish(w->pg);
        w->pg = NULL;
    }
    return rc;
}

/* ceil(a * b / 60) for a, b >= 0; -1 on overflow. */
static long long su_minutes(long long a, long long b)
{
    long long p;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &p) || p > LLONG_MAX - 59)
        return -1;
    return (p + 59) / 60;
}

/* "acctK" -> K + 1, the allocation id pg_bench.sh gives account K; -1 if not that shape. */
static long account_allocation(const char *account)
{
    if (strncmp(account, "acct", 4) != 0 || account[4] < '0' || account[4] > '9')
        return -1;
    char *end;
    errno = 0;
    long k = strtol(account + 4, &end, 10);
    if (errno || *end || k < 0 || k >= INT_MAX)
        return -1;
    return k + 1;
}

static enum MHD_Result do_hold(struct MHD_Connection *conn, struct worker *w, json_t *root)
{
    json_int_t job, limit_s, billing;
    const char *account;
    if (json_unpack(root, "{s:I, s:s, s:I, s:I}", "job_id", &job, "account", &account,
                    "time_limit_s", &limit_s, "billing", &billing) != 0)
        return reply_error(conn, 400, "need job_id, account, time_limit_s, billing");
    long alloc = account_allocation(account);
    long long amount = su_minutes(billing, limit_s);
    if (alloc < 0)
        return reply_error(conn, 400, "account must be acctK");
    if (job < 0 || amount < 0)
        return reply_error(conn, 400, "job_id, time_limit_s and billing must be >= 0");
    char a[24], j[24], amt[24], err[512];
    snprintf(a, sizeof a, "%ld", alloc);
    snprintf(j, sizeof j, "%lld", (long long)job);
    snprintf(amt, sizeof amt, "%lld", amount);
    const char *v[4] = {a, j, "0", amt};
    int rc = worker_call(w, HADM_PREDEBIT, 4, v, err, sizeof err);
    if (rc < 0)
        return reply_error(conn, 500, err);
    return rc ? reply(conn, 200, RESP_OK) : reply(conn, 402, RESP_SHORT);
}

static enum MHD_Result do_settle(struct MHD_Connection *conn, struct worker *w, json_t *root)
{
    json_int_t job, elapsed_s;
    if (json_unpack(root, "{s:I, s:I}", "job_id", &job, "elapsed_s", &elapsed_s) != 0)
        return reply_error(conn, 400, "need job_id, elapsed_s");
    long long actual = su_minutes(1, elapsed_s); /* billing 1: see the file comment */
    if (job < 0 || actual < 0)
        return reply_error(conn, 400, "job_id and elapsed_s must be >= 0");
    char j[24], act[24], err[512];
    snprintf(j, sizeof j, "%lld", (long long)job);
    snprintf(act, sizeof act, "%lld", actual);
    const char *v[2] = {j, act};
    int rc = worker_call(w, HADM_DEBIT, 2, v, err, sizeof err);
    if (rc < 0)
        return reply_error(conn, 500, err);
    return rc ? reply(conn, 200, RESP_OK) : reply_error(conn, 404, "no executing pre-debit");
}

/* Route a complete request (body in w->body). */
static enum MHD_Result dispatch(struct MHD_Connection *conn, struct worker *w, const char *url,
                                const char *method)
{
    int hold = strcmp(url, "/v1/jobs/hold") == 0;
    int settle = strcmp(url, "/v1/jobs/settle") == 0;
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0 || (!hold && !settle))
        return reply_error(conn, 404, "not found");
    if (w->too_big)
        return reply_error(conn, 413, "body too large");
    json_error_t jerr;
    json_t *root = json_loadb(w->body, w->body_len, 0, &jerr);
    if (!root)
        return reply_error(conn, 400, jerr.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return reply_error(conn, 400, "body must be a JSON object");
    }
    enum MHD_Result ret = hold ? do_hold(conn, w, root) : do_settle(conn, w, root);
    json_decref(root);
    return ret;
}

/* MHD access handler: called once with the headers, then per body chunk, then with
 * *upload_size 0 when the body is complete.  The body is gathered into the worker's
 * buffer: a connection serves one request at a time. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    (void)cls;
    (void)version;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct worker *w = ci ? ci->socket_context : NULL;
    if (!w)
        return MHD_NO; /* no worker: on_connection failed to allocate; drop the connection */
    if (!*req_cls) {
        /* First call of a new request: MHD resets *req_cls to NULL for every request. */
        *req_cls = w;
        w->body_len = 0;
        w->too_big = 0;
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > HADM_API_BODY_MAX)
            return reply_error(conn, 413, "body too large"); /* answered before the body */
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        if (w->too_big || n > HADM_API_BODY_MAX - w->body_len) {
            w->too_big = 1; /* chunked body past the bound: drain it, answer 413 at the end */
        } else {
            memcpy(w->body + w->body_len, upload, n);
            w->body_len += n;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    return dispatch(conn, w, url, method);
}

/* A connection starts: give it a worker.  It ends: close the worker's session. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)cls;
    (void)conn;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_ctx = calloc(1, sizeof(struct worker)); /* NULL: on_request drops it */
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct worker *w = *socket_ctx;
        if (w) {
            PQfinish(w->pg);
            free(w);
        }
        *socket_ctx = NULL;
    }
}

/* "127.0.0.1:PORT" -> sa; 0, or -1 if malformed. */
static int parse_listen(const char *s, struct sockaddr_in *sa)
{
    const char *colon = strrchr(s, ':');
    char host[64];
    if (!colon || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || port < 1 || port > 65535)
        return -1;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: hadm_api --conninfo STR --listen 127.0.0.1:PORT [--threads N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *listen_at = NULL;
    long threads = 128;
    static const struct option lo[] = {
        {"conninfo", 1, 0, 'd'}, {"listen", 1, 0, 'l'}, {"threads", 1, 0, 't'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'd':
            g_conninfo = optarg;
            break;
        case 'l':
            listen_at = optarg;
            break;
        case 't': {
            char *end;
            errno = 0;
            threads = strtol(optarg, &end, 10);
            if (errno || *end || threads < 1 || threads > 4096)
                usage();
            break;
        }
        default:
            usage();
        }
    }
    struct sockaddr_in sa;
    if (!g_conninfo || !listen_at || optind != argc || parse_listen(listen_at, &sa) < 0)
        usage();

    /* Block the stop signals before MHD starts its threads, so they inherit the mask and
     * only sigwait below receives them. */
    sigset_t stop;
    if (sigemptyset(&stop) || sigaddset(&stop, SIGTERM) || sigaddset(&stop, SIGINT) ||
        pthread_sigmask(SIG_BLOCK, &stop, NULL)) {
        fprintf(stderr, "hadm_api: cannot block signals\n");
        return 1;
    }
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)threads, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)120, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "hadm_api: cannot listen on %s\n", listen_at);
        return 1;
    }
    int sig = 0;
    int rc = sigwait(&stop, &sig);
    MHD_stop_daemon(d); /* joins every connection thread; on_connection closes the sessions */
    if (rc != 0) {
        fprintf(stderr, "hadm_api: sigwait: %s\n", strerror(rc));
        return 1;
    }
    return 0;
}
