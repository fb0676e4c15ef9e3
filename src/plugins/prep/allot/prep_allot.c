/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_allot.c - slurmctld's prep/allot plugin: hold at job start, settle at job end
 * (DESIGN §1, §3 "hold" and "settle").
 *
 * Design: PrEp plugins see job_record_t, which only Slurm's internal headers define, so
 * this file is the one that includes src/slurmctld/slurmctld.h (from the source tree of
 * exactly the installed Slurm, see cmake/FindSlurmSource.cmake).  plugin_version is the
 * SLURM_VERSION_NUMBER of those headers: slurmctld loads it into that release only, and
 * job_record_t's layout is only valid there.  slurmd loads PrEp plugins too (PrEpPlugins
 * is read by both): the slurmd-side calls do nothing and report themselves not required.
 * A failing slurmctld prolog requeues a batch job forever, so the prolog never fails: a
 * job the bank refuses is held or cancelled by allotd, and the prolog reports success.
 */
#include "config.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/common/prep.h"
#include "src/slurmctld/slurmctld.h"

#include "plugins/plugin_export.h"

ALLOT_PLUGIN_EXPORT const char plugin_name[] = "allot allocation bank PrEp plugin";
ALLOT_PLUGIN_EXPORT const char plugin_type[] = "prep/allot";
ALLOT_PLUGIN_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Slurm plugin state, as plugins get no context (STYLE §2 "Global state"): the callbacks
 * slurmctld registered, written once by prep_p_register_callbacks before any job runs. */
static prep_callbacks_t allot_callbacks;

ALLOT_PLUGIN_EXPORT int init(void)
{
    info("prep/allot: loaded in %s, built for Slurm %s",
         running_in_slurmctld() ? "slurmctld" : "slurmd", SLURM_VERSION_STRING);
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT void fini(void)
{
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

ALLOT_PLUGIN_EXPORT int prep_p_prolog_slurmctld(job_record_t *job_ptr, bool *async)
{
    *async = false;
    info("prep/allot: prolog JobId=%u account=%s", job_ptr->job_id,
         job_ptr->account ? job_ptr->account : "");
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT int prep_p_epilog_slurmctld(job_record_t *job_ptr, bool *async)
{
    *async = false;
    info("prep/allot: epilog JobId=%u account=%s", job_ptr->job_id,
         job_ptr->account ? job_ptr->account : "");
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT void prep_p_required(prep_call_type_t type, bool *required)
{
    *required = running_in_slurmctld() &&
                (type == PREP_PROLOG_SLURMCTLD || type == PREP_EPILOG_SLURMCTLD);
}
