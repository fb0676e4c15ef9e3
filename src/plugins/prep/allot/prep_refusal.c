/* SPDX-License-Identifier: GPL-3.0-or-later */
/* prep_refusal.c - the action and reason for a job whose start hold was refused
 * (prep_refusal.h). */
#include "plugins/prep/allot/prep_refusal.h"

#include <stdio.h>

enum prep_refusal_action prep_refusal_decide(int cancel_mode, const struct allot_job_result *res)
{
    if (cancel_mode)
        return PREP_REFUSAL_CANCEL;
    /* A limit, not credit, refused it; or no allocation pays for it at all. */
    if (res->refusal != ALLOT_EFUNDS || res->alloc_id <= 0)
        return PREP_REFUSAL_NEVER;
    /* available + held is all the allocation has left: more than that never frees up. */
    if (res->cost_sumin > res->available_sumin + res->held_sumin)
        return PREP_REFUSAL_NEVER;
    return PREP_REFUSAL_WAIT;
}

void prep_refusal_reason(enum prep_refusal_action action, int retry_s,
                         const struct allot_job_result *res, char *buf, size_t size)
{
    if (size == 0)
        return;
    switch (action) {
    case PREP_REFUSAL_WAIT:
        snprintf(buf, size, "allot: waiting for credit, start retried every %d s: %s", retry_s,
                 res->message);
        break;
    case PREP_REFUSAL_NEVER:
        snprintf(buf, size,
                 "allot: cancelled, its allocation cannot cover it even when other jobs end: %s",
                 res->message);
        break;
    case PREP_REFUSAL_CANCEL:
    default:
        snprintf(buf, size, "allot: cancelled at start (StartRefusal=cancel): %s", res->message);
        break;
    }
}
