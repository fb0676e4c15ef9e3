/* SPDX-License-Identifier: GPL-3.0-or-later */
/* state.c - the state name table and its parser/formatter (see state.h). */
#include "libslurmtext/state.h"

#include <stdio.h>
#include <string.h>

#include "libslurmtext/field.h"

static const char *const names[ST_STATE_MAX] = {
    [ST_STATE_NONE] = "",
    [ST_STATE_PENDING] = "PENDING",
    [ST_STATE_RUNNING] = "RUNNING",
    [ST_STATE_SUSPENDED] = "SUSPENDED",
    [ST_STATE_COMPLETED] = "COMPLETED",
    [ST_STATE_CANCELLED] = "CANCELLED",
    [ST_STATE_FAILED] = "FAILED",
    [ST_STATE_TIMEOUT] = "TIMEOUT",
    [ST_STATE_NODE_FAIL] = "NODE_FAIL",
    [ST_STATE_PREEMPTED] = "PREEMPTED",
    [ST_STATE_BOOT_FAIL] = "BOOT_FAIL",
    [ST_STATE_DEADLINE] = "DEADLINE",
    [ST_STATE_OUT_OF_MEMORY] = "OUT_OF_MEMORY",
    [ST_STATE_REQUEUED] = "REQUEUED",
    [ST_STATE_REQUEUE_FED] = "REQUEUE_FED",
    [ST_STATE_REQUEUE_HOLD] = "REQUEUE_HOLD",
    [ST_STATE_RESIZING] = "RESIZING",
    [ST_STATE_REVOKED] = "REVOKED",
    [ST_STATE_SPECIAL_EXIT] = "SPECIAL_EXIT",
    [ST_STATE_STOPPED] = "STOPPED",
    [ST_STATE_SIGNALING] = "SIGNALING",
    [ST_STATE_STAGE_OUT] = "STAGE_OUT",
    [ST_STATE_COMPLETING] = "COMPLETING",
    [ST_STATE_CONFIGURING] = "CONFIGURING",
    [ST_STATE_LAUNCH_FAILED] = "LAUNCH_FAILED",
    [ST_STATE_UPDATE_DB] = "UPDATE_DB",
    [ST_STATE_POWER_UP_NODE] = "POWER_UP_NODE",
    [ST_STATE_RESV_DEL_HOLD] = "RESV_DEL_HOLD",
    [ST_STATE_RECONFIG_FAIL] = "RECONFIG_FAIL",
};

const char *st_state_name(enum st_job_state s)
{
    if ((int)s < 0 || s >= ST_STATE_MAX)
        return "?";
    return names[s];
}

int st_state_parse(const char *text, size_t n, const char *field, struct st_state *out,
                   struct allot_error *err)
{
    struct st_span s = {text, n};
    struct st_state r = {ST_STATE_NONE, false, 0};
    if (n == 0) {
        *out = r;
        return 0;
    }
    /* "CANCELLED by <uid>": the only state with a suffix. */
    static const char by[] = "CANCELLED by ";
    if (n > sizeof(by) - 1 && memcmp(text, by, sizeof(by) - 1) == 0) {
        uint64_t uid;
        if (st_uint(text + sizeof(by) - 1, n - (sizeof(by) - 1), UINT32_MAX, &uid) < 0)
            goto bad;
        r.state = ST_STATE_CANCELLED;
        r.has_by_uid = true;
        r.by_uid = (uint32_t)uid;
        *out = r;
        return 0;
    }
    for (int i = 1; i < ST_STATE_MAX; i++) {
        if (names[i][0] == text[0] && st_eq(s, names[i])) {
            r.state = (enum st_job_state)i;
            *out = r;
            return 0;
        }
    }
bad:
    return st_field_error(err, field, "unknown state", s);
}

int st_state_format(const struct st_state *s, char *buf, size_t len, struct allot_error *err)
{
    char tmp[64];
    int n;
    if ((int)s->state < 0 || s->state >= ST_STATE_MAX)
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

bool st_state_is_final(enum st_job_state s)
{
    switch (s) {
    case ST_STATE_COMPLETED:
    case ST_STATE_FAILED:
    case ST_STATE_TIMEOUT:
    case ST_STATE_CANCELLED:
    case ST_STATE_NODE_FAIL:
    case ST_STATE_OUT_OF_MEMORY:
    case ST_STATE_PREEMPTED:
    case ST_STATE_BOOT_FAIL:
    case ST_STATE_DEADLINE:
    case ST_STATE_REVOKED:
        return true;
    default:
        return false;
    }
}
