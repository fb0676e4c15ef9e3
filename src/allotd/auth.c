/* SPDX-License-Identifier: GPL-3.0-or-later */
/* auth.c - MUNGE and Unix-socket peer authentication, roles and run-as (auth.h). */
#include "allotd/auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <munge.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "allot/allot.h"
#include "allotd/tokens.h"
#include "libutil/log.h"
#include "libutil/text.h"

static pthread_key_t munge_key;

static void munge_ctx_free(void *p)
{
    munge_ctx_destroy(p);
}

int auth_init(struct allot_error *err)
{
    int rc = pthread_key_create(&munge_key, munge_ctx_free);
    if (rc != 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "pthread_key_create: %s", strerror(rc));
    return 0;
}

const char *auth_role_name(enum role role)
{
    switch (role) {
    case ROLE_SUPERUSER:
        return "superuser";
    case ROLE_ADMIN:
        return "admin";
    case ROLE_OPERATOR:
        return "operator";
    case ROLE_USER:
        return "user";
    default:
        return "none";
    }
}

enum role auth_role(const struct allot_conf *c, const char *user)
{
    if (conf_list_contains(c->super_users, user))
        return ROLE_SUPERUSER;
    if (conf_list_contains(c->admins, user))
        return ROLE_ADMIN;
    if (conf_list_contains(c->operators, user))
        return ROLE_OPERATOR;
    return ROLE_USER;
}

/* This thread's munge context, created on first use with the configured socket. */
static munge_ctx_t thread_ctx(const char *socket, struct allot_error *err)
{
    munge_ctx_t ctx = pthread_getspecific(munge_key);
    if (ctx)
        return ctx;
    ctx = munge_ctx_create();
    if (!ctx) {
        allot_errorf(err, ALLOT_EINTERNAL, "munge_ctx_create failed");
        return NULL;
    }
    if (socket[0] && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
        allot_errorf(err, ALLOT_EINTERNAL, "munge socket %s: %s", socket, munge_ctx_strerror(ctx));
        munge_ctx_destroy(ctx);
        return NULL;
    }
    pthread_setspecific(munge_key, ctx);
    return ctx;
}

static int uid_name(uid_t uid, char *name, size_t size, struct allot_error *err)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    int rc = getpwuid_r(uid, &pw, buf, sizeof(buf), &res);
    if (rc != 0 || !res)
        return allot_errorf(err, ALLOT_EAUTH, "uid %u has no user name on this host",
                            (unsigned)uid);
    if (strlen(pw.pw_name) >= size)
        return allot_errorf(err, ALLOT_EAUTH, "user name of uid %u is too long", (unsigned)uid);
    strcpy(name, pw.pw_name);
    return 0;
}

/* The uid of the process at the other end of a Unix-socket connection, as the kernel
 * recorded it at connect() (SO_PEERCRED).  1 with *uid set; 0 when the connection is not a
 * Unix socket (TCP: SO_PEERCRED there would answer the overflow uid, so the domain is
 * checked first); -1 with err when the kernel cannot tell.  Two getsockopt calls per
 * request: cheaper than any per-connection cache MHD offers (and no state to keep right). */
static int peer_uid(struct req *r, uid_t *uid, struct allot_error *err)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return allot_errorf(err, ALLOT_EINTERNAL, "peer credentials: no connection socket");
    int fd = ci->connect_fd;
    int domain = 0;
    socklen_t len = sizeof(domain);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "peer credentials: SO_DOMAIN: %s",
                            strerror(errno));
    if (domain != AF_UNIX)
        return 0;
    struct ucred cred;
    len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred))
        return allot_errorf(err, ALLOT_EINTERNAL, "peer credentials: SO_PEERCRED: %s",
                            strerror(errno));
    *uid = cred.uid;
    return 1;
}

