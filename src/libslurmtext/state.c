/* SPDX-License-Identifier: GPL-3.0-or-later */
/* state.c - the state name table and its parser/formatter (see state.h). */
#include "libslurmtext/state.h"

#include <stdio.h>
#include <string.h>

#include "libslurmtext/field.h"

static const char *const names[SLT_STATE_MAX] = {
    [SLT_STATE_NONE] = "",
    [SLT_STATE_PENDING] = "PENDING",
    [SLT_STATE_RUNNING] = "RUNNING",
    [SLT_STATE_SUSPENDED] = "SUSPENDED",
    [SLT_STATE_COMPLETED] = "COMPLETED",
    [SLT_STATE_CANCELLED] = "CANCELLED",
    [SLT_STATE_FAILED] = "FAILED",
    [SLT_STATE_TIMEOUT] = "TIMEOUT",
    [SLT_STATE_NODE_FAIL] = "NODE_FAIL",
    [SLT_STATE_PREEMPTED] = "PREEMPTED",
    [SLT_STATE_BOOT_FAIL] = "BOOT_FAIL",
    [SLT_STATE_DEADLINE] = "DEADLINE",
    [SLT_STATE_OUT_OF_MEMORY] = "OUT_OF_MEMORY",
    [SLT_STATE_REQUEUED] = "REQUEUED",
    [SLT_STATE_REQUEUE_FED] = "REQUEUE_FED",
    [SLT_STATE_REQUEUE_HOLD] = "REQUEUE_HOLD",
    [SLT_STATE_RESIZING] = "RESIZING",
    [SLT_STATE_REVOKED] = "REVOKED",
    [SLT_STATE_SPECIAL_EXIT] = "SPECIAL_EXIT",
    [SLT_STATE_STOPPED] = "STOPPED",
    [SLT_STATE_SIGNALING] = "SIGNALING",
    [SLT_STATE_STAGE_OUT] = "STAGE_OUT",
    [SLT_STATE_COMPLETING] = "COMPLETING",
    [SLT_STATE_CONFIGURING] = "CONFIGURING",
    [SLT_STATE_LAUNCH_FAILED] = "LAUNCH_FAILED",
    [SLT_STATE_UPDATE_DB] = "UPDATE_DB",
    [SLT_STATE_POWER_UP_NODE] = "POWER_UP_NODE",
    [SLT_STATE_RESV_DEL_HOLD] = "RESV_DEL_HOLD",
    [SLT_STATE_RECONFIG_FAIL] = "RECONFIG_FAIL",
};

const char *slt_state_name(enum slt_job_state s)
{
    if ((int)s < 0 || s >= SLT_STATE_MAX)
        return "?";
    return names[s];
}

int slt_state_parse(const char *text, size_t n, const char *field, struct slt_state *out,
                    struct allot_error *err)
{
    struct slt_span s = {text, n};
    struct slt_state r = {SLT_STATE_NONE, false, 0};
    if (n == 0) {
        *out = r;
        return 0;
    }
    /* "CANCELLED by <uid>": the only state with a suffix. */
    static const char by[] = "CANCELLED by ";
    if (n > sizeof(by) - 1 && memcmp(text, by, sizeof(by) - 1) == 0) {
        uint64_t uid;
        if (slt_uint(text + sizeof(by) - 1, n - (sizeof(by) - 1), UINT32_MAX, &uid) < 0)
            goto bad;
        r.state = SLT_STATE_CANCELLED;
        r.has_by_uid = true;
        r.by_uid = (uint32_t)uid;
        *out = r;
        return 0;
    }
    for (int i = 1; i < SLT_STATE_MAX; i++) {
        if (names[i][0] == text[0] && slt_eq(s, names[i])) {
            r.state = (enum slt_job_state)i;
            *out = r;
            return 0;
        }
    }
bad:
    return slt_field_error(err, field, "unknown state", s);
}

int slt_state_format(const struct slt_state *s, char *buf, size_t len, struct allot_error *err)
{
    char tmp[64];
    int n;
    if ((int)s->state < 0 || s->state >= SLT_STATE_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "state: unknown value %d", (int)s->state);
    if (s->has_by_uid)
        n = snprintf(tmp, sizeof(tmp), "%s by %u", names[s->state], s->by_uid);
    else
        n = snprintf(tmp, sizeof(tmp), "%s", names[s->state]);
    if ((size_t)n >= len)
        return allot_errorf(err, ALLOT_ETOOBIG, "state: buffer of %zu bytes too small", len);
    memcpy(buf, tmp, (size_t)n + 1);
    return n;
}

bool slt_state_is_final(enum slt_job_state s)
{
    switch (s) {
    case SLT_STATE_COMPLETED:
    case SLT_STATE_FAILED:
    case SLT_STATE_TIMEOUT:
    case SLT_STATE_CANCELLED:
    case SLT_STATE_NODE_FAIL:
    case SLT_STATE_OUT_OF_MEMORY:
    case SLT_STATE_PREEMPTED:
    case SLT_STATE_BOOT_FAIL:
    case SLT_STATE_DEADLINE:
    case SLT_STATE_REVOKED:
        return true;
    default:
        return false;
    }
}
