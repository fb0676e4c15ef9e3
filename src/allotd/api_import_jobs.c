/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import_jobs.c - POST /v1/jobs/import: finished jobs from a `sacct -P` listing, many per
 * request (doc/api.md "Imported history", doc/adopt.md "Bring the history").
 *
 * Body: {"cluster", "backfill"?: bool, "header": sacct's header line, "lines": [row, ...],
 * "first_line"?: the file line of lines[0], for messages}.  Every row is parsed and priced
 * on the request thread (libslurmtext/sacct_job.c, the parser `allot import sacct` checks
 * the whole file with first); the rows become one writer op, so a request is one
 * transaction: all of it or, on any error, nothing.  Pricing is a settle's of a run never
 * held: billing from AllocTRES with the partition's weights (parsed once per partition per
 * request), the charge from it and Elapsed (store_job_import).  Rows of one job id are its
 * runs in listing order (sacct --duplicates lists a requeued job's runs one after another).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/json.h"
#include "allotd/partcache.h"
#include "libcore/billing.h"
#include "libcore/tres.h"
#include "libslurmtext/sacct_job.h"
#include "libutil/log.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

#define IMPORT_PARTS_MAX 32 /* partitions priced per request before the cache is reused */

/* One block (the request frees its scratch with free(), whatever the op's outcome). */
struct import_op {
    size_t n;
    int backfill;
    char actor[ALLOT_NAME_MAX];
    int64_t now_s;
    int64_t skipped; /* rows passed over: steps, not ended, never started */
    struct import_result res;
    struct import_job v[];
};

struct priced {
    char name[ALLOT_NAME_MAX];
    char resource[ALLOT_NAME_MAX];
    struct billing_weights w;
};

/* Copy span s into dst (size ALLOT_NAME_MAX), checked as a name; -1 with err naming field. */
static int span_name(char *dst, const char *field, struct slt_span s, int allow_empty,
                     struct allot_error *err)
{
    char tmp[ALLOT_NAME_MAX];
    if (s.n >= sizeof tmp)
        return allot_errorf(err, ALLOT_EINVAL, "%s: longer than %d characters", field,
                            ALLOT_NAME_MAX - 1);
    if (s.n) /* an absent column's span is {NULL, 0}: memcpy may not be given NULL */
        memcpy(tmp, s.p, s.n);
    tmp[s.n] = 0;
    return model_copy_name(dst, field, tmp, allow_empty, err);
}

/* The partition's resource and parsed weights, from the request's small cache. */
static const struct priced *price_of(struct req *r, store_t *st, struct priced *cache, size_t *n,
                                     const char *cluster, const char *name, struct allot_error *err)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(cache[i].name, name))
            return &cache[i];
    struct partition p;
    if (partcache_get(r->d->partcache, st, cluster, name, &p, err) < 0)
        return NULL;
    struct priced *c = &cache[*n < IMPORT_PARTS_MAX ? (*n)++ : 0];
    text_copy(c->name, sizeof c->name, name);
    text_copy(c->resource, sizeof c->resource, p.resource);
    if (billing_weights_parse(p.billing_weights, p.max_tres, &c->w, err) < 0) {
        allot_error_prefix(err, "billing_weights of partition %s", name);
        return NULL;
    }
    return c;
}

/* Row text -> *j.  0, or -1 with err. */
static int import_row(struct req *r, store_t *st, const char *cluster,
                      const struct slt_sacct_job *s, struct priced *cache, size_t *ncache,
                      struct import_job *j, struct allot_error *err)
{
    memset(j, 0, sizeof *j);
    text_copy(j->cluster, sizeof j->cluster, cluster);
    if (s->cluster.n && !slt_eq(s->cluster, cluster))
        return allot_errorf(err, ALLOT_EINVAL, "Cluster: '%.*s' is not cluster %s",
                            (int)(s->cluster.n < 64 ? s->cluster.n : 64), s->cluster.p, cluster);
    if (span_name(j->user, "User", s->user, 0, err) < 0 ||
        span_name(j->account, "Account", s->account, 0, err) < 0 ||
        span_name(j->partition, "Partition", s->partition, 0, err) < 0 ||
        span_name(j->qos, "QOS", s->qos, 1, err) < 0)
        return -1;
    if (s->alloc_tres.n >= sizeof j->alloc_tres)
        return allot_errorf(err, ALLOT_EINVAL, "AllocTRES: longer than %d characters",
                            ALLOT_TRES_MAX - 1);
    memcpy(j->alloc_tres, s->alloc_tres.p, s->alloc_tres.n);
    j->alloc_tres[s->alloc_tres.n] = 0;
    if (strlen(s->state) >= sizeof j->slurm_state)
        return allot_errorf(err, ALLOT_EINVAL, "State: '%s' is too long", s->state);
    text_copy(j->slurm_state, sizeof j->slurm_state, s->state);
    j->job_id = s->job_id;
    j->start_s = s->start_s;
    j->end_s = s->end_s;
    j->elapsed_s = s->elapsed_s;
    j->time_limit_s = s->time_limit_s;
    const struct priced *p = price_of(r, st, cache, ncache, cluster, j->partition, err);
    if (!p)
        return -1;
    text_copy(j->resource, sizeof j->resource, p->resource);
    struct tres_list t;
    if (tres_parse(j->alloc_tres, &t, err) < 0 ||
        billing_compute(&p->w, &t, &j->billing_micro, err) < 0)
        return allot_error_prefix(err, "AllocTRES");
    return 0;
}

