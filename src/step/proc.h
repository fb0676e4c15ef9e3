/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc.h - running helper commands (squeue, sstat, sacct) for allot-step: fork/exec of an
 * argv (no shell), stdout captured into a caller buffer, stderr kept for messages, all under
 * a hard time bound after which the child is killed and reaped.
 * Thread rule: single-threaded program; not reentrant across threads (SIGCHLD not used).
 */
#ifndef ALLOT_STEP_PROC_H
#define ALLOT_STEP_PROC_H

#include <stddef.h>

struct proc_out {
    char *out;     /* caller buffer for stdout */
    size_t cap;    /* its size; output beyond cap - 1 is read and dropped */
    size_t len;    /* bytes kept (out[len] = '\0') */
    char err[512]; /* first bytes of stderr, NUL-terminated */
    int status;    /* shell-style: exit status, 128 + signal, -1 not run / timed out */
    int timed_out; /* 1 when killed at the deadline */
};

/* Run argv[0] (searched in PATH) with stdin from /dev/null, waiting at most timeout_ms.
 * Returns 0 when the command ran to completion (look at o->status), -1 when it could not be
 * started or timed out (o->err says why). */
int proc_capture(char *const argv[], int timeout_ms, struct proc_out *o);

#endif
