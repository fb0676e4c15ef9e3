/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record.h - the JSON record of a monitored step: Torc's ResultModel ("result") and
 * SlurmStats ("slurm_stats") plus how it ran.  This is what `allot-step run` prints and what
 * a later HTTP POST to allotd will carry (body of POST /v1/steps, to be wired by others).
 * Missing data is JSON null, never 0.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_STEP_RECORD_H
#define ALLOT_STEP_RECORD_H

#include <jansson.h>

#include "step/step.h"

/* New JSON object (caller owns the reference; json_decref).  NULL only on out of memory. */
json_t *step_record_json(const struct step_config *c, const struct step_result *r);

#endif
