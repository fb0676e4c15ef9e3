/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * array_spec.h - how many tasks a job array's --array spec makes (doc/slurm.md "Hold at
 * submit"), so admission and the hold at submit price the whole array.
 *
 * Design: the spec is job_desc_msg_t.array_inx as sbatch sends it: comma-separated
 * entries "N", "A-B" or "A-B:S", then an optional "%M" throttle for the whole spec.  The
 * throttle limits how many run at once, not how many run, so it never changes the count.
 * Slurm keeps the indexes in a bitmap, so an index named twice ("1-3,2") is one task: the
 * count is of distinct indexes.  Indexes above ARRAY_SPEC_MAX_INDEX (Slurm's largest
 * MaxArraySize, 4000001, minus one) are refused.
 * No Slurm headers: unit-tested without slurmctld.  Threads: reentrant.
 */
#ifndef ALLOT_PLUGINS_ARRAY_SPEC_H
#define ALLOT_PLUGINS_ARRAY_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define ARRAY_SPEC_MAX_INDEX 4000000u

/*
 * array_spec_count - the number of distinct task indexes in SPEC into *TASKS.
 * 0, or -1 with a sentence naming the fault in MSG (MSG_SIZE bytes) and *TASKS untouched:
 * empty, malformed, a range whose end is below its start, a step of 0, an index too large,
 * or out of memory.
 */
int array_spec_count(const char *spec, uint32_t *tasks, char *msg, size_t msg_size);

#endif
