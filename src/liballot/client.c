/* SPDX-License-Identifier: GPL-3.0-or-later */
/* client.c - the client handle and the one request path (allot.h).
 *
 * Design: one libcurl easy handle per client, reused for keep-alive; a mutex serialises
 * requests on a handle because an easy handle is single-threaded.  Every request encodes a
 * fresh MUNGE credential (allotd refuses replays; ALLOT_AUTH_PEER on a unix: URL skips it), sets
 * the headers, bounds the whole exchange by the timeout and the reply by ALLOT_MAX_REPLY_BYTES, and
 * turns any non-2xx answer into the daemon's error (reply.c). Invariants: the library never exits,
 * logs or aborts; the only global is the pthread_once guard around curl_global_init, which libcurl
 * requires to run once per process.
 */
#include "allot/allot.h"
#include "liballot/client_int.h"

#include <curl/curl.h>
#include <errno.h>
#include <munge.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct allot_client {
    pthread_mutex_t lock; /* serialises requests: the easy handle is single-threaded */
    CURL *curl;
    char *url;         /* as given, normalised (allot_client_url) */
    char *base;        /* request URL prefix */
    char *socket_path; /* Unix socket or NULL */
    char *munge_socket;
    char *run_as;
    char *test_user;
    long timeout_ms;
    int keepalive;
    enum allot_auth auth;
};

struct buf {
    char *data;
    size_t len, cap;
    int too_big;
    int oom;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* A user name as allotd accepts it: 1..63 of [A-Za-z0-9_.-], not starting with '-'. */
static int check_user(const char *field, const char *s, struct allot_error *err)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || s[0] == '-')
        return allot_errorf(err, ALLOT_EINVAL, "%s: must be 1..63 characters, not starting '-'",
                            field);
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '.' || ch == '-'))
            return allot_errorf(err, ALLOT_EINVAL, "%s: bad character '%c'", field, ch);
    }
    return 0;
}

/* Replace *slot by a copy of value (NULL or "" clears). */
static int set_string(char **slot, const char *value, struct allot_error *err)
{
    char *copy = NULL;
    if (value && *value) {
        copy = strdup(value);
        if (!copy)
            return allot_errorf(err, ALLOT_ENOMEM, "out of memory");
    }
    free(*slot);
    *slot = copy;
    return 0;
}

allot_client_t *allot_client_create(const char *url, struct allot_error *err)
{
    allot_client_t *c;
    const char *env;

    pthread_once(&curl_once, curl_init_once);
    if (curl_init_rc != CURLE_OK) {
        allot_errorf(err, ALLOT_EINTERNAL, "libcurl: %s", curl_easy_strerror(curl_init_rc));
        return NULL;
    }
    if (!url || !*url)
        url = getenv("ALLOT_URL");
    if (!url || !*url)
        url = ALLOT_DEFAULT_URL;

    c = calloc(1, sizeof(*c));
    if (!c) {
        allot_errorf(err, ALLOT_ENOMEM, "out of memory");
        return NULL;
    }
    c->timeout_ms = ALLOT_DEFAULT_TIMEOUT_MS;
    c->keepalive = 1;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        allot_errorf(err, ALLOT_ENOMEM, "cannot create a mutex");
        return NULL;
    }
    if (client_url_parse(url, &c->base, &c->socket_path, err) < 0)
        goto fail;
    if (strncmp(url, "unix:", 5) == 0)
        c->url = malloc(strlen(c->socket_path) + 6);
    else
        c->url = strdup(c->base);
    if (!c->url) {
        allot_errorf(err, ALLOT_ENOMEM, "out of memory");
        goto fail;
    }
    if (c->socket_path)
        sprintf(c->url, "unix:%s", c->socket_path);
    env = getenv("ALLOT_MUNGE_SOCKET");
    if (env && *env && allot_client_set_munge_socket(c, env, err) < 0) {
        allot_error_prefix(err, "ALLOT_MUNGE_SOCKET");
        goto fail;
    }
    env = getenv("ALLOT_AUTH");
    if (env && *env) {
        enum allot_auth a;
        if (strcmp(env, "munge") == 0) {
            a = ALLOT_AUTH_MUNGE;
        } else if (strcmp(env, "peer") == 0) {
            a = ALLOT_AUTH_PEER;
        } else {
            allot_errorf(err, ALLOT_EINVAL, "ALLOT_AUTH: '%s' is not munge or peer", env);
            goto fail;
        }
        if (allot_client_set_auth(c, a, err) < 0) {
            allot_error_prefix(err, "ALLOT_AUTH");
            goto fail;
        }
    }
    env = getenv("ALLOT_TEST_USER");
    if (env && *env && allot_client_set_test_user(c, env, err) < 0) {
        allot_error_prefix(err, "ALLOT_TEST_USER");
        goto fail;
    }
    c->curl = curl_easy_init();
    if (!c->curl) {
        allot_errorf(err, ALLOT_ENOMEM, "libcurl: cannot create a handle");
        goto fail;
    }
    return c;
