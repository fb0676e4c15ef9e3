/* SPDX-License-Identifier: GPL-3.0-or-later */
/* state.h - Slurm job/step states as sacct and squeue print them ("COMPLETED",
 * "OUT_OF_MEMORY", "NODE_FAIL", "CANCELLED by 0", ...).
 *
 * Design: one enum, one name table (the names of Slurm 22.05's job_state_string and its
 * flag states).  "CANCELLED by <uid>" keeps the uid.  Empty text is ST_STATE_NONE.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_SLURMTEXT_STATE_H
#define ALLOT_SLURMTEXT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

enum st_job_state {
    ST_STATE_NONE = 0, /* empty field */
    ST_STATE_PENDING,
    ST_STATE_RUNNING,
    ST_STATE_SUSPENDED,
    ST_STATE_COMPLETED,
    ST_STATE_CANCELLED,
    ST_STATE_FAILED,
    ST_STATE_TIMEOUT,
    ST_STATE_NODE_FAIL,
    ST_STATE_PREEMPTED,
    ST_STATE_BOOT_FAIL,
    ST_STATE_DEADLINE,
    ST_STATE_OUT_OF_MEMORY,
    ST_STATE_REQUEUED,
    ST_STATE_REQUEUE_FED,
    ST_STATE_REQUEUE_HOLD,
    ST_STATE_RESIZING,
    ST_STATE_REVOKED,
    ST_STATE_SPECIAL_EXIT,
    ST_STATE_STOPPED,
    ST_STATE_SIGNALING,
    ST_STATE_STAGE_OUT,
    ST_STATE_COMPLETING,
    ST_STATE_CONFIGURING,
    ST_STATE_LAUNCH_FAILED,
    ST_STATE_UPDATE_DB,
    ST_STATE_POWER_UP_NODE,
    ST_STATE_RESV_DEL_HOLD,
    ST_STATE_RECONFIG_FAIL,
    ST_STATE_MAX
};

struct st_state {
    enum st_job_state state;
    bool has_by_uid;  /* "CANCELLED by <uid>" */
    uint32_t by_uid;
};

/* Parse text[0..n).  Errors: ALLOT_EINVAL naming field and text; out untouched. */
int st_state_parse(const char *text, size_t n, const char *field, struct st_state *out,
                   struct allot_error *err);

/* Write s as Slurm prints it.  Returns the length or -1 with ALLOT_ETOOBIG/EINVAL
 * (buf untouched).  48 bytes suffice. */
int st_state_format(const struct st_state *s, char *buf, size_t len, struct allot_error *err);

/* Slurm's name of a state ("" for NONE, "?" out of range); static storage. */
const char *st_state_name(enum st_job_state s);

/* A state after which the job or step will not run again (COMPLETED, FAILED, TIMEOUT,
 * CANCELLED, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE, REVOKED). */
bool st_state_is_final(enum st_job_state s);

#endif
