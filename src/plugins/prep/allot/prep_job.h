/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_job.h - one job's hold or settle request as prep/allot queues it, its spool file,
 * and the call to allotd that carries it out.
 *
 * Design: the Slurm shim (prep_allot.c) copies what it needs out of job_record_t into a
 * prep_job_t (fixed buffers, no pointers into slurmctld), so workers never touch Slurm's
 * data without its locks.  A settle is written to the spool directory before the epilog
 * returns (one small file per job run, written to a temporary name, synced and renamed, so
 * neither a reader nor a crash of the machine leaves half a file) and removed once allotd
 * acknowledged it (kept as .rejected when allotd refused it for good): settles pending
 * when slurmctld stops or dies are read back by the next start.  allotd's settle is
 * idempotent per (cluster, job, run), so sending one twice is harmless.
 * prep_job_call decides what an outcome means: a refusal is final, an unreachable allotd
 * is retried with backoff (settles forever, holds within a budget), other errors are final.
 * Spool files carry the submit token and the array / het ids as optional lines (files
 * written before them read as 0, none), and a void record the lines "kind=void" and
 * "reason=".
 * No Slurm headers: unit-tested without slurmctld.
 * Threads: functions are reentrant; a prep_job_t belongs to one thread at a time.
 */
#ifndef ALLOT_PLUGINS_PREP_ALLOT_PREP_JOB_H
#define ALLOT_PLUGINS_PREP_ALLOT_PREP_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "allot/allot.h"

/* RELEASE: the provisional hold of a job that ended without starting (HoldMode=submit).
 * VOID: a run prep/allot cancelled at start because allotd did not answer its hold
 * (FailMode=closed): allotd records it so that no settle of it is ever charged.  A void
 * is spooled and retried like a settle, under the same file name (its run's epilog
 * settles nothing: the plugin cancelled it). */
enum prep_job_kind { PREP_JOB_HOLD = 0, PREP_JOB_SETTLE, PREP_JOB_RELEASE, PREP_JOB_VOID };

#define PREP_NAME_MAX 64
#define PREP_TRES_MAX 512
#define PREP_MSG_MAX 1024
#define PREP_REASON_MAX 256

typedef struct prep_job {
    enum prep_job_kind kind;
    char cluster[PREP_NAME_MAX];
    uint32_t job_id;
    int32_t run; /* Slurm's restart_cnt: a requeue is a new run */
    char user[PREP_NAME_MAX];
    char account[PREP_NAME_MAX];
    char partition[PREP_NAME_MAX];
    char qos[PREP_NAME_MAX];
    int64_t submit_s, start_s, end_s; /* UTC epoch seconds; 0 = unknown */
    int64_t time_limit_s;             /* > 0 */
    int64_t elapsed_s;                /* settle: sacct's ElapsedRaw (prep_job_elapsed) */
    char alloc_tres[PREP_TRES_MAX];   /* "cpu=2,mem=200M,node=1,billing=2" */
    char state[PREP_NAME_MAX];        /* settle: "COMPLETED", "NODE_FAIL", ... */
    int64_t billing_micro;            /* hold: the run's billing under Slurm's own partition weights
                                       * (slurm_price.h; 0: allotd prices with its copy); settle of a
                                       * run started without a hold (fail-open): the same, as allotd
                                       * has no hold to take it from; other settles: 0 */
    int64_t submit_token;             /* HoldMode=submit: the job's "allot_token=" from AdminComment
                                       * (hold: bind it; release: the provisional run); 0 = none */
    uint32_t array_job_id, array_task_id; /* a job array's task (Slurm prints J_T); 0: none */
    uint32_t het_job_id, het_job_offset;  /* a het job's component (J+C); het_job_id 0: none */
    int32_t keep_tasks;           /* release: a job array keeps this many tasks' shares of its
                                   * submit hold (prep_array.h); 0 = release all */
    char reason[PREP_REASON_MAX]; /* void: why the run was cancelled (no newline) */
    int64_t enqueued_ms;          /* prep_pool_now_ms() at enqueue, for the hold budget */
} prep_job_t;

/* Result of prep_job_call. */
enum prep_job_verdict {
    PREP_JOB_OK = 0,      /* held / settled / released */
    PREP_JOB_REFUSED,     /* hold refused by the bank: message in res->message */
    PREP_JOB_RETRY,       /* allotd unreachable or transient: try again at *due_ms */
    PREP_JOB_UNREACHABLE, /* hold: allotd did not answer within the budget: fail mode */
    PREP_JOB_FAILED,      /* allotd rejected the request for good (err says why) */
};

/*
 * prep_job_call - send JOB's hold, settle or release to allotd through C (attempt ATTEMPT,
 * 0-based). NOW_MS and BUDGET_MS bound a hold: after BUDGET_MS since job->enqueued_ms an
 * unreachable allotd gives PREP_JOB_UNREACHABLE instead of RETRY.  RES and ERR receive allotd's
 * answer. On RETRY, *due_ms is when to try again (backoff 100 ms doubling to 5 s).  A release
 * retries like a settle; the caller bounds its attempts (SubmitHoldTTL is the backstop).
 */
enum prep_job_verdict prep_job_call(allot_client_t *c, const prep_job_t *job, int attempt,
                                    int64_t now_ms, int64_t budget_ms, int64_t *due_ms,
                                    struct allot_job_result *res, struct allot_error *err);

/* Copy Slurm's TRES string SRC ("cpu=2,mem=200M,...") into DST of SIZE bytes: whole, or,
 * when it does not fit, up to the last whole entry that does (never a cut entry such as
 * "mem=4000" of "mem=4000M").  1 when entries were left out, else 0. */
