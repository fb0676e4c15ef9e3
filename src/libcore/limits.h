/* SPDX-License-Identifier: GPL-3.0-or-later */
/* limits.h - Slurm association / QOS / partition limits: validation, resolution of the
 * effective limit with its provenance, and the submit-time check (doc/design.md §4, Slurm's
 * "Resource Limits" page).
 *
 * Design: one static table lists every limit Slurm has (Fairshare excluded: shares,
 * not a limit) with its type and where it is valid.  The storage layer keeps values as
 * canonical strings made by limits_validate(); limits_resolve() walks a chain of levels in
 * Slurm's order (partition QOS, job QOS - swapped when the job QOS has OverPartQOS - user
 * association, account associations up to root, partition) and keeps, per limit, the first
 * level that sets it, except that:
 *   - Grp* limits take the most restrictive value over all levels (per TRES for lists);
 *   - MaxWallDurationPerJob and Min/Max node counts are bounded by the partition's MaxTime,
 *     MinNodes, MaxNodes unless the job QOS has PartitionTimeLimit / PartitionMinNodes /
 *     PartitionMaxNodes (Slurm job_mgr.c _part_access_check / job_limits_check);
 *   - LimitFactor (of the first QOS in the order that sets it, as acct_policy.c does) scales
 *     association GrpTRES and MaxTRESPerJob, floor, never QOS limits; allotd puts the QOS
 *     record's limit_factor in the chain as the QOS level's LimitFactor (its one source).
 * QOS limits named per user (MaxJobsPerUser, MaxSubmitJobsPerUser, MaxJobsAccruePerUser)
 * resolve together with the association limit they override (MaxJobs, MaxSubmitJobs,
 * MaxJobsAccrue), under the association's name; partition MaxTime resolves as
 * MaxWallDurationPerJob, MaxNodes / MinNodes as node= in MaxTRESPerJob / MinTRESPerJob.
 * Owner strings in a chain are borrowed: the result points into the caller's chain.
 * Thread rule: reentrant; results are plain data (large: keep struct limit_effective off
 * small stacks).
 */
#ifndef ALLOT_LIBCORE_LIMITS_H
#define ALLOT_LIBCORE_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libcore/model.h"
#include "libcore/tres.h"

enum limit_type {
    LIMIT_COUNT = 0,    /* jobs, priority, nodes: integer >= 0 */
    LIMIT_MINUTES,      /* durations stored in minutes (MaxWall, GrpWall, MaxTime) */
    LIMIT_SECONDS,      /* GraceTime: seconds */
    LIMIT_TRES,         /* TRES list (counts) */
    LIMIT_TRES_MINUTES, /* TRES list of TRES-minutes */
    LIMIT_FACTOR,       /* decimal factor, stored in ppm internally */
};

/* Where a limit is valid (bit set). */
#define LIMIT_IN_ASSOC 1u /* user, account and root associations */
#define LIMIT_IN_QOS 2u
#define LIMIT_IN_PARTITION 4u

struct limit_def {
    const char *name; /* Slurm's spelling */
    const char *key;  /* name of the effective limit it resolves as */
    enum limit_type type;
    unsigned where; /* LIMIT_IN_* bits */
    int grp;        /* 1: most restrictive level wins */
};

/* The table of limits; *n receives its length.  Static, never NULL. */
const struct limit_def *limits_table(size_t *n);

/* The definition of name (case-insensitive, Slurm aliases such as MaxWall, MaxTRES,
 * MaxSubmit, MaxJobsPU; in QOS scope MaxJobs means MaxJobsPerUser) valid in scope, or NULL.
 * flux-accounting's association limits are aliases too: max_active_jobs = MaxSubmitJobs,
 * max_running_jobs = MaxJobs, max_nodes and max_cores = GrpTRES (see limits_validate). */
const struct limit_def *limits_find(enum limit_scope scope, const char *name);

/* Validate value for limit name in scope and write its canonical text into canon (len
 * bytes); the canonical NAME is limits_find()->name.  Canonical values: integers for counts,
 * minutes for durations (Slurm formats min, min:sec, h:m:s, d-h, d-h:m, d-h:m:s; seconds
 * round up, as Slurm's time_str2mins), seconds for GraceTime (h:m:s or a bare number of
 * seconds), tres.h's canonical list for TRES (an item "name=-1" clears that TRES and is
 * kept, after the set items), the shortest decimal for factors (at most 6 fraction digits).
 * "-1", "UNLIMITED" and "INFINITE" give "-1": clear the limit.  max_nodes=N and
 * max_cores=N take a count and give GrpTRES "node=N" / "cpu=N" (-1: that TRES cleared);
 * as GrpTRES is one value, setting one replaces a GrpTRES set before.
 * Errors: ALLOT_EINVAL naming the limit (unknown in scope, bad value); ALLOT_ETOOBIG when
 * canon is too small.  canon untouched on error. */
int limits_validate(enum limit_scope scope, const char *name, const char *value, char *canon,
                    size_t len, struct allot_error *err);

/* QOS flags that limits use, from Slurm's comma-separated flag text (case-insensitive;
 * other flags ignored). */
#define LIMIT_QOS_DENY_ON_LIMIT 1u
#define LIMIT_QOS_OVER_PART_QOS 2u
#define LIMIT_QOS_PART_TIME_LIMIT 4u
#define LIMIT_QOS_PART_MIN_NODE 8u
#define LIMIT_QOS_PART_MAX_NODE 16u
unsigned limits_qos_flags(const char *flags);