fail:
    allot_client_destroy(c);
    return NULL;
}

void allot_client_destroy(allot_client_t *c)
{
    if (!c)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    free(c->url);
    free(c->base);
    free(c->socket_path);
    free(c->munge_socket);
    free(c->run_as);
    free(c->test_user);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

const char *allot_client_url(const allot_client_t *c)
{
    return c->url;
}

int allot_client_set_timeout_ms(allot_client_t *c, long timeout_ms, struct allot_error *err)
{
    if (timeout_ms < 1 || timeout_ms > ALLOT_MAX_TIMEOUT_MS)
        return allot_errorf(err, ALLOT_EINVAL, "timeout: must be 1..%d ms", ALLOT_MAX_TIMEOUT_MS);
    c->timeout_ms = timeout_ms;
    return 0;
}

int allot_client_set_munge_socket(allot_client_t *c, const char *path, struct allot_error *err)
{
    if (path && *path && path[0] != '/')
        return allot_errorf(err, ALLOT_EINVAL, "munge socket: '%s' is not an absolute path", path);
    return set_string(&c->munge_socket, path, err);
}

int allot_client_set_run_as(allot_client_t *c, const char *user, struct allot_error *err)
{
    if (user && *user && check_user("as", user, err) < 0)
        return -1;
    return set_string(&c->run_as, user, err);
}

int allot_client_set_test_user(allot_client_t *c, const char *user, struct allot_error *err)
{
    if (user && *user && check_user("test user", user, err) < 0)
        return -1;
    return set_string(&c->test_user, user, err);
}

int allot_client_set_auth(allot_client_t *c, enum allot_auth auth, struct allot_error *err)
{
    if (auth != ALLOT_AUTH_MUNGE && auth != ALLOT_AUTH_PEER)
        return allot_errorf(err, ALLOT_EINVAL, "auth: unknown method %d", (int)auth);
    /* The kernel only vouches for the peer of a Unix socket; over TCP a request without a
     * credential is always refused, so saying "peer" there is a configuration mistake. */
    if (auth == ALLOT_AUTH_PEER && !c->socket_path)
        return allot_errorf(err, ALLOT_EINVAL,
                            "auth: peer credentials need a unix: URL (%s is not one)", c->url);
    c->auth = auth;
    return 0;
}

void allot_client_set_keepalive(allot_client_t *c, int on)
{
    c->keepalive = on ? 1 : 0;
}

/* Encode an empty-payload credential with the handle's munged socket.  Returns a malloc'd
 * credential, or NULL with err set (EAUTH naming munged's complaint). */
static char *encode_credential(allot_client_t *c, struct allot_error *err)
{
    munge_ctx_t ctx = munge_ctx_create();
    munge_err_t e;
    char *cred = NULL;

    if (!ctx) {
        allot_errorf(err, ALLOT_ENOMEM, "munge: cannot create a context");
        return NULL;
    }
    if (c->munge_socket) {
        e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, c->munge_socket);
        if (e != EMUNGE_SUCCESS) {
            allot_errorf(err, ALLOT_EAUTH, "munge: socket %s: %s", c->munge_socket,
                         munge_ctx_strerror(ctx));
            munge_ctx_destroy(ctx);
            return NULL;
        }
    }
    e = munge_encode(&cred, ctx, ALLOT_MUNGE_PAYLOAD, (int)strlen(ALLOT_MUNGE_PAYLOAD));
    if (e != EMUNGE_SUCCESS) {
        const char *why = munge_ctx_strerror(ctx);
        /* No munged to talk to is an outage (retry later), not a refused identity. */
        allot_errorf(err,
                     e == EMUNGE_NO_MEMORY ? ALLOT_ENOMEM
                     : e == EMUNGE_SOCKET  ? ALLOT_EUNAVAIL
                                           : ALLOT_EAUTH,
                     "cannot get a MUNGE credential: %s", why ? why : munge_strerror(e));
        free(cred);
        cred = NULL;
    }
    munge_ctx_destroy(ctx);
    return cred;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
    struct buf *b = arg;
    size_t n = size * nmemb;

    if (b->len + n + 1 > (size_t)ALLOT_MAX_REPLY_BYTES) {
        b->too_big = 1;
        return 0; /* makes libcurl abort the transfer */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->oom = 1;
            return 0;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

static int add_header(struct curl_slist **list, const char *name, const char *value,
                      struct allot_error *err)
{
    size_t n = strlen(name) + strlen(value) + 3;
    char *line = malloc(n);
    struct curl_slist *l;

    if (!line)
        return allot_errorf(err, ALLOT_ENOMEM, "out of memory");
    snprintf(line, n, "%s: %s", name, value);
    l = curl_slist_append(*list, line);
    free(line);
    if (!l)
        return allot_errorf(err, ALLOT_ENOMEM, "out of memory");
    *list = l;
    return 0;
}

static int check_method(const char *method)
{
    static const char *const ok[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(method, ok[i]) == 0)
            return 0;
    return -1;
}

/* Keep the first setopt failure of a series in *first (CURLE_OK while all succeeded). */
static void setopt_rc(CURLcode rc, CURLcode *first)
{
    if (rc != CURLE_OK && *first == CURLE_OK)
        *first = rc;
}

/* The transfer itself, under c->lock.  Fills *status and b; returns 0 or -1 with err. */
static int perform(allot_client_t *c, const char *method, const char *url,
                   struct curl_slist *headers, const char *json_body, long *status, struct buf *b,
                   struct allot_error *err)
{
    CURL *h = c->curl;
    CURLcode rc, bad = CURLE_OK;
    char errbuf[CURL_ERROR_SIZE] = "";

    curl_easy_reset(h); /* keeps the connection cache: keep-alive survives */
    /* Every option is checked: one that did not take could send the request elsewhere (no
     * Unix socket: TCP to localhost:80) or without its bound (no timeout: a slurmctld
     * thread waiting for ever).  Setting an option fails only for lack of memory. */
    setopt_rc(curl_easy_setopt(h, CURLOPT_URL, url), &bad);
    setopt_rc(curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf), &bad);
    setopt_rc(curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L), &bad); /* no SIGALRM in slurmctld */
    setopt_rc(curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms), &bad);
    setopt_rc(curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms), &bad);
    /* Defence in depth only (url.c admits http and https URLs alone); unknown to a libcurl
     * before 7.85, where requests must still work. */
    (void)curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    setopt_rc(curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L), &bad);
    setopt_rc(curl_easy_setopt(h, CURLOPT_FORBID_REUSE, c->keepalive ? 0L : 1L), &bad);
    setopt_rc(curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers), &bad);
    setopt_rc(curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data), &bad);
    setopt_rc(curl_easy_setopt(h, CURLOPT_WRITEDATA, b), &bad);
    if (c->socket_path)
        setopt_rc(curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket_path), &bad);
    if (strcmp(method, "GET") == 0) {
        setopt_rc(curl_easy_setopt(h, CURLOPT_HTTPGET, 1L), &bad);
    } else {
        setopt_rc(curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method), &bad);
        if (json_body || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
            strcmp(method, "PATCH") == 0) {
            const char *body = json_body ? json_body : "";
            setopt_rc(curl_easy_setopt(h, CURLOPT_POSTFIELDS, body), &bad);
            setopt_rc(curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body)),
                      &bad);
        }
    }
    if (bad != CURLE_OK)
        return allot_errorf(err, bad == CURLE_OUT_OF_MEMORY ? ALLOT_ENOMEM : ALLOT_EINTERNAL,
                            "libcurl: cannot set up the request to %s: %s", c->url,
                            curl_easy_strerror(bad));

    rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
        const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
        if (b->too_big)
            return allot_errorf(err, ALLOT_ETOOBIG, "allotd's reply exceeds %ld bytes",
                                (long)ALLOT_MAX_REPLY_BYTES);
        if (b->oom)
            return allot_errorf(err, ALLOT_ENOMEM, "out of memory reading allotd's reply");
        if (rc == CURLE_OPERATION_TIMEDOUT)
            return allot_errorf(err, ALLOT_EUNAVAIL, "allotd at %s did not answer within %ld ms",
                                c->url, c->timeout_ms);
        if (rc == CURLE_OUT_OF_MEMORY)
            return allot_errorf(err, ALLOT_ENOMEM, "libcurl: out of memory");
        if (rc == CURLE_URL_MALFORMAT)
            return allot_errorf(err, ALLOT_EINVAL, "request path: %s", why);
        if (c->socket_path && rc == CURLE_COULDNT_CONNECT) {
            /* curl names the URL's dummy host ("localhost port 80"): name the socket. */
            long os = 0;
            if (curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os) != CURLE_OK || os <= 0)
                os = client_socket_errno(c->socket_path);
            char sock[512];
            client_socket_why(c->socket_path, (int)os, sock, sizeof sock);
            return allot_errorf(err, ALLOT_EUNAVAIL, "cannot reach allotd: %s", sock);
        }
        return allot_errorf(err, ALLOT_EUNAVAIL, "cannot reach allotd at %s: %s", c->url, why);
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    return 0;
}

