/* SPDX-License-Identifier: GPL-3.0-or-later */
/* routes.c - the one route table (routes.h).  Reading it top to bottom is reading the API
 * of doc/api.md; a route is followed from here to its api_<noun>.c handler.
 * Matching is a linear scan: the table is small and the scan allocation-free. */
#include "allotd/routes.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "allotd/api.h"

struct route {
    const char *method;
    const char *pattern;
    enum access access;
    route_f handler;
    int hot;
};

static const struct route routes[] = {
    {"GET", "/healthz", ACCESS_PUBLIC, api_healthz, 0},
    {"GET", "/metrics", ACCESS_PUBLIC, api_metrics, 0},
    {"GET", "/v1/whoami", ACCESS_ANY, api_whoami, 0},
    {"GET", "/v1/check", ACCESS_READALL, api_check, 0},
    {"GET", "/v1/clusters", ACCESS_ANY, api_cluster_list, 0},
    {"POST", "/v1/clusters", ACCESS_SUPER, api_cluster_add, 0},
    {"DELETE", "/v1/clusters/{}", ACCESS_SUPER, api_cluster_remove, 0},
    {"GET", "/v1/accounts", ACCESS_ANY, api_account_list, 0},
    {"POST", "/v1/accounts", ACCESS_SUPER, api_account_add, 0},
    {"GET", "/v1/accounts/{}", ACCESS_ANY, api_account_get, 0},
    {"PATCH", "/v1/accounts/{}", ACCESS_SUPER, api_account_modify, 0},
    {"DELETE", "/v1/accounts/{}", ACCESS_SUPER, api_account_remove, 0},
    {"GET", "/v1/users", ACCESS_READALL, api_user_list, 0},
    {"POST", "/v1/users", ACCESS_SUPER, api_user_add, 0},
    {"GET", "/v1/users/{}", ACCESS_ANY, api_user_get, 0},
    {"PATCH", "/v1/users/{}", ACCESS_SUPER, api_user_modify, 0},
    {"DELETE", "/v1/users/{}", ACCESS_SUPER, api_user_remove, 0},
    {"GET", "/v1/assocs", ACCESS_ANY, api_assoc_list, 0},
    {"POST", "/v1/assocs", ACCESS_SUPER, api_assoc_add, 0},
    {"PATCH", "/v1/assocs", ACCESS_SUPER, api_assoc_modify, 0},
    {"DELETE", "/v1/assocs", ACCESS_SUPER, api_assoc_remove, 0},
    {"GET", "/v1/qos", ACCESS_ANY, api_qos_list, 0},
    {"POST", "/v1/qos", ACCESS_SUPER, api_qos_add, 0},
    {"GET", "/v1/qos/{}", ACCESS_ANY, api_qos_get, 0},
    {"PATCH", "/v1/qos/{}", ACCESS_SUPER, api_qos_modify, 0},
    {"DELETE", "/v1/qos/{}", ACCESS_SUPER, api_qos_remove, 0},
    {"GET", "/v1/partitions", ACCESS_ANY, api_partition_list, 0},
    {"POST", "/v1/partitions", ACCESS_SUPER, api_partition_add, 0},
    {"GET", "/v1/partitions/{}/{}", ACCESS_ANY, api_partition_get, 0},
    {"PATCH", "/v1/partitions/{}/{}", ACCESS_SUPER, api_partition_modify, 0},
    {"DELETE", "/v1/partitions/{}/{}", ACCESS_SUPER, api_partition_remove, 0},
    {"GET", "/v1/limits", ACCESS_ANY, api_limit_list, 0},
    {"PUT", "/v1/limits", ACCESS_SUPER, api_limit_set, 0},
    {"GET", "/v1/limits/effective", ACCESS_ANY, api_limit_effective, 0},
    {"GET", "/v1/allocations", ACCESS_ANY, api_alloc_list, 0},
    {"POST", "/v1/allocations", ACCESS_SUPER, api_alloc_add, 0},
    {"GET", "/v1/allocations/{}", ACCESS_ANY, api_alloc_get, 0},
    {"PATCH", "/v1/allocations/{}", ACCESS_SUPER, api_alloc_modify, 0},
    {"DELETE", "/v1/allocations/{}", ACCESS_SUPER, api_alloc_remove, 0},
    {"POST", "/v1/allocations/{}/credit", ACCESS_SUPER, api_alloc_credit, 0},
    {"GET", "/v1/balances", ACCESS_ANY, api_balance_list, 0},
    {"GET", "/v1/ledger", ACCESS_ANY, api_ledger_list, 0},
    {"POST", "/v1/jobs/admit", ACCESS_OPERATOR, api_job_admit, 0},
    {"POST", "/v1/jobs/hold", ACCESS_OPERATOR, api_job_hold, 1},
    {"POST", "/v1/jobs/settle", ACCESS_OPERATOR, api_job_settle, 1},
    {"POST", "/v1/jobs/release", ACCESS_OPERATOR, api_job_release, 0},
    {"GET", "/v1/jobs", ACCESS_ANY, api_job_list, 0},
    {"GET", "/v1/jobs/{}/{}", ACCESS_ANY, api_job_get, 0},
    {"GET", "/v1/failures", ACCESS_ANY, api_failure_list, 0},
    {"GET", "/v1/share", ACCESS_ANY, api_share_get, 0},
    {"GET", "/v1/tree", ACCESS_ANY, api_share_tree, 0},
    {"GET", "/v1/usage", ACCESS_ANY, api_usage_list, 0},
    {"POST", "/v1/usage/clear", ACCESS_SUPER, api_usage_clear, 0},
    {"GET", "/v1/priority/{}/{}", ACCESS_ANY, api_priority_get, 0},
    {"GET", "/v1/policies", ACCESS_ANY, api_policy_list, 0},
    {"POST", "/v1/policies", ACCESS_SUPER, api_policy_add, 0},
    {"POST", "/v1/policies/tick", ACCESS_SUPER, api_policy_tick, 0},
    {"GET", "/v1/policies/{}", ACCESS_ANY, api_policy_get, 0},
    {"POST", "/v1/policies/{}/evaluate", ACCESS_SUPER, api_policy_evaluate, 0},
    {"POST", "/v1/policies/{}/dry-run", ACCESS_READALL, api_policy_dry_run, 0},
    {"POST", "/v1/policies/{}/force-reset", ACCESS_SUPER, api_policy_force_reset, 0},
    {"GET", "/v1/evaluations", ACCESS_READALL, api_eval_list, 0},
    {"GET", "/v1/commands", ACCESS_READALL, api_command_list, 0},
    {"GET", "/v1/commands/{}", ACCESS_READALL, api_command_get, 0},
    {"POST", "/v1/commands/{}/result", ACCESS_OPERATOR, api_command_result, 0},
    {"GET", "/v1/agents/{}", ACCESS_READALL, api_agent_status, 0},
    {"POST", "/v1/agents/{}/poll", ACCESS_OPERATOR, api_agent_poll, 0},
    {"POST", "/v1/agents/{}/reconcile", ACCESS_OPERATOR, api_agent_reconcile, 0},
    {"GET", "/v1/sitefactors", ACCESS_READALL, api_sitefactor_list, 0},
    {"GET", "/v1/steps", ACCESS_ANY, api_step_list, 0},
    {"POST", "/v1/steps", ACCESS_ANY, api_step_add, 0},
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

int routes_match(const char *method, const char *path, struct req *r, struct allot_error *err)
{
    int path_known = 0;
    for (int i = 0; i < NROUTES; i++) {
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
