/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc.c - bounded capture of a helper command's output (see proc.h): libutil/subproc.c
 * into the caller's buffer.  At the deadline the child gets SIGKILL and is reaped, so a hung
 * sacct (slurmdbd down) never hangs allot-step. */
#include "step/proc.h"

#include <string.h>

#include "libutil/subproc.h"

int proc_capture(char *const argv[], int timeout_ms, struct proc_out *o)
{
    struct subproc_opts opts = {.timeout_ms = timeout_ms, .out_max = o->cap - 1};
    struct subproc_result r;
    int rc = subproc_run(argv, &opts, &r);
    /* Output beyond cap - 1 was read and dropped: the first bytes are what is kept. */
    o->len = r.n < o->cap - 1 ? r.n : o->cap - 1;
    if (o->len)
        memcpy(o->out, r.out, o->len);
    o->out[o->len] = '\0';
    size_t en = strlen(r.err);
    if (en > sizeof(o->err) - 1)
        en = sizeof(o->err) - 1;
    memcpy(o->err, r.err, en);
    o->err[en] = '\0';
    o->timed_out = r.timed_out;
    if (r.exec_errno && r.status == 127)
        rc = 0; /* ran and failed, as a shell reports a command it cannot run */
    o->status = rc == 0 ? r.status : -1;
    subproc_result_free(&r);
    return rc;
}
