/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * job_view.h - what job_submit/allot's job_modify needs of a job that exists: a plain copy
 * of a few fields of slurmctld's job_record_t.
 *
 * Design: job_record_t is defined only by Slurm's internal headers (src/slurmctld/
 * slurmctld.h), and job_submit_allot.c builds with the public ones; job_view.c is the one
 * file of this plugin that includes the internal headers (from the source tree of exactly
 * the installed Slurm, as prep/allot does) and copies the fields out.  slurmctld calls
 * job_modify with its job write lock held, so the copy is consistent.
 * No Slurm headers here.
 */
#ifndef ALLOT_PLUGINS_JOB_SUBMIT_ALLOT_JOB_VIEW_H
#define ALLOT_PLUGINS_JOB_SUBMIT_ALLOT_JOB_VIEW_H

#include <stdint.h>

#define JOB_VIEW_NAME_MAX 64
#define JOB_VIEW_TRES_MAX 512

enum job_view_state { JOB_VIEW_PENDING = 0, JOB_VIEW_RUNNING, JOB_VIEW_FINISHED };

typedef struct job_view {
    uint32_t job_id;
    int32_t run;               /* Slurm's restart count: the run a hold at start was taken for */
    enum job_view_state state; /* RUNNING includes suspended */
    uint32_t user_id;
    uint32_t time_limit_min; /* INFINITE / NO_VAL as Slurm has them */
    uint32_t time_min;       /* 0 when unset */
    char account[JOB_VIEW_NAME_MAX];
    char partition[JOB_VIEW_NAME_MAX];
    char req_tres[JOB_VIEW_TRES_MAX]; /* requested TRES, "cpu=1,mem=1G,node=1,billing=2" */
    int64_t submit_token; /* HoldMode=submit: the job's allot_token (0 = none or malformed) */
} job_view_t;

struct job_record;

/* Copy JOB_PTR (slurmctld's job_record_t, opaque to the caller) into *V.  0; -1 when
 * JOB_PTR is NULL. */
int job_view_read(const struct job_record *job_ptr, job_view_t *v);

#endif
