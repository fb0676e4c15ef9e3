/* SPDX-License-Identifier: GPL-3.0-or-later */
/* routes.c - the one route table (routes.h).  Reading it top to bottom is reading the API
 * of doc/api.md; a route is followed from here to its api_<noun>.c handler.
 * Matching is a linear scan: the table is small and the scan allocation-free.  Each route's
 * byte at ROUTE_KEY_AT is compared first, so the scan for a hold or a settle, near the table's
 * end, passes over the other nouns' routes with one compare each instead of walking their
 * shared "/v1/" prefix (bench/results/bank.md, 2026-11-27, 6c1f7db).
 *
 * Each route also declares what its request may carry besides a body, so that the request
 * layer (http.c) refuses the rest before a handler runs: `params` names the {} segments in
 * order ('#' marks a numeric id: decimal digits of a positive int64, nothing else), and
 * `query` lists the query parameters its handler reads (NULL: none).  Both are
 * space-separated; a query parameter added to a handler must be added here too, or every
 * request that uses it is a 400. */
#include "allotd/routes.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/observe.h"

struct route {
    const char *method;
    const char *pattern;
    enum access access;
    route_f handler;
    int hot;
    const char *params; /* names of the {} segments, "#name" for an id; NULL: none */
    const char *query;  /* names of the accepted query parameters; NULL: none */
};

