/* SPDX-License-Identifier: GPL-3.0-or-later */
/* argv.h - argument vectors for srun, sstat, sacct and squeue, ready for execvp: no shell
 * strings, so job names and commands reach Slurm exactly as given, whatever they contain.
 *
 * Design: a struct slt_argv owns a fixed buffer for the strings it formats and an array of
 * pointers; the user's command words are borrowed (not copied), so a long command line costs
 * no copy.  No allocation.  argv[argc] is always NULL.
 * Thread rule: one slt_argv per thread; builders are reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_ARGV_H
#define ALLOT_LIBSLURMTEXT_ARGV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

#define SLT_ARGV_MAX 1024
#define SLT_ARGV_BUF 4096

struct slt_argv {
    size_t argc;
    char *argv[SLT_ARGV_MAX + 1];
    size_t used; /* bytes of buf in use */
    char buf[SLT_ARGV_BUF];
};

void slt_argv_init(struct slt_argv *a);
/* Append a copy of s / a printf-formatted string.  Errors: ETOOBIG (a unchanged). */
int slt_argv_add(struct slt_argv *a, const char *s, struct allot_error *err);
int slt_argv_addf(struct slt_argv *a, struct allot_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Append s without copying: s must outlive a.  Errors: ETOOBIG. */
int slt_argv_add_borrowed(struct slt_argv *a, char *s, struct allot_error *err);

/* What allot-step asks of srun (doc/design.md §7.1). */
struct slt_srun_opts {
    uint32_t job_id;        /* --jobid */
    const char *step_name;  /* --job-name, required */
    uint32_t nodes;         /* --nodes, >= 1 */
    uint32_t cpus_per_task; /* --cpus-per-task, 0 = not passed */
    int64_t mem_mb;         /* --mem=<N>M, 0 = not passed */
    int64_t time_min;       /* --time=<N>, 0 = not passed */
    bool cpu_bind;          /* false: --cpu-bind=none */
    const char *signal;     /* --signal=<spec> ("TERM@120"), NULL = none */
};

/* srun --jobid=J --ntasks=1 --exact [--cpu-bind=none] --job-name=N --nodes=K
 *      [--cpus-per-task=C] [--mem=MM] [--time=T] [--signal=S] CMD...
 * cmd is a NULL-terminated vector, borrowed.  Errors: EINVAL (no name, nodes 0, empty cmd,
 * a signal spec that is not [A-Z0-9]+@N or [A-Z0-9]+), ETOOBIG. */
int slt_argv_srun(struct slt_argv *a, const char *srun, const struct slt_srun_opts *o,
                  char *const cmd[], struct allot_error *err);

/* sstat -n -P -j JOB.STEP --format=FORMAT */
int slt_argv_sstat(struct slt_argv *a, const char *sstat, uint32_t job, uint32_t step,
                   const char *format, struct allot_error *err);

/* sacct -n -P -j JOB --format=FORMAT [--allocations] */
int slt_argv_sacct(struct slt_argv *a, const char *sacct, uint32_t job, const char *format,
                   bool allocations, struct allot_error *err);

/* squeue --steps -h -j JOB -o "%i|%j" (SLT_SQUEUE_STEP_FORMAT) */
int slt_argv_squeue_steps(struct slt_argv *a, const char *squeue, uint32_t job,
                          struct allot_error *err);

/* squeue -h -j JOB -o %L: the allocation's time left (duration or UNLIMITED/NOT_SET). */
int slt_argv_squeue_time_left(struct slt_argv *a, const char *squeue, uint32_t job,
                              struct allot_error *err);

/* The per-step --time: whole minutes left in the allocation, rounded down, at least
 * 1, computed from left_s - 1 so a whole number of minutes left gives one minute less (the
 * step's limit must fire before the allocation's).  left_s < 0 means unlimited: returns 0
 * (do not pass --time). */
int64_t slt_step_time_min(int64_t left_s);

#endif
