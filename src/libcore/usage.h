/* SPDX-License-Identifier: GPL-3.0-or-later */
/* usage.h - the association tree that fair-share runs on: topology, shares, names, usage.
 *
 * Accounts form a tree under one root; user associations are leaves under an account (a user
 * may sit directly under root beside sub-accounts, as Slurm allows).  The tree is built once
 * from flat arrays (parent index, shares, usage, names) and stored as flat arrays as well:
 * children in CSR form (child_start/child_idx), a pre-order with depths, names in one arena.
 * Nothing is allocated per node, so a 1,000,000-association tree is a handful of mallocs and
 * recomputes walk contiguous memory.  Each association has a decay accumulator (decay.h);
 * settled jobs are charged into it and usage_tree_evaluate() turns them into own usage at a
 * time.  Raw usage of an account (sum over its subtree) is derived by fairshare_compute().
 * Indices are those of the input arrays, so callers map rows back to their own records.
 * Threads: a tree is not locked; concurrent readers are fine, writers need exclusion.
 */
#ifndef ALLOT_LIBCORE_USAGE_H
#define ALLOT_LIBCORE_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libcore/decay.h"

/* Largest tree accepted (indices are stored as uint32_t). */
#define USAGE_TREE_MAX ((size_t)UINT32_MAX - 1)
#define USAGE_NONE UINT32_MAX

/* One association as given to usage_tree_create(). */
struct usage_assoc_spec {
    int64_t parent;      /* index of the parent; -1 for the root (exactly one) */
    uint32_t shares;     /* raw shares (sacctmgr Fairshare=N); 0 allowed */
    double usage;        /* initial own usage (caller's unit), >= 0; 0 for none */
    const char *account; /* account name; for a user association, the account it is in */
    const char *user;    /* user name, or NULL for an account node */
};

typedef struct usage_tree usage_tree_t;

/* Build a tree from n specs.  Validates: n >= 1 and <= USAGE_TREE_MAX, one root, parents in
 * range and not users, no cycles, non-empty account names, usage finite and >= 0.  Names are
 * copied.  Returns a tree the caller frees with usage_tree_destroy(), or NULL with
 * ALLOT_EINVAL (message names the index and field) or ALLOT_ENOMEM. */
usage_tree_t *usage_tree_create(const struct usage_assoc_spec *spec, size_t n,
                                struct allot_error *err);

/* Free t; NULL is a no-op. */
void usage_tree_destroy(usage_tree_t *t);

size_t usage_tree_count(const usage_tree_t *t);
/* Number of user associations (the N of rank/N). */
size_t usage_tree_user_count(const usage_tree_t *t);
size_t usage_tree_root(const usage_tree_t *t);
/* Parent index of i, or USAGE_NONE for the root. */
uint32_t usage_tree_parent(const usage_tree_t *t, size_t i);
bool usage_tree_is_user(const usage_tree_t *t, size_t i);
uint32_t usage_tree_shares(const usage_tree_t *t, size_t i);
/* Depth of i: root 0, its children 1, ... */
uint32_t usage_tree_depth(const usage_tree_t *t, size_t i);
/* Names are borrowed from t, valid until usage_tree_destroy(); user is NULL for accounts. */
const char *usage_tree_account(const usage_tree_t *t, size_t i);
const char *usage_tree_user(const usage_tree_t *t, size_t i);
/* Children of i as a borrowed array of *count indices, in input order. */
const uint32_t *usage_tree_children(const usage_tree_t *t, size_t i, size_t *count);
/* Pre-order of all associations (root first, children in input order), borrowed, n long. */
const uint32_t *usage_tree_preorder(const usage_tree_t *t);

/* Own usage of i (not including descendants). */
double usage_tree_own_usage(const usage_tree_t *t, size_t i);
/* Overwrite own usage of i (e.g. a RawUsage imported from Slurm).  ALLOT_EINVAL if i is out of
 * range or usage is negative or not finite. */
int usage_tree_set_usage(usage_tree_t *t, size_t i, double usage, struct allot_error *err);

/* Charge a settled job to association i: usage (e.g. charged SU-minutes) at end_s, times the
 * QOS usage_factor, into i's decay accumulator (nodecay for a NoDecay QOS).  Own usage changes
 * only at the next usage_tree_evaluate().  p must pass decay_params_check().  Errors
 * ALLOT_EINVAL (index, usage, factor); nothing changes then. */
int usage_tree_charge(usage_tree_t *t, size_t i, const struct decay_params *p, int64_t end_s,
                      double usage, double usage_factor, bool nodecay, struct allot_error *err);

/* Set every association's own usage to its accumulator's value at now_s (overwrites values
 * set by create/set_usage).  O(n). */
void usage_tree_evaluate(usage_tree_t *t, const struct decay_params *p, int64_t now_s);

/* Display order of sshare: pre-order where, under each account, user associations come first
 * sorted by user name, then sub-accounts sorted by account name (Slurm's hierarchical sort).
 * Writes n indices to order (caller-allocated, usage_tree_count() long).  Returns 0, or -1 with
 * ALLOT_ENOMEM (order untouched). */
int usage_tree_display_order(const usage_tree_t *t, uint32_t *order, struct allot_error *err);

#endif
