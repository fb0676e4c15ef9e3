/* SPDX-License-Identifier: GPL-3.0-or-later */
/* state.h - Slurm job/step states as sacct and squeue print them ("COMPLETED",
 * "OUT_OF_MEMORY", "NODE_FAIL", "CANCELLED by 0", ...).
 *
 * Design: one enum, one name table (the names of Slurm 22.05's job_state_string and its
 * flag states).  "CANCELLED by <uid>" keeps the uid.  Empty text is SLT_STATE_NONE.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_STATE_H
#define ALLOT_LIBSLURMTEXT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

enum slt_job_state {
    SLT_STATE_NONE = 0, /* empty field */
    SLT_STATE_PENDING,
    SLT_STATE_RUNNING,
    SLT_STATE_SUSPENDED,
    SLT_STATE_COMPLETED,
    SLT_STATE_CANCELLED,
    SLT_STATE_FAILED,
    SLT_STATE_TIMEOUT,
    SLT_STATE_NODE_FAIL,
    SLT_STATE_PREEMPTED,
    SLT_STATE_BOOT_FAIL,
    SLT_STATE_DEADLINE,
    SLT_STATE_OUT_OF_MEMORY,
    SLT_STATE_REQUEUED,
    SLT_STATE_REQUEUE_FED,
    SLT_STATE_REQUEUE_HOLD,
    SLT_STATE_RESIZING,
    SLT_STATE_REVOKED,
    SLT_STATE_SPECIAL_EXIT,
    SLT_STATE_STOPPED,
    SLT_STATE_SIGNALING,
    SLT_STATE_STAGE_OUT,
    SLT_STATE_COMPLETING,
    SLT_STATE_CONFIGURING,
    SLT_STATE_LAUNCH_FAILED,
    SLT_STATE_UPDATE_DB,
    SLT_STATE_POWER_UP_NODE,
    SLT_STATE_RESV_DEL_HOLD,
    SLT_STATE_RECONFIG_FAIL,
    SLT_STATE_MAX
};

struct slt_state {
    enum slt_job_state state;
    bool has_by_uid; /* "CANCELLED by <uid>" */
    uint32_t by_uid;
};

/* Parse text[0..n).  Errors: ALLOT_EINVAL naming field and text; out untouched. */
int slt_state_parse(const char *text, size_t n, const char *field, struct slt_state *out,
                    struct allot_error *err);

/* Write s as Slurm prints it.  Returns the length or -1 with ALLOT_ETOOBIG/EINVAL
 * (buf untouched).  48 bytes suffice. */
int slt_state_format(const struct slt_state *s, char *buf, size_t len, struct allot_error *err);

/* Slurm's name of a state ("" for NONE, "?" out of range); static storage. */
const char *slt_state_name(enum slt_job_state s);

/* A state after which the job or step will not run again (COMPLETED, FAILED, TIMEOUT,
 * CANCELLED, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE, REVOKED). */
bool slt_state_is_final(enum slt_job_state s);

#endif