static int decode_munge(struct req *r, struct allot_error *err)
{
    struct MHD_Connection *conn = r->conn;
    const char *hdr = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Allot-Auth");
    if (!hdr || !*hdr) {
        /* SocketPeerAuth: the kernel's word for who connected to ListenSocket.  A request
         * that carries the header (even empty) is judged by it alone, never by the peer. */
        if (!hdr && r->conf->socket_peer_auth) {
            uid_t uid = (uid_t)-1;
            int on_unix = peer_uid(r, &uid, err);
            if (on_unix < 0)
                return -1;
            if (on_unix) {
                r->who.uid = uid;
                if (uid_name(uid, r->who.real, sizeof(r->who.real), err) < 0)
                    return -1;
                log_debug("msg=\"authenticated\" req=%llu method=peer uid=%u user=%s",
                          (unsigned long long)r->id, (unsigned)uid, r->who.real);
                return 0;
            }
        }
        return allot_errorf(err, ALLOT_EAUTH,
                            "no credential: send 'X-Allot-Auth: MUNGE <credential>'");
    }
    if (strncmp(hdr, "MUNGE ", 6) != 0)
        return allot_errorf(err, ALLOT_EAUTH, "X-Allot-Auth: expected 'MUNGE <credential>'");
    munge_ctx_t ctx = thread_ctx(r->conf->munge_socket, err);
    if (!ctx)
        return -1;
    uid_t uid;
    gid_t gid;
    void *payload = NULL;
    int plen = 0;
    munge_err_t e = munge_decode(hdr + 6, ctx, &payload, &plen, &uid, &gid);
    /* The payload binds the credential to allot: one minted for another MUNGE service (or
     * with none) is refused, whoever it names. */
    int bound = payload && plen == (int)strlen(ALLOT_MUNGE_PAYLOAD) &&
                memcmp(payload, ALLOT_MUNGE_PAYLOAD, (size_t)plen) == 0;
    free(payload);
    if (e == EMUNGE_SUCCESS && !bound)
        return allot_errorf(err, ALLOT_EAUTH,
                            "credential not minted for allot: its payload must be '%s' (munge "
                            "-s %s)",
                            ALLOT_MUNGE_PAYLOAD, ALLOT_MUNGE_PAYLOAD);
    switch (e) {
    case EMUNGE_SUCCESS:
        break;
    case EMUNGE_SOCKET:
        return allot_errorf(err, ALLOT_EUNAVAIL, "cannot reach munged to check the credential: %s",
                            munge_ctx_strerror(ctx));
    case EMUNGE_CRED_REPLAYED:
        return allot_errorf(err, ALLOT_EAUTH, "credential replayed: encode a new one per request");
    case EMUNGE_CRED_EXPIRED:
        return allot_errorf(err, ALLOT_EAUTH,
                            "credential expired: check the clocks and encode a new one");
    case EMUNGE_CRED_REWOUND:
        return allot_errorf(err, ALLOT_EAUTH, "credential from the future: check the clocks");
    case EMUNGE_CRED_UNAUTHORIZED:
        return allot_errorf(err, ALLOT_EAUTH, "credential not meant for allotd's uid");
    case EMUNGE_BAD_CRED:
    case EMUNGE_BAD_VERSION:
    case EMUNGE_BAD_CIPHER:
    case EMUNGE_BAD_MAC:
    case EMUNGE_BAD_ZIP:
    case EMUNGE_BAD_REALM:
    case EMUNGE_CRED_INVALID:
    case EMUNGE_BAD_LENGTH:
        return allot_errorf(err, ALLOT_EAUTH, "invalid credential (%s)", munge_strerror(e));
    default:
        return allot_errorf(err, ALLOT_EAUTH, "credential refused (%s)", munge_strerror(e));
    }
    r->who.uid = uid;
    if (uid_name(uid, r->who.real, sizeof(r->who.real), err) < 0)
        return -1;
    log_debug("msg=\"authenticated\" req=%llu method=munge uid=%u user=%s",
              (unsigned long long)r->id, (unsigned)uid, r->who.real);
    return 0;
}

