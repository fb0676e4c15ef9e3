/* SPDX-License-Identifier: GPL-3.0-or-later */
/* record.h - the JSON record of a monitored step: what the command used ("result"), sacct's
 * step row ("slurm_stats") and how it ran.  This is what `allot-step run` prints and what it
 * files in allotd (the body of POST /v1/steps).  Missing data is JSON null, never 0.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_STEP_RECORD_H
#define ALLOT_STEP_RECORD_H

#include <jansson.h>

#include "step/step.h"

/* New JSON object (caller owns the reference; json_decref).  NULL only on out of memory. */
json_t *step_record_json(const struct step_config *c, const struct step_result *r);

#endif
