/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_allot.c - slurmctld's prep/allot plugin: hold at job start, settle at job end
 * (doc/design.md §1.4, §3.5), both asynchronous.
 *
 * Design: PrEp plugins see job_record_t, which only Slurm's internal headers define, so
 * this file is the one that includes src/slurmctld/slurmctld.h (from the source tree of
 * exactly the installed Slurm).  It only copies job fields into a prep_job_t and queues it
 * on the worker pool (prep_pool.c); workers talk to allotd (prep_job.c):
 * - prolog: *async = true; a worker takes the hold, then calls slurmctld's prolog callback.
 *   A hold the bank refuses for credit that other runs' settles can free makes the job
 *   wait (StartRefusal=wait, prep_refusal.h): under slurmctld's job write lock the worker
 *   requeues it, holds it (priority 0) with the reason, and the sweep thread releases it
 *   after StartRetryDelay for another start, which is a new run with a hold of its own.
 *   Any other refusal (or, with FailMode=closed, a hold allotd cannot answer within the
 *   budget) stops the job: the worker cancels it with the reason.  The reason is the job's
 *   state description (squeue, scontrol) and is kept in its AdminComment (sacct).  Either
 *   way the prolog reports success: a failing prolog would requeue a batch job with Slurm's
 *   own 121 s delay and no reason, and kill an srun job.
 * - epilog: the settle is written to the spool directory and queued; the epilog returns at
 *   once (slurmctld never waits on allotd; the job's nodes are not kept COMPLETING).  The
 *   spool file is removed when allotd acknowledged the settle (kept as .rejected when allotd
 *   refused it for good); a later start re-queues
 *   whatever is left (slurmctld does not call fini() on shutdown, so the spool is the only
 *   record that survives one).  NODE_FAIL is sent as the state: allotd charges it 0.
 *   A requeue counts the next run before the epilog of the one that ended: the settle
 *   names the run that was held (prep_job_epilog_run).
 * - FailMode=open: a job whose hold allotd could not answer starts anyway, logged; its
 *   settle carries account, partition and time limit so allotd bills the run it never held
 *   (the reconciliation), and the agent's sacct pass covers a settle that never arrives.
 * - EnforceMode=observe (allotd's, doc/adopt.md): allotd answers a hold it would refuse as
 *   observed (liballot: ok with a refusal); the job starts without a hold and its settle is
 *   priced by allotd from the allocated TRES, as its hold would have been.
 * - HoldMode=submit (doc/slurm.md "Hold at submit"): the prolog reads the job's token from
 *   AdminComment ("allot_token=T", written by job_submit/allot; only administrators can set
 *   AdminComment) and sends it with the hold, which moves the provisional hold to the job.
 *   Slurm 22.05 runs no slurmctld epilog for a job cancelled while pending (job_signal
 *   marks it CANCELLED without epilog_slurmctld), so a sweep thread looks every
 *   SWEEP_PENDING_S through slurmctld's job list (job read lock, no allotd call under it)
 *   for ended jobs that never had resources and carry a token, and queues a release of
 *   the token.  Ended jobs stay in the list for MinJobAge (default 300 s); one purged
 *   before a sweep saw it is left to allotd's SubmitHoldTTL.  A job array's tasks
 *   cancelled pending leave no record: the sweep counts its tasks that may still start
 *   and has allotd keep that many shares (prep_array.c).
 * The configuration (allot.conf) is read at init, or at the first job when it was not
 * there yet; without it the plugin only logs (nothing to talk to).
 * slurmd loads PrEp plugins too: the slurmd-side calls do nothing and are not required.
 * State: file-static (plugins get no context), guarded by allot_mu; see STYLE §2.
 */
#include "config.h"

#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
/* Strings handed to slurmctld must come from its allocator (it xfree()s them): allot's own
 * libutil, linked into this plugin, has an xstrdup of its own that the call would bind to, so
 * this file uses xstrdup_printf ("%s") only. */
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
/* prep.h and srun_comm.h, wherever this Slurm keeps them. */
#include "plugins/slurm_compat.h"

#include "plugins/common/breaker.h"
#include "plugins/common/breaker_ready.h"
#include "plugins/common/plugin_conf.h"
#include "plugins/common/slurm_price.h"
#include "plugins/common/submit_token.h"

/* slurmd loads this plugin too and has no job_list or last_job_update: a data reference
 * must not stop the load there (functions bind lazily, data does not), so they are weak;
 * NULL outside slurmctld, where the sweep and the requeue never run. */
#pragma weak job_list
#pragma weak last_job_update
#include "plugins/plugin_export.h"
#include "plugins/prep/allot/prep_array.h"
#include "plugins/prep/allot/prep_job.h"
#include "plugins/prep/allot/prep_pool.h"
#include "plugins/prep/allot/prep_refusal.h"

ALLOT_PLUGIN_EXPORT const char plugin_name[] = "allot allocation bank PrEp plugin";
ALLOT_PLUGIN_EXPORT const char plugin_type[] = "prep/allot";
ALLOT_PLUGIN_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define GROW_AFTER_MS 20    /* queue wait that adds a worker */
#define IDLE_EXIT_MS 10000  /* idle time after which a worker above the minimum exits */
#define CONF_RETRY_S 1      /* how often a missing allot.conf is looked for again */
#define REFUSED_MAX 1024    /* recently refused runs remembered (their epilog settles nothing) */
#define SWEEP_PENDING_S 5   /* how often ended-while-pending jobs are looked for */
#define SWEEP_BATCH_MAX 256 /* releases queued per sweep; the next sweep takes the rest */
#define RELEASED_MAX 4096   /* tokens whose release was queued, so a sweep sends each once */
#define RELEASE_ATTEMPTS 40 /* a release that allotd cannot take is left to SubmitHoldTTL */
#define WAITING_MAX 4096    /* jobs held for credit (StartRefusal=wait) awaiting their retry */

/* Slurm plugin state, as plugins get no context (STYLE §2 "Global state"). */
static prep_callbacks_t allot_callbacks; /* written once by prep_p_register_callbacks */
static pthread_mutex_t allot_mu = PTHREAD_MUTEX_INITIALIZER;
static plugin_conf_t allot_conf; /* valid when allot_pool != NULL */
static prep_pool_t *allot_pool;  /* NULL until allot.conf was read */
static time_t allot_conf_tried;  /* last attempt to read allot.conf */
static uint64_t allot_refused[REFUSED_MAX];
static unsigned allot_refused_next;
static uint64_t allot_unheld[REFUSED_MAX]; /* runs started fail-open, without a hold */
static unsigned allot_unheld_next;
/* The sweep thread (every second: jobs waiting for credit; HoldMode=submit: ended pending
 * jobs); its ring of queued tokens is its own. */
static pthread_cond_t allot_sweep_cv = PTHREAD_COND_INITIALIZER;
static pthread_t allot_sweeper;
static int allot_sweeper_started, allot_sweep_stop;
static int64_t allot_released[RELEASED_MAX];
static unsigned allot_released_next;
/* Jobs requeued and held for credit, released for another start at their due time. */
static struct {
    uint32_t job_id;
    time_t due;
} allot_waiting[WAITING_MAX];
/* Workers' calls to allotd pass it (breaker.h; its own mutex): after one timeout a hold
 * meets FailMode at once and settles wait, for PluginBreakerMs. */
static breaker_t allot_breaker = BREAKER_INITIALIZER;

static void copy_str(char *dst, size_t size, const char *src);

static uint64_t run_key(uint32_t job_id, int32_t run)
{
    return ((uint64_t)job_id << 32) | (uint32_t)run;
}

static void refused_add(uint32_t job_id, int32_t run)
{
    pthread_mutex_lock(&allot_mu);
    allot_refused[allot_refused_next++ % REFUSED_MAX] = run_key(job_id, run);
    pthread_mutex_unlock(&allot_mu);
}

static void unheld_add(uint32_t job_id, int32_t run)
{
    pthread_mutex_lock(&allot_mu);
    allot_unheld[allot_unheld_next++ % REFUSED_MAX] = run_key(job_id, run);
    pthread_mutex_unlock(&allot_mu);
}

/* Caller holds allot_mu. */
static int ring_has_locked(const uint64_t *ring, uint32_t job_id, int32_t run)
{
    uint64_t k = run_key(job_id, run);

    for (unsigned i = 0; i < REFUSED_MAX; i++)
        if (ring[i] == k)
            return 1;
    return 0;
}

/* ---- workers ----------------------------------------------------------------------- */

static void *worker_ctx_create(void *arg)
{
    struct allot_error err;
    allot_client_t *c = plugin_client_create(arg, &err);

    if (!c)
        error("prep/allot: no allotd client for this worker: %s", err.msg);
    return c;
}

static void worker_ctx_destroy(void *ctx, void *arg)
{
    (void)arg;
    allot_client_destroy(ctx);
}

static void item_free(void *item, void *arg)
{
    (void)arg;
    free(item);
}

/*
 * note_reason - keep WHY ("allot: ...") in JOB_PTR's AdminComment, after the words that were
 * there (a submit token) and instead of an earlier reason of ours: sacct keeps AdminComment
 * (22.05's slurmdbd records neither SystemComment nor the text of a reason), and only
 * administrators can set it.  Caller holds the job write lock.
 */
static void note_reason(job_record_t *job_ptr, const char *why)
{
    const char *old = job_ptr->admin_comment ? job_ptr->admin_comment : "";
    const char *ours = strstr(old, "allot: ");
    int keep = (int)(ours ? (size_t)(ours - old) : strlen(old));

    while (keep > 0 && old[keep - 1] == ' ')
        keep--;
    char *text = xstrdup_printf("%.*s%s%s", keep, old, keep ? " " : "", why);
    xfree(job_ptr->admin_comment);
    job_ptr->admin_comment = text;
}

/*
 * stop_job - cancel the job run whose hold could not be taken, with WHY as its reason.
 * Takes slurmctld's job write lock, as its own prolog callback does; never called with
 * allot_mu held.
 */
static void stop_job(const prep_job_t *j, const char *why)
{
    slurmctld_lock_t lk = {
        .conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .fed = READ_LOCK};
    job_record_t *job_ptr;
    int rc = SLURM_SUCCESS;

    refused_add(j->job_id, j->run); /* before the cancel: it runs our epilog */
    lock_slurmctld(lk);
    job_ptr = find_job_record(j->job_id);
    if (job_ptr && job_ptr->restart_cnt == j->run && !IS_JOB_FINISHED(job_ptr)) {
        job_ptr->state_reason = FAIL_ACCOUNT;
        xfree(job_ptr->state_desc);
        job_ptr->state_desc =
            xstrdup_printf("%s%s", strncmp(why, "allot: ", 7) ? "allot: " : "", why);
        note_reason(job_ptr, job_ptr->state_desc);
        srun_user_message(job_ptr, job_ptr->state_desc);
        rc = job_signal(job_ptr, SIGKILL, 0, 0, false);
    }
    unlock_slurmctld(lk);
    if (rc != SLURM_SUCCESS)
        error("prep/allot: JobId=%u could not be cancelled: %s", j->job_id, slurm_strerror(rc));
}

/* Remember JOB_ID for release at DUE (a job already there gets the new time); -1 when full. */
static int note_waiting(uint32_t job_id, time_t due)
{
    unsigned slot = WAITING_MAX;

    pthread_mutex_lock(&allot_mu);
    for (unsigned i = 0; i < WAITING_MAX; i++) {
        if (allot_waiting[i].job_id == job_id) {
            slot = i;
            break;
        }
        if (!allot_waiting[i].job_id && slot == WAITING_MAX)
            slot = i;
    }
    if (slot < WAITING_MAX) {
        allot_waiting[slot].job_id = job_id;
        allot_waiting[slot].due = due;
    }
    pthread_mutex_unlock(&allot_mu);
    return slot < WAITING_MAX ? 0 : -1;
}

/*
 * wait_job - requeue the job run whose hold the allocation cannot cover yet, hold it with WHY
 * as its reason and note it for release after RETRY_S.  0 when it waits (or is gone); -1
 * when Slurm cannot requeue it (not a batch job, --no-requeue): the caller cancels it.
 * Slurm's own requeue of a failed prolog runs in the same place (the prolog callback, job
 * write lock), before the prolog is reported done.
 */
static int wait_job(const prep_job_t *j, const char *why, int retry_s)
{
    slurmctld_lock_t lk = {
        .conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .fed = READ_LOCK};
    job_record_t *job_ptr;
    int rc = SLURM_SUCCESS;

    refused_add(j->job_id, j->run); /* before the requeue: it runs our epilog */
    lock_slurmctld(lk);
    job_ptr = find_job_record(j->job_id);
    if (job_ptr && job_ptr->restart_cnt == j->run && !IS_JOB_FINISHED(job_ptr)) {
        rc = job_requeue(0, j->job_id, NULL, false, 0);
        if (rc == SLURM_SUCCESS) {
            /* Held (priority 0, WAIT_HELD): the scheduler keeps the reason text of a held
             * job, while a begin time would replace it with "BeginTime". */
            job_ptr->priority = 0;
            job_ptr->state_reason = WAIT_HELD;
            xfree(job_ptr->state_desc);
            job_ptr->state_desc = xstrdup_printf("%s", why);
            note_reason(job_ptr, why);
            last_job_update = time(NULL);
        }
    }
    unlock_slurmctld(lk);
    if (rc != SLURM_SUCCESS) {
        info("prep/allot: JobId=%u run=%d cannot wait for credit (%s)", j->job_id, j->run,
             slurm_strerror(rc));
        return -1;
    }
    if (note_waiting(j->job_id, time(NULL) + retry_s) < 0)
        error("prep/allot: JobId=%u: %d jobs already wait for credit; this one stays held "
              "until an operator releases it (scontrol release)",
              j->job_id, WAITING_MAX);
    return 0;
}

/* Release one job held by wait_job for another start; 1 released or gone, 0 not yet. */
static int release_waiting(uint32_t job_id)
{
    slurmctld_lock_t lk = {
        .conf = READ_LOCK, .job = WRITE_LOCK, .node = READ_LOCK, .fed = READ_LOCK};
    job_record_t *job_ptr;
    int done = 1, released = 0;
    time_t now = time(NULL);

    lock_slurmctld(lk);
    job_ptr = find_job_record(job_id);
    if (job_ptr && IS_JOB_PENDING(job_ptr) && IS_JOB_COMPLETING(job_ptr)) {
        done = 0; /* its requeue finishes first (which sets a begin time of its own) */
    } else if (job_ptr && IS_JOB_PENDING(job_ptr) && job_ptr->priority == 0 &&
               job_ptr->state_reason == WAIT_HELD && job_ptr->state_desc &&
               !strncmp(job_ptr->state_desc, "allot: waiting", 14)) {
        /* Still held by us (an operator's hold or release since is theirs to keep). */
        job_ptr->direct_set_prio = 0;
        set_job_prio(job_ptr);
        job_ptr->state_reason = WAIT_NO_REASON;
        if (job_ptr->details && job_ptr->details->begin_time > now)
            job_ptr->details->begin_time = now; /* the requeue's credential delay has passed */
        last_job_update = now;
        released = 1;
    }
    unlock_slurmctld(lk);
    if (released) {
        info("prep/allot: JobId=%u released to try its start again", job_id);
        queue_job_scheduler();
    }
    return done;
}

static void release_waiting_due(void)
{
    uint32_t due[64];
    unsigned n = 0;
    time_t now = time(NULL);

    pthread_mutex_lock(&allot_mu);
    for (unsigned i = 0; i < WAITING_MAX && n < sizeof(due) / sizeof(due[0]); i++)
        if (allot_waiting[i].job_id && allot_waiting[i].due <= now) {
            due[n++] = allot_waiting[i].job_id;
            allot_waiting[i].job_id = 0;
        }
    pthread_mutex_unlock(&allot_mu); /* release_waiting takes slurmctld's locks */
    for (unsigned k = 0; k < n; k++)
        if (!release_waiting(due[k]))
            note_waiting(due[k], now + 1);
}

/* The hold of J was refused (RES): wait for credit or cancel (prep_refusal.h). */
static void refuse_start(const prep_job_t *j, const struct allot_job_result *res,
                         const plugin_conf_t *pc)
{
    char why[PREP_MSG_MAX + 256];
    enum prep_refusal_action a = prep_refusal_decide(pc->start_cancel, res);

    prep_refusal_reason(a, pc->start_retry_s, res, why, sizeof(why));
    if (a == PREP_REFUSAL_WAIT) {
        info("prep/allot: JobId=%u run=%d hold refused, requeued to wait for credit: %s", j->job_id,
             j->run, res->message);
        if (wait_job(j, why, pc->start_retry_s) == 0)
            return;
        snprintf(why, sizeof(why),
                 "allot: cancelled, a job that cannot be requeued cannot wait for credit: %s",
                 res->message);
    }
    info("prep/allot: JobId=%u run=%d hold refused, cancelling: %s", j->job_id, j->run,
         res->message);
    stop_job(j, why);
}

static int pool_push(void *item, void *arg);

/*
 * void_run - tell allotd, through the spool, that run J was cancelled before it started
 * without a hold allotd answered (FailMode=closed): allotd then records it as void and no
 * settle of it (the agent's sacct pass included) is ever charged.  WHY: the reason.
 */
static void void_run(const prep_job_t *j, const char *why)
{
    prep_job_t v = *j;
    struct allot_error err;

    v.kind = PREP_JOB_VOID;
    snprintf(v.reason, sizeof(v.reason), "%.*s", (int)sizeof(v.reason) - 1, why ? why : "");
    for (char *p = v.reason; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' '; /* one spool line */
    if (prep_job_spool_write(allot_conf.spool_dir, &v, &err) < 0)
        error("prep/allot: JobId=%u run=%d: void record not spooled (%s); sent from memory only",
              j->job_id, j->run, err.msg);
    pthread_mutex_lock(&allot_mu);
    int queued = allot_pool && prep_job_queue_copy(&v, prep_pool_now_ms(), pool_push, NULL) == 0;
    pthread_mutex_unlock(&allot_mu);
    if (!queued)
        error("prep/allot: JobId=%u run=%d: void record not queued; it waits in the spool",
              j->job_id, j->run);
}

/* Report a call the breaker let through (V); VERDICT and ERR are its outcome.  A call
 * that found allotd unavailable after the whole timeout is a hung allotd.  Logs each open
 * and close of the breaker once. */
static void breaker_done(enum breaker_verdict v, int64_t t0_ms, enum prep_job_verdict verdict,
                         const struct allot_error *err, const plugin_conf_t *pc)
{
    int64_t now = breaker_now_ms(), open_ms = 0;
    uint64_t skipped = 0, opens, total;
    int unavail = (verdict == PREP_JOB_RETRY || verdict == PREP_JOB_UNREACHABLE) &&
                  err->code == ALLOT_EUNAVAIL;
    int hung = unavail && now - t0_ms >= pc->timeout_ms * 9 / 10;
    enum breaker_event ev = breaker_leave(&allot_breaker, v, hung, now, &open_ms, &skipped);

    if (ev == BREAKER_NONE)
        return;
    breaker_counts(&allot_breaker, &opens, &total);
    if (ev == BREAKER_OPENED)
        error("prep/allot: circuit breaker open: allotd did not answer within %ld ms; holds "
              "meet FailMode=%s and settles wait, without asking allotd for %ld ms, then one "
              "request probes it (opened %llu time(s) since start)",
              pc->timeout_ms, pc->fail_open ? "open" : "closed", pc->breaker_ms,
              (unsigned long long)opens);
    else
        info("prep/allot: circuit breaker closed: allotd answers again after %lld ms; %llu "
             "request(s) decided without it meanwhile (%llu since start)",
             (long long)open_ms, (unsigned long long)skipped, (unsigned long long)total);
}

/* The breaker is open: fill ERR for the log and the job's reason. */
static void breaker_skipped(struct allot_error *err, const plugin_conf_t *pc)
{
    allot_errorf(err, ALLOT_EUNAVAIL,
                 "allotd did not answer within %ld ms lately; not asked again until "
                 "PluginBreakerMs (%ld ms) has passed",
                 pc->timeout_ms, pc->breaker_ms);
}

static void prolog_done(uint32_t job_id)
{
    if (allot_callbacks.prolog_slurmctld)
        allot_callbacks.prolog_slurmctld(SLURM_SUCCESS, job_id, false);
}

static enum prep_outcome handle_hold(prep_job_t *j, allot_client_t *c, int attempt, int64_t *due_ms,
                                     const plugin_conf_t *pc)
{
    struct allot_job_result res;
    struct allot_error err = {0};
    char why[PREP_MSG_MAX + 256];
    int64_t budget = 2 * pc->timeout_ms + 1000;
    enum prep_job_verdict v;

    int64_t t0 = breaker_now_ms();
    enum breaker_verdict bv = c ? breaker_enter(&allot_breaker, t0) : BREAKER_SKIP;
    memset(&res, 0, sizeof(res));
    if (!c) {
        v = PREP_JOB_UNREACHABLE;
        snprintf(err.msg, sizeof(err.msg), "no allotd client (see earlier error)");
    } else if (bv == BREAKER_SKIP) {
        v = PREP_JOB_UNREACHABLE;
        breaker_skipped(&err, pc);
    } else if (breaker_ready_gate(&allot_breaker, bv, c, &err) == BREAKER_SKIP) {
        v = PREP_JOB_UNREACHABLE; /* the probe found allotd not ready to write: FailMode */
    } else {
        v = prep_job_call(c, j, attempt, prep_pool_now_ms(), budget, due_ms, &res, &err);
        breaker_done(bv, t0, v, &err, pc);
    }
    switch (v) {
    case PREP_JOB_RETRY:
        return PREP_RETRY;
    case PREP_JOB_OK:
        if (res.refusal != ALLOT_OK) { /* allotd's EnforceMode=observe */
            info("prep/allot: observe: JobId=%u run=%d starts without a hold; enforcement "
                 "would cancel it: %s",
                 j->job_id, j->run, res.message);
            break;
        }
        info("prep/allot: JobId=%u run=%d held %lld SU-min on allocation %lld (%s)%s", j->job_id,
             j->run, (long long)res.hold_sumin, (long long)res.alloc_id, res.payer_account,
             j->submit_token ? " with its submit token" : "");
        break;
    case PREP_JOB_REFUSED:
        refuse_start(j, &res, pc);
        break;
    case PREP_JOB_UNREACHABLE:
    case PREP_JOB_FAILED:
        if (pc->fail_open) {
            info("prep/allot: fail-open: JobId=%u run=%d starts without a hold (allotd: %s); "
                 "its settle or the agent's sacct pass reconciles it",
                 j->job_id, j->run, err.msg);
            unheld_add(j->job_id, j->run);
        } else {
            error("prep/allot: fail-closed: JobId=%u run=%d cancelled, no hold (allotd: %s)",
                  j->job_id, j->run, err.msg);
            snprintf(why, sizeof(why),
                     "the allocation bank could not hold credit for this job (%s); "
                     "FailMode=closed, try again later",
                     err.msg);
            stop_job(j, why);
            void_run(j, err.msg);
        }
        break;
    }
    if (j->submit_token)
        prep_array_inflight_done(j->submit_token, j->job_id);
    prolog_done(j->job_id);
    return PREP_DONE;
}

static enum prep_outcome handle_settle(prep_job_t *j, allot_client_t *c, int attempt,
                                       int64_t *due_ms, const plugin_conf_t *pc)
{
    struct allot_job_result res;
    struct allot_error err = {0};
    enum prep_job_verdict v;

    int64_t t0 = breaker_now_ms();
    enum breaker_verdict bv = c ? breaker_enter(&allot_breaker, t0) : BREAKER_SKIP;
    struct allot_error rerr = {0};
    bv = breaker_ready_gate(&allot_breaker, bv, c, &rerr); /* not ready: wait as if open */
    if (bv == BREAKER_SKIP) {
        *due_ms = prep_pool_now_ms() + (c ? 1000 : 5000);
        return PREP_RETRY;
    }
    v = prep_job_call(c, j, attempt, prep_pool_now_ms(), 0, due_ms, &res, &err);
    breaker_done(bv, t0, v, &err, pc);
    if (v == PREP_JOB_RETRY) {
        if (attempt == 0 || attempt % 20 == 0)
            info("prep/allot: JobId=%u run=%d settle waits for allotd (attempt %d): %s", j->job_id,
                 j->run, attempt + 1, err.msg);
        return PREP_RETRY;
    }
    char kept[4096 + 16];
    struct allot_error serr = {0};
    int spool_rc = prep_job_settle_done(pc->spool_dir, j, v, kept, sizeof(kept), &serr);
    if (v == PREP_JOB_OK && j->kind == PREP_JOB_VOID)
        info("prep/allot: JobId=%u run=%d recorded in allotd as cancelled before start (%s)%s",
             j->job_id, j->run, res.message, res.replay ? " (replay)" : "");
    else if (v == PREP_JOB_OK)
        info("prep/allot: JobId=%u run=%d settled %s: charge %lld SU-min%s", j->job_id, j->run,
             j->state, (long long)res.charge_sumin, res.replay ? " (replay)" : "");
    else
        error("prep/allot: JobId=%u run=%d settle rejected by allotd: %s; its record is kept "
              "in %s: once the cause is fixed settle it by hand (allot job settle), or leave "
              "it to the agent's sacct reconciliation",
              j->job_id, j->run, v == PREP_JOB_REFUSED ? res.message : err.msg,
              spool_rc == 0 ? kept : "slurmctld's log only (see the next error)");
    if (spool_rc < 0)
        error("prep/allot: %s", serr.msg);
    if (v == PREP_JOB_OK && j->submit_token && j->billing_micro && !j->array_job_id) {
        /* Started fail-open, so its provisional hold was never moved: free it now (one try;
         * SubmitHoldTTL is the backstop).  An array task's share is the sweep's: the rest
         * of the hold belongs to the other tasks (prep_array.h). */
        prep_job_t r = *j;
        r.kind = PREP_JOB_RELEASE;
        if (prep_job_call(c, &r, 0, prep_pool_now_ms(), 0, due_ms, &res, &err) != PREP_JOB_OK)
            info("prep/allot: JobId=%u submit token %lld not released now (%s); "
                 "SubmitHoldTTL releases it",
                 j->job_id, (long long)j->submit_token, err.msg);
    }
    return PREP_DONE;
}

static enum prep_outcome handle_release(prep_job_t *j, allot_client_t *c, int attempt,
                                        int64_t *due_ms)
{
    struct allot_job_result res;
    struct allot_error err = {0};
    enum prep_job_verdict v;

    if (!c) {
        *due_ms = prep_pool_now_ms() + 5000;
        return attempt < RELEASE_ATTEMPTS ? PREP_RETRY : PREP_DONE;
    }
    v = prep_job_call(c, j, attempt, prep_pool_now_ms(), 0, due_ms, &res, &err);
    if (v == PREP_JOB_RETRY && attempt + 1 < RELEASE_ATTEMPTS)
        return PREP_RETRY;
    if (v == PREP_JOB_OK && !j->job_id)
        info("prep/allot: job array of submit hold %lld: %d task(s) may still start, the "
             "rest of its hold released%s",
             (long long)j->submit_token, (int)j->keep_tasks, res.replay ? " (already)" : "");
    else if (v == PREP_JOB_OK)
        info("prep/allot: JobId=%u ended without starting: submit hold %lld released%s", j->job_id,
             (long long)j->submit_token, res.replay ? " (already)" : "");
    else
        error("prep/allot: JobId=%u submit hold %lld not released (%s); SubmitHoldTTL "
              "releases it",
              j->job_id, (long long)j->submit_token, err.msg);
    return PREP_DONE;
}

static enum prep_outcome worker_handle(void *item, void *ctx, int attempt, int64_t *due_ms,
                                       void *arg)
{
    prep_job_t *j = item;

    if (j->kind == PREP_JOB_HOLD)
        return handle_hold(j, ctx, attempt, due_ms, arg);
    if (j->kind == PREP_JOB_RELEASE)
        return handle_release(j, ctx, attempt, due_ms);
    return handle_settle(j, ctx, attempt, due_ms, arg);
}

/* A hold is urgent: its job waits in the prolog until the hold is answered. */
static int worker_urgent(const void *item, void *arg)
{
    (void)arg;
    return ((const prep_job_t *)item)->kind == PREP_JOB_HOLD;
}

/* ---- jobs that ended while pending (HoldMode=submit) -------------------------------- */

static int released_has(int64_t token)
{
    for (unsigned i = 0; i < RELEASED_MAX; i++)
        if (allot_released[i] == token)
            return 1;
    return 0;
}

/* One pass: find candidates under the job read lock, queue their releases after it. */
static void sweep_pending_once(void)
{
    slurmctld_lock_t lk = {.job = READ_LOCK};
    struct {
        uint32_t job_id;
        int64_t token;
        int32_t keep_tasks; /* a job array's: the shares its tasks still need */
    } found[SWEEP_BATCH_MAX];
    static prep_array_pass_t pass; /* the sweep thread's own; too large for its stack */
    prep_array_count_t arrays[PREP_ARRAY_PASS_MAX];
    int n = 0;

    if (!&job_list)
        return;
    pass.n = 0;
    lock_slurmctld(lk);
    allot_list_iter_t it = list_iterator_create(job_list);
    job_record_t *job_ptr;
    while (n < SWEEP_BATCH_MAX && (job_ptr = list_next(it))) {
        int64_t token;
        /* Resources once allocated means the prolog ran and bound the token; a release
         * would only be a harmless replay, so skip those. */
        if (job_ptr->array_job_id && job_ptr->admin_comment &&
            submit_token_parse(job_ptr->admin_comment, &token) == 1) {
            /* A job array: count its tasks that may still start (prep_array.h). */
            uint32_t pending = !IS_JOB_PENDING(job_ptr) ? 0
                               : job_ptr->array_recs    ? job_ptr->array_recs->task_cnt
                                                        : 1;
            (void)prep_array_pass_add(&pass, token, pending);
            continue;
        }
        if (!IS_JOB_FINISHED(job_ptr) || !job_ptr->admin_comment ||
            (job_ptr->tres_alloc_str && job_ptr->tres_alloc_str[0]) ||
            submit_token_parse(job_ptr->admin_comment, &token) != 1 || released_has(token))
            continue;
        found[n].job_id = job_ptr->job_id;
        found[n].token = token;
        found[n].keep_tasks = 0;
        n++;
    }
    list_iterator_destroy(it);
    unlock_slurmctld(lk);
    int na = prep_array_decide(&pass, arrays, PREP_ARRAY_PASS_MAX);
    for (int i = 0; i < na && n < SWEEP_BATCH_MAX; i++) {
        found[n].job_id = 0;
        found[n].token = arrays[i].token;
        found[n].keep_tasks = (int32_t)arrays[i].may_start;
        n++;
    }

    for (int i = 0; i < n; i++) {
        prep_job_t *j = calloc(1, sizeof(*j));
        if (!j)
            return; /* the next pass finds it again */
        j->kind = PREP_JOB_RELEASE;
        copy_str(j->cluster, sizeof(j->cluster), slurm_conf.cluster_name);
        j->job_id = found[i].job_id;
        j->submit_token = found[i].token;
        j->keep_tasks = found[i].keep_tasks;
        j->enqueued_ms = prep_pool_now_ms();
        pthread_mutex_lock(&allot_mu);
        int pushed = allot_pool && prep_pool_push(allot_pool, j) == 0;
        pthread_mutex_unlock(&allot_mu);
        if (!pushed) {
            free(j);
            return;
        }
        if (!found[i].job_id) /* an array's: prep_array.c remembers what it sent */
            continue;
        allot_released[allot_released_next++ % RELEASED_MAX] = found[i].token;
    }
}

static int start_locked(void);

static void *sweep_thread(void *arg)
{
    unsigned ticks = 0;
    (void)arg;
    pthread_mutex_lock(&allot_mu);
    while (!allot_sweep_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1; /* jobs waiting for credit are released to the second */
        pthread_cond_timedwait(&allot_sweep_cv, &allot_mu, &ts);
        if (allot_sweep_stop)
            break;
        /* allot.conf may appear after slurmctld started, before any job starts (which
         * would read it): each pass looks for it; ended pending jobs are swept only with
         * HoldMode=submit, every SWEEP_PENDING_S. */
        int running = start_locked() == 0;
        int pending = running && allot_conf.hold_at_submit && ++ticks % SWEEP_PENDING_S == 0;
        pthread_mutex_unlock(&allot_mu);
        release_waiting_due();
        if (pending)
            sweep_pending_once();
        pthread_mutex_lock(&allot_mu);
    }
    pthread_mutex_unlock(&allot_mu);
    return NULL;
}

/* ---- start-up ---------------------------------------------------------------------- */

static int pool_push(void *item, void *arg)
{
    (void)arg;
    return prep_pool_push(allot_pool, item);
}

/* Workers already run: the copy must be whole before it is queued (prep_job_queue_copy). */
static void requeue_spooled(const prep_job_t *job, void *arg)
{
    (void)arg;
    if (prep_job_queue_copy(job, prep_pool_now_ms(), pool_push, NULL) < 0)
        error("prep/allot: JobId=%u run=%d: spooled settle not queued (out of memory); it "
              "stays in the spool for the next start",
              job->job_id, job->run);
}

static void spool_bad(const char *path, const struct allot_error *why, void *arg)
{
    (void)arg;
    error("prep/allot: spool file %s: %s", path, why->msg);
}

/* Read allot.conf and start the pool, once; caller holds allot_mu.  0 when running. */
static int start_locked(void)
{
    struct allot_error err;
    prep_pool_ops_t ops = {.ctx_create = worker_ctx_create,
                           .ctx_destroy = worker_ctx_destroy,
                           .handle = worker_handle,
                           .item_free = item_free,
                           .arg = &allot_conf,
                           .urgent = worker_urgent};
    time_t now = time(NULL);

    if (allot_pool)
        return 0;
    if (allot_conf_tried && now - allot_conf_tried < CONF_RETRY_S)
        return -1;
    allot_conf_tried = now;
    if (plugin_conf_load(NULL, &allot_conf, &err) < 0) {
        error("prep/allot: inactive until allot.conf can be read: %s", err.msg);
        return -1;
    }
    breaker_init(&allot_breaker, allot_conf.breaker_ms, 2 * (int64_t)allot_conf.timeout_ms + 1000);
    allot_pool = prep_pool_create(allot_conf.min_threads, allot_conf.max_threads, GROW_AFTER_MS,
                                  IDLE_EXIT_MS, &ops);
    if (!allot_pool) {
        error("prep/allot: cannot start the worker pool");
        return -1;
    }
    info("prep/allot: allotd %s (auth %s), FailMode=%s, HoldMode=%s, StartRefusal=%s "
         "(retry %d s), workers %d..%d, spool %s",
         allot_conf.url, allot_conf.peer_auth ? "peer" : "munge",
         allot_conf.fail_open ? "open" : "closed", allot_conf.hold_at_submit ? "submit" : "start",
         allot_conf.start_cancel ? "cancel" : "wait", allot_conf.start_retry_s,
         allot_conf.min_threads, allot_conf.max_threads, allot_conf.spool_dir);
    int n = prep_job_spool_scan(allot_conf.spool_dir, requeue_spooled, spool_bad, NULL, &err);
    if (n < 0)
        error("prep/allot: spool: %s", err.msg);
    else if (n > 0)
        info("prep/allot: re-queued %d pending settle(s) from %s", n, allot_conf.spool_dir);
    return 0;
}

ALLOT_PLUGIN_EXPORT int init(void)
{
    info("prep/allot: loaded in %s, built for Slurm %s",
         running_in_slurmctld() ? "slurmctld" : "slurmd", SLURM_VERSION_STRING);
    if (running_in_slurmctld()) {
        pthread_mutex_lock(&allot_mu);
        (void)start_locked();
        allot_sweep_stop = 0;
        if (pthread_create(&allot_sweeper, NULL, sweep_thread, NULL) == 0)
            allot_sweeper_started = 1;
        else
            error("prep/allot: no sweep thread: jobs held for credit stay held until an "
                  "operator releases them, submit holds of jobs cancelled while pending wait "
                  "for SubmitHoldTTL");
        pthread_mutex_unlock(&allot_mu);
    }
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT void fini(void)
{
    pthread_mutex_lock(&allot_mu);
    allot_sweep_stop = 1;
    pthread_cond_broadcast(&allot_sweep_cv);
    int sweeper = allot_sweeper_started;
    allot_sweeper_started = 0;
    pthread_mutex_unlock(&allot_mu);
    if (sweeper)
        pthread_join(allot_sweeper, NULL);
    pthread_mutex_lock(&allot_mu);
    prep_pool_t *p = allot_pool;
    allot_pool = NULL;
    pthread_mutex_unlock(&allot_mu);
    /* Settles still queued stay in the spool; holds in hand are bounded by their budget. */
    int left = prep_pool_destroy(p, (int)(2 * allot_conf.timeout_ms + 2000));
    if (left)
        error("prep/allot: %d worker(s) still busy at unload", left);
    info("prep/allot: unloaded");
}

ALLOT_PLUGIN_EXPORT void prep_p_register_callbacks(prep_callbacks_t *callbacks)
{
    allot_callbacks = *callbacks;
    if (!allot_callbacks.prolog_slurmctld || !allot_callbacks.epilog_slurmctld)
        error("prep/allot: slurmctld gave no prolog/epilog callback");
}

/* slurmd side: allot does nothing on the compute node. */
ALLOT_PLUGIN_EXPORT int prep_p_prolog(job_env_t *job_env, slurm_cred_t *cred)
{
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT int prep_p_epilog(job_env_t *job_env, slurm_cred_t *cred)
{
    return SLURM_SUCCESS;
}

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* The run JOB_PTR's epilog ends (prep_job_epilog_run); caller holds the job lock. */
static int32_t epilog_run(const job_record_t *job_ptr)
{
    return prep_job_epilog_run(job_ptr->restart_cnt, IS_JOB_PENDING(job_ptr));
}

/*
 * The run's exact billing under its partition's TRESBillingWeights as slurmctld holds them
 * now (slurm_price.h), over its allocated TRES: the price Slurm's configuration says,
 * whatever allotd's copy of the partition holds.  0 (allotd prices with its copy) when
 * they cannot be read, which is logged.  Caller holds the job lock.
 */
static int64_t slurm_billing(const job_record_t *job_ptr)
{
    struct allot_error err;
    int64_t b = 0;
    const char *w = job_ptr->part_ptr ? job_ptr->part_ptr->billing_weights_str : NULL;

    if (!job_ptr->tres_fmt_alloc_str)
        return 0;
    if (slurm_price_billing(w, (slurm_conf.priority_flags & PRIORITY_FLAGS_MAX_TRES) != 0,
                            job_ptr->tres_fmt_alloc_str, &b, &err) < 0) {
        error("prep/allot: JobId=%u: priced with allotd's copy of partition %s: %s",
              job_ptr->job_id, job_ptr->partition ? job_ptr->partition : "", err.msg);
        return 0;
    }
    return b;
}

/* Fill J from JOB_PTR (caller holds slurmctld's job lock). */
static void job_copy(const job_record_t *job_ptr, enum prep_job_kind kind, prep_job_t *j)
{
    memset(j, 0, sizeof(*j));
    j->kind = kind;
    copy_str(j->cluster, sizeof(j->cluster), slurm_conf.cluster_name);
    j->job_id = job_ptr->job_id;
    j->run = job_ptr->restart_cnt;
    copy_str(j->user, sizeof(j->user), job_ptr->user_name);
    if (!j->user[0]) {
        /* 22.05 leaves user_name unset on most jobs: the name job_submit/allot admitted
         * the job under (getpwuid), so a submit hold binds to the same user. */
        struct passwd pw, *res = NULL;
        char tmp[4096];
        if (getpwuid_r(job_ptr->user_id, &pw, tmp, sizeof(tmp), &res) == 0 && res)
            copy_str(j->user, sizeof(j->user), pw.pw_name);
        else
            snprintf(j->user, sizeof(j->user), "%u", job_ptr->user_id);
    }
    copy_str(j->account, sizeof(j->account), job_ptr->account);
    copy_str(j->partition, sizeof(j->partition),
             job_ptr->part_ptr ? job_ptr->part_ptr->name : job_ptr->partition);
    copy_str(j->qos, sizeof(j->qos), job_ptr->qos_ptr ? job_ptr->qos_ptr->name : NULL);
    j->submit_s = job_ptr->details ? job_ptr->details->submit_time : 0;
    j->start_s = job_ptr->start_time;
    j->end_s = job_ptr->end_time;
    /* An unlimited job is priced at its partition's MaxTime by job_submit; here INFINITE
     * can only come from an operator's change: price a year, allotd refuses what it must. */
    j->time_limit_s = (job_ptr->time_limit == INFINITE || job_ptr->time_limit == NO_VAL)
                          ? 365 * 24 * 3600
                          : (int64_t)job_ptr->time_limit * 60;
    if (prep_job_tres_copy(j->alloc_tres, sizeof(j->alloc_tres), job_ptr->tres_fmt_alloc_str))
        error("prep/allot: JobId=%u: AllocTRES is longer than %zu characters; recorded up to "
              "its last whole entry that fits: \"%s\"",
              job_ptr->job_id, sizeof(j->alloc_tres) - 1, j->alloc_tres);
    /* Only job_submit/allot writes the word (users cannot set AdminComment); a malformed
     * or doubled one binds nothing: the hold is then an ordinary one. */
    if (job_ptr->array_task_id != NO_VAL) { /* a task, or the meta record run last */
        j->array_job_id = job_ptr->array_job_id;
        j->array_task_id = job_ptr->array_task_id;
    }
    if (job_ptr->het_job_id && job_ptr->het_job_offset != NO_VAL) {
        j->het_job_id = job_ptr->het_job_id;
        j->het_job_offset = job_ptr->het_job_offset;
    }
    if (submit_token_parse(job_ptr->admin_comment, &j->submit_token) < 0) {
        error("prep/allot: JobId=%u: malformed submit token in AdminComment \"%s\" ignored",
              job_ptr->job_id, job_ptr->admin_comment);
        j->submit_token = 0;
    }
    if (kind == PREP_JOB_HOLD)
        j->billing_micro = slurm_billing(job_ptr);
    if (kind == PREP_JOB_SETTLE) {
        j->elapsed_s = prep_job_elapsed(job_ptr->start_time, job_ptr->end_time,
                                        job_ptr->suspend_time, job_ptr->pre_sus_time);
        /* A requeue counts the next run before this epilog: settle the run that was held. */
        j->run = epilog_run(job_ptr);
        copy_str(j->state, sizeof(j->state),
                 prep_job_epilog_state(job_state_string(job_ptr->job_state & JOB_STATE_BASE),
                                       IS_JOB_PENDING(job_ptr),
                                       (job_ptr->job_state & JOB_REQUEUE) != 0));
    }
    j->enqueued_ms = prep_pool_now_ms();
}

ALLOT_PLUGIN_EXPORT int prep_p_prolog_slurmctld(job_record_t *job_ptr, bool *async)
{
    prep_job_t *j;

    *async = false;
    info("prep/allot: prolog JobId=%u account=%s", job_ptr->job_id,
         job_ptr->account ? job_ptr->account : "");
    pthread_mutex_lock(&allot_mu);
    int running = start_locked() == 0;
    pthread_mutex_unlock(&allot_mu);
    if (!running)
        return SLURM_SUCCESS;
    j = malloc(sizeof(*j));
    if (!j) {
        error("prep/allot: JobId=%u: out of memory, starts without a hold", job_ptr->job_id);
        return SLURM_SUCCESS;
    }
    job_copy(job_ptr, PREP_JOB_HOLD, j);
    if (j->submit_token && job_ptr->array_job_id) /* its share is taken by this hold */
        prep_array_inflight_add(j->submit_token, j->job_id);
    /* The worker's callback needs the job lock we hold: it cannot overtake our return. */
    if (prep_pool_push(allot_pool, j) < 0) {
        if (j->submit_token)
            prep_array_inflight_done(j->submit_token, j->job_id);
        free(j);
        error("prep/allot: JobId=%u: queue refused, starts without a hold", job_ptr->job_id);
        return SLURM_SUCCESS;
    }
    *async = true;
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT int prep_p_epilog_slurmctld(job_record_t *job_ptr, bool *async)
{
    struct allot_error err;
    prep_job_t *j;

    *async = false; /* the settle is ours to finish: the job's nodes need not wait */
    info("prep/allot: epilog JobId=%u account=%s", job_ptr->job_id,
         job_ptr->account ? job_ptr->account : "");
    pthread_mutex_lock(&allot_mu);
    int running = start_locked() == 0;
    int refused = ring_has_locked(allot_refused, job_ptr->job_id, epilog_run(job_ptr));
    int unheld = ring_has_locked(allot_unheld, job_ptr->job_id, epilog_run(job_ptr));
    pthread_mutex_unlock(&allot_mu);
    if (!running || refused)
        return SLURM_SUCCESS;
    j = malloc(sizeof(*j));
    if (!j) {
        error("prep/allot: JobId=%u: out of memory, settle left to the agent", job_ptr->job_id);
        return SLURM_SUCCESS;
    }
    job_copy(job_ptr, PREP_JOB_SETTLE, j);
    if (unheld) {
        j->billing_micro = slurm_billing(job_ptr);
        if (!j->billing_micro && job_ptr->billable_tres > 0 && job_ptr->billable_tres < 1e12)
            j->billing_micro = (int64_t)(job_ptr->billable_tres * 1e6 + 0.5);
    }
    if (prep_job_spool_write(allot_conf.spool_dir, j, &err) < 0)
        error("prep/allot: JobId=%u run=%d: settle not safely spooled, sent from memory only "
              "(lost if slurmctld stops before allotd takes it; check PrEpSpoolDir's disk): %s",
              j->job_id, j->run, err.msg);
    if (prep_pool_push(allot_pool, j) < 0) {
        free(j);
        error("prep/allot: JobId=%u: queue refused the settle; it waits in the spool",
              job_ptr->job_id);
    }
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT void prep_p_required(prep_call_type_t type, bool *required)
{
    *required =
        running_in_slurmctld() && (type == PREP_PROLOG_SLURMCTLD || type == PREP_EPILOG_SLURMCTLD);
}
