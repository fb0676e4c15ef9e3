/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * slurm_compat.h - the differences between the Slurm releases allot's plugins build for
 * (22.05 and 24.11 are tested), each behind one name, so every other file reads the same
 * for all of them.  Include after config.h and slurm/slurm.h; it includes the internal
 * headers whose place moved between releases.
 *
 * Design: decided by SLURM_VERSION_NUMBER from the installed slurm_version.h, which
 * config.h ties to the source tree; a release older than 22.05 is refused here rather
 * than failing later in a header.
 */
#ifndef ALLOT_PLUGINS_SLURM_COMPAT_H
#define ALLOT_PLUGINS_SLURM_COMPAT_H

#include <slurm/slurm_version.h>

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(22, 5, 0)
#error "allot's plugins need Slurm 22.05 or later"
#endif

/* Plugin interfaces (prep.h and the like) moved from src/common to src/interfaces in 23.02. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/interfaces/prep.h"
#else
#include "src/common/prep.h"
#endif

/* A list iterator: ListIterator, a name 24.05 dropped for list_itr_t. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
typedef list_itr_t *allot_list_iter_t;
#else
typedef ListIterator allot_list_iter_t;
#endif

/* srun_user_message() and the rest of srun_comm.h moved from src/slurmctld to src/stepmgr
 * in 24.05. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
#include "src/stepmgr/srun_comm.h"
#else
#include "src/slurmctld/srun_comm.h"
#endif

#endif
