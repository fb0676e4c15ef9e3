/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_array.h - giving back the submit-hold shares of job array tasks cancelled while
 * pending (HoldMode=submit, doc/slurm.md "Hold at submit").
 *
 * Why: a job array's submit hold covers all its tasks, and each task's start takes one
 * share (allotd's bind).  Slurm 22.05 cancels pending tasks without a record of their own:
 * `scancel J_T` on tasks still in the array's meta record clears their bits and lowers
 * array_recs->task_cnt (job_mgr.c job_str_signal), and no epilog runs.  So prep/allot's
 * sweep counts, per submit token, the tasks that may still start: the meta record's
 * task_cnt while it is pending, each task record split off and still pending, and each
 * task whose start is being bound right now (its prolog's hold sent, not answered: its
 * task is no longer pending but its share not yet taken).  allotd is asked to keep that
 * many shares (an absolute number: a repeat changes nothing, a bind racing it cannot lose
 * a share) whenever the count falls below the last one; at 0 the rest is released.
 * The first count of a token is sent too (tasks may have been cancelled before a sweep
 * saw the array, or while this plugin was down): one request per array.
 * No Slurm headers: unit-tested without slurmctld.
 * Threads: the in-flight table has its own mutex (prolog and workers); a pass and
 * prep_array_decide belong to the sweep thread.
 */
#ifndef ALLOT_PLUGINS_PREP_ALLOT_PREP_ARRAY_H
#define ALLOT_PLUGINS_PREP_ALLOT_PREP_ARRAY_H

#include <stdint.h>

#define PREP_ARRAY_PASS_MAX 256  /* arrays counted per sweep; the next sweep takes the rest */
#define PREP_ARRAY_MEMORY 4096   /* tokens whose last count is remembered */
#define PREP_ARRAY_INFLIGHT 1024 /* task starts being bound at once */

typedef struct prep_array_count {
    int64_t token;
    uint32_t may_start; /* tasks pending (meta task_cnt + split pending) + binds in flight */
} prep_array_count_t;

typedef struct prep_array_pass {
    int n;
    prep_array_count_t v[PREP_ARRAY_PASS_MAX];
} prep_array_pass_t;

/* One record of a job array carrying TOKEN, seen in this pass: PENDING_TASKS of its tasks
 * may still start (the meta record's task_cnt while pending; 1 for a pending task record; 0
 * for a record that ended or runs).  Records of the same token add up.  Returns -1 when the
 * pass is full (the token is left for the next sweep), else 0. */
int prep_array_pass_add(prep_array_pass_t *p, int64_t token, uint32_t pending_tasks);

/* A task's prolog sent the hold that binds TOKEN (JOB_ID), or its answer came (any). */
void prep_array_inflight_add(int64_t token, uint32_t job_id);
void prep_array_inflight_done(int64_t token, uint32_t job_id);

/* After a pass: add the binds in flight to each count and fill OUT (at most MAX) with the
 * releases to send: {token, keep}, keep = the count, when the token is first seen or its
 * count fell below the last one sent (0: release all).  The memory is updated as if each was sent.
 * Returns how many. */
int prep_array_decide(prep_array_pass_t *p, prep_array_count_t *out, int max);

/* Forget everything (tests; plugin unload). */
void prep_array_reset(void);

#endif
