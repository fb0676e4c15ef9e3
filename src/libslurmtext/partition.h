/* SPDX-License-Identifier: GPL-3.0-or-later */
/* partition.h - one line of `scontrol show partition -o` (Slurm 22.05): the partition
 * facts allot keeps a copy of.
 *
 * Design: a line is space-separated Key=Value words; a value runs to the next space and may
 * itself hold '=' (TRESBillingWeights=CPU=4.0,Mem=0.25G), so a word splits at its first '='.
 * MaxTime is UNLIMITED or a duration; DefaultTime is NONE or a duration; a partition without
 * weights prints no TRESBillingWeights word; QoS is N/A without a partition QOS.  Unknown keys are
 * skipped (each release adds some).  No allocation. Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_PARTITION_H
#define ALLOT_LIBSLURMTEXT_PARTITION_H

#include <stdint.h>

#include "allot/error.h"
#include "libslurmtext/field.h"

#define SLT_PART_NAME_MAX 64
#define SLT_PART_WEIGHTS_MAX 256

struct slt_partition {
    char name[SLT_PART_NAME_MAX];
    char billing_weights[SLT_PART_WEIGHTS_MAX]; /* "" = none */
    int64_t max_time_s;                         /* -1 = UNLIMITED */
    int64_t default_time_s;                     /* -1 = NONE */
    char qos[SLT_PART_NAME_MAX];                /* the partition QOS; "" = none (QoS=N/A) */
};

/* Parse one line.  Errors: EINVAL naming the key (no PartitionName, a time that is not a
 * duration, a name or weights too long, a word without '='); *out untouched on error. */
int slt_partition_parse(struct slt_span line, struct slt_partition *out, struct allot_error *err);

#endif
