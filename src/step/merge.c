/* SPDX-License-Identifier: GPL-3.0-or-later */
/* merge.c - the backfill of sacct data into the live result, and the OOM / timeout
 * verdict (see step.h). */
#include "step/step.h"

void step_backfill(struct step_result *r)
{
    const struct step_acct *a = &r->acct;
    if (!a->found)
        return;
    if (a->has_max_rss && a->max_rss_bytes > 0 &&
        (!r->has_peak_mem || a->max_rss_bytes > r->peak_memory_bytes)) {
        r->peak_memory_bytes = a->max_rss_bytes;
        r->has_peak_mem = true;
    }
    if (a->has_ave_cpu && a->ave_cpu_ms > 0 && r->exec_ms > 0) {
        r->avg_cpu_percent = 100.0 * (double)a->ave_cpu_ms / (double)r->exec_ms;
        r->has_avg_cpu = true;
        if (!r->has_peak_cpu || r->peak_cpu_percent == 0.0) {
            r->peak_cpu_percent = r->avg_cpu_percent;
            r->has_peak_cpu = true;
        }
    }
}

void step_classify(struct step_result *r, int64_t mem_limit_bytes)
{
    const struct step_acct *a = &r->acct;
    enum slt_job_state s = a->found ? a->state.state : SLT_STATE_NONE;
    /* A step cancelled because its allocation timed out also ran out of time. */
    bool alloc_timeout = s == SLT_STATE_CANCELLED && a->alloc_state.state == SLT_STATE_TIMEOUT;
    if (s == SLT_STATE_TIMEOUT || alloc_timeout || r->return_code == STEP_EXIT_TIMEOUT) {
        r->timeout = true;
        r->return_code = STEP_EXIT_TIMEOUT;
        return;
    }
    /* cgroup clusters report OUT_OF_MEMORY; without cgroups jobacct_gather's OverMemoryKill
     * cancels the step ("CANCELLED by 0", signal 9) once its RSS passes --mem. */
    bool killed9 = r->return_code == STEP_EXIT_OOM || (a->has_exit && a->exit_signal == 9);
    bool over = mem_limit_bytes > 0 && r->has_peak_mem && r->peak_memory_bytes >= mem_limit_bytes;
    if (s == SLT_STATE_OUT_OF_MEMORY || (killed9 && over)) {
        r->oom = true;
        r->return_code = STEP_EXIT_OOM;
    }
}
