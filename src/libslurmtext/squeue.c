/* SPDX-License-Identifier: GPL-3.0-or-later */
/* squeue.c - squeue --steps line parser and step lookup (see squeue.h). */
#include "libslurmtext/squeue.h"

#include <stdbool.h>
#include <string.h>

int slt_squeue_step_parse(struct slt_span line, struct slt_squeue_step *out,
                          struct allot_error *err)
{
    const char *bar = memchr(line.p, '|', line.n);
    if (!bar)
        return slt_field_error(err, "squeue", "line without '|'", line);
    struct slt_squeue_step s;
    if (slt_jobid_parse(line.p, (size_t)(bar - line.p), "StepID", &s.id, err) < 0)
        return -1;
    s.name.p = bar + 1;
    s.name.n = line.n - (size_t)(bar - line.p) - 1;
    *out = s;
    return 0;
}

/* "<id>.TDB|..." or "<id>.TBD|...": a step not yet given its number. */
static bool pending_step(struct slt_span line)
{
    const char *bar = memchr(line.p, '|', line.n);
    size_t n = bar ? (size_t)(bar - line.p) : line.n;
    return n >= 4 &&
           (memcmp(line.p + n - 4, ".TDB", 4) == 0 || memcmp(line.p + n - 4, ".TBD", 4) == 0);
}

int slt_squeue_find_step(const char *buf, size_t len, const struct slt_job_ref *job,
                         const char *name, uint32_t *step, struct allot_error *err)
{
    size_t pos = 0, lineno = 0;
    struct slt_span line;
    int found = 0;
    uint32_t best = 0;
    while (slt_next_line(buf, len, &pos, &line)) {
        lineno++;
        if (line.n == 0 || pending_step(line))
            continue;
        struct slt_squeue_step s;
        if (slt_squeue_step_parse(line, &s, err) < 0) {
            if (err)
                err->code = ALLOT_EPROTO;
            return allot_error_prefix(err, "squeue line %zu", lineno);
        }
        /* A het step ("J.S+C") is never allot-step's: its srun has one component. */
        if (!slt_jobid_is_job(&s.id, job) || s.id.step_kind != SLT_STEP_NUMBERED ||
            s.id.has_step_het || !slt_eq(s.name, name))
            continue;
        if (!found || s.id.step > best)
            best = s.id.step;
        found = 1;
    }
    if (found)
        *step = best;
    return found;
}
