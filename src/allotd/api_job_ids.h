/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_job_ids.h - jobs named as Slurm prints them (doc/api.md "Job ids"): the array and het
 * ids a hold or settle may carry, and the job ids a name ("54", "54_3", "54_[1-3]",
 * "60+1") stands for, from the ids recorded (store_job_ids_*, schema 0020). */
#ifndef ALLOT_ALLOTD_API_JOB_IDS_H
#define ALLOT_ALLOTD_API_JOB_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "allotd/json.h"
#include "libstore/store.h"

/* The four optional body fields of a hold or settle, read into IDS (a struct
 * job_slurm_ids, set to none first with api_job_ids_none). */
#define API_JOB_IDS_FIELDS(ids)                                                                    \
    {.name = "array_job_id", .type = JF_INT, .dst = &(ids).array_job_id, .min = 1},                \
        {.name = "array_task_id", .type = JF_INT, .dst = &(ids).array_task_id, .min = 0},          \
        {.name = "het_job_id", .type = JF_INT, .dst = &(ids).het_job_id, .min = 1},                \
    {                                                                                              \
        .name = "het_job_offset", .type = JF_INT, .dst = &(ids).het_job_offset, .min = 0           \
    }

void api_job_ids_none(struct job_slurm_ids *ids);
/* 1 when IDS names an array task or a het component. */
int api_job_ids_given(const struct job_slurm_ids *ids);

/* The job ids of CLUSTER that TEXT names, sorted and without repeats, into *IDS (a new
 * array, *N of them; free it): "J" is job J and, when J is an array or het job, all its
 * tasks or components; "J_T", "J_[LIST]" and "J+C" the tasks or component recorded.
 * 0 (possibly none), or -1 with err (EINVAL: not a job name). */
int api_job_ids_resolve(store_t *st, const char *cluster, const char *text, int64_t **ids,
                        size_t *n, struct allot_error *err);

#endif