int prep_job_tres_copy(char *dst, size_t size, const char *src);

/* Spool file name of JOB ("settle.<job>.<run>") into BUF; -1 if it does not fit. */
int prep_job_spool_name(const prep_job_t *job, char *buf, size_t size);

/*
 * prep_job_spool_write - write JOB into DIR (created if missing, mode 0700) as its spool
 * file, atomically (temporary name, then rename).  0, or -1 with ERR (EIO).
 */
int prep_job_spool_write(const char *dir, const prep_job_t *job, struct allot_error *err);

/* Remove JOB's spool file; a missing file is not an error.  0 or -1 with ERR. */
int prep_job_spool_remove(const char *dir, const prep_job_t *job, struct allot_error *err);

/*
 * prep_job_settle_done - what becomes of a settle's spool file once allotd answered for
 * good (V, from prep_job_call; never RETRY): acknowledged (PREP_JOB_OK), it is removed;
 * rejected (REFUSED, FAILED: a 403 while slurmctld's user is not yet an Operator, a 409 of
 * a reused job id, a 500), it is renamed "<name>.rejected", which no start re-queues, so
 * the record an operator needs to settle the run by hand is not lost with the request.
 * KEPT (size KEPT_SIZE, may be NULL) receives the kept file's path, "" when removed.
 * 0, or -1 with ERR (the file was not in the spool, or could not be renamed or removed).
 */
int prep_job_settle_done(const char *dir, const prep_job_t *job, enum prep_job_verdict v,
                         char *kept, size_t kept_size, struct allot_error *err);

/*
 * prep_job_spool_read - parse spool file PATH into *OUT.  0, or -1 with ERR (EIO, EINVAL
 * naming the line) and *OUT untouched.
 */
int prep_job_spool_read(const char *path, prep_job_t *out, struct allot_error *err);

/*
 * prep_job_spool_scan - call CB for each spool file in DIR (in name order) with the job
 * read from it (".rejected" files are skipped: prep_job_settle_done); unreadable files are
 * renamed "<name>.bad", and temporaries of writes that a crash cut short (".settle.*", a
 * minute old) are removed, each reported through BAD_CB (may be NULL).  Returns the number of jobs
 * passed to CB, or -1 with ERR when DIR cannot be read (a missing DIR is 0 jobs).
 */
typedef void (*prep_job_scan_f)(const prep_job_t *job, void *arg);
typedef void (*prep_job_bad_f)(const char *path, const struct allot_error *why, void *arg);
int prep_job_spool_scan(const char *dir, prep_job_scan_f cb, prep_job_bad_f bad_cb, void *arg,
                        struct allot_error *err);

/*
 * prep_job_epilog_run - the run an epilog settles.  Slurm 22.05 calls the slurmctld epilog
 * of a run after it ended, and usually counts the next run (restart_cnt++) afterwards; but
 * a requeue (scontrol requeue, preemption with PreemptMode=REQUEUE: _job_requeue_op) and a
 * batch launch that failed (_job_complete with requeue) count it first and leave the job
 * PENDING while its nodes are deallocated, which is what calls the epilog (job_mgr.c).
 * The hold was taken under the old count, so that is the run to settle.  RESTART_CNT is
 * job_ptr->restart_cnt; PENDING: the job's base state is JOB_PENDING.
 */
int32_t prep_job_epilog_run(uint32_t restart_cnt, int pending);

/*
 * prep_job_epilog_state - the state an epilog settles under: BASE (job_state_string of the
 * base state) for a run that ended, or, for a job already PENDING again (see above), what
 * Slurm's accounting recorded for the run: "REQUEUED" when the JOB_REQUEUE flag is set (a
 * requeue), else "NODE_FAIL" (a batch launch that failed: free, as in sacct).  Static or BASE.
 */
const char *prep_job_epilog_state(const char *base, int pending, int requeue_flag);

/*
 * prep_job_elapsed - a run's elapsed time as Slurm's accounting records it (sacct's
 * ElapsedRaw), from job_record_t's START_TIME, END_TIME, SUSPEND_TIME and PRE_SUS_TIME
 * (epoch seconds; suspend_time 0 = never suspended).  slurmdbd stores end - start -
 * time_suspended, where time_suspended sums the suspend-to-resume intervals
 * (as_mysql_suspend); slurmctld's tot_sus_time is no substitute, as 22.05 also counts a
 * job's configuring time (prolog, node boot) in it (_job_time_limit_incr).  pre_sus_time
 * is the run time up to the last suspend, and suspend_time the last suspend or resume: a
 * job that ended running adds end - suspend_time (its last resume); one killed while
 * suspended ends at suspend_time (job_signal), adding 0, as slurmdbd counts it.
 * 0 when START_TIME is 0 (never started); never negative.
 */
int64_t prep_job_elapsed(int64_t start_time, int64_t end_time, int64_t suspend_time,
                         int64_t pre_sus_time);

/*
 * prep_job_queue_copy - queue a heap copy of JOB (enqueued_ms set to NOW_MS) through PUSH
 * (prep_pool_push: it takes ownership on 0).  The copy is complete before PUSH runs, as a
 * worker may take it the moment it is queued.  0, or -1 (no memory, or PUSH refused: the
 * copy is freed, JOB stays the caller's).
 */
typedef int (*prep_job_push_f)(void *item, void *arg);
int prep_job_queue_copy(const prep_job_t *job, int64_t now_ms, prep_job_push_f push, void *arg);

/* Fill DESC (borrowing JOB's strings) for the liballot job verbs. */
void prep_job_desc(const prep_job_t *job, struct allot_job_desc *desc);

#endif
