/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_misc.c - service endpoints: /healthz, /metrics, /v1/whoami, /v1/check; and the
 * handlers' shared helpers (api.h): error field renaming, durations for messages, the
 * cluster filter of history listings. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/metrics.h"
#include "allotd/routes.h"
#include "allotd/writer.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

#define METRICS_TOKEN_MAX 256 /* the longest scrape token MetricsTokenFile may hold */

int api_healthz(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    int cur = 0, latest = 0;
    if (!st || store_schema_version(st, &cur, &latest, err) < 0) {
        err->code = ALLOT_EUNAVAIL;
        return -1;
    }
    r->out =
        json_pack("{s:s, s:s, s:i}", "status", "ok", "backend", store_backend(st), "schema", cur);
    return 0;
}

/* How long /readyz trusts the outcome of the last write: a load balancer or the plugins
 * asking often cost at most one probe write per this, and none while writes flow. */
#define READY_CACHE_US 1000000

static int run_ready_probe(store_t *st, void *arg, struct allot_error *err)
{
    (void)arg;
    return store_write_probe(st, err);
}

static int finish_ready(struct req *r, struct allot_error *err)
{
    (void)err;
    r->out = json_pack("{s:s}", "status", "ready");
    return 0;
}

/* Readiness: whether a write can commit now (doc/allotd.md "Liveness and readiness").  The
 * outcome of a write in the last second answers; else a write of no value goes through
 * the writer like any other, and its commit (or its error, 503 when the storage cannot
 * take it) is the answer.  /healthz stays the liveness: the process answers and reads. */
int api_readyz(struct req *r, struct allot_error *err)
{
    int rc = writer_ready(r->d->writer, READY_CACHE_US, err);
    if (rc == 1)
        return finish_ready(r, err);
    if (rc == 0) {
        err->code = ALLOT_EUNAVAIL;
        return -1;
    }
    r->op.rerunnable = 1;
    return req_defer_write(r, run_ready_probe, NULL, finish_ready);
}

/* 1 when the Authorization header is "Bearer <the token in MetricsTokenFile>".  The file
 * is read at each scrape (one every few seconds at most), so a new token takes effect
 * without a reload; compared in constant time. */
static int scrape_token_matches(const char *path, const char *authz)
{
    if (!path[0] || !authz || strncasecmp(authz, "Bearer ", 7) != 0)
        return 0;
    char want[METRICS_TOKEN_MAX + 2];
    FILE *f = fopen(path, "re");
    if (!f) {
        log_warn("msg=\"MetricsTokenFile unreadable\" path=%s error=\"%s\"", path, strerror(errno));
        return 0;
    }
    size_t n = fread(want, 1, sizeof(want) - 1, f);
    fclose(f);
    want[n] = '\0';
    while (n && (want[n - 1] == '\n' || want[n - 1] == '\r' || want[n - 1] == ' '))
        want[--n] = '\0';
    const char *got = authz + 7;
    size_t glen = strnlen(got, METRICS_TOKEN_MAX + 1);
    if (n < 16 || n > METRICS_TOKEN_MAX || glen != n) {
        if (n < 16 || n > METRICS_TOKEN_MAX)
            log_warn("msg=\"MetricsTokenFile ignored: its token must be 16 to %d characters\" "
                     "path=%s",
                     METRICS_TOKEN_MAX, path);
        explicit_bzero(want, sizeof(want));
        return 0;
    }
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(want[i] ^ got[i]);
    explicit_bzero(want, sizeof(want));
    return diff == 0;
}

/* Whether this scrape may see per-account series: a caller who sent no credential may not
 * (the process's own series are public, as Prometheus scrapes expect); the scrape token may;
 * any other credential is checked as on every route and must be an admin's, operator's or
 * superuser's.  -1 with err for a credential that does not authenticate. */
