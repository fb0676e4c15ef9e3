/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sync.h - allot-agent's sync pass (doc/agent.md "Sync"): compare allot's copy of a cluster
 * (accounts, users with their default account, user associations, partitions with their
 * TRESBillingWeights, MaxTime and DefaultTime) with Slurm, resolve each difference by the
 * mode's rule, and report what is left to allotd (PUT /v1/sync/<cluster>).
 *
 * Modes: report - change nothing; follow - Slurm is the truth: allot's copy is changed
 * through the API (what Slurm lacks is reported, never removed from allot); push - allot
 * is the truth: Slurm is changed with sacctmgr -i (accounts, users, associations, default
 * accounts; what allot lacks is reported, never removed from Slurm; partitions live in
 * slurm.conf, which sacctmgr cannot change: their drifts are 'unresolvable').
 * After resolving, both sides are read again and compared again: a drift counts as
 * resolved only when that read-back no longer shows it; one still there is 'failed' with
 * the error of the change that was tried.
 * Threads: single-threaded; runs child processes with a bounded wait.
 */
#ifndef ALLOT_AGENT_SYNC_H
#define ALLOT_AGENT_SYNC_H

#include "agent/apply.h"
#include "allot/allot.h"

enum sync_mode { SYNC_OFF = 0, SYNC_REPORT, SYNC_FOLLOW, SYNC_PUSH };

/* "report", "follow", "push" (any case); -1 for anything else. */
int sync_mode_parse(const char *s, enum sync_mode *out);
const char *sync_mode_name(enum sync_mode m);

struct sync_stats {
    int found;    /* drifts the first comparison found */
    int resolved; /* gone at the read-back */
    int left;     /* reported to allotd */
    int failed;   /* left after a change was tried */
};

/* Writes one log line (the agent's log format). */
typedef void (*sync_log_f)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One pass for CLUSTER in mode M (not SYNC_OFF).  0, or -1 with ERR when a side could not
 * be read or the report not posted (nothing is changed when a side cannot be read). */
int sync_pass(allot_client_t *c, const struct agent_tools *t, const char *cluster, enum sync_mode m,
              sync_log_f log, struct sync_stats *st, struct allot_error *err);

#endif
