/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect.h - reconciliation from sacct (doc/design.md §3.5): settle through allotd every
 * finished job that allot has not settled, in bounded time windows.
 *
 * A window is [from, to) of job end times, at most window_s long, and never closer to now
 * than lag_s (slurmdbd writes a job's record seconds after it ends, so a window that is
 * too recent could miss it).  For each finished allocation row of the window (sacct
 * --allocations, final states) the agent sends a settle to allotd, thousands in one POST
 * /v1/jobs/settle/bulk with match "sacct", where allotd looks the job up in the same
 * transaction: a run already settled or released is left alone; a held run is settled from
 * the record; a job allot never saw (post-paid, no plugins) is settled as a new run with its
 * user, account, partition, QOS and time limit.  Settling is idempotent per (cluster, job,
 * run), so a replayed window or an epilog settle racing the agent charges nothing twice.  Jobs
 * allotd refuses (account without allocation, unknown partition) are reported, not retried.  After
 * the window the marker `until` is posted to allotd (POST /v1/agents/<cluster>/reconcile), which
 * keeps it per cluster: a restarted agent resumes there.  A failing sacct (slurmdbd down) is
 * retried with backoff; allotd unreachable stops the pass; in both cases the marker stays. Threads:
 * single-threaded; runs sacct as a child process with a bounded wait.
 */
#ifndef ALLOT_AGENT_COLLECT_H
#define ALLOT_AGENT_COLLECT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/allot.h"

struct collect_opts {
    const char *sacct;   /* path or name ($ALLOT_SACCT, default "sacct") */
    const char *cluster; /* the Slurm cluster name (also allot's) */
    int64_t window_s;    /* longest window (default 3600) */
    int64_t lag_s;       /* windows end at now - lag_s at the latest (default 60) */
    int64_t lookback_s;  /* no marker yet: start at now - lookback_s (default 86400) */
    int64_t from_s;      /* > 0: replay from here instead of the marker (marker never moves
                            back) */
    int timeout_s;       /* per sacct run */
    long timeout_ms;     /* the client's request timeout, set again after each bulk settle
                            (which has a longer one); 0: leave it */
    int attempts;        /* sacct runs per window before giving up (default 3) */
    const volatile sig_atomic_t *stop; /* non-NULL: set by a signal, stop between windows */
};

struct collect_stats {
    int64_t windows; /* windows finished and posted */
    int64_t rows;    /* sacct job rows seen */
    int64_t settled; /* runs settled by this pass */
    int64_t already; /* runs allot had settled already (epilog or an earlier pass) */
    int64_t unknown; /* jobs allotd refused (no allocation, unknown partition, ...) */
    int64_t skipped; /* rows without a start (never ran) that allot never held */
};

/* Reconcile from the marker (or o->from_s) up to now_s - lag_s, window by window.  Returns
 * 0 when caught up, -1 with err when a window could not be finished (sacct kept failing,
 * allotd unreachable or refusing); the windows before it stay done.  *stats accumulates. */
int collect_run(allot_client_t *c, const struct collect_opts *o, int64_t now_s,
                struct collect_stats *stats, struct allot_error *err);

/* Check a whole sacct output (the --format collect_run uses) before any of it is acted on:
 * every line has exactly the columns asked for with values in Slurm's formats, JobIDRaw is
 * a job id, AllocTRES billing a whole number, and the output ends with a newline (else it
 * was cut).  0, or -1 with err (EPROTO) naming the line and the field. */
int collect_check_output(const char *out, size_t len, struct allot_error *err);

#endif