static int metrics_accounts(struct req *r, struct allot_error *err)
{
    const char *authz = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
    int has_cred =
        authz || MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Allot-Auth") ||
        (r->d->auth_none && MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Allot-User"));
    if (!has_cred)
        return 0;
    if (scrape_token_matches(r->conf->metrics_token_file, authz))
        return 1;
    if (auth_request(r, err) < 0)
        return -1;
    return routes_allowed(ACCESS_READALL, r->who.role);
}

int api_metrics(struct req *r, struct allot_error *err)
{
    int accounts = metrics_accounts(r, err);
    if (accounts < 0)
        return -1;
    store_t *st = req_reader(r, NULL); /* balances are optional in the scrape */
    metrics_render(r->d->metrics, writer_depth(r->d->writer), st, accounts, &r->text, &r->text_len);
    r->ctype = "text/plain; version=0.0.4";
    return 0;
}

int api_whoami(struct req *r, struct allot_error *err)
{
    r->out = json_pack("{s:s, s:s, s:I, s:s}", "user", r->who.user, "real_user", r->who.real, "uid",
                       (json_int_t)r->who.uid, "role", auth_role_name(r->who.role));
    return 0;
}

static void on_problem(const char *problem, void *arg)
{
    json_array_append_new(arg, json_string(problem));
}

int api_check(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    json_t *problems = json_array();
    int n = store_check(st, on_problem, problems, err);
    if (n < 0) {
        json_decref(problems);
        return -1;
    }
    r->out = json_pack("{s:b, s:o}", "ok", n == 0, "problems", problems);
    return 0;
}

int api_error_field(struct allot_error *err, const char *from, const char *to)
{
    size_t n = strlen(from);
    if (!err || err->code != ALLOT_EINVAL || !to || strncmp(err->msg, from, n) != 0 ||
        err->msg[n] != ':')
        return -1;
    char rest[sizeof(err->msg)];
    text_copy(rest, sizeof(rest), err->msg + n);
    return allot_errorf(err, ALLOT_EINVAL, "%s%s", to, rest);
}

const char *api_duration(int64_t value, int64_t unit_s, char *buf, size_t size)
{
    static const struct {
        int64_t s;
        const char *name;
    } parts[] = {{86400, "d"}, {3600, "h"}, {60, "min"}, {1, "s"}};
    const char *unit = unit_s == 60 ? "min" : "s";
    int n = snprintf(buf, size, "%lld %s", (long long)value, unit);
    int64_t total;
    /* Nothing to add to a negative value (unset), one that overflows in seconds, or one
     * below the next unit up ("45 s (45 s)" says nothing). */
    if (n < 0 || (size_t)n >= size || value <= 0 || __builtin_mul_overflow(value, unit_s, &total) ||
        total < unit_s * 60)
        return buf;
    size_t len = (size_t)n;
    const char *sep = " (";
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && len < size; i++) {
        int64_t k = total / parts[i].s;
        if (!k)
            continue;
        total -= k * parts[i].s;
        n = snprintf(buf + len, size - len, "%s%lld %s", sep, (long long)k, parts[i].name);
        if (n < 0)
            break;
        len += (size_t)n;
        sep = " ";
    }
    if (len < size)
        snprintf(buf + len, size - len, ")");
    return buf;
}

int api_empty_listing_names(struct req *r, store_t *st, const char *account, const char *user,
                            const char *what, struct allot_error *err)
{
    struct allot_error e = {0};
    if (account && account[0]) {
        /* A plain user reads only its own accounts: an account it cannot see gets the same
         * answer whether it exists or not, so a listing is no oracle of account names. */
        if (r->who.role == ROLE_USER) {
            int vis = auth_sees_account(r, account, err);
            if (vis < 0)
                return -1;
            if (!vis)
                return allot_errorf(err, ALLOT_ENOENT,
                                    "account: '%s' is not an account of yours, and no %s in "
                                    "this listing names it",
                                    account, what);
        } else if (store_account_get(st, account, &(struct account){0}, &e) < 0) {
            if (e.code != ALLOT_ENOENT) {
                if (err)
                    *err = e;
                return -1;
            }
            return allot_errorf(err, ALLOT_ENOENT,
                                "account: '%s' is not an account, and no %s in this listing "
                                "names it",
                                account, what);
        }
    }
    /* Plain users name only themselves (or, in job listings, others on their accounts,
     * whose names they are not told): only the other roles learn that a user is unknown. */
    if (user && user[0] && r->who.role != ROLE_USER) {
        if (store_user_get(st, user, &(struct user){0}, &e) < 0) {
            if (e.code != ALLOT_ENOENT) {
                if (err)
                    *err = e;
                return -1;
            }
            return allot_errorf(err, ALLOT_ENOENT,
                                "user: '%s' is not a user, and no %s in this listing names it",
                                user, what);
        }
    }
    return 0;
}

int api_cluster_served(const struct req *r, const char *cluster, struct allot_error *err)
{
    const char *served = r->conf->cluster_names;
    if (!served[0] || conf_list_contains(served, cluster))
        return 0;
    return allot_errorf(err, ALLOT_EPERM,
                        "cluster: this allotd serves cluster(s) %s (ClusterNames), not %s", served,
                        cluster);
}

int api_query_history_cluster(struct req *r, store_t *st, enum store_history h, const char *what,
                              const char **out, struct allot_error *err)
{
    struct allot_error e;
    if (api_query_cluster(r, st, out, &e) == 0)
        return 0;
    if (!*out || e.code != ALLOT_ENOENT) { /* a bad name, or storage */
        if (err)
            *err = e;
        return -1;
    }
    /* Not a cluster now: the filter still holds if history names it (removed since). */
    int n = store_history_names_cluster(st, h, *out, err);
    if (n != 0)
        return n > 0 ? 0 : -1;
    return allot_errorf(err, ALLOT_ENOENT, "cluster: '%s' does not exist, and no %s names it", *out,
                        what);
}
