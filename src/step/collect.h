/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect.h - the step's sacct record after it ended, with retries for slurmdbd lag:
 * up to cfg->sacct_tries runs, cfg->sacct_delay_ms apart, until a row whose JobName is the
 * step's name (matched in code: --name matches the allocation on some versions) carries
 * MaxRSS or AveCPU — or, for a step too short to be sampled, a finished row seen without data
 * on two consecutive attempts.  Gives up with acct->found = false (null stats).
 * Thread rule: main thread only.
 */
#ifndef ALLOT_STEP_COLLECT_H
#define ALLOT_STEP_COLLECT_H

#include <stddef.h>

#include "step/step.h"

#define COLLECT_SACCT_FORMAT                                                                       \
    "JobID,JobName,State,ExitCode,Elapsed,MaxRSS,MaxVMSize,MaxDiskRead,MaxDiskWrite,AveCPU,"       \
    "TotalCPU,NodeList"

/* Run sacct with retries and fill *acct.  known_step >= 0 prefers that step id. */
void collect_sacct(const struct step_config *c, const struct slt_job_ref *job, long long known_step,
                   struct step_acct *acct);

/* Pick the step's row from one sacct output (exposed for tests).  Returns 1 when a row with
 * data was found (acct filled), 0 when none matched or the matching row has no data yet. */
int collect_fold(const char *text, size_t len, const char *name, const struct slt_job_ref *job,
                 long long known_step, struct step_acct *acct);

#endif
