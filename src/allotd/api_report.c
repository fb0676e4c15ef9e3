/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_report.c - GET /v1/reports/usage (doc/reports.md): the SU charged, jobs, CPU and GPU
 * hours, CPU efficiency and refusals per group (account, user, partition, resource or
 * cluster) and period (month, quarter, year, total, or the paying allocation's window).
 *
 * Design: libstore sums per group and UTC day in one statement (store_report_usage); this
 * file folds the days into periods (libcore/report.h) and encodes them.  Periods are UTC
 * months, quarters and years.  Who sees what is GET /v1/usage's and GET /v1/failures' rule:
 * a plain user counts its own runs and those of accounts it belongs to or coordinates, its
 * own refusals and those of accounts it coordinates; the sums are then made per (account,
 * user) as well and filtered here before folding, so a row never mixes in what the caller
 * may not see.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/json.h"
#include "libcore/report.h"

struct fold {
    struct report rep;
    struct req *r;
    json_t *seen;  /* ROLE_USER: the accounts whose jobs it reads (auth_account_set) */
    json_t *coord; /* ROLE_USER: the accounts whose refusals it reads (auth_coordinated) */
    int by_alloc;  /* period=alloc: a row per paying allocation */
    struct allot_error *err;
};

static int on_sum(const struct report_sum *s, void *arg)
{
    struct fold *x = arg;
    if (x->r->who.role == ROLE_USER && strcmp(s->user, x->r->who.user) != 0 &&
        !auth_set_sees(s->kind == REPORT_SUM_REFUSALS ? x->coord : x->seen, s->account))
        return 0;
    char label[PERIOD_STR_MAX];
    struct report_at at = {.key = s->key, .t_s = s->day_s};
    if (x->by_alloc) {
        /* the row of the paying allocation ("none": a refusal before one was found) */
        if (s->alloc_id)
            snprintf(label, sizeof label, "alloc %lld", (long long)s->alloc_id);
        else
            snprintf(label, sizeof label, "none");
        at.label = label;
        at.start_s = s->alloc_start_s;
        at.end_s = s->alloc_end_s;
    }
    int rc =
        s->kind == REPORT_SUM_REFUSALS
            ? report_add_refusals(&x->rep, &at, s->count, x->err)
            : report_add_jobs(&x->rep, &at, s->count, s->charge_sumin, s->cpu_s, s->gpu_s, x->err);
    if (rc == 0 && s->kind == REPORT_SUM_JOBS)
        rc = report_add_cpu(&x->rep, &at, s->cpu_used_s, s->cpu_alloc_s, x->err);
    return rc;
}

/* A bound of a row: null for the unbounded ("total") and for none (0). */
static json_t *bound(int64_t t_s)
{
    return t_s == INT64_MIN || t_s == INT64_MAX || t_s == 0 ? json_null() : json_time(t_s);
}

static json_t *row_json(const char *group, int by_alloc, const struct report_row *w)
{
    json_t *o = json_object();
    json_object_set_new(o, group, json_string(w->key));
    json_object_set_new(o, "period", json_string(w->period));
    if (by_alloc) {
        long long id = 0;
        (void)sscanf(w->period, "alloc %lld", &id);
        json_object_set_new(o, "alloc_id", json_integer(id));
    }
    json_object_set_new(o, "start", bound(w->start_s));
    json_object_set_new(o, "end", bound(w->end_s));
    json_object_set_new(o, "charged_sumin", json_integer(w->charged_sumin));
    json_object_set_new(o, "jobs", json_integer(w->jobs));
    json_object_set_new(o, "cpu_s", json_integer(w->cpu_s));
    json_object_set_new(o, "gpu_s", json_integer(w->gpu_s));
    json_object_set_new(o, "cpu_used_s", json_integer(w->cpu_used_s));
    json_object_set_new(o, "cpu_alloc_s", json_integer(w->cpu_alloc_s));
    /* percent, one decimal, rounded down; null without a measured step */
    json_object_set_new(
        o, "cpu_efficiency",
        w->cpu_alloc_s > 0
            ? json_real(floor((double)w->cpu_used_s * 1000.0 / (double)w->cpu_alloc_s) / 10.0)
            : json_null());
    json_object_set_new(o, "refusals", json_integer(w->refusals));
    return o;
}

/* GET /v1/reports/usage?group=&period=&start=&end=&cluster=&account=&user=&partition= */
int api_report_usage(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    if (!st)
        return -1;
    struct report_filter f = {0};
    const char *group = req_query(r, "group"), *period = req_query(r, "period");
    enum period_kind kind = PERIOD_MONTH;
    int by_alloc = 0;
    f.group = group ? group : "account";
    if (period && !strcmp(period, "alloc")) {
        by_alloc = 1;
        kind = PERIOD_TOTAL;
    } else if (period && period_kind_parse(period, &kind) < 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "period: expected month, quarter, year, total or alloc");
    if (api_query_history_cluster(r, st, STORE_HISTORY_JOBS, "job", &f.cluster, err) < 0 ||
        json_query_name(r, "account", &f.account, err) < 0 ||
        json_query_name(r, "user", &f.user, err) < 0 ||
        json_query_name(r, "partition", &f.partition, err) < 0 ||
        json_query_time(r, "start", &f.start_s, err) < 0 ||
        json_query_time(r, "end", &f.end_s, err) < 0)
        return -1;
    f.by_alloc = by_alloc;
    f.with_owner = r->who.role == ROLE_USER;
    struct fold x = {.r = r, .err = err, .by_alloc = by_alloc};
    if (auth_account_set(r, &x.seen, err) < 0 ||
        (r->who.role == ROLE_USER && auth_coordinated(r, &x.coord, err) < 0)) {
        json_decref(x.seen);
        return -1;
    }
    report_init(&x.rep, kind, NULL);
    int rc = store_report_usage(st, &f, on_sum, &x, err);
    if (rc == 0) {
        report_sort(&x.rep);
        json_t *items = json_array();
        for (size_t i = 0; i < x.rep.n; i++)
            json_array_append_new(items, row_json(f.group, by_alloc, &x.rep.rows[i]));
        r->out = json_pack("{s:s,s:s,s:o,s:o,s:o}", "group", f.group, "period",
                           by_alloc ? "alloc" : period_kind_name(kind), "start",
                           json_time(f.start_s), "end", json_time(f.end_s), "items", items);
    }
    report_fini(&x.rep);
    json_decref(x.seen);
    json_decref(x.coord);
    return rc < 0 ? -1 : 0;
}
