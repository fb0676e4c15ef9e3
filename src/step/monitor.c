/* SPDX-License-Identifier: GPL-3.0-or-later */
/* monitor.c - squeue step discovery and sstat sampling (see monitor.h). */
#include "step/monitor.h"

#include <string.h>

#include "libslurmtext/acct.h"
#include "libslurmtext/argv.h"
#include "libslurmtext/squeue.h"
#include "libutil/log.h"
#include "libutil/monotime.h"
#include "step/proc.h"

#define SSTAT_FORMAT "JobID,AveCPU,MaxRSS,AveRSS"

int monitor_discover(const struct step_config *c, const struct slt_job_ref *job,
                     struct step_live *live)
{
    static struct slt_argv a;
    struct allot_error err = {0};
    char out[65536];
    struct proc_out po = {.out = out, .cap = sizeof(out)};
    live->stepid_attempts++;
    slt_argv_init(&a);
    if (slt_argv_squeue_steps(&a, c->squeue, job->job, &err) < 0) {
        log_debug("squeue argv: %s", err.msg);
        return 0;
    }
    if (proc_capture(a.argv, c->helper_timeout_ms, &po) < 0 || po.status != 0) {
        log_debug("squeue --steps failed (status %d): %s", po.status, po.err);
        return 0;
    }
    uint32_t step;
    int rc = slt_squeue_find_step(out, po.len, job, c->name, &step, &err);
    if (rc < 0)
        log_debug("squeue --steps: %s", err.msg);
    if (rc != 1)
        return 0;
    live->step_found = true;
    live->step_id = step;
    log_debug("step %s is %u.%u", c->name, job->job, step);
    return 1;
}

int monitor_fold(const char *text, size_t len, uint32_t job, long long t0_ms, long long t1_ms,
                 struct step_live *live)
{
    long long t_ms = t0_ms + (t1_ms - t0_ms) / 2, unc_ms = (t1_ms - t0_ms + 1) / 2;
    static struct slt_acct_format fmt;
    static int fmt_ready;
    struct allot_error err = {0};
    if (!fmt_ready) {
        if (slt_acct_format_parse(SSTAT_FORMAT, &fmt, &err) < 0)
            return -1;
        fmt_ready = 1;
    }
    size_t pos = 0;
    struct slt_span line;
    while (slt_next_line(text, len, &pos, &line)) {
        struct slt_acct_row row;
        if (line.n == 0)
            continue;
        if (slt_acct_row_parse(&fmt, line, &row, &err) < 0) {
            log_debug("sstat: %s", err.msg);
            continue;
        }
        if (row.id.job != job || row.id.step_kind != SLT_STEP_NUMBERED ||
            row.id.step != live->step_id)
            continue;
        live->samples++;
        if (row.max_rss.has && (!live->has_peak_rss || row.max_rss.bytes > live->peak_rss_bytes)) {
            live->peak_rss_bytes = row.max_rss.bytes;
            live->has_peak_rss = true;
        }
        if (row.ave_rss.has) {
            live->rss_sum_bytes += row.ave_rss.bytes;
            live->rss_samples++;
        }
        if (row.ave_cpu.kind == SLT_DUR_VALUE) {
            long long dt = t_ms - live->prev_t_ms;
            long long worst = MONITOR_CPU_QUANTUM_MS + live->prev_unc_ms + unc_ms;
            int closes = live->have_prev && dt >= MONITOR_CPU_ERR_FACTOR * worst;
            if (closes) {
                double pct = 100.0 * (double)(row.ave_cpu.ms - live->prev_cpu_ms) / (double)dt;
                if (pct < 0)
                    pct = 0;
                live->cpu_pct_sum += pct;
                live->cpu_samples++;
                if (pct > live->peak_cpu_pct)
                    live->peak_cpu_pct = pct;
            }
            if (closes || !live->have_prev) { /* else the window stays open */
                live->have_prev = true;
                live->prev_cpu_ms = row.ave_cpu.ms;
                live->prev_t_ms = t_ms;
                live->prev_unc_ms = unc_ms;
            }
        }
        return 0;
    }
    return -1;
}

void monitor_sample(const struct step_config *c, uint32_t job, struct step_live *live)
{
    static struct slt_argv a;
    struct allot_error err = {0};
    char out[16384];
    struct proc_out po = {.out = out, .cap = sizeof(out)};
    live->sstat_calls++;
    slt_argv_init(&a);
    if (slt_argv_sstat(&a, c->sstat, job, live->step_id, SSTAT_FORMAT, &err) < 0) {
        live->sstat_failures++;
        return;
    }
    /* sstat prints "not found running" on stderr with status 0 for a finished step: the
     * absence of a row, not the status, is what counts. */
    long long t0 = monotime_ms();
    int rc = proc_capture(a.argv, c->helper_timeout_ms, &po);
    long long t1 = monotime_ms();
    if (rc < 0 || po.status != 0 || monitor_fold(out, po.len, job, t0, t1, live) < 0) {
        live->sstat_failures++;
        log_debug("sstat %u.%u: status %d: %s", job, live->step_id, po.status, po.err);
    }
}
