/* SPDX-License-Identifier: GPL-3.0-or-later */
/* apply.h - apply one outbox command to Slurm with sacctmgr (doc/design.md §5).
 *
 * Every write is `sacctmgr -i modify account where name=<target> cluster=<cluster> set ...`
 * (always -i: without it sacctmgr waits on stdin).  Before writing, the live value of the
 * account association is read (`sacctmgr -P -n show assoc`); an equal value is not written.
 * "Nothing modified" is success.  After writing, the value is read back; only a read-back
 * equal to the desired value is "confirmed".  RawUsage is read back with sshare.
 * Threads: single-threaded; runs child processes with a bounded wait.
 */
#ifndef ALLOT_AGENT_APPLY_H
#define ALLOT_AGENT_APPLY_H

#include <stddef.h>

struct agent_tools {
    const char *sacctmgr; /* path or name ($ALLOT_SACCTMGR, default "sacctmgr") */
    const char *sshare;   /* ($ALLOT_SSHARE, default "sshare") */
    const char *scontrol; /* ($ALLOT_SCONTROL, default "scontrol"; the sync pass) */
    int timeout_s;        /* per child process */
};

/* Apply command (cluster, kind, target, payload).  Returns 1 confirmed, 0 failed; result
 * receives the evidence (read-back value, or the error text of sacctmgr). */
int agent_apply(const struct agent_tools *t, const char *cluster, const char *kind,
                const char *target, const char *payload, char *result, size_t len);

#endif
