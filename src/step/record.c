/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record.c - build the step record (see record.h).  Field names are documented in doc/step.md
 * "The record". */
#include "step/record.h"

#include "libslurmtext/state.h"

static json_t *int_or_null(bool has, int64_t v)
{
    return has ? json_integer((json_int_t)v) : json_null();
}

static json_t *real_or_null(bool has, double v)
{
    return has ? json_real(v) : json_null();
}

json_t *step_record_json(const struct step_config *c, const struct step_result *r)
{
    json_t *cmd = json_array();
    for (size_t i = 0; cmd && c->cmd && c->cmd[i]; i++)
        json_array_append_new(cmd, json_string(c->cmd[i]));
    const struct step_acct *a = &r->acct;
    const char *status = r->oom                ? "oom"
                         : r->timeout          ? "timeout"
                         : r->return_code == 0 ? "completed"
                                               : "failed";
    json_t *result = json_pack(
        "{s:i, s:s, s:b, s:b, s:f, s:I, s:o, s:o, s:o, s:o}", "return_code", r->return_code,
        "status", status, "oom", r->oom, "timeout", r->timeout, "exec_time_minutes",
        (double)r->exec_ms / 60000.0, "exec_time_ms", (json_int_t)r->exec_ms, "peak_memory_bytes",
        int_or_null(r->has_peak_mem, r->peak_memory_bytes), "avg_memory_bytes",
        int_or_null(r->has_avg_mem, r->avg_memory_bytes), "peak_cpu_percent",
        real_or_null(r->has_peak_cpu, r->peak_cpu_percent), "avg_cpu_percent",
        real_or_null(r->has_avg_cpu, r->avg_cpu_percent));
    json_t *stats = json_null();
    if (a->found) {
        char state[64];
        if (slt_state_format(&a->state, state, sizeof(state), NULL) < 0)
            state[0] = '\0';
        stats = json_pack(
            "{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o}", "slurm_step_id", a->step_id,
            "max_rss_bytes", int_or_null(a->has_max_rss, a->max_rss_bytes), "max_vm_size_bytes",
            int_or_null(a->has_max_vm, a->max_vm_size_bytes), "max_disk_read_bytes",
            int_or_null(a->has_disk_read, a->max_disk_read_bytes), "max_disk_write_bytes",
            int_or_null(a->has_disk_write, a->max_disk_write_bytes), "ave_cpu_seconds",
            real_or_null(a->has_ave_cpu, (double)a->ave_cpu_ms / 1000.0), "total_cpu_seconds",
            real_or_null(a->has_total_cpu, (double)a->total_cpu_ms / 1000.0), "node_list",
            a->node_list, "state", state, "exit_code",
            a->has_exit
                ? json_pack("{s:i, s:i}", "status", a->exit_status, "signal", a->exit_signal)
                : json_null());
    }
    const struct step_live *l = &r->live;
    json_t *live =
        json_pack("{s:b, s:o, s:i, s:i, s:i, s:i, s:i}", "step_id_found", l->step_found, "step_id",
                  l->step_found ? json_integer(l->step_id) : json_null(), "step_id_attempts",
                  l->stepid_attempts, "sstat_calls", l->sstat_calls, "sstat_failures",
                  l->sstat_failures, "samples", l->samples, "sacct_attempts", a->attempts);
    return json_pack("{s:s, s:s, s:o, s:o, s:I, s:o, s:o, s:o}", "step_name", c->name, "mode",
                     r->slurm ? "slurm" : "direct", "slurm_job_id",
                     r->slurm ? json_integer(r->job.job) : json_null(), "command",
                     cmd ? cmd : json_null(), "time_limit_minutes", (json_int_t)r->time_limit_min,
                     "result", result ? result : json_null(), "slurm_stats",
                     stats ? stats : json_null(), "monitor", live ? live : json_null());
}
