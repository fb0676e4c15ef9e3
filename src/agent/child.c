/* SPDX-License-Identifier: GPL-3.0-or-later */
/* child.c - bounded runs of Slurm tools (see child.h): libutil/subproc.c with the agent's
 * rules (own process group, the errors in its words). */
#include "agent/child.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/subproc.h"

int child_run(char *const argv[], char *const env[], int timeout_s, size_t max_out,
              struct child_out *c)
{
    struct subproc_opts o = {
        .env = env,
        .timeout_ms = (int64_t)timeout_s * 1000,
        .out_max = max_out,
        .own_group = 1, /* a tool's own children die with it at the deadline */
    };
    struct subproc_result r;
    int ok = subproc_run(argv, &o, &r) == 0;
    memset(c, 0, sizeof *c);
    c->out = r.out;
    c->n = r.n;
    c->too_big = r.too_big;
    snprintf(c->errtext, sizeof c->errtext, "%s", r.err);
    if (r.timed_out)
        snprintf(c->errtext, sizeof c->errtext, "%s timed out after %d s (killed)", argv[0],
                 timeout_s);
    else if (ok && r.signo)
        snprintf(c->errtext, sizeof c->errtext, "%s died of signal %d", argv[0], r.signo);
    if (r.exec_errno && r.status == 127)
        return 127; /* exec failed: what a shell answers for a tool it cannot run */
    return ok && !r.signo ? r.status : -1;
}

void child_out_free(struct child_out *c)
{
    if (!c)
        return;
    free(c->out);
    c->out = NULL;
    c->n = 0;
}
