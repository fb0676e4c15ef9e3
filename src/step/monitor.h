/* SPDX-License-Identifier: GPL-3.0-or-later */
/* monitor.h - live monitoring of a running step: its numeric id from `squeue --steps` (sstat
 * takes ids, not names) and `sstat` samples (AveCPU deltas -> CPU %, MaxRSS -> peak).
 * Failures (helper missing, "not found running", garbage) are counted and logged at debug
 * level and never stop the step: sacct still runs afterwards (Torc's failure table).
 * Thread rule: main thread only.
 */
#ifndef ALLOT_STEP_MONITOR_H
#define ALLOT_STEP_MONITOR_H

#include "step/step.h"

/* One attempt to find the step id; returns 1 found (live->step_id set), 0 not (yet). */
int monitor_discover(const struct step_config *c, uint32_t job, struct step_live *live);

/* One sstat sample at time now_ms; updates live.  The first sample only sets the baseline
 * for CPU % (Torc's first-sample guard). */
void monitor_sample(const struct step_config *c, uint32_t job, long long now_ms,
                    struct step_live *live);

/* Fold one sstat output text into live (exposed for unit tests).  Returns 0 when a row of
 * step job.step_id was used, -1 otherwise. */
int monitor_fold(const char *text, size_t len, uint32_t job, long long now_ms,
                 struct step_live *live);

#endif