enum limit_level_kind {
    LIMIT_LEVEL_PARTITION_QOS = 0,
    LIMIT_LEVEL_JOB_QOS,
    LIMIT_LEVEL_USER_ASSOC,
    LIMIT_LEVEL_ACCOUNT_ASSOC,
    LIMIT_LEVEL_ROOT_ASSOC,
    LIMIT_LEVEL_PARTITION,
};

/* "partition QOS", "job QOS", "user association", "account association",
 * "root association", "partition". */
const char *limits_level_kind_name(enum limit_level_kind k);

struct limit_pair {
    const char *name;  /* any spelling limits_find accepts */
    const char *value; /* canonical, from limits_validate */
};

struct limit_level {
    enum limit_level_kind kind;
    const char *owner; /* for messages: "alice@chem on cluster c1", "normal", ... */
    const struct limit_pair *pairs;
    int n;
    unsigned qos_flags; /* LIMIT_QOS_* (QOS levels only) */
};

#define LIMIT_CHAIN_MAX 16
struct limit_chain {
    int n;
    struct limit_level level[LIMIT_CHAIN_MAX]; /* Slurm's order, partition QOS first */
};

struct limit_source {
    int level; /* index into the caller's chain; -1 = not set */
    enum limit_level_kind kind;
    const char *owner; /* borrowed from the chain */
};

struct limit_resolved {
    const char *name; /* effective limit name (the association spelling if shared) */
    enum limit_type type;
    int grp;
    int64_t value; /* scalars: count, minutes, seconds, or factor in ppm */
    struct limit_source src;
    struct tres_list tres; /* TRES types */
    struct limit_source tres_src[TRES_LIST_MAX];
    int64_t level_value[LIMIT_CHAIN_MAX]; /* Grp scalars: value set at each level, -1 */
};

#define LIMIT_EFFECTIVE_MAX 48
struct limit_effective {
    int n;
    unsigned job_qos_flags; /* flags of the job QOS (DenyOnLimit, Partition*) */
    int n_levels;
    struct limit_source levels[LIMIT_CHAIN_MAX]; /* each chain level, by chain index */
    struct limit_resolved r[LIMIT_EFFECTIVE_MAX];
};

/* Resolve the effective limits of chain into *out (see the top comment).
 * Errors: ALLOT_EINVAL naming level and limit for a name unknown at that level or a value
 * that is not canonical; *out is then unspecified. */
int limits_resolve(const struct limit_chain *chain, struct limit_effective *out,
                   struct allot_error *err);

/* The resolved limit called name (effective spelling, case-insensitive) or NULL. */
const struct limit_resolved *limits_get(const struct limit_effective *eff, const char *name);

/* A job at submission: its time limit and requested TRES totals (cpu, mem, node, gres...). */
struct job_request {
    int64_t time_limit_s;  /* -1 = none given */
    struct tres_list tres; /* whole-job counts; node = node count */
};

/* Jobs (pending + running) already counted against each limit, before this one; the
 * caller counts each in the group of the level that set the limit. */
struct submit_counts {
    int64_t user_jobs;    /* MaxSubmitJobs: the user's in this association, or, when a QOS
                             MaxSubmitJobsPerUser set it, the user's in that QOS */
    int64_t account_jobs; /* MaxSubmitJobsPerAccount: the account's in that QOS */
    int64_t level_jobs[LIMIT_CHAIN_MAX]; /* GrpSubmitJobs of chain level i: a QOS's jobs,
                                            the user's in the account, or the account
                                            subtree's */
};

enum limit_check { LIMIT_CHECK_OK = 0, LIMIT_CHECK_DENY = 1, LIMIT_CHECK_PEND = 2 };

struct limit_violation {
    const char *limit;        /* effective limit name */
    char tres[TRES_NAME_MAX]; /* "" for scalar limits */
    int64_t limit_value;      /* the limit (minutes for durations) */
    int64_t requested;        /* what the job would make it */
    struct limit_source src;
    int deny; /* 1: refused at submission; 0: Slurm would hold it pending */
};

/* Check a submission against MaxSubmitJobs (per user), MaxSubmitJobsPerAccount,
 * GrpSubmitJobs (every level), MaxWallDurationPerJob, MinTRESPerJob, MaxTRESPerJob,
 * MaxTRESPerNode, MaxTRESMinsPerJob and GrpTRES (the job alone).  Submit counts always deny;
 * wall time denies when set by an association or the partition (Slurm's rule: "denied at
 * submission"); other limits deny when the job QOS has DenyOnLimit or the bound is the
 * partition's, else the job would pend.  Returns LIMIT_CHECK_OK, or the first denial,
 * or else the first pending reason, described in *v. */
enum limit_check limits_check_submit(const struct limit_effective *eff,
                                     const struct job_request *job,
                                     const struct submit_counts *counts, struct limit_violation *v);

/* One sentence: the limit, its source, what the job asks and what to change:
 * "MaxWallDurationPerJob=60 from partition c1:lim: job asks 90 min; lower --time to at most
 * 60 min or ask an admin" (TRES limits: "MaxTRESPerJob=gres/gpu=4 from job QOS normal: job
 * asks gres/gpu=5; lower it to at most 4 or ask an admin").  Returns 0, or -1 if buf is too small
 * (buf then holds a truncated, NUL-terminated text). */
int limits_violation_format(const struct limit_violation *v, char *buf, size_t len);

/* One `allot limits show` row: "NAME<TAB>VALUE<TAB>LEVEL<TAB>OWNER" for scalar limits
 * (item ignored) or for TRES item `item` of a list ("MaxTRESPerJob\tcpu=4\tjob QOS\tnormal").
 * Returns 0, -1 when item is out of range or buf too small. */
int limits_format_row(const struct limit_resolved *r, int item, char *buf, size_t len);

#endif
