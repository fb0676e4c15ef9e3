/* SPDX-License-Identifier: GPL-3.0-or-later */
/* modify_limit.c - re-pricing a job whose time limit changes (modify_limit.h). */
#include "plugins/job_submit/allot/modify_limit.h"

#include <slurm/slurm_errno.h>
#include <stdio.h>

#include "plugins/slurm_api.h"

/* Minutes as priced: an unlimited job at a year, as prep/allot prices one. */
static int64_t limit_s(uint32_t min)
{
    return (min == INFINITE || min == NO_VAL) ? 365 * 24 * 3600 : (int64_t)min * 60;
}

/* allotd answered no decision: a cut passes; a raise follows FailMode. */
static int no_answer(const plugin_conf_t *pc, const job_view_t *v, uint32_t new_min, int raise,
                     const struct allot_error *err)
{
    if (!raise || pc->fail_open) {
        slurm_info("job_submit/allot: JobId=%u time limit %u -> %u min applied without allotd "
                   "(%s)%s",
                   v->job_id, v->time_limit_min, new_min, err->msg,
                   raise ? "; FailMode=open: its charge may be capped at the old hold" : "");
        return SLURM_SUCCESS;
    }
    slurm_error("job_submit/allot: JobId=%u time limit %u -> %u min refused: allotd did not "
                "answer (%s), FailMode=closed",
                v->job_id, v->time_limit_min, new_min, err->msg);
    return ESLURM_ACCOUNTING_POLICY;
}

int modify_limit(allot_client_t *c, const plugin_conf_t *pc, const char *cluster, const char *user,
                 job_desc_msg_t *desc, const job_view_t *v, int64_t billing_micro)
{
    uint32_t new_min = desc->time_limit;
    struct allot_job_result res;
    struct allot_error err = {0};
    int raise = limit_s(new_min) > limit_s(v->time_limit_min);

    if (v->state == JOB_VIEW_FINISHED || new_min == v->time_limit_min)
        return SLURM_SUCCESS; /* slurmctld answers these itself */
    /* TimeMin = the old limit was written by an older job_submit/allot: it goes down with
     * the limit (a time_min of the user's own, below the new limit, stays). */
    if (!raise && desc->time_min == NO_VAL && v->time_min == v->time_limit_min &&
        v->time_min > new_min)
        desc->time_min = new_min;

    struct allot_job_desc d = {.cluster = cluster, .time_limit_s = limit_s(new_min)};
    int rc;
    if (v->state == JOB_VIEW_RUNNING || v->submit_token) {
        d.job_id = v->state == JOB_VIEW_RUNNING ? v->job_id : v->submit_token;
        d.run = v->state == JOB_VIEW_RUNNING ? v->run : 0;
        rc = allot_job_adjust(c, &d, &res, &err);
        if (rc < 0 && (err.code == ALLOT_ENOENT || err.code == ALLOT_ECONFLICT)) {
            /* No hold to re-price: a run started fail-open (post-paid at its settle), or
             * one already ended; nothing for allot to decide. */
            slurm_info("job_submit/allot: JobId=%u time limit %u -> %u min: no hold to "
                       "re-price (%s)",
                       v->job_id, v->time_limit_min, new_min, err.msg);
            return SLURM_SUCCESS;
        }
    } else {
        if (!raise)
            return SLURM_SUCCESS; /* pending, nothing held: less is always affordable */
        d.user = user;
        d.account = v->account;
        d.partition = v->partition;
        /* No qos: slurmctld names the default one ("normal") on every job, which allot
         * need not know; at sbatch an unset --qos was admitted as the association's. */
        d.tres = v->req_tres;
        d.billing_micro = billing_micro;
        d.elapsed_s = -1;
        rc = allot_job_admit(c, &d, &res, &err);
    }
    if (rc < 0)
        return no_answer(pc, v, new_min, raise, &err);
    if (!res.ok) {
        slurm_info("job_submit/allot: JobId=%u time limit %u -> %u min refused: %s", v->job_id,
                   v->time_limit_min, new_min, res.message);
        return ESLURM_ACCOUNTING_POLICY;
    }
    if (v->state == JOB_VIEW_RUNNING || v->submit_token)
        slurm_info("job_submit/allot: JobId=%u time limit %u -> %u min: hold now %lld SU-min%s",
                   v->job_id, v->time_limit_min, new_min, (long long)res.hold_sumin,
                   res.replay ? " (already)" : "");
    return SLURM_SUCCESS;
}
