/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_whatif.c - POST /v1/whatif: replay the cluster's settled jobs under a proposed change
 * and answer the report `allot --json whatif` prints (doc/whatif.md, doc/api.md).
 *
 * Design: the bank is read by running the GET routes' own handlers in process, as the
 * caller, through cli/whatif_bank.c, the code the CLI runs over HTTP: one reading of the
 * bank, one encoder, and only reads (no write transaction).  The body's members are the
 * command's words (a string, number or boolean each); "changes" is a list of more sets of
 * words, as the lines of changes=FILE.  Bounds, so that one caller cannot hold allotd: at
 * most WhatifMaxJobs jobs a replay (413 beyond, with since= to narrow it; at most /v1/jobs's
 * 100,000 rows a reply) and one replay at a time (503 while another runs).
 */
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "allotd/routes.h"
#include "cli/whatif_bank.h"

#define WHATIF_QUERY_MAX 8 /* query pairs of one in-process GET */

static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;

/* whatif_get_f: GET path through its route's handler, as the caller of ctx (a struct req). */
static json_t *get_in_process(void *ctx, const char *path, struct allot_error *err)
{
    struct req *r = ctx;
    char url[1024];
    const char *query[2 * WHATIF_QUERY_MAX + 1] = {0};
    if (snprintf(url, sizeof url, "%s", path) >= (int)sizeof url)
        return allot_errorf(err, ALLOT_EINTERNAL, "whatif: path too long"), NULL;
    char *q = strchr(url, '?');
    int n = 0;
    if (q) {
        *q++ = '\0';
        for (char *save = NULL, *kv = strtok_r(q, "&", &save); kv && n < 2 * WHATIF_QUERY_MAX;
             kv = strtok_r(NULL, "&", &save)) {
            char *eq = strchr(kv, '=');
            if (!eq)
                continue;
            *eq = '\0';
            MHD_http_unescape(eq + 1);
            query[n++] = kv;
            query[n++] = eq + 1;
        }
    }
    struct req sub = {.d = r->d,
                      .conf = r->conf,
                      .method = "GET",
                      .url = url,
                      .id = r->id,
                      .t0_us = r->t0_us,
                      .who = r->who,
                      .query = query};
    int route = routes_match("GET", url, &sub, err);
    if (route < 0)
        return NULL;
    if (!routes_allowed(routes_access(route), r->who.role))
        return allot_errorf(err, ALLOT_EPERM, "whatif: %s may not read %s", r->who.user, url), NULL;
    sub.route = route;
    json_t *out = NULL;
    if (routes_handler(route)(&sub, err) == 0) {
        out = sub.out;
        sub.out = NULL;
    }
    json_decref(sub.out);
    json_decref(sub.in);
    free(sub.text);
    free(sub.scratch);
    return out;
}

/* The members of o as command words into kvs; numbers and booleans as text in buf. */
static int words(json_t *o, const char *what, struct kvlist *kvs, char (*buf)[32],
                 struct allot_error *err)
{
    const char *k;
    json_t *v;
    kvs->n = 0;
    json_object_foreach(o, k, v)
    {
        if (strcmp(k, "changes") == 0)
            continue;
        if (kvs->n == ARGS_MAX_KV || strlen(k) >= sizeof kvs->kv[0].key)
            return allot_errorf(err, ALLOT_EINVAL, "%s: too many or too long members", what);
        struct kv *w = &kvs->kv[kvs->n];
        for (size_t i = 0; i <= strlen(k); i++)
            w->key[i] = (char)(k[i] >= 'A' && k[i] <= 'Z' ? k[i] - 'A' + 'a' : k[i]);
        w->used = 0;
        if (json_is_string(v)) {
            w->value = json_string_value(v);
        } else if (json_is_integer(v)) {
            snprintf(buf[kvs->n], 32, "%lld", (long long)json_integer_value(v));
            w->value = buf[kvs->n];
        } else if (json_is_boolean(v)) {
            w->value = json_is_true(v) ? "yes" : "no";
        } else {
            return allot_errorf(err, ALLOT_EINVAL, "%s: %s: must be a string, integer or boolean",
                                what, k);
        }
        kvs->n++;
    }
    return 0;
}

static int replay(struct req *r, struct whatif_bank *h, struct allot_error *err)
{
    static char buf[ARGS_MAX_KV][32]; /* under one_at_a_time */
    struct kvlist kvs;
    json_t *changes = json_object_get(r->in, "changes");
    if (changes && !json_is_array(changes))
        return allot_errorf(err, ALLOT_EINVAL, "changes: must be a list of objects");
    if (words(r->in, "body", &kvs, buf, err) < 0)
        return -1;
    const char *cluster = args_get(&kvs, "cluster"), *since = args_get(&kvs, "since");
    const char *at = args_get(&kvs, "at");
    int64_t at_s = 0, since_s = 0;
    if ((at && args_time("at", at, &at_s, err) < 0) ||
        (since && args_time("since", since, &since_s, err) < 0))
        return -1;
    if (!cluster)
        return allot_errorf(err, ALLOT_EINVAL, "cluster: required");
    if (model_check_name("cluster", cluster, 0, err) < 0)
        return -1;
    snprintf(h->cluster, sizeof h->cluster, "%s", cluster);
    if (whatif_bank_load(h, get_in_process, r, err) < 0 ||
        whatif_bank_change(h, &kvs, "body", err) < 0 || args_check_used(&kvs, "body", err) < 0)
        return -1;
    for (size_t i = 0; i < json_array_size(changes); i++) {
        char what[32];
        json_t *c = json_array_get(changes, i);
        snprintf(what, sizeof what, "changes[%zu]", i);
        if (!json_is_object(c))
            return allot_errorf(err, ALLOT_EINVAL, "%s: must be an object", what);
        if (words(c, what, &kvs, buf, err) < 0 || whatif_bank_change(h, &kvs, what, err) < 0 ||
            args_check_used(&kvs, what, err) < 0)
            return -1;
    }
    if (whatif_bank_jobs(h, since, r->conf->whatif_max_jobs, err) < 0)
        return -1;
    r->out = whatif_bank_report(h, at_s, "bank", err);
    return r->out ? 0 : -1;
}

int api_whatif(struct req *r, struct allot_error *err)
{
    if (json_body(r, err) < 0)
        return -1;
    if (pthread_mutex_trylock(&one_at_a_time) != 0)
        return allot_errorf(err, ALLOT_EUNAVAIL, "whatif: another replay is running; retry later");
    struct whatif_bank h = {0};
    int rc = replay(r, &h, err);
    whatif_bank_free(&h);
    pthread_mutex_unlock(&one_at_a_time);
    return rc;
}
