/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * submit_group.h - the components of one heterogeneous job as job_submit/allot sees them
 * (doc/slurm.md "Hold at submit"): slurmctld calls job_submit once per component, offsets
 * 0, 1, 2, ... in order, within one request, before it creates any of them.  A het job
 * costs the sum of its components, so admission of component K counts what components
 * 0..K-1 need (when no hold is taken at submit), and when component K is refused the
 * submit holds of 0..K-1 are given back (the whole job is refused).
 *
 * Design: one group at a time, started by offset 0 and continued by the next offset of the
 * same user; anything else starts afresh (a component whose group was lost counts alone,
 * as before).  Calls are serialised by the caller (job_submit's mutex).
 * No Slurm headers: unit-testable.  Threads: the caller serialises.
 */
#ifndef ALLOT_PLUGINS_JOB_SUBMIT_ALLOT_SUBMIT_GROUP_H
#define ALLOT_PLUGINS_JOB_SUBMIT_ALLOT_SUBMIT_GROUP_H

#include <stdint.h>

#define SUBMIT_GROUP_MAX 128 /* components remembered (Slurm's het jobs are far smaller) */

typedef struct submit_group {
    uint32_t uid;
    uint32_t next_offset; /* the offset that continues the group */
    int64_t sumin;        /* cost of the components admitted so far */
    int ntokens;
    int64_t tokens[SUBMIT_GROUP_MAX]; /* their submit tokens (HoldMode=submit) */
} submit_group_t;

/* Component OFFSET of user UID is about to be admitted: start a group at offset 0, keep the
 * group when OFFSET continues it, else start afresh.  Returns the cost of the components
 * before it (0 for the first). */
int64_t submit_group_begin(submit_group_t *g, uint32_t uid, uint32_t offset);

/* Component OFFSET was admitted at COST_SUMIN, with submit TOKEN (0 = none). */
void submit_group_admitted(submit_group_t *g, uint32_t offset, int64_t cost_sumin, int64_t token);

/* Component OFFSET was refused: the whole job is.  Returns how many earlier submit tokens
 * were copied into OUT (at most MAX), which the caller releases; the group is closed. */
int submit_group_refused(submit_group_t *g, int64_t *out, int max);

#endif
