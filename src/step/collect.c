/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect.c - sacct collection with bounded retries (see collect.h). */
#include "step/collect.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "libslurmtext/acct.h"
#include "libslurmtext/argv.h"
#include "libutil/log.h"
#include "libutil/monotime.h"
#include "step/proc.h"

int collect_fold(const char *text, size_t len, const char *name, const struct slt_job_ref *job,
                 long long known_step, struct step_acct *acct)
{
    struct slt_acct_format fmt;
    struct allot_error err = {0};
    if (slt_acct_format_parse(COLLECT_SACCT_FORMAT, &fmt, &err) < 0)
        return 0;
    size_t pos = 0;
    struct slt_span line;
    struct slt_acct_row best;
    memset(&best, 0, sizeof(best));
    int have = 0;
    while (slt_next_line(text, len, &pos, &line)) {
        struct slt_acct_row row;
        if (line.n == 0)
            continue;
        if (slt_acct_row_parse(&fmt, line, &row, &err) < 0) {
            log_debug("sacct: %s", err.msg);
            continue;
        }
        /* An array task's rows are "<array job>_<task>[.<step>]" (slt_jobid_is_job). */
        if (!slt_jobid_is_job(&row.id, job))
            continue;
        if (row.id.step_kind == SLT_STEP_NONE)
            acct->alloc_state = row.state;
        if (row.id.step_kind != SLT_STEP_NUMBERED || !slt_eq(row.name, name))
            continue;
        /* Prefer the step squeue named; else the newest step with this name. */
        bool better;
        if (!have)
            better = true;
        else if (known_step >= 0)
            better = row.id.step == (uint32_t)known_step ||
                     (best.id.step != (uint32_t)known_step && row.id.step > best.id.step);
        else
            better = row.id.step > best.id.step;
        if (better) {
            best = row;
            have = 1;
        }
    }
    if (!have)
        return 0;
    if (!best.max_rss.has && best.ave_cpu.kind != SLT_DUR_VALUE) {
        /* A row without data is retried (not flushed yet).  A step too short for any
         * accounting sample keeps such a row forever, though: accept a finished row the
         * second time it is seen without data rather than spend every retry on it. */
        if (!slt_state_is_final(best.state.state) || !acct->seen_final_empty) {
            acct->seen_final_empty = slt_state_is_final(best.state.state);
            return 0;
        }
    }
    struct step_acct a = *acct;
    a.found = true;
    a.has_max_rss = best.max_rss.has;
    a.max_rss_bytes = best.max_rss.bytes;
    a.has_max_vm = best.max_vmsize.has;
    a.max_vm_size_bytes = best.max_vmsize.bytes;
    a.has_disk_read = best.max_disk_read.has;
    a.max_disk_read_bytes = best.max_disk_read.bytes;
    a.has_disk_write = best.max_disk_write.has;
    a.max_disk_write_bytes = best.max_disk_write.bytes;
    a.has_ave_cpu = best.ave_cpu.kind == SLT_DUR_VALUE;
    a.ave_cpu_ms = best.ave_cpu.ms;
    a.has_total_cpu = best.total_cpu.kind == SLT_DUR_VALUE;
    a.total_cpu_ms = best.total_cpu.ms;
    snprintf(a.node_list, sizeof(a.node_list), "%.*s", (int)best.nodelist.n, best.nodelist.p);
    snprintf(a.step_id, sizeof(a.step_id), "%u.%u", job->job, best.id.step);
    a.state = best.state;
    a.has_exit = best.exit_code.has;
    a.exit_status = best.exit_code.status;
    a.exit_signal = best.exit_code.signal;
    *acct = a;
    return 1;
}

void collect_sacct(const struct step_config *c, const struct slt_job_ref *job, long long known_step,
                   struct step_acct *acct)
{
    static struct slt_argv a;
    static char out[1 << 20];
    struct allot_error err = {0};
    slt_argv_init(&a);
    if (slt_argv_sacct(&a, c->sacct, job->job, COLLECT_SACCT_FORMAT, false, &err) < 0) {
        log_warn("sacct: %s", err.msg);
        return;
    }
    for (int i = 0; i < c->sacct_tries; i++) {
        struct proc_out po = {.out = out, .cap = sizeof(out)};
        acct->attempts++;
        if (proc_capture(a.argv, c->helper_timeout_ms, &po) == 0 && po.status == 0) {
            if (collect_fold(out, po.len, c->name, job, known_step, acct))
                return;
            log_debug("sacct: no data for step %s yet (attempt %d)", c->name, i + 1);
        } else {
            log_debug("sacct failed (status %d): %s", po.status, po.err);
        }
        if (i + 1 < c->sacct_tries)
            monotime_sleep_ms(c->sacct_delay_ms, NULL);
    }
    log_warn("sacct: no record of step %s after %d attempts", c->name, c->sacct_tries);
}
