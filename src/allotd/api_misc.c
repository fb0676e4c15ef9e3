/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_misc.c - service endpoints: /healthz, /metrics, /v1/whoami, /v1/check; and the
 * handlers' shared error helper (api.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/metrics.h"
#include "allotd/writer.h"
#include "libutil/xalloc.h"

int api_healthz(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    int cur = 0, latest = 0;
    if (!st || store_schema_version(st, &cur, &latest, err) < 0) {
        err->code = ALLOT_EUNAVAIL;
        return -1;
    }
    r->out = json_pack("{s:s, s:s, s:i}", "status", "ok", "backend", store_backend(st), "schema",
                       cur);
    return 0;
}

int api_metrics(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, NULL); /* balances are optional in the scrape */
    metrics_render(r->d->metrics, writer_depth(r->d->writer), st, &r->text, &r->text_len);
    r->ctype = "text/plain; version=0.0.4";
    return 0;
}

int api_whoami(struct req *r, struct allot_error *err)
{
    r->out = json_pack("{s:s, s:s, s:I, s:s}", "user", r->who.user, "real_user", r->who.real,
                       "uid", (json_int_t)r->who.uid, "role", auth_role_name(r->who.role));
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
    snprintf(rest, sizeof(rest), "%s", err->msg + n);
    return allot_errorf(err, ALLOT_EINVAL, "%s%s", to, rest);
}
