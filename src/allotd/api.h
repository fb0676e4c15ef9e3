/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api.h - the handlers named by routes.c, one api_<noun>.c per noun of doc/api.md.
 * Each follows request.h's handler contract. */
#ifndef ALLOT_ALLOTD_API_H
#define ALLOT_ALLOTD_API_H

#include "allotd/request.h"

/* api_misc.c */
int api_healthz(struct req *r, struct allot_error *err);
int api_readyz(struct req *r, struct allot_error *err);
int api_metrics(struct req *r, struct allot_error *err);
/* api_dashboard.c: the web dashboard's page and its static files (public, no data). */
int api_dashboard_page(struct req *r, struct allot_error *err);
int api_dashboard_asset(struct req *r, struct allot_error *err);
/* api_token.c: read-only bearer tokens for the dashboard (tokens.h). */
int api_token_add(struct req *r, struct allot_error *err);
/* api_burndown.c: an allocation's granted/used/held over time, from its ledger. */
int api_alloc_burndown(struct req *r, struct allot_error *err);

/* api_forecast.c: when an allocation's balance runs out (libcore/forecast.h). */
struct forecast;
struct alloc_pair {
    struct allocation a;
    struct balance b;
};
int api_alloc_forecast(struct req *r, struct allot_error *err);
int api_forecast_list(struct req *r, struct allot_error *err); /* api_alloc.c's listing */
/* window= of r (days, default and bounds libcore/forecast.h's); -1 with err naming it. */
int api_forecast_window(struct req *r, int *window, struct allot_error *err);
/* A forecast as a reply object: the allocation's balance row with the forecast's members. */
json_t *api_forecast_json(const struct allocation *a, const struct balance *b,
                          const struct forecast *f, int64_t at_s, int window);
int api_whoami(struct req *r, struct allot_error *err);
int api_check(struct req *r, struct allot_error *err);
/* An EINVAL error whose message names field `from` ("from: ...", the name a lower layer
 * uses) is made to name `to` (the request's key) instead; other errors are left alone.
 * Returns -1, for `return api_error_field(...)` after a failed call. */
int api_error_field(struct allot_error *err, const char *from, const char *to);
/* A duration for a message: value in seconds (unit_s 1) or minutes (unit_s 60) as the
 * request gave it, then in days, hours, minutes and seconds when that reads better:
 * 1800, 1 -> "1800 s (30 min)"; 90, 60 -> "90 min (1 h 30 min)"; 45, 1 -> "45 s".  Cut
 * to size bytes; returns buf. */
const char *api_duration(int64_t value, int64_t unit_s, char *buf, size_t size);
/* Room for any api_duration text. */
#define API_DURATION_MAX 80
/* 0 when this allotd serves cluster (ClusterNames empty, or naming it); else -1 with an
 * EPERM error naming the cluster and those served.  For the job verbs: an allotd that
 * serves c1 must not charge c2's jobs (several allotd may share one bank). */
int api_cluster_served(const struct req *r, const char *cluster, struct allot_error *err);
/* The ?cluster= argument (NULL when absent) of a history listing: api_query_cluster's
 * check, except that a cluster removed since stays a valid filter while history h has
 * records naming it (history keeps the names).  A name the bank does not know and that h
 * never held is a misspelling: ENOENT naming it ("cluster: 'x' does not exist, and no
 * <what> names it"), not an empty list.  EINVAL for a bad name; storage errors as is. */
int api_query_history_cluster(struct req *r, store_t *st, enum store_history h, const char *what,
                              const char **out, struct allot_error *err);
/* After a history listing (jobs, failures, ledger, steps) found nothing: an account= or
 * user= filter (NULL when absent) that names no account or user now is most likely a
 * misspelling, so ENOENT naming it ("account: 'x' is not an account, and no <what> in this
 * listing names it") instead of an empty list.  0 when every given name exists.  History
 * keeps the names of accounts and users removed since, so the check runs only on an empty
 * result: a removed name with history still lists it, and no listing pays a lookup.  For a
 * plain user an account it cannot see is "not an account of yours" whether or not it
 * exists, and user= is not checked: the answer tells it no names it may not read. */
int api_empty_listing_names(struct req *r, store_t *st, const char *account, const char *user,
                            const char *what, struct allot_error *err);
/* api_cluster.c */
int api_cluster_list(struct req *r, struct allot_error *err);
int api_cluster_add(struct req *r, struct allot_error *err);
int api_cluster_remove(struct req *r, struct allot_error *err);
/* 0 when cluster name exists, else -1 with err (ENOENT "cluster: ...", or the store's). */
int api_cluster_check(store_t *st, const char *name, struct allot_error *err);
/* The ?cluster= argument (NULL when absent) of a listing of the bank's reference data
 * (associations, partitions, fair-share, limits, site factors), which must name a known
 * cluster: a filter on a misspelt one would answer an empty list that reads as "nothing
 * there".  EINVAL for a bad name, ENOENT for an unknown one.  History (jobs, ledger, usage,
 * steps, commands) keeps the name of a cluster removed since: its listings use
 * api_query_history_cluster (api_misc.c), which builds on this one. */
