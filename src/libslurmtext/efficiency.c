/* SPDX-License-Identifier: GPL-3.0-or-later */
/* efficiency.c - seff-style efficiency from sacct rows (see efficiency.h). */
#include "libslurmtext/efficiency.h"

#include <string.h>

/* Values copied from the job row until finish. */
void slt_efficiency_init(struct slt_efficiency *e, uint32_t job)
{
    memset(e, 0, sizeof(*e));
    e->job = job;
    e->mem_used_bytes = -1;
    e->cpu_used_ms = -1;
    e->core_wall_ms = -1;
    e->mem_req_bytes = -1;
}

int slt_efficiency_add(struct slt_efficiency *e, const struct slt_acct_row *row,
                       struct allot_error *err)
{
    if (!row->has_id)
        return allot_errorf(err, ALLOT_EINVAL, "efficiency: row without JobID");
    if (row->id.job != e->job)
        return 0;
    if (row->id.step_kind == SLT_STEP_NONE) {
        e->has_job_row = true;
        if (row->total_cpu.kind == SLT_DUR_VALUE)
            e->cpu_used_ms = row->total_cpu.ms;
        if (row->elapsed.kind == SLT_DUR_VALUE && row->has_alloc_cpus)
            e->core_wall_ms = row->elapsed.ms * (int64_t)row->alloc_cpus;
        if (row->req_mem.has) {
            int64_t req = row->req_mem.bytes;
            if (row->req_mem.scope == SLT_MEM_PER_CPU)
                req = row->has_alloc_cpus ? req * (int64_t)row->alloc_cpus : -1;
            else if (row->req_mem.scope == SLT_MEM_PER_NODE)
                req = row->has_nnodes ? req * (int64_t)row->nnodes : -1;
            e->mem_req_bytes = req;
        }
    }
    /* The job row of a batch job carries no MaxRSS; its steps do.  Take every row's. */
    if (row->max_rss.has && row->max_rss.bytes > e->mem_used_bytes)
        e->mem_used_bytes = row->max_rss.bytes;
    return 0;
}

void slt_efficiency_finish(struct slt_efficiency *e)
{
    e->has_cpu = e->cpu_used_ms >= 0 && e->core_wall_ms > 0;
    e->cpu_pct = e->has_cpu ? 100.0 * (double)e->cpu_used_ms / (double)e->core_wall_ms : 0.0;
    e->has_mem = e->mem_used_bytes >= 0 && e->mem_req_bytes > 0;
    e->mem_pct = e->has_mem ? 100.0 * (double)e->mem_used_bytes / (double)e->mem_req_bytes : 0.0;
}
