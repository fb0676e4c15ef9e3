/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_policy_int.h - what the files of periodic policies share, private to libstore:
 * store_policy.c (policies and the commands they enqueue), store_policy_period.c (the
 * boundary, the periods, credits by hand) and store_policy_eval.c (evaluations).
 * Statement ids: the block STMT_POLICY_FIRST..STMT_POLICY_LAST of store_int.h, numbered by
 * enum pstmt; each statement's text stands in the one file that prepares it.
 */
#ifndef ALLOT_LIBSTORE_STORE_POLICY_INT_H
#define ALLOT_LIBSTORE_STORE_POLICY_INT_H

#include <stdint.h>

#include "libstore/store_int.h"

enum pstmt {
    P_ADD,
    P_SAME_ASSOC,
    P_GET,
    P_GET_ALLOC,
    P_LIST,
    P_MARKER_CAS,
    P_FLAGS,
    PP_INSERT,
    PP_CLOSE,
    PP_LIST,
    PP_CLOSED,
    E_ADD,
    E_LIST,
    PP_ADD_TOTAL,
    PP_REFUNDS,
    P_NSTMT
};
_Static_assert(STMT_POLICY_FIRST + P_NSTMT - 1 <= STMT_POLICY_LAST, "grow the policy id block");

/* The prepared statement id of this block, prepared from sql the first time. */
db_stmt_t *store_policy_stmt(store_t *st, enum pstmt id, const char *sql, struct allot_error *err);

/* The policy of allocation alloc_id into *out, without store_ready (the caller is inside a
 * write); ENOENT "allocation N has no policy" when it has none.  0 or -1. */
int store_policy_by_alloc(store_t *st, int64_t alloc_id, struct policy *out,
                          struct allot_error *err);

/* policies.flags = flags for policy id (the raised thresholds).  0 or -1. */
int store_policy_set_flags(store_t *st, int64_t id, unsigned flags, struct allot_error *err);

/* Enqueue one command of p for period under key "policy:<id>:<period>:<key_tail>"; its id
 * is appended to ids[*n] (bounded by max).  A replayed key enqueues nothing new.  0 or -1. */
int store_policy_command(store_t *st, const struct policy *p, const char *period, const char *kind,
                         const char *payload, const char *key_tail, int64_t now_s, int64_t *ids,
                         int *n, int max, struct allot_error *err);

/* The payload that lifts a pause of p's account into buf.  0 or -1. */
int store_policy_unpause_payload(store_t *st, const struct policy *p, char buf[ALLOT_TRES_MAX],
                                 struct allot_error *err);

/* One ledger entry of a boundary (store_policy_period.c) under key
 * "policy:<id>:<period>:<what>", its comment ending in why; amount 0 writes nothing, an
 * amount above STORE_AMOUNT_MAX is written in parts.  0 or -1. */
int store_policy_entry(store_t *st, const struct policy *p, enum ledger_kind kind,
                       const char *period, const char *what, const char *why, int64_t amount,
                       const char *actor, int64_t now_s, struct allot_error *err);

/* A period total as thresholds and limits take it: a negative adjustment by hand may take
 * the recorded total below zero (SU granted before the first period are in the balance but
 * not in a total); nothing is left of the period then. */
static inline int64_t store_policy_period_total(int64_t total_sumin)
{
    return total_sumin > 0 ? total_sumin : 0;
}

#endif
