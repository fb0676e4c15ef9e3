/* SPDX-License-Identifier: GPL-3.0-or-later */
/* step.h - allot-step's model: what to run (struct step_config), what live monitoring saw
 * (struct step_live, from squeue + sstat), what accounting said afterwards (struct
 * step_acct, from sacct), and the merged outcome (struct step_result: what the command used
 * plus sacct's step row).  doc/design.md §7.
 *
 * Units: ms for times, bytes for memory, percent as double (display values, not money).
 * Every has_* flag separates "no data" from zero.
 * Thread rule: single-threaded program; these structs belong to the main thread.
 */
#ifndef ALLOT_STEP_STEP_H
#define ALLOT_STEP_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "libslurmtext/jobid.h"
#include "libslurmtext/state.h"

#define STEP_EXIT_OOM 137     /* killed for memory (128 + SIGKILL) */
#define STEP_EXIT_TIMEOUT 152 /* step hit its --time (128 + SIGXCPU) */

struct step_config {
    const char *name;      /* --job-name of the step, deterministic */
    uint32_t nodes;        /* --nodes (default 1) */
    uint32_t cpus;         /* --cpus-per-task, 0 = not passed */
    int64_t mem_mb;        /* --mem in MiB, 0 = not passed */
    const char *signal;    /* --signal spec or NULL */
    int64_t time_cap_min;  /* --time-limit: upper bound on the step's --time, 0 = none */
    bool cpu_bind;         /* keep srun's CPU binding (no --cpu-bind=none) */
    bool direct;           /* run directly even inside an allocation */
    bool limit_mem;        /* direct mode: RLIMIT_AS = mem_mb */
    int interval_ms;       /* sstat sample interval */
    int stepid_tries;      /* squeue --steps attempts */
    int stepid_delay_ms;   /* between attempts */
    int sacct_tries;       /* sacct attempts */
    int sacct_delay_ms;    /* between attempts */
    int helper_timeout_ms; /* bound on each squeue/sstat/sacct run */
    const char *srun, *sstat, *sacct, *squeue; /* binaries (ALLOT_SRUN ... overrides) */
    const char *output;                        /* --output FILE or NULL for stdout */
    char **cmd;                                /* NULL-terminated command */
};

struct step_live {
    bool step_found;
    uint32_t step_id;
    int stepid_attempts;
    int sstat_calls, sstat_failures, samples;
    bool have_prev; /* first-sample guard: a delta needs a baseline */
    int64_t prev_cpu_ms;
    long long prev_t_ms;   /* the baseline's time: the middle of its sstat call */
    long long prev_unc_ms; /* half that call's length: when in it sstat read the step */
    int cpu_samples;
    double cpu_pct_sum, peak_cpu_pct;
    bool has_peak_rss;
    int64_t peak_rss_bytes;
    int rss_samples;
    int64_t rss_sum_bytes;
};

struct step_acct {
    bool found; /* a row with the step's name and data was read */
    int attempts;
    bool seen_final_empty; /* a finished row without data was seen once already */
    bool has_max_rss, has_max_vm, has_disk_read, has_disk_write, has_ave_cpu, has_total_cpu;
    int64_t max_rss_bytes, max_vm_size_bytes, max_disk_read_bytes, max_disk_write_bytes;
    int64_t ave_cpu_ms, total_cpu_ms;
    char node_list[256];
    char step_id[64]; /* "12.3" */
    struct slt_state state;
    struct slt_state alloc_state; /* the job (allocation) row's state, NONE if not seen */
    bool has_exit;
    int exit_status, exit_signal;
};

struct step_result {
    bool slurm;             /* ran as a Slurm step (else directly) */
    struct slt_job_ref job; /* SLURM_JOB_ID, and the array task's ids (libslurmtext/jobid.h) */
    int return_code;        /* shell convention; 137 OOM, 152 timeout */
    bool oom, timeout;
    long long exec_ms;
    bool has_peak_mem, has_avg_mem, has_peak_cpu, has_avg_cpu;
    int64_t peak_memory_bytes, avg_memory_bytes;
    double peak_cpu_percent, avg_cpu_percent;
    int64_t time_limit_min; /* --time passed, 0 none */
    struct step_live live;
    struct step_acct acct;
};

/* Merge sacct into the result by the backfill rules: peak memory = max(sstat, sacct
 * MaxRSS); average CPU = sacct AveCPU / exec time; peak CPU = that average only when sstat
 * gave none; sacct zeros are ignored (never flushed, not "used nothing"). */
void step_backfill(struct step_result *r);

/* Decide oom/timeout and the final return code from srun's status and sacct's state. */
void step_classify(struct step_result *r, int64_t mem_limit_bytes);

#endif
