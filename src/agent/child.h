/* SPDX-License-Identifier: GPL-3.0-or-later */
/* child.h - run one Slurm tool (sacctmgr, sshare, sacct) as a child process, by argv (never
 * through a shell), with a bounded wait.
 *
 * The child runs in its own process group with stdin on /dev/null (a tool that asks a
 * question gets EOF, never waits on the agent's terminal).  stdout is captured whole up to
 * a cap; stderr's first CHILD_ERR_MAX bytes are kept apart, so a warning on stderr never
 * mixes into the rows being parsed.  The whole run, reading and reaping included, ends by
 * the deadline: past it the process group is killed with SIGKILL and the child reaped, so a
 * hung tool (or one that closed its output and kept running, or left a grandchild holding
 * the pipe) costs at most timeout_s.
 * Threads: call from one thread; fork/exec only (no allocation in the child).
 */
#ifndef ALLOT_AGENT_CHILD_H
#define ALLOT_AGENT_CHILD_H

#include <stddef.h>

#define CHILD_ERR_MAX 2048

struct child_out {
    char *out;   /* stdout, NUL-terminated, malloc'd (NULL when nothing was read) */
    size_t n;    /* bytes in out */
    int too_big; /* stdout exceeded max_out: out holds only its first bytes, do not parse */
    char errtext[CHILD_ERR_MAX]; /* stderr's first bytes, or why the run failed */
};

/* Run argv[0] (looked up in PATH) with argv; env: NULL for the agent's environment, else
 * a NULL-terminated list of "NAME=value" entries added to it (used for TZ).  Returns the
 * exit status (0..255), or -1 when the tool could not run, died of a signal or was killed at
 * the timeout (errtext says which).  *c is always initialised; free it with child_out_free. */
int child_run(char *const argv[], char *const env[], int timeout_s, size_t max_out,
              struct child_out *c);

void child_out_free(struct child_out *c);

#endif