static const struct route routes[] = {
    {"GET", "/healthz", ACCESS_PUBLIC, api_healthz, 0, NULL, NULL},
    {"GET", "/readyz", ACCESS_PUBLIC, api_readyz, 0, NULL, NULL},
    {"GET", "/metrics", ACCESS_PUBLIC, api_metrics, 0, NULL, NULL},
    {"GET", "/dashboard", ACCESS_PUBLIC, api_dashboard_page, 0, NULL, NULL},
    {"GET", "/dashboard/{}", ACCESS_PUBLIC, api_dashboard_asset, 0, "file", NULL},
    {"GET", "/v1/whoami", ACCESS_ANY, api_whoami, 0, NULL, NULL},
    {"POST", "/v1/tokens", ACCESS_ANY, api_token_add, 0, NULL, NULL},
    {"GET", "/v1/check", ACCESS_READALL, api_check, 0, NULL, NULL},
    {"GET", "/v1/clusters", ACCESS_ANY, api_cluster_list, 0, NULL, NULL},
    {"POST", "/v1/clusters", ACCESS_SUPER, api_cluster_add, 0, NULL, NULL},
    {"DELETE", "/v1/clusters/{}", ACCESS_SUPER, api_cluster_remove, 0, "name", NULL},
    {"GET", "/v1/accounts", ACCESS_ANY, api_account_list, 0, NULL, NULL},
    {"POST", "/v1/accounts", ACCESS_SUPER, api_account_add, 0, NULL, NULL},
    {"GET", "/v1/accounts/{}", ACCESS_ANY, api_account_get, 0, "name", NULL},
    {"PATCH", "/v1/accounts/{}", ACCESS_SUPER, api_account_modify, 0, "name", NULL},
    {"DELETE", "/v1/accounts/{}", ACCESS_SUPER, api_account_remove, 0, "name", NULL},
    {"GET", "/v1/users", ACCESS_READALL, api_user_list, 0, NULL, NULL},
    {"POST", "/v1/users", ACCESS_SUPER, api_user_add, 0, NULL, NULL},
    {"GET", "/v1/users/{}", ACCESS_ANY, api_user_get, 0, "name", NULL},
    {"PATCH", "/v1/users/{}", ACCESS_SUPER, api_user_modify, 0, "name", NULL},
    {"DELETE", "/v1/users/{}", ACCESS_SUPER, api_user_remove, 0, "name", NULL},
    {"GET", "/v1/assocs", ACCESS_ANY, api_assoc_list, 0, NULL, "cluster account user partition"},
    {"POST", "/v1/assocs", ACCESS_SUPER, api_assoc_add, 0, NULL, NULL},
    {"PATCH", "/v1/assocs", ACCESS_SUPER, api_assoc_modify, 0, NULL, NULL},
    {"DELETE", "/v1/assocs", ACCESS_SUPER, api_assoc_remove, 0, NULL, NULL},
    {"GET", "/v1/qos", ACCESS_ANY, api_qos_list, 0, NULL, NULL},
    {"POST", "/v1/qos", ACCESS_SUPER, api_qos_add, 0, NULL, NULL},
    {"GET", "/v1/qos/{}", ACCESS_ANY, api_qos_get, 0, "name", NULL},
    {"PATCH", "/v1/qos/{}", ACCESS_SUPER, api_qos_modify, 0, "name", NULL},
    {"DELETE", "/v1/qos/{}", ACCESS_SUPER, api_qos_remove, 0, "name", NULL},
    {"GET", "/v1/partitions", ACCESS_ANY, api_partition_list, 0, NULL, "cluster"},
    {"POST", "/v1/partitions", ACCESS_SUPER, api_partition_add, 0, NULL, NULL},
    {"GET", "/v1/partitions/{}/{}", ACCESS_ANY, api_partition_get, 0, "cluster name", NULL},
    {"PATCH", "/v1/partitions/{}/{}", ACCESS_SUPER, api_partition_modify, 0, "cluster name", NULL},
    {"DELETE", "/v1/partitions/{}/{}", ACCESS_SUPER, api_partition_remove, 0, "cluster name", NULL},
    {"GET", "/v1/limits", ACCESS_ANY, api_limit_list, 0, NULL, "scope owner"},
    {"PUT", "/v1/limits", ACCESS_SUPER, api_limit_set, 0, NULL, NULL},
    {"GET", "/v1/limits/effective", ACCESS_ANY, api_limit_effective, 0, NULL,
     "cluster user account partition qos"},
    {"POST", "/v1/import/slurm", ACCESS_SUPER, api_import_slurm, 0, NULL, NULL},
    {"GET", "/v1/export/slurm", ACCESS_READALL, api_export_slurm, 0, NULL, "cluster"},
    {"GET", "/v1/allocations", ACCESS_ANY, api_alloc_list, 0, NULL,
     "account resource active user cluster"},
    {"POST", "/v1/allocations", ACCESS_SUPER, api_alloc_add, 0, NULL, NULL},
    {"GET", "/v1/allocations/{}", ACCESS_ANY, api_alloc_get, 0, "#id", NULL},
    {"PATCH", "/v1/allocations/{}", ACCESS_SUPER, api_alloc_modify, 0, "#id", NULL},
    {"DELETE", "/v1/allocations/{}", ACCESS_SUPER, api_alloc_remove, 0, "#id", NULL},
    {"POST", "/v1/allocations/{}/credit", ACCESS_SUPER, api_alloc_credit, 0, "#id", NULL},
    {"GET", "/v1/allocations/{}/burndown", ACCESS_ANY, api_alloc_burndown, 0, "#id", "points"},
    {"GET", "/v1/allocations/{}/forecast", ACCESS_ANY, api_alloc_forecast, 0, "#id", "window at"},
    {"GET", "/v1/forecasts", ACCESS_ANY, api_forecast_list, 0, NULL,
     "account resource active user cluster window"},
    {"GET", "/v1/balances", ACCESS_ANY, api_balance_list, 0, NULL,
     "account resource active user cluster"},
    {"GET", "/v1/ledger", ACCESS_ANY, api_ledger_list, 0, NULL,
     "account cluster alloc job since after limit"},
    {"POST", "/v1/jobs/admit", ACCESS_OPERATOR, api_job_admit, 0, NULL, NULL},
    {"POST", "/v1/jobs/hold", ACCESS_OPERATOR, api_job_hold, 1, NULL, NULL},
    {"POST", "/v1/jobs/settle", ACCESS_OPERATOR, api_job_settle, 1, NULL, NULL},
    {"POST", "/v1/jobs/release", ACCESS_OPERATOR, api_job_release, 0, NULL, NULL},
    {"POST", "/v1/jobs/import", ACCESS_SUPER, api_job_import, 0, NULL, NULL},
    {"POST", "/v1/jobs/settle/bulk", ACCESS_OPERATOR, api_job_settle_bulk, 0, NULL, NULL},
    {"POST", "/v1/jobs/adjust", ACCESS_OPERATOR, api_job_adjust, 0, NULL, NULL},
    {"POST", "/v1/jobs/void", ACCESS_OPERATOR, api_job_void, 0, NULL, NULL},
    {"GET", "/v1/jobs", ACCESS_ANY, api_job_list, 0, NULL,
     "cluster account user status since limit job"},
    /* job_id: a job id or a name as Slurm prints it ("54_3", "60+1"): api_job_ids.c */
    {"GET", "/v1/jobs/{}/{}", ACCESS_ANY, api_job_get, 0, "cluster job_id", NULL},
    {"GET", "/v1/failures", ACCESS_ANY, api_failure_list, 0, NULL, "account user since limit"},
    {"GET", "/v1/reports/observe", ACCESS_READALL, api_report_observe, 0, NULL,
     "account cluster since"},
    {"GET", "/v1/reports/usage", ACCESS_ANY, api_report_usage, 0, NULL,
     "group period start end cluster account user partition"},
    {"POST", "/v1/whatif", ACCESS_READALL, api_whatif, 0, NULL, NULL},
    {"GET", "/v1/share", ACCESS_ANY, api_share_get, 0, NULL, "cluster algo"},
    {"GET", "/v1/tree", ACCESS_ANY, api_share_tree, 0, NULL, "cluster"},
    {"GET", "/v1/usage", ACCESS_ANY, api_usage_list, 0, NULL, "cluster account user since until"},
    {"POST", "/v1/usage/clear", ACCESS_SUPER, api_usage_clear, 0, NULL, NULL},
    {"POST", "/v1/usage/rebuild", ACCESS_SUPER, api_usage_rebuild, 0, NULL, NULL},
    {"GET", "/v1/priority/{}/{}", ACCESS_ANY, api_priority_get, 0, "cluster #job_id",
     "cluster_cpus cluster_nodes"},
    {"GET", "/v1/policies", ACCESS_ANY, api_policy_list, 0, NULL, NULL},
    {"POST", "/v1/policies", ACCESS_SUPER, api_policy_add, 0, NULL, NULL},
    {"POST", "/v1/policies/tick", ACCESS_SUPER, api_policy_tick, 0, NULL, NULL},
    {"GET", "/v1/policies/{}", ACCESS_ANY, api_policy_get, 0, "#id", NULL},
    {"POST", "/v1/policies/{}/evaluate", ACCESS_SUPER, api_policy_evaluate, 0, "#id", NULL},
    {"POST", "/v1/policies/{}/dry-run", ACCESS_READALL, api_policy_dry_run, 0, "#id", NULL},
    {"POST", "/v1/policies/{}/force-reset", ACCESS_SUPER, api_policy_force_reset, 0, "#id", NULL},
    {"GET", "/v1/evaluations", ACCESS_READALL, api_eval_list, 0, NULL, "policy period limit"},
    {"GET", "/v1/commands", ACCESS_READALL, api_command_list, 0, NULL,
     "cluster policy period state after limit"},
    {"GET", "/v1/commands/{}", ACCESS_READALL, api_command_get, 0, "#id", NULL},
    {"POST", "/v1/commands/{}/result", ACCESS_OPERATOR, api_command_result, 0, "#id", NULL},
    {"GET", "/v1/agents/{}", ACCESS_READALL, api_agent_status, 0, "cluster", NULL},
    {"POST", "/v1/agents/{}/poll", ACCESS_OPERATOR, api_agent_poll, 0, "cluster", NULL},
    {"POST", "/v1/agents/{}/reconcile", ACCESS_OPERATOR, api_agent_reconcile, 0, "cluster", NULL},
    {"GET", "/v1/sitefactors", ACCESS_READALL, api_sitefactor_list, 0, NULL, "cluster"},
    {"GET", "/v1/sync", ACCESS_READALL, api_sync_get, 0, NULL, "cluster"},
    {"PUT", "/v1/sync/{}", ACCESS_OPERATOR, api_sync_put, 0, "cluster", NULL},
    {"GET", "/v1/steps", ACCESS_ANY, api_step_list, 0, NULL, "cluster user job limit"},
    {"POST", "/v1/steps", ACCESS_ANY, api_step_add, 0, NULL, NULL},
};

