/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tick.c - the period/policy clock (tick.h).
 *
 * Design: the thread sleeps on a condition variable (so stop is immediate), then lists the
 * policies on its own read connection and hands one write op per policy to the writer with
 * writer_run.  Each op is store_policy_evaluate, which first runs the boundary transaction:
 * marker compare-and-set, ledger entries and commands commit together or not at all.  A
 * crash between ticks loses nothing; a tick after a restart finds the marker advanced.
 * Why per-policy ops: a failing policy (e.g. a deleted cluster) must not block the others.
 * Settles and credits also evaluate (tick_after_write), so a threshold crossed by a job, or
 * left by a top-up, acts at once rather than at the next tick.
 */
#include "allotd/tick.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allotd/allotd.h"
#include "allotd/submit.h"
#include "allotd/writer.h"
#include "libutil/log.h"
#include "libutil/xalloc.h"

struct tick {
    struct allotd *d;
    int interval_s;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
};

int64_t tick_utc_offset_s(int64_t utc_s, void *arg)
{
    (void)arg;
    time_t t = (time_t)utc_s;
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return 0;
    return (int64_t)tm.tm_gmtoff;
}

static const struct period_tz zone = {.utc_offset_s = tick_utc_offset_s, .arg = NULL};

const struct period_tz *tick_zone(void)
{
    return &zone;
}

struct ids {
    int64_t *v;
    size_t n, cap;
};

static int collect(const struct policy *p, void *arg)
{
    struct ids *ids = arg;
    if (ids->n == ids->cap) {
        ids->cap = ids->cap ? 2 * ids->cap : 256;
        ids->v = xrealloc(ids->v, ids->cap * sizeof *ids->v);
    }
    ids->v[ids->n++] = p->id;
    return 0;
}

struct eval_op {
    int64_t id, now_s;
    struct policy_eval e;
};

static int run_eval(store_t *st, void *arg, struct allot_error *err)
{
    struct eval_op *o = arg;
    return store_policy_evaluate(st, o->id, o->now_s, &zone, "tick", &o->e, err);
}

static int run_fold(store_t *st, void *arg, struct allot_error *err)
{
    return store_usage_fold(st, *(int64_t *)arg, err);
}

/* PostgreSQL's batched settles leave their usage pending (store_usage_acc.c): fold it into
 * the accumulators each tick, so readers add only a tick's worth of runs. */
static int usage_fold(struct allotd *d, int64_t now_s, struct allot_error *err)
{
    struct write_op op = {.run = run_fold, .arg = &now_s};
    return writer_run(d->writer, &op, err);
}

int tick_run_once(struct allotd *d, int64_t now_s, int *rolled, struct allot_error *err)
{
    struct ids ids = {0};
    struct allot_error e1 = {0};
    int failed = 0, n = 0;
    if (rolled)
        *rolled = 0;
    store_t *st = allotd_reader(d, err);
    if (!st)
        return -1;
    if (store_policy_list(st, 0, 0, collect, &ids, err) < 0) {
        free(ids.v);
        return -1;
    }
    for (size_t i = 0; i < ids.n; i++) {
        struct eval_op o = {.id = ids.v[i], .now_s = now_s};
        struct write_op op = {.run = run_eval, .arg = &o};
        struct allot_error e2 = {0};
        if (writer_run(d->writer, &op, &e2) < 0) {
            log_error("msg=\"policy evaluation failed\" policy=%lld error=\"%s\"", (long long)o.id,
                      e2.msg);
            if (!failed++)
                e1 = e2;
            continue;
        }
        n++;
        if (o.e.roll.rolled) {
            if (rolled)
                (*rolled)++;
            log_info("msg=\"period boundary\" policy=%lld from=\"%s\" to=\"%s\" carry_sumin=%lld "
                     "expired_sumin=%lld commands=%d",
                     (long long)o.id, o.e.roll.old_period, o.e.roll.new_period,
                     (long long)o.e.roll.carry_sumin, (long long)o.e.roll.expired_sumin,
                     o.e.roll.ncommands);
        } else if (o.e.roll.expired_sumin > 0 || o.e.roll.ncommands > 0) {
            /* The allocation ended: its last period was closed (store_policy_roll). */
            log_info("msg=\"allocation ended\" policy=%lld period=\"%s\" expired_sumin=%lld "
                     "commands=%d",
                     (long long)o.id, o.e.roll.old_period, (long long)o.e.roll.expired_sumin,
                     o.e.roll.ncommands);
        }
        if (o.e.actions[0])
            log_info("msg=\"policy actions\" policy=%lld period=\"%s\" actions=\"%s\" "
                     "usage_ppm=%lld commands=\"%s\"",
                     (long long)o.id, o.e.period, o.e.actions, (long long)o.e.usage_ppm,
                     o.e.command_ids);
    }
    free(ids.v);
    struct allot_error e4 = {0};
    if (store_batches_jobs(st) && usage_fold(d, now_s, &e4) < 0) {
        log_error("msg=\"usage fold failed\" error=\"%s\"", e4.msg);
        if (!failed++)
            e1 = e4;
    }
    struct allot_error e3 = {0};
    if (api_submit_sweep(d, &e3) < 0) { /* HoldMode=submit orphans (api_submit.c) */
        log_error("msg=\"submit hold sweep failed\" error=\"%s\"", e3.msg);
        if (!failed++)
            e1 = e3;
    }
    if (failed) {
        if (err)
            *err = e1;
        return -1;
    }
    return n;
}

