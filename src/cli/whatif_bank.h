/* SPDX-License-Identifier: GPL-3.0-or-later */
/* whatif_bank.h - the bank's side of a what-if replay, shared by `allot whatif` and allotd's
 * POST /v1/whatif (doc/whatif.md): read the history from the bank's replies, apply a proposed
 * change, replay it before and after (libcore/whatif.c) and encode the one JSON report both
 * print.
 *
 * Design: the bank is read through a callback that answers a GET path with its reply (the
 * CLI sends the request; allotd runs the route's handler in process as the caller), so both
 * see the same rows and nothing is written.  Changes are `key=value` words (cli/args.h), as
 * the command line and a body's members give them.  Memory: the struct owns every reply it
 * read and the strings it copied until whatif_bank_free.  Thread rule: one struct per thread.
 */
#ifndef ALLOT_CLI_WHATIF_BANK_H
#define ALLOT_CLI_WHATIF_BANK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "allot/error.h"
#include "cli/args.h"
#include "libcore/model.h"
#include "libcore/whatif.h"

/* The reply of GET path (a new reference), or NULL with err. */
typedef json_t *(*whatif_get_f)(void *ctx, const char *path, struct allot_error *err);

/* Open-addressing table of "a\x1fb" keys to indices. */
struct whatif_names {
    char **key;
    uint32_t *val;
    size_t cap;
};

struct whatif_bank {
    char cluster[ALLOT_NAME_MAX]; /* set by the caller before whatif_bank_load */
    whatif_get_f get;
    void *ctx;
    json_t *replies; /* every reply kept alive: the input borrows its strings */
    struct whatif_account *accounts;
    struct whatif_user *users;
    struct whatif_partition *parts;
    struct whatif_alloc *allocs;
    struct whatif_job *jobs;
    size_t naccounts, nusers, nparts, nallocs, njobs, cap_users, cap_jobs;
    struct whatif_names account_ix, user_ix, part_ix, qos_ix;
    double *qos_factor; /* per QOS: UsageFactor */
    bool *qos_nodecay;  /* per QOS: the NoDecay flag */
    char **owned;       /* strings copied from a listing */
    size_t nowned, cap_owned;
    int64_t skipped; /* jobs the replay cannot price (no TRES) or outside the cluster */
    struct billing_weights *w_before, *w_after;
    int64_t *amounts_after;
    struct whatif_policy *pol_before, *pol_after; /* per allocation */
    struct decay_params decay_before, decay_after;
    struct fairshare_opts fs_before, fs_after;
    const char *algo_before, *algo_after;
};

/* Read the bank's accounts, associations, partitions, allocations, policies, QOS and
 * fair-share settings of h->cluster through get(ctx, path); h is zeroed but for cluster. */
int whatif_bank_load(struct whatif_bank *h, whatif_get_f get, void *ctx, struct allot_error *err);

/* Add the bank's settled jobs of the cluster (ended at or after since, a time args_time
 * reads, when not NULL).  At most max_jobs read (0: no bound; those changed since, a superset
 * of those ended since): one more is ETOOBIG and adds none. */
int whatif_bank_jobs(struct whatif_bank *h, const char *since, int64_t max_jobs,
                     struct allot_error *err);

/* Add one job of another history (a sacct listing); account, user and partition spans need
 * not be NUL-terminated; qos weighs its usage; what names the source in errors. */
int whatif_bank_job(struct whatif_bank *h, const char *what, int64_t id, const char *acct,
                    size_t na, const char *user, size_t nu, const char *part, size_t np,
                    const char *qos, size_t nq, struct whatif_job *j, struct allot_error *err);

/* A copy of s[0..n) that lives as long as h. */
const char *whatif_bank_own(struct whatif_bank *h, const char *s, size_t n);

/* One set of change words onto h's "after" (marks the keys it reads used); what prefixes
 * errors. */
int whatif_bank_change(struct whatif_bank *h, struct kvlist *kvs, const char *what,
                       struct allot_error *err);

/* Replay h's jobs before and after (fair-share at at_s, 0: the last end) and encode the
 * report; source says where the jobs came from ("bank" or a file name).  NULL with err. */
json_t *whatif_bank_report(struct whatif_bank *h, int64_t at_s, const char *source,
                           struct allot_error *err);

void whatif_bank_free(struct whatif_bank *h);

#endif