#define NROUTES ((int)(sizeof(routes) / sizeof(routes[0])))
_Static_assert(sizeof(routes) / sizeof(routes[0]) <= ROUTES_MAX, "raise ROUTES_MAX");

/* Match path against pattern, capturing {} segments into r->param (when r is non-NULL). */
static int match(const char *pattern, const char *path, struct req *r)
{
    int np = 0;
    const char *p = pattern, *s = path;
    while (*p) {
        if (p[0] == '{' && p[1] == '}') {
            const char *e = s;
            while (*e && *e != '/')
                e++;
            size_t n = (size_t)(e - s);
            if (n == 0 || n >= REQ_PARAM_LEN || np >= REQ_PARAMS_MAX)
                return 0;
            if (r) {
                memcpy(r->param[np], s, n);
                r->param[np][n] = '\0';
            }
            np++;
            s = e;
            p += 2;
        } else {
            if (*p != *s)
                return 0;
            p++;
            s++;
        }
    }
    return *s == '\0';
}

/* A route's key is its pattern's byte at ROUTE_KEY_AT when every byte up to it is literal
 * (no {}): a path that differs there cannot match.  Every route has one ("/v1/" and the
 * noun's first letter, or "/healthz"'s 'l'); 0 marks a route the scan always tries. */
#define ROUTE_KEY_AT 4
static char route_keys[ROUTES_MAX];
static pthread_once_t route_keys_once = PTHREAD_ONCE_INIT;

