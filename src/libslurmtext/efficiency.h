/* SPDX-License-Identifier: GPL-3.0-or-later */
/* efficiency.h - CPU and memory efficiency of a finished job from its sacct rows, with
 * seff's conventions (the contrib tool shipped with Slurm):
 *   CPU efficiency    = TotalCPU of the job row / (Elapsed x AllocCPUS)   ("core-walltime")
 *   Memory efficiency = max over the job's step rows of MaxRSS / requested memory
 * where requested memory is ReqMem x AllocCPUS for a per-CPU request ("c"), ReqMem x NNodes
 * for a per-node one ("n"), and ReqMem as printed otherwise (22.05 prints the job's request
 * without a flag).  Required columns: JobID, Elapsed, TotalCPU, AllocCPUS for CPU; JobID,
 * MaxRSS, ReqMem (+ NNodes/AllocCPUS when flagged) for memory.
 * Percentages are computed from integers at the end; each half has a has flag: a job that
 * never ran (Elapsed 0) or has no MaxRSS has no efficiency, never 0%.
 * Thread rule: one accumulator per thread; functions are pure.
 */
#ifndef ALLOT_LIBSLURMTEXT_EFFICIENCY_H
#define ALLOT_LIBSLURMTEXT_EFFICIENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "allot/error.h"
#include "libslurmtext/acct.h"

struct slt_efficiency {
    uint32_t job;
    bool has_job_row;
    bool has_cpu;
    int64_t cpu_used_ms;  /* TotalCPU of the job row */
    int64_t core_wall_ms; /* Elapsed x AllocCPUS */
    double cpu_pct;       /* 100 * used / core_wall */
    bool has_mem;
    int64_t mem_used_bytes; /* max MaxRSS over steps */
    int64_t mem_req_bytes;  /* requested memory as above */
    double mem_pct;
};

/* Start an accumulator for job `job`. */
void slt_efficiency_init(struct slt_efficiency *e, uint32_t job);

/* Fold one parsed row in: the job row (no step) gives TotalCPU, Elapsed, AllocCPUS, ReqMem;
 * step rows give MaxRSS.  Rows of other jobs are ignored (returns 0).  Errors: EINVAL when a
 * row has no JobID. */
int slt_efficiency_add(struct slt_efficiency *e, const struct slt_acct_row *row,
                       struct allot_error *err);

/* Compute has_cpu/has_mem and the percentages from what was folded in. */
void slt_efficiency_finish(struct slt_efficiency *e);

#endif
