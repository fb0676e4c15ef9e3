/* SPDX-License-Identifier: GPL-3.0-or-later */
/* whatif.h - replay a job history under a scenario (billing weights, MAX_TRES, allocation
 * amounts, periodic policies, fair-share algorithm and half-life) in memory: what each account and
 * user would have been charged, which jobs would have been refused and when, when each allocation
 * would have run out, and the fair-share factors at the end (`allot whatif`, doc/whatif.md).
 *
 * Design: the caller gives the history once (struct whatif_input: accounts, user
 * associations, partitions, allocations, jobs, all by index) and runs it under as many
 * scenarios as it likes; the CLI runs the bank's own settings ("before") and the proposed
 * ones ("after").  Each job is priced with the bank's functions: billing_compute() on its
 * AllocTRES with its partition's weights, a hold of money_hold_sumin(billing, time limit) at
 * its start, a charge of money_charge_sumin(billing, elapsed) capped at the hold (0 when
 * money_state_free(), NODE_FAIL) at its end, as the settle does.  Starts and ends are replayed in
 * time order (ends first at one instant): a start takes a hold from the allocation that pays
 * (walking from the job's account up to the root, as the bank does) or is refused when the
 * available balance (granted - used - held) is below the hold, or no allocation covers it; an end
 * releases the hold and debits the charge.  A refused job is not charged and counts for no
 * usage.  The queue is not simulated: every job starts when it started in the history.
 * Memory: whatif_run allocates O(jobs) working arrays, freed before it returns; results are
 * caller-visible arrays freed by whatif_result_free.  Thread rule: reentrant.
 */
#ifndef ALLOT_LIBCORE_WHATIF_H
#define ALLOT_LIBCORE_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libcore/billing.h"
#include "libcore/carryover.h"
#include "libcore/decay.h"
#include "libcore/fairshare.h"
#include "libcore/period.h"

#define WHATIF_NONE UINT32_MAX

struct whatif_account {
    const char *name;
    uint32_t parent; /* index of the parent account; WHATIF_NONE for the root (exactly one) */
    uint32_t shares; /* RawShares */
};

/* A user's association with an account: the leaf fair-share ranks and jobs are charged to. */
struct whatif_user {
    const char *name;
    uint32_t account;
    uint32_t shares;
};

struct whatif_partition {
    const char *cluster, *name;
    const char *resource; /* the resource type its jobs draw on */
};

struct whatif_alloc {
    int64_t id;
    uint32_t account;
    const char *resource;
    const char *cluster;    /* "" = every cluster */
    int64_t start_s, end_s; /* [start_s, end_s) */
    int64_t granted_sumin;  /* the bank's amount (a scenario may replace it) */
};

struct whatif_job {
    int64_t job_id;
    uint32_t user;      /* whatif_user index; its account is the job's */
    uint32_t partition; /* whatif_partition index */
    int64_t start_s, end_s, elapsed_s;
    int64_t time_limit_s;   /* the hold's time; 0 (unknown) = elapsed */
    const char *alloc_tres; /* Slurm TRES text ("cpu=4,mem=8G,node=1"), borrowed */
    bool node_fail;         /* NODE_FAIL: costs 0 */
    double usage_factor;    /* the QOS UsageFactor for fair-share; 1.0 for none */
    bool nodecay;           /* the QOS has the NoDecay flag: its usage never decays */
};

struct whatif_input {
    const struct whatif_account *accounts;
    size_t naccounts;
    const struct whatif_user *users;
    size_t nusers;
    const struct whatif_partition *partitions;
    size_t npartitions;
    const struct whatif_alloc *allocs;
    size_t nallocs;
    const struct whatif_job *jobs;
    size_t njobs;
    int64_t at_s; /* fair-share is evaluated at this time; 0 = the last job end */
};

/* A periodic policy on an allocation (doc/policies.md): from the period (UTC) holding the
 * allocation's start, each period's total is carryover_total_sumin(base, the previous
 * period's use, factor) and replaces what was left of the last (unused credit expires);
 * holds of running jobs stay.  The allocation's own amount is not used.  Thresholds are
 * carryover_flags() of the period's use against its total after each end. */
struct whatif_policy {
    bool on;
    enum period_kind kind;
    int64_t base_sumin;
    int64_t factor_ppm; /* 0: no carryover */
    struct carryover_thresholds th;
};

/* What is replayed: weights[i] prices partition i; amounts[i] (NULL: the bank's) replaces
 * allocation i's granted amount; policies[i] (NULL: none) puts a policy on allocation i. */
struct whatif_scenario {
    const struct billing_weights *weights; /* npartitions entries */
    const int64_t *amounts_sumin;          /* nallocs entries, or NULL */
    const struct whatif_policy *policies;  /* nallocs entries, or NULL */
    struct decay_params decay;
    struct fairshare_opts fairshare;
};

struct whatif_refusal {
    uint32_t job;   /* index in the input's jobs */
    uint32_t alloc; /* the allocation that refused it; WHATIF_NONE: none covers the job */
    int64_t time_s; /* the job's start */
    int64_t needed_sumin, available_sumin;
};

struct whatif_total {
    int64_t charged_sumin;
    int64_t jobs;    /* jobs charged (started) */
    int64_t refused; /* jobs refused */
};

struct whatif_alloc_result {
    int64_t granted_sumin, used_sumin; /* with a policy: summed over its periods */
    int64_t exhausted_s; /* first refusal, or the first end that uses up (the period's) total;
                            0 never */
    int64_t refused;
    int64_t periods;                        /* with a policy: periods begun; else 0 */
    int64_t notify_s, downscale_s, pause_s; /* with a policy: each threshold's first time */
};

struct whatif_user_result {
    struct whatif_total t;
    double fairshare; /* the fair-share factor at the end (fairshare_row.fairshare) */
    double level_fs;  /* FAIR_TREE LevelFS / FLUX weight; NAN for classic */
    uint32_t rank;    /* FAIR_TREE / FLUX rank; 0 for classic */
};

struct whatif_result {
    struct whatif_total total;
    struct whatif_total *accounts;      /* naccounts: the jobs of each account itself */
    struct whatif_user_result *users;   /* nusers */
    struct whatif_alloc_result *allocs; /* nallocs */
    struct whatif_refusal *refusals;    /* in time order */
    size_t nrefusals;
    double *account_usage; /* naccounts: raw (subtree) usage at the end */
    int64_t at_s;          /* when fair-share was evaluated */
};

/* Check the input: indices in range, one root, no cycles, jobs with end >= start >= 0 and
 * elapsed, time limit >= 0, partitions' resources set, allocation windows non-empty and
 * amounts >= 0, at most UINT32_MAX - 1 jobs.  Returns 0, or -1 with EINVAL naming the item. */
int whatif_input_check(const struct whatif_input *in, struct allot_error *err);

/* Replay in under s into *out (zeroed first).  Returns 0, or -1 with err: EINVAL for a bad
 * input or scenario (a job's AllocTRES that does not parse names the job), ENOMEM; *out then
 * holds nothing to free. */
int whatif_run(const struct whatif_input *in, const struct whatif_scenario *s,
               struct whatif_result *out, struct allot_error *err);

void whatif_result_free(struct whatif_result *r);

#endif