static void build_keys(void)
{
    for (int i = 0; i < NROUTES; i++) {
        const char *p = routes[i].pattern;
        int literal = 1;
        for (int k = 0; k <= ROUTE_KEY_AT && literal; k++)
            literal = p[k] != '\0' && p[k] != '{';
        route_keys[i] = literal ? p[ROUTE_KEY_AT] : 0;
    }
}

int routes_match(const char *method, const char *path, struct req *r, struct allot_error *err)
{
    pthread_once(&route_keys_once, build_keys);
    /* A path shorter than the key's offset has key 0 and meets only keyless routes. */
    char key = strnlen(path, ROUTE_KEY_AT + 1) > ROUTE_KEY_AT ? path[ROUTE_KEY_AT] : 0;
    int path_known = 0;
    for (int i = 0; i < NROUTES; i++) {
        if (route_keys[i] && route_keys[i] != key)
            continue;
        if (!match(routes[i].pattern, path, NULL))
            continue;
        path_known = 1;
        if (strcmp(routes[i].method, method) == 0) {
            match(routes[i].pattern, path, r);
            return i;
        }
    }
    if (path_known)
        return allot_errorf(err, ALLOT_EINVAL, "method: %s is not allowed on %s", method, path);
    return allot_errorf(err, ALLOT_ENOENT, "no such path: %s", path);
}

enum access routes_access(int route)
{
    return routes[route].access;
}

route_f routes_handler(int route)
{
    return routes[route].handler;
}

/* "METHOD pattern" strings, built once (pthread_once) on first use. */
static char route_names[ROUTES_MAX][80];
static pthread_once_t route_names_once = PTHREAD_ONCE_INIT;