static int run_import(store_t *st, void *arg, struct allot_error *err)
{
    struct import_op *o = arg;
    return store_job_import(st, o->v, o->n, o->backfill, o->actor, o->now_s, &o->res, err);
}

static int finish_import(struct req *r, struct allot_error *err)
{
    (void)err;
    struct import_op *o = r->scratch;
    r->out = json_pack("{s:I, s:I, s:I, s:I, s:b}", "imported", (json_int_t)o->res.imported,
                       "already", (json_int_t)o->res.already, "skipped", (json_int_t)o->skipped,
                       "charged_sumin", (json_int_t)o->res.charged_sumin, "backfill", o->backfill);
    log_info("msg=\"jobs imported\" req=%llu rows=%zu imported=%lld already=%lld skipped=%lld "
             "backfill=%d charged_sumin=%lld",
             (unsigned long long)r->id, o->n, (long long)o->res.imported, (long long)o->res.already,
             (long long)o->skipped, o->backfill, (long long)o->res.charged_sumin);
    return 0;
}

int api_job_import(struct req *r, struct allot_error *err)
{
    char cluster[ALLOT_NAME_MAX] = "", header[1024] = "";
    int64_t first_line = 1;
    int backfill = 0;
    struct jfield f[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = cluster},
        {.name = "backfill", .type = JF_BOOL, .required = 0, .dst = &backfill},
        {.name = "header", .type = JF_TEXT, .required = 1, .dst = header, .size = sizeof header},
        {.name = "first_line", .type = JF_INT, .required = 0, .dst = &first_line, .min = 1},
    };
    store_t *st = req_reader(r, err);
    if (!st || json_body(r, err) < 0)
        return -1;
    json_t *lines = json_incref(json_object_get(r->in, "lines"));
    json_object_del(r->in, "lines");
    int rc = -1;
    struct import_op *o = NULL;
    struct priced *cache = NULL;
    if (json_read(r->in, f, sizeof f / sizeof f[0], err) < 0)
        goto out;
    if (!json_is_array(lines)) {
        allot_errorf(err, ALLOT_EINVAL, "lines: required, an array of sacct rows");
        goto out;
    }
    if (api_cluster_check(st, cluster, err) < 0)
        goto out;
    struct slt_sacct_header h;
    if (slt_sacct_header_parse((struct slt_span){header, strlen(header)}, &h, err) < 0)
        goto out;
    size_t n = json_array_size(lines);
    o = xcalloc(1, sizeof *o + n * sizeof o->v[0]);
    o->backfill = backfill;
    o->now_s = (int64_t)time(NULL);
    text_copy(o->actor, sizeof o->actor, r->who.user);
    cache = xcalloc(IMPORT_PARTS_MAX, sizeof *cache);
    size_t ncache = 0;
    for (size_t i = 0; i < n; i++) {
        const char *text = json_string_value(json_array_get(lines, i));
        long long at = (long long)first_line + (long long)i;
        if (!text) {
            allot_errorf(err, ALLOT_EINVAL, "lines: line %lld: not a string", at);
            goto out;
        }
        struct slt_sacct_job s;
        struct allot_error le = {0};
        int k = slt_sacct_job_parse(&h, (struct slt_span){text, strlen(text)}, &s, &le);
        if (k == 1 && import_row(r, st, cluster, &s, cache, &ncache, &o->v[o->n], &le) == 0) {
            struct import_job *j = &o->v[o->n];
            /* A job's runs come one after another (sacct --duplicates). */
            for (size_t b = o->n; b > 0 && o->v[b - 1].job_id == j->job_id; b--)
                j->run++;
            o->n++;
        } else if (k == 1 || k < 0) {
            allot_errorf(err, le.code ? le.code : ALLOT_EINVAL, "line %lld: %s", at, le.msg);
            goto out;
        } else {
            o->skipped++;
        }
    }
    r->scratch = o; /* the request's from here */
    o = NULL;
    rc = req_defer_write(r, run_import, r->scratch, finish_import);
out:
    free(o);
    free(cache);
    json_decref(lines);
    return rc;
}