static int request_once(allot_client_t *c, const char *method, const char *path,
                        const char *json_body, int *http_status, char **reply,
                        struct allot_error *err)
{
    struct curl_slist *headers = NULL;
    struct buf b = {0};
    struct allot_error merr = {0};
    char *cred = NULL, *url = NULL, *auth = NULL;
    long status = 0;
    int rc = -1;

    if (http_status)
        *http_status = 0;
    if (reply)
        *reply = NULL;
    if (!c || !method || !path)
        return allot_errorf(err, ALLOT_EINVAL, "request: missing client, method or path");
    if (check_method(method) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "request: unsupported method '%s'", method);
    if (path[0] != '/')
        return allot_errorf(err, ALLOT_EINVAL, "request: path '%s' must start with '/'", path);

    /* A test user means an AuthType=none daemon, which ignores credentials; asking munged
     * anyway would cost libmunge's two seconds of retries wherever none runs. */
    /* Peer auth: allotd reads our uid off the socket (SO_PEERCRED), munged is not asked. */
    if (!c->test_user && c->auth != ALLOT_AUTH_PEER) {
        cred = encode_credential(c, &merr);
        if (!cred) {
            if (err)
                *err = merr;
            return -1;
        }
    }
    if (asprintf(&url, "%s%s", c->base, path) < 0) {
        url = NULL;
        allot_errorf(err, ALLOT_ENOMEM, "out of memory");
        goto out;
    }
    if (cred) {
        if (asprintf(&auth, "MUNGE %s", cred) < 0) {
            auth = NULL;
            allot_errorf(err, ALLOT_ENOMEM, "out of memory");
            goto out;
        }
        if (add_header(&headers, "X-Allot-Auth", auth, err) < 0)
            goto out;
    }
    if (add_header(&headers, "Accept", "application/json", err) < 0 ||
        (json_body && add_header(&headers, "Content-Type", "application/json", err) < 0) ||
        /* libcurl would otherwise send "Expect: 100-continue" and wait for large bodies. */
        add_header(&headers, "Expect", "", err) < 0 ||
        (c->run_as && add_header(&headers, "X-Allot-As", c->run_as, err) < 0) ||
        (c->test_user && add_header(&headers, "X-Allot-User", c->test_user, err) < 0))
        goto out;

