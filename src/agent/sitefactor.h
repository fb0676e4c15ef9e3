/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sitefactor.h - allot-agent pushes allot's site factor to the cluster's pending jobs
 * (doc/design.md §6.4, doc/slurm.md "Site factor").
 *
 * One pass: GET /v1/sitefactors?cluster=C from allotd (account x partition -> Slurm site
 * factor), slurm_load_jobs(), and for each PENDING job whose (account, first partition) has
 * a factor different from the job's, slurm_update_job() with site_factor = NICE_OFFSET + n
 * (the encoding `scontrol update SiteFactor=n` uses in 22.05).  The agent runs as root or
 * SlurmUser (operators may set SiteFactor); it reads SLURM_CONF like any client.
 * Why the agent and not a thread in slurmctld: an RPC to slurmctld from inside slurmctld
 * would contend for the job write lock it is serving, and a stuck allotd must never slow
 * the controller; the agent is already one per cluster and retries on its own schedule.
 * A job allotd has no factor for (no payer) keeps whatever it has.
 * Threads: single-threaded (the agent's main loop).
 */
#ifndef ALLOT_AGENT_SITEFACTOR_H
#define ALLOT_AGENT_SITEFACTOR_H

#include "allot/allot.h"

struct sitefactor_stats {
    int pending;   /* pending jobs seen */
    int updated;   /* slurm_update_job calls that succeeded */
    int unchanged; /* already carried allot's factor */
    int unmapped;  /* no factor for their account and partition */
    int failed;    /* slurm_update_job refused (job started meanwhile, ...) */
    int enabled;   /* allotd's SiteFactorMax > 0 */
};

/* One pass for cluster.  Returns 0 (stats filled; per-job refusals are counted, not errors)
 * or -1 with err: allotd unreachable or refusing, its answer not understood, or
 * slurm_load_jobs failing (EUNAVAIL naming slurm_strerror). */
int sitefactor_push(allot_client_t *c, const char *cluster, struct sitefactor_stats *s,
                    struct allot_error *err);

#endif
