/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sync_view.h - one side's picture of a cluster for allot-agent's sync (sync.h): its
 * partitions, accounts, users and user associations, read from Slurm (scontrol, sacctmgr)
 * or from allotd (the API), each array sorted by its key so the two sides are compared by
 * a merge.
 * Memory: arrays are malloc'd; sync_view_free releases them.  Threads: single-threaded.
 */
#ifndef ALLOT_AGENT_SYNC_VIEW_H
#define ALLOT_AGENT_SYNC_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "agent/apply.h"
#include "allot/allot.h"

#define SV_NAME_MAX 64
#define SV_WEIGHTS_MAX 256

struct sv_part {
    char name[SV_NAME_MAX];
    char weights[SV_WEIGHTS_MAX]; /* TRESBillingWeights; "" = none */
    int64_t max_time_s;           /* -1 = UNLIMITED */
    int64_t default_time_s;       /* -1 = none */
};
struct sv_acct {
    char name[SV_NAME_MAX];
    char parent[SV_NAME_MAX]; /* "" for root */
};
struct sv_user {
    char name[SV_NAME_MAX];
    char def[SV_NAME_MAX]; /* DefaultAccount; "" = none */
};
struct sv_assoc { /* a user's association; partition "" = every partition */
    char account[SV_NAME_MAX];
    char user[SV_NAME_MAX];
    char partition[SV_NAME_MAX];
};
struct sync_view {
    struct sv_part *parts;
    size_t nparts;
    struct sv_acct *accts;
    size_t naccts;
    struct sv_user *users;
    size_t nusers;
    struct sv_assoc *assocs;
    size_t nassocs;
};

/* Read CLUSTER as Slurm has it: `scontrol show partition -o`, and `sacctmgr -P -n show
 * assoc where cluster=C` (accounts: its rows without a user; associations: its rows with
 * one) and `show user` (DefaultAccount).  0, or -1 with why (len bytes) and *v empty. */
int sync_view_slurm(const struct agent_tools *t, const char *cluster, struct sync_view *v,
                    char *why, size_t len);
/* Read CLUSTER as allotd has it (GET /v1/partitions, /v1/accounts, /v1/users, /v1/assocs).
 * 0, or -1 with why and *v empty. */
int sync_view_allot(allot_client_t *c, const char *cluster, struct sync_view *v, char *why,
                    size_t len);
void sync_view_free(struct sync_view *v);

/* Lookups in a sorted view (NULL when absent). */
const struct sv_part *sv_find_part(const struct sync_view *v, const char *name);
const struct sv_acct *sv_find_acct(const struct sync_view *v, const char *name);
const struct sv_user *sv_find_user(const struct sync_view *v, const char *name);
const struct sv_assoc *sv_find_assoc(const struct sync_view *v, const struct sv_assoc *key);

#endif