    int lrc = pthread_mutex_lock(&c->lock);
    if (lrc != 0) {
        /* pthread functions return their error; errno is not set. */
        allot_errorf(err, ALLOT_EINTERNAL, "client mutex: %s", strerror(lrc));
        goto out;
    }
    rc = perform(c, method, url, headers, json_body, &status, &b, err);
    pthread_mutex_unlock(&c->lock);
    if (rc < 0)
        goto out;

    if (!b.data) {
        b.data = strdup("");
        if (!b.data) {
            rc = allot_errorf(err, ALLOT_ENOMEM, "out of memory");
            goto out;
        }
    }
    if (http_status)
        *http_status = (int)status;
    if (status < 200 || status > 299)
        rc = client_reply_error((int)status, b.data, err);
    if (reply) {
        *reply = b.data;
        b.data = NULL;
    }
out:
    free(b.data);
    curl_slist_free_all(headers);
    free(url);
    free(auth);
    free(cred);
    return rc;
}

/* An answer of unknown outcome (EINDOUBT) that allotd marks safe to repeat is sent again,
 * at most CLIENT_DOUBT_RETRIES times after pauses of 250 ms doubling (3.75 s in all: the
 * daemon's reconnects back off up to 2 s).  A retry that finds allotd or its database
 * unavailable keeps the in-doubt answer: the first request may stand. */
#define CLIENT_DOUBT_RETRIES 4

int allot_request(allot_client_t *c, const char *method, const char *path, const char *json_body,
                  int *http_status, char **reply, struct allot_error *err)
{
    struct allot_error e = {0};
    char *body = NULL;
    int status = 0;
    int rc = request_once(c, method, path, json_body, &status, &body, &e);
    long pause_ms = 250;
    for (int i = 0; rc < 0 && e.code == ALLOT_EINDOUBT && i < CLIENT_DOUBT_RETRIES; i++) {
        if (!client_retry_safe(body))
            break;
        struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
        pause_ms *= 2;
        struct allot_error e2 = {0};
        char *body2 = NULL;
        int status2 = 0;
        int rc2 = request_once(c, method, path, json_body, &status2, &body2, &e2);
        if (rc2 < 0 && e2.code == ALLOT_EUNAVAIL) {
            free(body2); /* still down: the in-doubt answer stands until one is known */
            continue;
        }
        free(body);
        body = body2;
        status = status2;
        e = e2;
        rc = rc2;
    }
    if (http_status)
        *http_status = status;
    if (reply)
        *reply = body;
    else
        free(body);
    if (rc < 0 && err)
        *err = e;
    return rc;
}

const char *allot_version(void)
{
    return ALLOT_VERSION;
}
