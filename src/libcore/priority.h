/* SPDX-License-Identifier: GPL-3.0-or-later */
/* priority.h - multi-factor job priority: Slurm's weighted sum and flux-accounting's formula.
 *
 * Slurm (priority/multifactor, 22.05):
 *   P = site + Wage*age + Wassoc*assoc + Wfs*fs + Wjs*jobsize + Wpart*part + Wqos*qos
 *       + sum(Wtres_k * tres_k) - nice,      clamped to [1, 2^32 - 1]
 * with every factor in [0, 1]: age = min(1, wait / PriorityMaxAge), part = partition
 * PriorityJobFactor / the largest one, qos = QOS priority / the largest one, jobsize as
 * Slurm's favor-large / favor-small / SMALL_RELATIVE_TO_TIME rules, tres_k = allocated /
 * partition total.  flux-accounting (mf_priority):
 *   P = Wfs*F + Wqueue*Q + Wbank*B + Wurgency*(urgency - 16), rounded, clamped to
 *   [0, 2^32 - 1]; urgency 0 (held) gives 0 and 31 (expedited) the maximum.
 * The breakdown holds each weighted term so `allot priority JOB` can print what sprio -l
 * shows.  All inputs are explicit: no clock, no global state.  Threads: pure functions.
 */
#ifndef ALLOT_LIBCORE_PRIORITY_H
#define ALLOT_LIBCORE_PRIORITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

#define PRIORITY_TRES_MAX 16

/* PriorityWeight* of slurm.conf and the flags that change the job-size factor. */
struct priority_slurm_weights {
    uint32_t age, assoc, fairshare, jobsize, partition, qos;
    size_t tres_count;              /* PriorityWeightTRES entries used */
    double tres[PRIORITY_TRES_MAX]; /* weight per TRES, same order as the job's factors */
    uint32_t max_age_s;             /* PriorityMaxAge; 0 treated as 1 s */
    bool favor_small;               /* PriorityFavorSmall */
    bool size_relative;             /* PriorityFlags=SMALL_RELATIVE_TO_TIME */
};

/* What the factors are computed from, for one job in one partition. */
struct priority_slurm_job {
    int64_t now_s;           /* evaluation time */
    int64_t eligible_s;      /* accrue (eligible) time; 0 = not accruing age */
    double fairshare;        /* fair-share factor from fairshare_compute(), [0, 1] */
    double assoc_factor;     /* association priority / largest, [0, 1] */
    uint32_t min_nodes;      /* requested nodes */
    uint32_t cpus;           /* allocated or requested CPUs */
    uint32_t time_limit_min; /* for SMALL_RELATIVE_TO_TIME; 0 = unknown (treated as 1) */
    uint32_t cluster_nodes, cluster_cpus;
    uint32_t part_job_factor, part_max_job_factor; /* PriorityJobFactor, max over partitions */
    uint32_t qos_priority, qos_max_priority;
    int32_t nice;        /* user nice (-10000..10000 for admins); subtracts */
    int64_t site_factor; /* SiteFactor as scontrol shows it (signed) */
    size_t tres_count;
    double tres[PRIORITY_TRES_MAX]; /* allocated / partition total per TRES, [0, 1] */
};

/* sprio -l: PRIORITY SITE AGE ASSOC FAIRSHARE JOBSIZE PARTITION QOS NICE TRES */
struct priority_breakdown {
    uint32_t priority;                                                 /* final, clamped */
    double site, age, assoc, fairshare, jobsize, partition, qos, tres; /* weighted terms */
    int32_t nice;                                                      /* subtracted as is */
    double age_factor, jobsize_factor, partition_factor, qos_factor;   /* unweighted, [0,1] */
};

/* Slurm's priority of job j under weights w into *out.  Errors: ALLOT_EINVAL if a factor is
 * outside [0, 1] or not finite, or tres_count > PRIORITY_TRES_MAX; *out untouched then. */
int priority_slurm(const struct priority_slurm_weights *w, const struct priority_slurm_job *j,
                   struct priority_breakdown *out, struct allot_error *err);

/* Header and one row in sprio -l's column order (allot's widths), no newline.  Returns the
 * length, or -1 with ALLOT_ETOOBIG (buf holds a truncated line). */
const char *priority_sprio_header(void);
int priority_format_sprio(uint64_t job_id, const char *partition, const char *user,
                          const char *account, const struct priority_breakdown *b, char *buf,
                          size_t len, struct allot_error *err);

/* flux-accounting factor weights ([accounting.factor-weights]); defaults in
 * PRIORITY_FLUX_DEFAULTS. */
struct priority_flux_weights {
    int64_t fairshare, queue, bank, urgency;
};
#define PRIORITY_FLUX_DEFAULTS                                                                     \
    {                                                                                              \
        .fairshare = 100000, .queue = 10000, .bank = 0, .urgency = 1000                            \
    }

struct priority_flux_breakdown {
    uint32_t priority;
    double fairshare, queue, bank, urgency; /* weighted terms */
};

/* flux priority.  fairshare in [0, 1], queue and bank factors finite, urgency 0..31.
 * Errors ALLOT_EINVAL; *out untouched then. */
int priority_flux(const struct priority_flux_weights *w, double fairshare, double queue_factor,
                  double bank_factor, int urgency, struct priority_flux_breakdown *out,
                  struct allot_error *err);

#endif