static void build_names(void)
{
    for (int i = 0; i < NROUTES; i++)
        snprintf(route_names[i], sizeof(route_names[i]), "%s %s", routes[i].method,
                 routes[i].pattern);
}

const char *routes_name(int route)
{
    if (route < 0 || route >= NROUTES)
        return NULL;
    pthread_once(&route_names_once, build_names);
    return route_names[route];
}

int routes_count(void)
{
    return NROUTES;
}

int routes_hot(int route)
{
    return route >= 0 && route < NROUTES && routes[route].hot;
}

int routes_allowed(enum access a, enum role role)
{
    switch (a) {
    case ACCESS_PUBLIC:
        return 1;
    case ACCESS_ANY:
        return role >= ROLE_USER;
    case ACCESS_READALL:
        return role >= ROLE_OPERATOR;
    case ACCESS_OPERATOR:
        return role == ROLE_OPERATOR || role == ROLE_SUPERUSER;
    case ACCESS_SUPER:
        return role == ROLE_SUPERUSER;
    }
    return 0;
}

/* The idx-th word of a space-separated list (NULL: empty) into [*w, *w + *n); 0 when the
 * list has fewer words. */
static int word_at(const char *list, int idx, const char **w, size_t *n)
{
    const char *p = list;
    for (int i = 0; p && *p; i++) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        if (e == p)
            break;
        if (i == idx) {
            *w = p;
            *n = (size_t)(e - p);
            return 1;
        }
        p = e;
    }
    return 0;
}

/* Decimal digits only (no sign, space or base prefix, which strtoll would take), of a value
 * from 1 to INT64_MAX: "12abc", "+1", " 1" and "99999999999999999999" are not ids. */
static int is_id(const char *s)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; s[i]; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    return i > 0 && v > 0;
}

int routes_check_params(int route, const struct req *r, struct allot_error *err)
{
    const char *w;
    size_t n;
    for (int i = 0; i < REQ_PARAMS_MAX && word_at(routes[route].params, i, &w, &n); i++) {
        if (w[0] == '#' && !is_id(r->param[i]))
            return allot_errorf(err, ALLOT_EINVAL,
                                "%.*s: '%s' is not an id (an integer from 1 to %lld)", (int)n - 1,
                                w + 1, r->param[i], (long long)INT64_MAX);
    }
    return 0;
}

int routes_query_find(int route, const char *key, size_t key_len)
{
    const char *w;
    size_t n;
    for (int i = 0; word_at(routes[route].query, i, &w, &n); i++)
        if (n == key_len && memcmp(w, key, n) == 0)
            return i;
    return -1;
}

const char *routes_query_names(int route)
{
    return routes[route].query ? routes[route].query : "";
}

int routes_path_escape(const char *path, size_t at, const char *what, struct allot_error *err)
{
    /* The segments before the last '/' of path[0..at) are whole; the byte at `at` is in the
     * one after it.  A route whose pattern matches those whole segments and has a {} next
     * names the parameter. */
    size_t head = 0;
    for (size_t k = 0; k < at && path[k]; k++)
        if (path[k] == '/')
            head = k + 1;
    for (int i = 0; i < NROUTES; i++) {
        const char *p = routes[i].pattern, *s = path, *end = path + head;
        int np = 0, ok = 1;
        while (ok && s < end) {
            if (p[0] == '{' && p[1] == '}') {
                const char *e = s;
                while (e < end && *e != '/')
                    e++;
                ok = e > s;
                s = e;
                p += 2;
                np++;
            } else {
                ok = *p == *s;
                p++;
                s++;
            }
        }
        const char *w;
        size_t n;
        if (ok && head > 0 && p[0] == '{' && p[1] == '}' && word_at(routes[i].params, np, &w, &n)) {
            if (w[0] == '#') {
                w++;
                n--;
            }
            return allot_errorf(err, ALLOT_EINVAL, "%.*s: contains %s", (int)n, w, what);
        }
    }
    return allot_errorf(err, ALLOT_EINVAL, "path: contains %s", what);
}
