/* SPDX-License-Identifier: GPL-3.0-or-later */
/* metrics.c - the counters of metrics.h and their Prometheus text rendering.
 * Status codes are folded into a small fixed set so the counter array has a static size. */
#include "allotd/metrics.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "allotd/api.h"
#include "allotd/routes.h"
#include "libcore/forecast.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

static const int status_codes[] = {200, 201, 400, 401, 402, 403, 404, 405, 409, 413, 500, 503};
#define NSTATUS ((int)(sizeof(status_codes) / sizeof(status_codes[0])) + 1) /* + "other" */
/* Latency bucket upper bounds, microseconds. */
static const int64_t lat_le_us[] = {100,   250,   500,   1000,   2500,   5000,
                                    10000, 25000, 50000, 100000, 250000, 1000000};
#define NLAT ((int)(sizeof(lat_le_us) / sizeof(lat_le_us[0])))
static const int batch_le[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
#define NBATCH ((int)(sizeof(batch_le) / sizeof(batch_le[0])))

struct metrics {
    atomic_ullong requests[ROUTES_MAX + 1][NSTATUS]; /* last row: no route */
    atomic_ullong lat_bucket[NLAT + 1];
    atomic_ullong lat_sum_us, lat_count;
    atomic_ullong batch_bucket[NBATCH + 1];
    atomic_ullong batch_sum, batch_count, batch_failed;
    atomic_ullong writer_us[4];    /* run, commit, sync, complete */
    atomic_ullong part_lookups[2]; /* miss, hit */
    atomic_ullong part_drops;
    atomic_int part_watching;
};

struct metrics *metrics_create(void)
{
    struct metrics *m = xcalloc(1, sizeof(*m));
    return m; /* all-zero bytes are valid zero atomics on this platform (lock-free) */
}

void metrics_destroy(struct metrics *m)
{
    free(m);
}

static int status_index(int status)
{
    for (int i = 0; i < NSTATUS - 1; i++)
        if (status_codes[i] == status)
            return i;
    return NSTATUS - 1;
}

void metrics_request(struct metrics *m, int route, int status, int64_t latency_us, int hot)
{
    if (!m)
        return;
    int r = (route >= 0 && route < ROUTES_MAX) ? route : ROUTES_MAX;
    atomic_fetch_add_explicit(&m->requests[r][status_index(status)], 1, memory_order_relaxed);
    if (!hot)
        return;
    int b = 0;
    while (b < NLAT && latency_us > lat_le_us[b])
        b++;
    atomic_fetch_add_explicit(&m->lat_bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->lat_sum_us, (unsigned long long)latency_us, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->lat_count, 1, memory_order_relaxed);
}

void metrics_partition_lookup(struct metrics *m, int hit)
{
    atomic_fetch_add_explicit(&m->part_lookups[hit != 0], 1, memory_order_relaxed);
}

void metrics_partition_cache(struct metrics *m, int watching)
{
    atomic_fetch_add_explicit(&m->part_drops, 1, memory_order_relaxed);
    atomic_store(&m->part_watching, watching);
}

static void add_us(atomic_ullong *c, int64_t us)
{
    atomic_fetch_add_explicit(c, (unsigned long long)(us > 0 ? us : 0), memory_order_relaxed);
}

void metrics_flush(struct metrics *m, int64_t sync_us, int64_t complete_us)
{
    if (!m)
        return;
    add_us(&m->writer_us[2], sync_us);
    add_us(&m->writer_us[3], complete_us);
}

void metrics_batch(struct metrics *m, int n, int ok, int64_t run_us, int64_t commit_us)
{
    if (!m)
        return;
    add_us(&m->writer_us[0], run_us);
    add_us(&m->writer_us[1], commit_us);
    int b = 0;
    while (b < NBATCH && n > batch_le[b])
        b++;
    atomic_fetch_add_explicit(&m->batch_bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->batch_sum, (unsigned long long)n, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->batch_count, 1, memory_order_relaxed);
    if (!ok)
        atomic_fetch_add_explicit(&m->batch_failed, 1, memory_order_relaxed);
}

struct out {
    char *buf;
    size_t len, cap;
};

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(struct out *o, const char *fmt, ...)
{
    va_list ap;
    while (1) {
        va_start(ap, fmt);
        int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        o->cap = o->cap * 2 + (size_t)n + 1;
        o->buf = xrealloc(o->buf, o->cap);
    }
}

/* Drift gauges and totals per cluster (allot-agent's sync, doc/agent.md "Sync"). */
struct sync_out {
    struct out *o;
    int part; /* 0: drifts by kind, 1: found, 2: resolved, 3: last pass */
    char last_key[ALLOT_NAME_MAX + 16];
    long long count;
};

static void sync_flush(struct sync_out *x)
{
    if (x->last_key[0]) {
        const char *slash = strchr(x->last_key, '/');
        out_printf(x->o, "allot_sync_drifts{cluster=\"%.*s\",kind=\"%s\"} %lld\n",
                   (int)(slash - x->last_key), x->last_key, slash + 1, x->count);
    }
    x->last_key[0] = '\0';
    x->count = 0;
}

static int on_sync_drift(const struct sync_drift *d, void *arg)
{
    struct sync_out *x = arg;
    char key[sizeof x->last_key];
    snprintf(key, sizeof key, "%s/%s", d->cluster, d->kind);
    if (strcmp(key, x->last_key) != 0) {
        sync_flush(x);
        text_copy(x->last_key, sizeof x->last_key, key);
    }
    x->count++;
    return 0;
}

static int on_sync_state(const struct sync_state *s, void *arg)
{
    struct sync_out *x = arg;
    if (x->part == 1)
        out_printf(x->o, "allot_sync_drifts_found_total{cluster=\"%s\"} %lld\n", s->cluster,
                   (long long)s->found_total);
    else if (x->part == 2)
        out_printf(x->o, "allot_sync_drifts_resolved_total{cluster=\"%s\"} %lld\n", s->cluster,
                   (long long)s->resolved_total);
    else
        out_printf(x->o,
                   "allot_sync_last_pass_timestamp_seconds{cluster=\"%s\",mode=\"%s\"} %lld\n",
                   s->cluster, s->mode, (long long)s->synced_s);
    return 0;
}

static void render_sync(struct out *o, store_t *st)
{
    static const char *const head[4] = {
        "# HELP allot_sync_drifts Differences between allot's copy and Slurm found by the "
        "agent's last sync pass and not resolved, by kind.\n# TYPE allot_sync_drifts gauge\n",
        "# HELP allot_sync_drifts_found_total Drifts found by the agent's sync passes.\n"
        "# TYPE allot_sync_drifts_found_total counter\n",
        "# HELP allot_sync_drifts_resolved_total Drifts the sync mode resolved.\n"
        "# TYPE allot_sync_drifts_resolved_total counter\n",
        "# HELP allot_sync_last_pass_timestamp_seconds When the agent's last sync pass "
        "reported (epoch seconds), with its mode.\n"
        "# TYPE allot_sync_last_pass_timestamp_seconds gauge\n",
    };
    struct sync_out x = {.o = o};
    struct allot_error err;
    for (int part = 0; part < 4; part++) {
        out_printf(o, "%s", head[part]);
        x.part = part;
        int rc = part == 0 ? store_sync_drifts(st, NULL, on_sync_drift, &x, &err)
                           : store_sync_states(st, NULL, on_sync_state, &x, &err);
        if (rc < 0)
            out_printf(o, "# sync state unavailable: %s\n", err.msg);
        if (part == 0)
            sync_flush(&x);
    }
}

struct alloc_out {
    struct out *o;
    int64_t now_s;
    struct alloc_pair *active; /* forecast after the list, not from inside its callback */
    size_t n, cap;
};

static int on_alloc(const struct allocation *a, const struct balance *b, void *arg)
{
    struct alloc_out *x = arg;
    out_printf(
        x->o, "allot_allocation_available_sumin{id=\"%lld\",account=\"%s\",resource=\"%s\"} %lld\n",
        (long long)a->id, a->account, a->resource, (long long)b->available_sumin);
    if (a->start_s > x->now_s || a->end_s <= x->now_s)
        return 0;
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 16;
        x->active = xrealloc(x->active, x->cap * sizeof(*x->active));
    }
    x->active[x->n++] = (struct alloc_pair){*a, *b};
    return 0;
}

