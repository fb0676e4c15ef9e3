/* SPDX-License-Identifier: GPL-3.0-or-later */
/* subproc.h - run a program by argv (never through a shell) with a bounded wait, capturing
 * its stdout and the first bytes of its stderr apart.  The one fork/exec of the tree: the
 * agent's Slurm tools, allot-step's helpers and the CLI's sacct all run through it.
 *
 * The child's stdin is /dev/null (a tool that asks a question reads EOF, never waits on a
 * terminal).  The whole run, start, reading and reaping, ends by the deadline: past it the
 * child (with own_group, its whole process group) gets SIGKILL and is reaped, so a hung tool,
 * or one that closed its output and kept running, costs at most timeout_ms.  A program that
 * cannot be started is told apart from one that ran and failed (exec_errno).
 * Threads: the child makes only async-signal-safe calls between fork and exec, so a program
 * with other threads may call it; one run per call, no SIGCHLD handler needed.
 */
#ifndef ALLOT_LIBUTIL_SUBPROC_H
#define ALLOT_LIBUTIL_SUBPROC_H

#include <stddef.h>
#include <stdint.h>

#define SUBPROC_ERR_MAX 2048

struct subproc_opts {
    char *const *env;   /* NULL: the caller's environment; else NAME=value entries added to
                         * it, each replacing the same NAME */
    int64_t timeout_ms; /* the whole run */
    size_t out_max;     /* stdout bytes kept; past them too_big is set */
    int kill_at_cap;    /* 1: stdout past out_max kills the child at once; 0: the rest is
                         * read and dropped, so the child runs to its end */
    int own_group;      /* 1: the child leads a process group of its own, killed whole */
};

struct subproc_result {
    char *out;      /* stdout, NUL-terminated, malloc'd (NULL when nothing was read) */
    size_t n;       /* bytes in out */
    int too_big;    /* stdout passed out_max: out holds only its first bytes */
    int timed_out;  /* killed at the deadline */
    int exec_errno; /* nonzero: the program could not be started (errno of the cause) */
    int status;     /* exit status 0..255, 128 + signal, -1 (timed out, no child made); 127
                     * when exec failed, as a shell reports it */
    int signo;      /* the signal the child died of, else 0 */
    char err[SUBPROC_ERR_MAX]; /* stderr's first bytes; when subproc_run fails, why */
};

/* Run argv[0] (looked up in PATH) with argv under *o.  Returns 0 when the program ran to its
 * end (read r->status and r->signo; too_big may be set), -1 when it could not be started,
 * timed out, or its output could not be read (r->err says which, naming argv[0]).  *r is
 * always initialised; free it with subproc_result_free. */
int subproc_run(char *const argv[], const struct subproc_opts *o, struct subproc_result *r);

/* Frees r->out; r itself is the caller's.  NULL is a no-op. */
void subproc_result_free(struct subproc_result *r);

#endif