void tick_after_write(store_t *st, int64_t alloc_id, int64_t now_s, const char *by,
                      int boundary_only)
{
    struct policy p;
    struct policy_eval e;
    struct allot_error err = {0};
    memset(&e, 0, sizeof e);
    if (alloc_id <= 0 || store_policy_get_by_alloc(st, alloc_id, &p, &err) < 0)
        return; /* no policy (ENOENT), or the next tick will tell */
    int rc = store_savepoint(st, &err);
    if (rc == 0)
        rc = boundary_only ? store_policy_roll(st, p.id, now_s, &zone, by, &e.roll, &err)
                           : store_policy_evaluate(st, p.id, now_s, &zone, by, &e, &err);
    if (rc == 0)
        rc = store_savepoint_release(st, &err);
    if (rc < 0) {
        store_savepoint_rollback(st);
        log_error("msg=\"%s evaluation failed\" policy=%lld error=\"%s\"", by, (long long)p.id,
                  err.msg);
        return;
    }
    /* A settle or credit just after midnight may be the first to cross the boundary: log it
     * as the tick would (doc/policies.md, playbook step 2). */
    if (e.roll.rolled)
        log_info("msg=\"period boundary\" policy=%lld from=\"%s\" to=\"%s\" carry_sumin=%lld "
                 "expired_sumin=%lld commands=%d by=%s",
                 (long long)p.id, e.roll.old_period, e.roll.new_period,
                 (long long)e.roll.carry_sumin, (long long)e.roll.expired_sumin, e.roll.ncommands,
                 by);
    else if (e.roll.expired_sumin > 0 || e.roll.ncommands > 0)
        log_info("msg=\"allocation ended\" policy=%lld period=\"%s\" expired_sumin=%lld "
                 "commands=%d by=%s",
                 (long long)p.id, e.roll.old_period, (long long)e.roll.expired_sumin,
                 e.roll.ncommands, by);
    if (e.actions[0])
        log_info("msg=\"policy actions\" policy=%lld period=\"%s\" actions=\"%s\" "
                 "usage_ppm=%lld commands=\"%s\" by=%s",
                 (long long)p.id, e.period, e.actions, (long long)e.usage_ppm, e.command_ids, by);
}

static void *tick_main(void *arg)
{
    struct tick *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        pthread_mutex_unlock(&t->lock);
        struct allot_error err = {0};
        if (tick_run_once(t->d, (int64_t)time(NULL), NULL, &err) < 0)
            log_error("msg=\"tick failed\" error=\"%s\"", err.msg);
        pthread_mutex_lock(&t->lock);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += t->interval_s;
        while (!t->stop) {
            int rc = pthread_cond_timedwait(&t->cond, &t->lock, &until);
            if (rc == ETIMEDOUT)
                break;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

struct tick *tick_start(struct allotd *d, const char *zone_name, int interval_s,
                        struct allot_error *err)
{
    if (interval_s < 1)
        interval_s = 1;
    /* Set once, before the tick thread exists; localtime_r reads it from then on. */
    if (setenv("TZ", zone_name && zone_name[0] ? zone_name : "UTC", 1) != 0) {
        allot_errorf(err, ALLOT_EIO, "tick: cannot set TZ");
        return NULL;
    }
    tzset();
    struct tick *t = xcalloc(1, sizeof *t);
    t->d = d;
    t->interval_s = interval_s;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    if (pthread_create(&t->thread, NULL, tick_main, t) != 0) {
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->cond);
        free(t);
        allot_errorf(err, ALLOT_EIO, "tick: cannot start its thread");
        return NULL;
    }
    return t;
}

void tick_stop(struct tick *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
    free(t);
}
