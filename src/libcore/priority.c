/* SPDX-License-Identifier: GPL-3.0-or-later */
/* priority.c - Slurm multi-factor and flux-accounting job priority (formulas in priority.h). */
#include "libcore/priority.h"

#include <math.h>
#include <stdio.h>

static bool unit_factor(double v)
{
    return isfinite(v) && v >= 0.0 && v <= 1.0;
}

/* Slurm's job-size factor (set_priority_factors in priority_multifactor.c). */
static double jobsize_factor(const struct priority_slurm_weights *w,
                             const struct priority_slurm_job *j)
{
    double nodes = j->cluster_nodes ? (double)j->cluster_nodes : 1.0;
    double cpus = j->cluster_cpus ? (double)j->cluster_cpus : 1.0;
    double f;

    if (w->size_relative) {
        /* size in CPUs (at least nodes * average CPUs per node), per minute of limit */
        f = (double)j->min_nodes * cpus / nodes;
        if ((double)j->cpus > f)
            f = (double)j->cpus;
        f /= j->time_limit_min ? (double)j->time_limit_min : 1.0;
        f /= cpus;
        if (w->favor_small)
            f = 1.0 - f;
    } else if (w->favor_small) {
        f = (nodes - (double)j->min_nodes) / nodes;
        if (j->cpus)
            f = (f + (cpus - (double)j->cpus) / cpus) / 2.0;
    } else {
        f = (double)j->min_nodes / nodes;
        if (j->cpus)
            f = (f + (double)j->cpus / cpus) / 2.0;
    }
    if (f < 0.0)
        f = 0.0;
    if (f > 1.0)
        f = 1.0;
    return f;
}

int priority_slurm(const struct priority_slurm_weights *w, const struct priority_slurm_job *j,
                   struct priority_breakdown *out, struct allot_error *err)
{
    struct priority_breakdown b = {0};

    if (!unit_factor(j->fairshare))
        return allot_errorf(err, ALLOT_EINVAL, "fairshare: factor must be within [0, 1]");
    if (!unit_factor(j->assoc_factor))
        return allot_errorf(err, ALLOT_EINVAL, "assoc_factor: must be within [0, 1]");
    if (w->tres_count > PRIORITY_TRES_MAX || j->tres_count > PRIORITY_TRES_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "tres: at most %d TRES factors", PRIORITY_TRES_MAX);
    for (size_t k = 0; k < j->tres_count; k++)
        if (!unit_factor(j->tres[k]))
            return allot_errorf(err, ALLOT_EINVAL, "tres[%zu]: factor must be within [0, 1]", k);
    for (size_t k = 0; k < w->tres_count; k++)
        if (!isfinite(w->tres[k]) || w->tres[k] < 0.0)
            return allot_errorf(err, ALLOT_EINVAL, "tres weight %zu: must be >= 0", k);

    if (j->eligible_s > 0) {
        uint32_t max_age = w->max_age_s ? w->max_age_s : 1;
        int64_t wait = j->now_s > j->eligible_s ? j->now_s - j->eligible_s : 0;
        b.age_factor = wait >= (int64_t)max_age ? 1.0 : (double)wait / (double)max_age;
    }
    b.jobsize_factor = jobsize_factor(w, j);
    if (j->part_max_job_factor)
        b.partition_factor = (double)j->part_job_factor / (double)j->part_max_job_factor;
    if (j->qos_max_priority)
        b.qos_factor = (double)j->qos_priority / (double)j->qos_max_priority;
    if (b.partition_factor > 1.0)
        b.partition_factor = 1.0;
    if (b.qos_factor > 1.0)
        b.qos_factor = 1.0;

    b.site = (double)j->site_factor;
    b.age = b.age_factor * w->age;
    b.assoc = j->assoc_factor * w->assoc;
    b.fairshare = j->fairshare * w->fairshare;
    b.jobsize = b.jobsize_factor * w->jobsize;
    b.partition = b.partition_factor * w->partition;
    b.qos = b.qos_factor * w->qos;
    size_t nt = j->tres_count < w->tres_count ? j->tres_count : w->tres_count;
    for (size_t k = 0; k < nt; k++)
        b.tres += j->tres[k] * w->tres[k];
    b.nice = j->nice;

    double p = b.site + b.age + b.assoc + b.fairshare + b.jobsize + b.partition + b.qos + b.tres -
               (double)j->nice;
    /* priority 0 means held in Slurm, so the floor is 1 */
    if (!(p >= 1.0))
        p = 1.0;
    if (p > 4294967295.0)
        p = 4294967295.0;
    b.priority = (uint32_t)p;
    *out = b;
    return 0;
}

const char *priority_sprio_header(void)
{
    return "          JOBID PARTITION     USER    ACCOUNT   PRIORITY       SITE        AGE"
           "      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE"
           "                 TRES";
}

int priority_format_sprio(uint64_t job_id, const char *partition, const char *user,
                          const char *account, const struct priority_breakdown *b, char *buf,
                          size_t len, struct allot_error *err)
{
    int k = snprintf(buf, len,
                     "%15llu %-9.9s %8.8s %10.10s %10u %10.0f %10.0f %10.0f %10.0f %10.0f"
                     " %10.0f %10.0f %11d %20.0f",
                     (unsigned long long)job_id, partition ? partition : "", user ? user : "",
                     account ? account : "", b->priority, b->site, b->age, b->assoc, b->fairshare,
                     b->jobsize, b->partition, b->qos, (int)b->nice, b->tres);
    if (k < 0 || (size_t)k >= len)
        return allot_errorf(err, ALLOT_ETOOBIG, "sprio line longer than %zu bytes", len);
    return k;
}

int priority_flux(const struct priority_flux_weights *w, double fairshare, double queue_factor,
                  double bank_factor, int urgency, struct priority_flux_breakdown *out,
                  struct allot_error *err)
{
    struct priority_flux_breakdown b = {0};

    if (!unit_factor(fairshare))
        return allot_errorf(err, ALLOT_EINVAL, "fairshare: factor must be within [0, 1]");
    if (!isfinite(queue_factor) || !isfinite(bank_factor))
        return allot_errorf(err, ALLOT_EINVAL, "queue/bank factor: must be finite");
    if (urgency < 0 || urgency > 31)
        return allot_errorf(err, ALLOT_EINVAL, "urgency: %d is outside 0..31", urgency);

    b.fairshare = (double)w->fairshare * fairshare;
    b.queue = (double)w->queue * queue_factor;
    b.bank = (double)w->bank * bank_factor;
    b.urgency = (double)w->urgency * (double)(urgency - 16);
    if (urgency == 0) {
        b.priority = 0; /* held */
    } else if (urgency == 31) {
        b.priority = UINT32_MAX; /* expedited */
    } else {
        double p = round(b.fairshare + b.queue + b.bank + b.urgency);
        if (!(p >= 0.0))
            p = 0.0;
        if (p > 4294967295.0)
            p = 4294967295.0;
        b.priority = (uint32_t)p;
    }
    *out = b;
    return 0;
}
