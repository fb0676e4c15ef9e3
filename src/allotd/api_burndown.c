/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_burndown.c - GET /v1/allocations/{id}/burndown: an allocation's granted, used and held
 * totals at evenly spaced instants, from its ledger (the rule is libcore/burndown.h's).
 *
 * The series ends at the newest entry when that is later than now or the allocation's end,
 * and the instants must be known before entries are added, so the ledger is read twice: a
 * scan for the newest time and the last id, then the totals of the entries up to that id.
 * An allocation's ledger only grows (one with entries cannot be removed) and later writes
 * take higher ids, so both reads see the same entries, except when an entry with a lower id
 * commits in between (PostgreSQL hands out ids before commit): their counts and id sums are
 * compared, and a differing pair is read again.  Memory is the points, whatever the
 * ledger's length.  "balance" is the totals of the entries read, so the last point equals
 * it even under concurrent writes; the money invariant (store.h) makes it the stored one.
 *
 * Times are the jobs', not the ledger's: an entry about a job run counts when the run did
 * (a hold at the run's start, its debit, release or refund at its end, each never later
 * than the entry itself), and the allocation's first credit, its grant, counts from its
 * start.  So an allocation entered after its start, or charged late (history imported with
 * backfill, a settle the agent reconciled), shows when its money was spent. */
#include <stdlib.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/json.h"
#include "libcore/burndown.h"
#include "libutil/xalloc.h"

#define POINTS_DEFAULT 50
#define POINTS_MAX 500
#define READ_TRIES 3

struct series {
    struct burndown bd;
    struct burndown_point pts[BURNDOWN_POINTS(POINTS_MAX)];
    int64_t from_s, to_s;
};

/* What one read of the ledger saw. */
struct seen {
    int64_t count;
    uint64_t id_sum; /* wraps: only compared */
    int64_t last_id;
    int64_t newest_s;
};

struct fill {
    store_t *st;
    const struct allocation *a;
    int granted; /* the allocation's first credit was seen */
    struct burndown *bd;
    struct seen seen;
    int64_t upto_id; /* the scan's last id */
    int64_t to_s;
    int changed; /* an entry the scan did not see */
    int64_t alloc_id;
    struct allot_error *err;
};

static void see(struct seen *s, const struct ledger_entry *e)
{
    if (s->count == 0 || e->time_s > s->newest_s)
        s->newest_s = e->time_s;
    s->count++;
    s->id_sum += (uint64_t)e->id;
    s->last_id = e->id;
}

static int on_scan(const struct ledger_entry *e, void *arg)
{
    see(arg, e);
    return 0;
}

/* Move e->time_s to when its money moved (the file's comment); never later. */
static int when(struct fill *f, struct ledger_entry *e, struct allot_error *err)
{
    int64_t t = e->time_s;
    if (e->kind == LEDGER_CREDIT && !e->job_id && !f->granted) {
        f->granted = 1;
        t = f->a->start_s;
    } else if (e->job_id && e->cluster[0]) {
        struct job j;
        struct allot_error je = {0};
        if (store_job_get(f->st, e->cluster, e->job_id, e->run, &j, &je) < 0) {
            if (je.code != ALLOT_ENOENT) { /* a scrubbed run keeps its entry's time */
                if (err)
                    *err = je;
                return -1;
            }
        } else if (e->kind == LEDGER_HOLD) {
            t = j.start_s > 0 ? j.start_s : t;
        } else {
            t = j.end_s > 0 ? j.end_s : t;
        }
    }
    if (t < e->time_s)
        e->time_s = t;
    return 0;
}

static int on_fill(const struct ledger_entry *e, void *arg)
{
    struct fill *f = arg;
    if (e->id > f->upto_id)
        return 1; /* written after the scan: the next request's */
    if (e->time_s > f->to_s) {
        f->changed = 1;
        return 1;
    }
    see(&f->seen, e);
    struct ledger_entry at = *e;
    if (when(f, &at, f->err) < 0)
        return -1;
    if (burndown_add(f->bd, &at, f->err) < 0) {
        /* Stored entries whose totals leave int64: the bank's fault, not the request's. */
        if (f->err)
            f->err->code = ALLOT_EINTERNAL;
        return allot_error_prefix(f->err, "allocation %lld", (long long)f->alloc_id);
    }
    return 0;
}

/* One attempt at a's series of n intervals, as of now_s: 0 done, 1 the ledger changed
 * between the two reads, -1 with err. */
static int read_series(store_t *st, const struct allocation *a, int64_t now_s, int n,
                       struct series *s, struct allot_error *err)
{
    struct ledger_filter lf = {.alloc_id = a->id};
    struct seen scan = {0};
    if (store_ledger_list(st, &lf, on_scan, &scan, err) < 0)
        return -1;
    s->from_s = a->start_s;
    s->to_s = burndown_to(a->start_s, a->end_s, now_s, scan.count ? scan.newest_s : a->start_s);
    size_t cap = sizeof(s->pts) / sizeof(s->pts[0]);
    if (burndown_init(&s->bd, s->from_s, s->to_s, n, s->pts, cap, err) < 0) {
        if (err)
            err->code = ALLOT_EINTERNAL; /* from <= to and n are checked: a bug */
        return -1;
    }
    struct fill f = {st, a, 0, &s->bd, {0}, scan.last_id, s->to_s, 0, a->id, err};
    if (store_ledger_list(st, &lf, on_fill, &f, err) < 0)
        return -1;
    if (f.changed || f.seen.count != scan.count || f.seen.id_sum != scan.id_sum)
        return 1;
    if (burndown_finish(&s->bd, err) < 0) {
        if (err)
            err->code = ALLOT_EINTERNAL;
        return allot_error_prefix(err, "allocation %lld", (long long)a->id);
    }
    return 0;
}

static int parse_points(struct req *r, int64_t *n, struct allot_error *err)
{
    if (json_query_int(r, "points", 1, n, err) < 0)
        return -1;
    if (*n > POINTS_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "points: '%s' must be at most %d",
                            req_query(r, "points"), POINTS_MAX);
    return 0;
}

static json_t *json_points(const struct burndown *bd)
{
    json_t *items = json_array();
    for (size_t k = 0; k < bd->n_pts; k++) {
        const struct burndown_point *p = &bd->pts[k];
        json_array_append_new(
            items, json_pack("{s:o, s:I, s:I, s:I, s:I}", "time", json_time(p->time_s),
                             "granted_sumin", (json_int_t)p->granted_sumin, "used_sumin",
                             (json_int_t)p->used_sumin, "held_sumin", (json_int_t)p->held_sumin,
                             "available_sumin", (json_int_t)p->available_sumin));
    }
    return items;
}

int api_alloc_burndown(struct req *r, struct allot_error *err)
{
    store_t *st = req_reader(r, err);
    struct allocation a;
    struct balance b;
    int64_t n = POINTS_DEFAULT;
    /* Who may read it: as GET /v1/allocations/{id}. */
    if (!st || parse_points(r, &n, err) < 0 || api_alloc_visible(r, st, &a, &b, err) < 0)
        return -1;
    struct series *s = xcalloc(1, sizeof(*s));
    r->scratch = s;
    int64_t now_s = (int64_t)time(NULL);
    int rc = 1;
    for (int i = 0; i < READ_TRIES && rc == 1; i++)
        rc = read_series(st, &a, now_s, (int)n, s, err);
    if (rc < 0)
        return -1;
    if (rc == 1)
        return allot_errorf(err, ALLOT_EUNAVAIL,
                            "allocation %lld: its ledger changed during each of %d reads; retry",
                            (long long)a.id, READ_TRIES);
    const struct burndown_point *last = &s->pts[s->bd.n_pts - 1];
    struct balance now = {.alloc_id = a.id,
                          .granted_sumin = last->granted_sumin,
                          .used_sumin = last->used_sumin,
                          .held_sumin = last->held_sumin,
                          .available_sumin = last->available_sumin};
    r->out = json_pack("{s:o, s:o, s:o, s:o, s:o}", "alloc", json_allocation(&a, &b), "balance",
                       json_balance(&a, &now), "from", json_time(s->from_s), "to",
                       json_time(s->to_s), "points", json_points(&s->bd));
    return 0;
}
