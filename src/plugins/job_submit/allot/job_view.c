/* SPDX-License-Identifier: GPL-3.0-or-later */
/* job_view.c - copy the fields job_modify needs out of slurmctld's job_record_t (job_view.h);
 * the only file of job_submit/allot built with Slurm's internal headers. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "slurm/slurm.h"

#include "src/slurmctld/slurmctld.h"

#include "plugins/common/submit_token.h"
#include "plugins/job_submit/allot/job_view.h"

static void copy(char *dst, size_t size, const char *src)
{
    /* A longer value would name another account or partition: leave it empty instead. */
    if (!src || strlen(src) >= size)
        src = "";
    snprintf(dst, size, "%s", src);
}

int job_view_read(const struct job_record *job_ptr, job_view_t *v)
{
    memset(v, 0, sizeof(*v));
    if (!job_ptr)
        return -1;
    v->job_id = job_ptr->job_id;
    v->run = job_ptr->restart_cnt;
    v->state = IS_JOB_FINISHED(job_ptr)  ? JOB_VIEW_FINISHED
               : IS_JOB_PENDING(job_ptr) ? JOB_VIEW_PENDING
                                         : JOB_VIEW_RUNNING;
    v->user_id = job_ptr->user_id;
    v->time_limit_min = job_ptr->time_limit;
    v->time_min = job_ptr->time_min == NO_VAL ? 0 : job_ptr->time_min;
    copy(v->account, sizeof(v->account), job_ptr->account);
    copy(v->partition, sizeof(v->partition),
         job_ptr->part_ptr ? job_ptr->part_ptr->name : job_ptr->partition);
    copy(v->req_tres, sizeof(v->req_tres), job_ptr->tres_fmt_req_str);
    if (submit_token_parse(job_ptr->admin_comment, &v->submit_token) != 1)
        v->submit_token = 0;
    return 0;
}
