/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_observe.c - allot.conf EnforceMode=observe (doc/adopt.md "Observe before enforcing"):
 * allotd alone decides, so the plugins carry no second copy of the rules.  An admission the
 * bank would refuse is answered admitted, with "observed": true and the refusal's message,
 * and the refusal is recorded as a failure row marked observed; a hold it would refuse
 * writes only that row (store_hold with observe) and the job starts unheld.  The report
 * (GET /v1/reports/observe) lists those rows per account.  Money is never written here:
 * switching modes changes nothing recorded.
 */
#include <stdlib.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "allotd/observe.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

int api_observe_on(const struct req *r)
{
    return r->conf && strcmp(r->conf->enforce_mode, "observe") == 0;
}

struct observe_admit {
    struct failure f;
    const char *code; /* static: "EFUNDS" or "ELIMIT" */
    int64_t alloc_id, billing_micro, cost_sumin, available_sumin, held_sumin;
    char payer_account[ALLOT_NAME_MAX];
    char pending_reason[ALLOT_MSG_MAX];
};

static int run_admit(store_t *st, void *arg, struct allot_error *err)
{
    struct observe_admit *o = arg;
    return store_failure_add(st, &o->f, err);
}

static int finish_admit(struct req *r, struct allot_error *err)
{
    (void)err;
    struct observe_admit *o = r->scratch;
    r->out =
        json_pack("{s:b, s:b, s:I, s:s, s:I, s:I, s:I, s:I, s:s, s:{s:s, s:s}, s:I}", "admitted", 1,
                  "observed", 1, "alloc_id", (json_int_t)o->alloc_id, "payer_account",
                  o->payer_account, "billing_micro", (json_int_t)o->billing_micro, "cost_sumin",
                  (json_int_t)o->cost_sumin, "available_sumin", (json_int_t)o->available_sumin,
                  "held_sumin", (json_int_t)o->held_sumin, "message", o->f.message, "error", "code",
                  o->code, "message", o->f.message, "failure_id", (json_int_t)o->f.id);
    if (o->pending_reason[0])
        json_object_set_new(r->out, "pending_reason", json_string(o->pending_reason));
    log_info("msg=\"admission observed\" req=%llu cluster=%s account=%s user=%s code=%s "
             "failure=%lld reason=\"%s\"",
             (unsigned long long)r->id, o->f.cluster, o->f.account, o->f.user, o->code,
             (long long)o->f.id, o->f.message);
    return 0;
}

int api_observe_admit(struct req *r, const struct api_observe_refusal *x, struct allot_error *err)
{
    (void)err;
    struct observe_admit *o = xcalloc(1, sizeof(*o));
    r->scratch = o;
    struct failure *f = &o->f;
    text_copy(f->cluster, sizeof(f->cluster), x->cluster);
    text_copy(f->user, sizeof(f->user), x->user);
    text_copy(f->account, sizeof(f->account), x->account);
    text_copy(f->partition, sizeof(f->partition), x->partition);
    memcpy(f->stage, "admit", 6);
    f->alloc_id = x->alloc_id;
    f->time_s = x->now_s;
    f->needed_sumin = x->total_sumin ? x->total_sumin : x->cost_sumin;
    f->available_sumin = x->available_sumin;
    f->held_sumin = x->held_sumin;
    f->observed = 1;
    text_copy(f->message, sizeof(f->message), x->message);
    o->code = x->limit ? "ELIMIT" : "EFUNDS";
    o->alloc_id = x->alloc_id;
    o->billing_micro = x->billing_micro;
    o->cost_sumin = x->cost_sumin;
    o->available_sumin = x->available_sumin;
    o->held_sumin = x->held_sumin;
    text_copy(o->payer_account, sizeof(o->payer_account), x->payer_account ? x->payer_account : "");
    text_copy(o->pending_reason, sizeof(o->pending_reason),
              x->pending_reason ? x->pending_reason : "");
    return req_defer_write(r, run_admit, o, finish_admit);
}

/* ---- GET /v1/reports/observe ------------------------------------------------------- */

struct report {
    struct req *r;
    const char *cluster;
    json_t *accounts; /* account name -> {account, jobs, needed_sumin, items} */
    struct allot_error *err;
};

static int on_failure(const struct failure *f, void *arg)
{
    struct report *p = arg;
    if (!f->observed || (p->cluster && strcmp(p->cluster, f->cluster) != 0))
        return 0;
    json_t *a = json_object_get(p->accounts, f->account);
    if (!a) {
        a = json_pack("{s:s, s:I, s:I, s:I, s:[]}", "account", f->account, "refusals",
                      (json_int_t)0, "jobs", (json_int_t)0, "needed_sumin", (json_int_t)0, "items");
        json_object_set_new(p->accounts, f->account, a);
    }
    json_t *n = json_object_get(a, "refusals");
    json_integer_set(n, json_integer_value(n) + 1);
    if (f->job_id > 0) {
        json_t *j = json_object_get(a, "jobs");
        json_integer_set(j, json_integer_value(j) + 1);
    }
    json_t *s = json_object_get(a, "needed_sumin");
    json_integer_set(s, json_integer_value(s) + f->needed_sumin);
    json_array_append_new(json_object_get(a, "items"), json_failure(f));
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int api_report_observe(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct failure_filter f = {0};
    struct report p = {.r = r, .err = err};
    if (!st || json_query_name(r, "account", &f.account, err) < 0 ||
        json_query_name(r, "cluster", &p.cluster, err) < 0 ||
        json_query_time(r, "since", &f.since_s, err) < 0)
        return -1;
    p.accounts = json_object();
    if (store_failure_list(st, &f, on_failure, &p, err) < 0) {
        json_decref(p.accounts);
        return -1;
    }
    /* Accounts by name; each account's refusals oldest first, as a site reads a history. */
    json_t *items = json_array();
    const char **names = xcalloc(json_object_size(p.accounts) + 1, sizeof(*names));
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(p.accounts, k, v) names[n++] = k;
    qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_object_get(p.accounts, names[i]);
        json_t *rows = json_object_get(a, "items");
        json_t *rev = json_array();
        for (size_t j = json_array_size(rows); j > 0; j--)
            json_array_append(rev, json_array_get(rows, j - 1));
        json_object_set_new(a, "items", rev);
        json_array_append(items, a);
    }
    free(names);
    json_decref(p.accounts);
    r->out = json_pack("{s:s, s:o}", "enforce_mode", r->conf->enforce_mode, "accounts", items);
    return 0;
}
