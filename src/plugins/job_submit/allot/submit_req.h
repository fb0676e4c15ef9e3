/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * submit_req.h - translate Slurm's job_desc_msg_t, as job_submit sees it, into the plain
 * request allot admits (doc/design.md §3.5; doc/slurm.md "What happens to a job").
 *
 * job_submit runs before slurmctld applies defaults, so account, partition and time limit
 * may be unset.  The rules: the account defaults to the user's default account; exactly
 * one partition (the default one when none is given); the time limit defaults to the
 * partition's DefaultTime, else its finite MaxTime, and a job with neither is refused;
 * a --time-min above the time limit is refused (without one the job is scheduled with its
 * whole limit, which keeps backfill honest: Slurm's own reading of an unset time_min, so it
 * is not written into the job, where it would stop a user lowering the limit later);
 * memory defaults to a per-CPU value.
 * What the translation cannot know (default account, partitions) comes from a
 * submit_env_t the caller provides, so the rules are tested without slurmctld.
 * Uses Slurm's public headers only.  No allocation: fixed buffers, bounded copies.
 * Threads: reentrant; the env callbacks must be too.
 */
#ifndef ALLOT_PLUGINS_JOB_SUBMIT_ALLOT_SUBMIT_REQ_H
#define ALLOT_PLUGINS_JOB_SUBMIT_ALLOT_SUBMIT_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/slurm.h>

enum {
    SUBMIT_NAME_MAX = 128, /* account, partition, qos, with the NUL */
    SUBMIT_TRES_MAX = 256, /* tres_per_* strings, with the NUL */
};

/* A time in minutes that is not set / unlimited (Slurm's NO_VAL / INFINITE). */
#define SUBMIT_TIME_UNSET NO_VAL
#define SUBMIT_TIME_UNLIMITED INFINITE

typedef struct submit_partition_info {
    uint32_t default_time_min;   /* DefaultTime, minutes; SUBMIT_TIME_UNSET if none */
    uint32_t max_time_min;       /* MaxTime, minutes; SUBMIT_TIME_UNLIMITED if INFINITE */
    uint64_t def_mem_per_cpu_mb; /* DefMemPerCPU, MB; 0 if none */
} submit_partition_info_t;

typedef struct submit_env {
    /* Copy UID's default account into BUF (SIZE bytes); 0, or -1 when it has none. */
    int (*default_account)(uint32_t uid, char *buf, size_t size, void *arg);
    /* Copy the default partition's name into BUF; 0, or -1 when there is none. */
    int (*default_partition)(char *buf, size_t size, void *arg);
    /* Fill OUT for partition NAME; 0, or -1 when no such partition exists. */
    int (*partition_info)(const char *name, submit_partition_info_t *out, void *arg);
    uint64_t site_mem_per_cpu_mb; /* used when the partition has no DefMemPerCPU; 0: none */
    void *arg;                    /* passed to the callbacks */
} submit_env_t;

typedef struct submit_req {
    uint32_t uid;                    /* the job's user */
    char account[SUBMIT_NAME_MAX];   /* never empty */
    char partition[SUBMIT_NAME_MAX]; /* exactly one, never empty */
    char qos[SUBMIT_NAME_MAX];       /* "" when not given (the association's default) */
    uint32_t time_limit_min;         /* finite, > 0 */
    uint32_t time_min_min;           /* --time-min, else time_limit_min; <= time_limit_min */
    uint32_t min_nodes;              /* >= 1 */
    uint32_t min_cpus;               /* >= 1 */
    uint64_t mem_mb;                 /* per CPU if mem_per_cpu, else per node; 0: none */
    bool mem_per_cpu;
    bool mem_defaulted;                 /* mem_mb came from a default, not the user */
    char tres_per_job[SUBMIT_TRES_MAX]; /* Slurm's text ("gres:gpu:2"), "" if none */
    char tres_per_node[SUBMIT_TRES_MAX];
    char tres_per_task[SUBMIT_TRES_MAX];
} submit_req_t;

/*
 * submit_req_from_desc - apply the rules above to DESC submitted by SUBMIT_UID.
 * Inputs are only read.  On success returns SLURM_SUCCESS and fills *OUT.  On refusal
 * returns the Slurm error code to give back (ESLURM_INVALID_ACCOUNT,
 * ESLURM_INVALID_PARTITION_NAME, ESLURM_MISSING_TIME_LIMIT, ESLURM_INVALID_TIME_LIMIT,
 * ESLURM_INVALID_TIME_MIN_LIMIT, ESLURM_INVALID_QOS, ESLURM_INVALID_TRES), writes a
 * message a user can act on into MSG (MSG_SIZE bytes, always NUL-terminated when
 * MSG_SIZE > 0) and leaves *OUT untouched.
 */
int submit_req_from_desc(const job_desc_msg_t *desc, uint32_t submit_uid, const submit_env_t *env,
                         submit_req_t *out, char *msg, size_t msg_size);

/*
 * submit_req_apply - write the defaults REQ decided back into DESC, so slurmctld
 * schedules the job as allot priced it: the per-CPU memory when the user gave no memory
 * request.  The account, partition and time limit are left
 * to slurmctld, which applies the same defaults.  Never fails.
 */
void submit_req_apply(const submit_req_t *req, job_desc_msg_t *desc);

/*
 * submit_req_tres - REQ's requested TRES in Slurm's syntax for allotd's admission:
 * "cpu=C,mem=MM,node=N" plus "gres/NAME=K" for each GRES of tres_per_job (as is),
 * tres_per_node (times the nodes) and tres_per_task (times the nodes: a lower bound, the
 * hold at start bills what was really allocated).  GRES types are dropped ("gpu:a100:2" is
 * gres/gpu=2), as billing weights name the GRES.  Writes BUF (SIZE bytes); 0, or -1 when
 * it does not fit or a GRES entry cannot be read (BUF then holds "").
 */
int submit_req_tres(const submit_req_t *req, char *buf, size_t size);

#endif
