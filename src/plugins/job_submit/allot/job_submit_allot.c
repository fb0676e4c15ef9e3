/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * job_submit_allot.c - slurmctld's job_submit/allot plugin: admission of jobs by the
 * allot bank at submit time (DESIGN §1, §3 "admit").
 *
 * Design: built against Slurm's public headers only (slurm/slurm.h), so it needs no
 * Slurm source tree; the few libslurmfull functions it calls are declared in
 * plugins/slurm_api.h.  plugin_version is SLURM_VERSION_NUMBER of the headers it was
 * compiled with: slurmctld refuses to load it into any other Slurm release (micro
 * included), which is what we want, since job_desc_msg_t changes between releases.
 * Slurm calls job_submit serially under slurmctld's read locks: nothing here may block
 * for long.  The plugin keeps no state yet; admission calls to allotd come with liballot.
 */
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#include "plugins/plugin_export.h"
#include "plugins/slurm_api.h"

ALLOT_PLUGIN_EXPORT const char plugin_name[] = "allot allocation bank job_submit plugin";
ALLOT_PLUGIN_EXPORT const char plugin_type[] = "job_submit/allot";
ALLOT_PLUGIN_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

ALLOT_PLUGIN_EXPORT int init(void)
{
    slurm_info("job_submit/allot: loaded, built for Slurm %d.%02d.%d",
               SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
               SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT void fini(void)
{
    slurm_info("job_submit/allot: unloaded");
}

ALLOT_PLUGIN_EXPORT int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
    (void)err_msg;
    slurm_debug("job_submit/allot: submit by uid %u, account %s", submit_uid,
                job_desc->account ? job_desc->account : "(default)");
    return SLURM_SUCCESS;
}

/* job_record_t is slurmctld-internal (src/slurmctld/slurmctld.h): opaque here. */
struct job_record;

ALLOT_PLUGIN_EXPORT int job_modify(job_desc_msg_t *job_desc, struct job_record *job_ptr,
                                   uint32_t modify_uid)
{
    (void)job_desc;
    (void)job_ptr;
    (void)modify_uid;
    return SLURM_SUCCESS;
}
