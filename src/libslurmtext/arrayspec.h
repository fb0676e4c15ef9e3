/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * arrayspec.h - a job array's --array spec: how many tasks it makes (job_submit/allot prices
 * the whole array, doc/slurm.md "Hold at submit") and whether it names a task (`allot job
 * show J_[1-3]`, doc/cli.md).
 *
 * Design: the spec is job_desc_msg_t.array_inx as sbatch sends it: comma-separated
 * entries "N", "A-B" or "A-B:S", then an optional "%M" throttle for the whole spec.  The
 * throttle limits how many run at once, not how many run, so it never changes the count.
 * Slurm keeps the indexes in a bitmap, so an index named twice ("1-3,2") is one task: the
 * count is of distinct indexes.  Indexes above SLT_ARRAY_SPEC_MAX_INDEX (Slurm's largest
 * MaxArraySize, 4000001, minus one) are refused.
 * Standalone (no other allot code): job_submit/allot compiles it in.  Threads: reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_ARRAYSPEC_H
#define ALLOT_LIBSLURMTEXT_ARRAYSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLT_ARRAY_SPEC_MAX_INDEX 4000000u

/*
 * slt_array_spec_count - the number of distinct task indexes in SPEC into *TASKS.
 * 0, or -1 with a sentence naming the fault in MSG (MSG_SIZE bytes) and *TASKS untouched:
 * empty, malformed, a range whose end is below its start, a step of 0, an index too large,
 * or out of memory.
 */
int slt_array_spec_count(const char *spec, uint32_t *tasks, char *msg, size_t msg_size);

/* Whether well-formed SPEC (as slt_array_spec_count accepts it) names task index TASK;
 * false for a malformed SPEC. */
bool slt_array_spec_has(const char *spec, uint32_t task);

#endif