int api_query_cluster(struct req *r, store_t *st, const char **out, struct allot_error *err);
/* api_account.c */
int api_account_list(struct req *r, struct allot_error *err);
int api_account_add(struct req *r, struct allot_error *err);
int api_account_get(struct req *r, struct allot_error *err);
int api_account_modify(struct req *r, struct allot_error *err);
int api_account_remove(struct req *r, struct allot_error *err);
/* api_qos.c */
int api_qos_list(struct req *r, struct allot_error *err);
int api_qos_add(struct req *r, struct allot_error *err);
int api_qos_get(struct req *r, struct allot_error *err);
int api_qos_modify(struct req *r, struct allot_error *err);
int api_qos_remove(struct req *r, struct allot_error *err);
/* api_limit.c */
int api_limit_list(struct req *r, struct allot_error *err);
int api_limit_set(struct req *r, struct allot_error *err);
int api_limit_effective(struct req *r, struct allot_error *err);
/* api_slurm.c: a `sacctmgr dump` in (POST /v1/import/slurm) and out (GET /v1/export/slurm). */
int api_import_slurm(struct req *r, struct allot_error *err);
int api_export_slurm(struct req *r, struct allot_error *err);
/* api_user.c */
int api_user_list(struct req *r, struct allot_error *err);
int api_user_add(struct req *r, struct allot_error *err);
int api_user_get(struct req *r, struct allot_error *err);
int api_user_modify(struct req *r, struct allot_error *err);
int api_user_remove(struct req *r, struct allot_error *err);
/* api_assoc.c */
int api_assoc_list(struct req *r, struct allot_error *err);
int api_assoc_add(struct req *r, struct allot_error *err);
int api_assoc_modify(struct req *r, struct allot_error *err);
int api_assoc_remove(struct req *r, struct allot_error *err);
/* api_partition.c */
int api_partition_list(struct req *r, struct allot_error *err);
int api_partition_add(struct req *r, struct allot_error *err);
int api_partition_get(struct req *r, struct allot_error *err);
int api_partition_modify(struct req *r, struct allot_error *err);
int api_partition_remove(struct req *r, struct allot_error *err);
/* api_alloc.c */
/* An allocation id from a path segment ({id} of /v1/allocations/{id}...): 0, or -1 with an
 * EINVAL error naming field "id". */
int api_alloc_id(const char *s, int64_t *id, struct allot_error *err);
/* The allocation of the path's {id} with its balance, if the caller may see its account:
 * 0, or -1 with err (EINVAL id, ENOENT, EPERM "not yours"). */
int api_alloc_visible(struct req *r, store_t *st, struct allocation *a, struct balance *b,
                      struct allot_error *err);
int api_alloc_list(struct req *r, struct allot_error *err);
int api_alloc_add(struct req *r, struct allot_error *err);
int api_alloc_get(struct req *r, struct allot_error *err);
int api_alloc_modify(struct req *r, struct allot_error *err);
int api_alloc_remove(struct req *r, struct allot_error *err);
int api_alloc_credit(struct req *r, struct allot_error *err);
int api_balance_list(struct req *r, struct allot_error *err);
int api_ledger_list(struct req *r, struct allot_error *err);
/* api_job.c */
int api_job_admit(struct req *r, struct allot_error *err);
int api_job_hold(struct req *r, struct allot_error *err);
int api_job_settle(struct req *r, struct allot_error *err);
int api_job_release(struct req *r, struct allot_error *err);
int api_job_list(struct req *r, struct allot_error *err);
int api_job_get(struct req *r, struct allot_error *err);
int api_failure_list(struct req *r, struct allot_error *err);
int api_job_import(struct req *r, struct allot_error *err);      /* api_import_jobs.c */
int api_job_settle_bulk(struct req *r, struct allot_error *err); /* api_job_bulk.c */
/* api_job_adjust.c */
int api_job_adjust(struct req *r, struct allot_error *err);
/* api_job_void.c; its message also answers a settle or release of a void run (api_job.c) */
#define API_VOID_MESSAGE "not charged: cancelled by allot before start"
int api_job_void(struct req *r, struct allot_error *err);
/* api_share.c */
int api_share_get(struct req *r, struct allot_error *err);
int api_share_tree(struct req *r, struct allot_error *err);
int api_usage_list(struct req *r, struct allot_error *err);
int api_usage_clear(struct req *r, struct allot_error *err);
int api_usage_rebuild(struct req *r, struct allot_error *err);
/* The usage accumulators' params (decay, UsageSource) that configuration c asks for. */
void api_usage_params(const struct allot_conf *c, struct store_usage_params *p);
int api_priority_get(struct req *r, struct allot_error *err);
/* api_report.c: GET /v1/reports/usage (doc/reports.md) */
int api_report_usage(struct req *r, struct allot_error *err);
/* api_policy.c */
int api_policy_list(struct req *r, struct allot_error *err);
int api_policy_add(struct req *r, struct allot_error *err);
int api_policy_tick(struct req *r, struct allot_error *err);
int api_policy_get(struct req *r, struct allot_error *err);
int api_policy_evaluate(struct req *r, struct allot_error *err);
int api_policy_dry_run(struct req *r, struct allot_error *err);
int api_whatif(struct req *r, struct allot_error *err);
int api_policy_force_reset(struct req *r, struct allot_error *err);
int api_eval_list(struct req *r, struct allot_error *err);
/* api_command.c */
int api_command_list(struct req *r, struct allot_error *err);
int api_command_get(struct req *r, struct allot_error *err);
int api_command_result(struct req *r, struct allot_error *err);
int api_agent_status(struct req *r, struct allot_error *err);
int api_agent_poll(struct req *r, struct allot_error *err);
int api_agent_reconcile(struct req *r, struct allot_error *err);
/* api_sitefactor.c */
int api_sitefactor_list(struct req *r, struct allot_error *err);
/* api_sync.c: drift between allot's copy of a cluster and Slurm (allot-agent's sync). */
int api_sync_put(struct req *r, struct allot_error *err);
int api_sync_get(struct req *r, struct allot_error *err);
/* api_step.c */
int api_step_add(struct req *r, struct allot_error *err);
int api_step_list(struct req *r, struct allot_error *err);
json_t *api_json_command(const struct command *c);

#endif