/* The forecast gauges of the allocations active now (libcore/forecast.h, default window). */
static void render_forecasts(struct out *o, store_t *st, const struct alloc_out *x)
{
    struct forecast *fc = xcalloc(x->n ? x->n : 1, sizeof(*fc));
    char *ok = xcalloc(x->n ? x->n : 1, 1);
    out_printf(o, "# HELP allot_allocation_forecast_days Days until the available balance "
                  "reaches zero at the recent burn (+Inf: no burn), per active allocation.\n"
                  "# TYPE allot_allocation_forecast_days gauge\n");
    for (size_t i = 0; i < x->n; i++) {
        const struct allocation *a = &x->active[i].a;
        struct allot_error err;
        if (store_alloc_forecast(st, a, &x->active[i].b, x->now_s, FORECAST_WINDOW_DEFAULT, &fc[i],
                                 NULL, &err) < 0) {
            out_printf(o, "# forecast of allocation %lld unavailable: %s\n", (long long)a->id,
                       err.msg);
            continue;
        }
        ok[i] = 1;
        double d = forecast_days_left(&fc[i], x->now_s);
        char v[32];
        if (isinf(d))
            snprintf(v, sizeof v, "+Inf");
        else
            snprintf(v, sizeof v, "%.4f", d);
        out_printf(
            o, "allot_allocation_forecast_days{id=\"%lld\",account=\"%s\",resource=\"%s\"} %s\n",
            (long long)a->id, a->account, a->resource, v);
    }
    out_printf(o, "# HELP allot_allocation_forecast_end_balance_sumin Available SU-minutes "
                  "expected at the allocation's end at the recent burn (negative: the "
                  "shortfall), per active allocation.\n"
                  "# TYPE allot_allocation_forecast_end_balance_sumin gauge\n");
    for (size_t i = 0; i < x->n; i++) {
        const struct allocation *a = &x->active[i].a;
        if (ok[i])
            out_printf(o,
                       "allot_allocation_forecast_end_balance_sumin{id=\"%lld\",account=\"%s\","
                       "resource=\"%s\"} %lld\n",
                       (long long)a->id, a->account, a->resource,
                       (long long)fc[i].end_balance_sumin);
    }
    free(fc);
    free(ok);
}

