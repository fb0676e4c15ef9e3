/* SPDX-License-Identifier: GPL-3.0-or-later */
/* submit_group.c - a heterogeneous job's components at admission (submit_group.h). */
#include "plugins/job_submit/allot/submit_group.h"

#include <string.h>

int64_t submit_group_begin(submit_group_t *g, uint32_t uid, uint32_t offset)
{
    if (offset == 0 || g->uid != uid || g->next_offset != offset) {
        memset(g, 0, sizeof(*g));
        g->uid = uid;
        g->next_offset = offset;
    }
    return g->sumin;
}

void submit_group_admitted(submit_group_t *g, uint32_t offset, int64_t cost_sumin, int64_t token)
{
    if (g->next_offset != offset)
        return;
    g->sumin += cost_sumin;
    if (token && g->ntokens < SUBMIT_GROUP_MAX)
        g->tokens[g->ntokens++] = token;
    g->next_offset = offset + 1;
}

int submit_group_refused(submit_group_t *g, int64_t *out, int max)
{
    int n = g->ntokens < max ? g->ntokens : max;
    memcpy(out, g->tokens, sizeof(out[0]) * (size_t)n);
    memset(g, 0, sizeof(*g));
    g->next_offset = UINT32_MAX; /* closed: only an offset 0 starts the next */
    return n;
}
