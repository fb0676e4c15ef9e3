/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * modify_limit.h - job_submit/allot's answer to a changed time limit (scontrol update
 * jobid=J timelimit=T), doc/slurm.md "Changing a job's time limit".
 *
 * Design: the hold is the job's maximum cost, so a new limit re-prices it before slurmctld
 * applies it (job_modify runs first, under slurmctld's job write lock):
 * - a running job (hold at start, run = restart count) or a pending one under
 *   HoldMode=submit (its provisional hold, the submit token as job id, run 0): allotd's
 *   /v1/jobs/adjust holds the difference or releases it; a raise the allocation cannot cover
 *   is refused, so slurmctld refuses the update;
 * - a pending job under HoldMode=start holds nothing yet: a raise is admitted again at the
 *   new price (read-only, as at sbatch);
 * - a lower limit is never refused: the user may always ask for less.  When allotd cannot
 *   be reached it is applied and logged (the settle then releases the whole hold anyway);
 *   a raise follows FailMode (open: applied and logged; the charge may then be capped at
 *   the old hold, and allotd marks such a charge "capped").
 * A job submitted when job_submit/allot still wrote TimeMin = the time limit gets the same
 * TimeMin lowered with its limit, so slurmctld does not refuse the update as an invalid
 * time-min.  One bounded request (PluginTimeoutMs) at most.
 * Public Slurm headers only; the job's data comes as a job_view_t.
 */
#ifndef ALLOT_PLUGINS_JOB_SUBMIT_ALLOT_MODIFY_LIMIT_H
#define ALLOT_PLUGINS_JOB_SUBMIT_ALLOT_MODIFY_LIMIT_H

#include <slurm/slurm.h>

#include "allot/allot.h"
#include "plugins/common/plugin_conf.h"
#include "plugins/job_submit/allot/job_view.h"

/* The Slurm return code for DESC's new time limit of job V (desc->time_limit != NO_VAL);
 * may set desc->time_min (the legacy TimeMin above).  C is allotd (never NULL), USER the
 * job's user name, CLUSTER slurmctld's ClusterName, BILLING_MICRO the pending job's billing
 * under slurmctld's weights for its admission (slurm_price.h; 0 = allotd's copy). */
int modify_limit(allot_client_t *c, const plugin_conf_t *pc, const char *cluster, const char *user,
                 job_desc_msg_t *desc, const job_view_t *v, int64_t billing_micro);

#endif