void metrics_render(struct metrics *m, long queue_depth, store_t *st, int accounts, char **buf,
                    size_t *len)
{
    struct out o = {.buf = xmalloc(4096), .len = 0, .cap = 4096};
    o.buf[0] = '\0';
    out_printf(&o, "# HELP allot_requests_total HTTP requests by route and status.\n"
                   "# TYPE allot_requests_total counter\n");
    for (int r = 0; r <= ROUTES_MAX; r++) {
        const char *name = r < ROUTES_MAX ? routes_name(r) : "none";
        if (!name)
            continue;
        for (int s = 0; s < NSTATUS; s++) {
            unsigned long long v = atomic_load(&m->requests[r][s]);
            if (!v)
                continue;
            if (s < NSTATUS - 1)
                out_printf(&o, "allot_requests_total{route=\"%s\",status=\"%d\"} %llu\n", name,
                           status_codes[s], v);
            else
                out_printf(&o, "allot_requests_total{route=\"%s\",status=\"other\"} %llu\n", name,
                           v);
        }
    }
    out_printf(&o, "# HELP allot_job_latency_seconds Latency of hold and settle requests.\n"
                   "# TYPE allot_job_latency_seconds histogram\n");
    unsigned long long cum = 0;
    for (int b = 0; b <= NLAT; b++) {
        cum += atomic_load(&m->lat_bucket[b]);
        if (b < NLAT)
            out_printf(&o, "allot_job_latency_seconds_bucket{le=\"%g\"} %llu\n",
                       (double)lat_le_us[b] / 1e6, cum);
        else
            out_printf(&o, "allot_job_latency_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
    }
    out_printf(&o, "allot_job_latency_seconds_sum %.6f\nallot_job_latency_seconds_count %llu\n",
               (double)atomic_load(&m->lat_sum_us) / 1e6, atomic_load(&m->lat_count));
    out_printf(&o, "# HELP allot_commit_batch_ops Write operations per group commit.\n"
                   "# TYPE allot_commit_batch_ops histogram\n");
    cum = 0;
    for (int b = 0; b <= NBATCH; b++) {
        cum += atomic_load(&m->batch_bucket[b]);
        if (b < NBATCH)
            out_printf(&o, "allot_commit_batch_ops_bucket{le=\"%d\"} %llu\n", batch_le[b], cum);
        else
            out_printf(&o, "allot_commit_batch_ops_bucket{le=\"+Inf\"} %llu\n", cum);
    }
    out_printf(&o, "allot_commit_batch_ops_sum %llu\nallot_commit_batch_ops_count %llu\n",
               atomic_load(&m->batch_sum), atomic_load(&m->batch_count));
    out_printf(&o,
               "# HELP allot_commit_failures_total Group commits that failed.\n"
               "# TYPE allot_commit_failures_total counter\n"
               "allot_commit_failures_total %llu\n",
               atomic_load(&m->batch_failed));
    out_printf(&o, "# HELP allot_writer_seconds_total Group commit time by phase: the writer "
                   "running ops and committing them, the completer flushing them to disk "
                   "and completing them.\n"
                   "# TYPE allot_writer_seconds_total counter\n");
    static const char *const phase[4] = {"run", "commit", "sync", "complete"};
    for (int i = 0; i < 4; i++)
        out_printf(&o, "allot_writer_seconds_total{phase=\"%s\"} %.6f\n", phase[i],
                   (double)atomic_load(&m->writer_us[i]) / 1e6);
    out_printf(&o,
               "# HELP allot_writer_queue_depth Write operations waiting for the writer.\n"
               "# TYPE allot_writer_queue_depth gauge\nallot_writer_queue_depth %ld\n",
               queue_depth);
    out_printf(&o,
               "# HELP allot_partition_lookups_total Partition lookups to price jobs; "
               "hit: answered by allotd's cache (PostgreSQL only).\n"
               "# TYPE allot_partition_lookups_total counter\n"
               "allot_partition_lookups_total{result=\"hit\"} %llu\n"
               "allot_partition_lookups_total{result=\"miss\"} %llu\n",
               atomic_load(&m->part_lookups[1]), atomic_load(&m->part_lookups[0]));
    out_printf(&o,
               "# HELP allot_partition_cache_drops_total Times the partition cache was "
               "emptied: a change committed, or its watch went up or down.\n"
               "# TYPE allot_partition_cache_drops_total counter\n"
               "allot_partition_cache_drops_total %llu\n"
               "# HELP allot_partition_watch_up 1 while allotd watches partition changes "
               "and may answer from its cache; 0: every lookup reads the database.\n"
               "# TYPE allot_partition_watch_up gauge\nallot_partition_watch_up %d\n",
               atomic_load(&m->part_drops), atomic_load(&m->part_watching));
    if (st && accounts) {
        out_printf(&o, "# HELP allot_allocation_available_sumin Available SU-minutes per "
                       "allocation.\n# TYPE allot_allocation_available_sumin gauge\n");
        struct alloc_filter f = {0};
        struct allot_error err;
        struct alloc_out x = {.o = &o, .now_s = (int64_t)time(NULL)};
        if (store_alloc_list(st, &f, on_alloc, &x, &err) < 0)
            out_printf(&o, "# allocations unavailable: %s\n", err.msg);
        else
            render_forecasts(&o, st, &x);
        free(x.active);
    }
    if (st)
        render_sync(&o, st);
    *buf = o.buf;
    *len = o.len;
}
