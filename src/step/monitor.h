/* SPDX-License-Identifier: GPL-3.0-or-later */
/* monitor.h - live monitoring of a running step: its numeric id from `squeue --steps` (sstat
 * takes ids, not names) and `sstat` samples (AveCPU deltas -> CPU %, MaxRSS -> peak).
 * Failures (helper missing, "not found running", garbage) are counted and logged at debug
 * level and never stop the step: sacct still runs afterwards.
 * Thread rule: main thread only.
 */
#ifndef ALLOT_STEP_MONITOR_H
#define ALLOT_STEP_MONITOR_H

#include "step/step.h"

/* One attempt to find the step id; returns 1 found (live->step_id set), 0 not (yet). */
int monitor_discover(const struct step_config *c, const struct slt_job_ref *job,
                     struct step_live *live);

/* One sstat sample now; updates live.  The first sample only sets the baseline for CPU %
 * (AveCPU is cumulative). */
void monitor_sample(const struct step_config *c, uint32_t job, struct step_live *live);

/*
 * CPU % is a rate over a window between two samples, and its error has two sources:
 * sstat's AveCPU comes in whole seconds (a delta is off by up to MONITOR_CPU_QUANTUM_MS),
 * and the instant sstat read the step lies somewhere within the call (half the call's
 * length each end).  A rate is taken only over a window at least MONITOR_CPU_ERR_FACTOR
 * times its worst error, so it is within 1 / MONITOR_CPU_ERR_FACTOR (20%) of the truth; a
 * shorter window stays open until the next sample.  A step too short for one window gets
 * its CPU % from sacct afterwards (merge.c).  1 s samples read a busy process as 100-200%
 * otherwise (t3510 on a slow host).
 */
#define MONITOR_CPU_QUANTUM_MS 1000
#define MONITOR_CPU_ERR_FACTOR 5

/* Fold one sstat output text, read by a call from t0_ms to t1_ms, into live (exposed for
 * unit tests).  Returns 0 when a row of step job.step_id was used, -1 otherwise. */
int monitor_fold(const char *text, size_t len, uint32_t job, long long t0_ms, long long t1_ms,
                 struct step_live *live);

#endif