/* AuthType=none: loopback (or Unix socket) peers only. */
static int decode_none(struct req *r, struct allot_error *err)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    int local = 0;
    if (!sa || sa->sa_family == AF_UNIX)
        local = 1; /* MHD gives no address for Unix-socket peers */
    else if (sa->sa_family == AF_INET)
        local =
            (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
    else if (sa->sa_family == AF_INET6)
        local = IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
    if (!local)
        return allot_errorf(err, ALLOT_EAUTH, "AuthType=none accepts loopback peers only");
    const char *u = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Allot-User");
    if (!u || !*u)
        u = "root";
    if (model_check_name("X-Allot-User", u, 0, err) < 0) {
        err->code = ALLOT_EAUTH;
        return -1;
    }
    text_copy(r->who.real, sizeof(r->who.real), u);
    r->who.uid = -1;
    return 0;
}

/* Authorization: Bearer <token>, a dashboard token (tokens.h): read-only, its own user and
 * role, never more than the user's role in the current conf. */
static int decode_token(struct req *r, const char *authz, struct allot_error *err)
{
    static const char how[] = "run 'allot dashboard' for a new link";
    if (strncasecmp(authz, "Bearer ", 7) != 0)
        return allot_errorf(err, ALLOT_EAUTH,
                            "Authorization: expected 'Bearer <token>' (a "
                            "dashboard token; %s)",
                            how);
    if (MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Allot-Auth"))
        return allot_errorf(err, ALLOT_EAUTH,
                            "Authorization and X-Allot-Auth: send one credential, not two");
    struct token_grant g;
    if (!r->d->tokens || !tokens_find(r->d->tokens, authz + 7, (int64_t)time(NULL), &g))
        return allot_errorf(err, ALLOT_EAUTH, "dashboard token unknown or expired; %s", how);
    /* POST /v1/whatif only reads (its change is in the body, too rich for a query). */
    if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0 &&
        !(strcmp(r->method, "POST") == 0 && r->url && strcmp(r->url, "/v1/whatif") == 0))
        return allot_errorf(err, ALLOT_EPERM,
                            "a dashboard token is read-only: %s %s needs a "
                            "MUNGE credential",
                            r->method, r->url ? r->url : "");
    if (MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Allot-As"))
        return allot_errorf(err, ALLOT_EPERM,
                            "X-Allot-As: not with a dashboard token (it is already a user's)");
    text_copy(r->who.real, sizeof(r->who.real), g.user);
    text_copy(r->who.user, sizeof(r->who.user), g.user);
    r->who.uid = -1;
    enum role now_role = auth_role(r->conf, g.user);
    r->who.role = (int)now_role < g.role ? now_role : (enum role)g.role;
    log_debug("msg=\"authenticated\" req=%llu method=token user=%s role=%s",
              (unsigned long long)r->id, g.user, auth_role_name(r->who.role));
    return 0;
}

int auth_request(struct req *r, struct allot_error *err)
{
    const char *authz = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
    if (authz)
        return decode_token(r, authz, err);
    int rc = r->d->auth_none ? decode_none(r, err) : decode_munge(r, err);
    if (rc < 0)
        return -1;
    enum role real_role = auth_role(r->conf, r->who.real);
    text_copy(r->who.user, sizeof(r->who.user), r->who.real);
    r->who.role = real_role;
    const char *as = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Allot-As");
    if (as && *as && strcmp(as, r->who.real) != 0) {
        if (real_role != ROLE_SUPERUSER && real_role != ROLE_ADMIN)
            return allot_errorf(err, ALLOT_EPERM,
                                "X-Allot-As: only superusers and admins may act as another "
                                "user (%s is %s)",
                                r->who.real, auth_role_name(real_role));
        if (model_check_name("X-Allot-As", as, 0, err) < 0)
            return -1;
        enum role as_role = auth_role(r->conf, as);
        /* Acting never gains a right the caller lacks, and an admin has no operator rights
         * (the job verbs are the plugins' and agents'): the order of enum role does not say
         * that, so it is said here. */
        if (as_role == ROLE_OPERATOR && real_role != ROLE_SUPERUSER)
            return allot_errorf(err, ALLOT_EPERM,
                                "X-Allot-As: %s is an operator; only a superuser may act as "
                                "one (%s is %s)",
                                as, r->who.real, auth_role_name(real_role));
        text_copy(r->who.user, sizeof(r->who.user), as);
        r->who.role = as_role < real_role ? as_role : real_role;
    }
    return 0;
}

/* The longest part of a request's path an EPERM message shows: the message stays within
 * its fixed buffer (ALLOT_ERRMSG_MAX) with the names and the role around it. */
#define REFUSED_PATH_MAX 256

int auth_refuse(const struct req *r, struct allot_error *err)
{
    /* The request's own path, not its route's template: "/v1/allocations/{}/credit" is
     * not what the caller typed.  Printed from r->url with a bound, nothing copied. */
    const char *path = r->url ? r->url : "";
    int n = (int)strnlen(path, REFUSED_PATH_MAX);
    const char *more = path[n] ? "..." : "";
    const char *role = auth_role_name(r->who.role);
    /* Acting as another user: name who asked as well, as the role is the lower of both. */
    if (r->who.real[0] && strcmp(r->who.real, r->who.user) != 0)
        return allot_errorf(err, ALLOT_EPERM, "%s, acting as %s, may not call %s %.*s%s (role %s)",
                            r->who.real, r->who.user, r->method, n, path, more, role);
    return allot_errorf(err, ALLOT_EPERM, "%s may not call %s %.*s%s (role %s)", r->who.user,
                        r->method, n, path, more, role);
}

struct seen_arg {
    const char *account;
    int found;
};

static int on_assoc(const struct assoc *a, void *arg)
{
    struct seen_arg *s = arg;
    if (strcmp(a->account, s->account) == 0)
        s->found = 1;
    return 0;
}

int auth_coordinates(struct req *r, const char *account, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct account a;
    struct allot_error e = {0};
    if (store_account_get(st, account, &a, &e) < 0) {
        if (e.code == ALLOT_ENOENT || e.code == ALLOT_EINVAL)
            return 0; /* no such account: nobody coordinates it */
        if (err)
            *err = e;
        return -1;
    }
    return conf_list_contains(a.coordinators, r->who.user);
}

int auth_sees_account(struct req *r, const char *account, struct allot_error *err)
{
    if (r->who.role != ROLE_USER)
        return 1;
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct assoc_filter f = {.user = r->who.user};
    struct seen_arg s = {.account = account};
    if (store_assoc_list(st, &f, on_assoc, &s, err) < 0)
        return -1;
    return s.found ? 1 : auth_coordinates(r, account, err);
}

static int on_member(const struct assoc *a, void *arg)
{
    json_object_set_new(arg, a->account, json_true());
    return 0;
}

struct coord_arg {
    const char *user;
    json_t *set;
};

static int on_coordinated(const struct account *a, void *arg)
{
    struct coord_arg *c = arg;
    if (conf_list_contains(a->coordinators, c->user))
        json_object_set_new(c->set, a->name, json_true());
    return 0;
}

int auth_coordinated(struct req *r, json_t **out, struct allot_error *err)
{
    *out = NULL;
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct coord_arg c = {r->who.user, json_object()};
    if (store_account_list(st, on_coordinated, &c, err) < 0) {
        json_decref(c.set);
        return -1;
    }
    *out = c.set;
    return 0;
}

int auth_account_set(struct req *r, json_t **out, struct allot_error *err)
{
    *out = NULL;
    if (r->who.role != ROLE_USER)
        return 0;
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    json_t *set = json_object();
    struct assoc_filter f = {.user = r->who.user};
    json_t *coord = NULL;
    if (store_assoc_list(st, &f, on_member, set, err) < 0 || auth_coordinated(r, &coord, err) < 0) {
        json_decref(set);
        return -1;
    }
    json_object_update(set, coord);
    json_decref(coord);
    *out = set;
    return 0;
}

int auth_set_sees(const json_t *set, const char *account)
{
    return !set || json_object_get(set, account) != NULL;
}
