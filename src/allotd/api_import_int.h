/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import_int.h - what the parts of `allot import slurm`'s walk share: the walk's state
 * and the helpers each part uses (api_import.c the dump, api_import_limits.c limits,
 * api_import_qos.c `sacctmgr show qos -P`, api_import_part.c `scontrol show partition -o`).
 * Only those files include it. */
#ifndef ALLOT_ALLOTD_API_IMPORT_INT_H
#define ALLOT_ALLOTD_API_IMPORT_INT_H

#include <jansson.h>
#include <stddef.h>

#include "allot/error.h"
#include "allotd/api_import.h"
#include "libcore/limits.h"
#include "libcore/model.h"
#include "libslurmtext/field.h"
#include "libstore/store.h"

#define LIMITS_PER_OWNER 64
#define SHARES_PARENT 2147483647 /* Slurm's Fairshare=parent */

struct lim {
    char name[ALLOT_NAME_MAX];
    char value[ALLOT_TRES_MAX];
};

struct limset {
    int n;
    struct lim l[LIMITS_PER_OWNER];
};

/* Accounts and users the walk has met, for parents, QOS deltas and default accounts. */
struct seen_account {
    char name[ALLOT_NAME_MAX];
    char eff_qos[ALLOT_TEXT_MAX]; /* its QOS list, or its parent's when it sets none */
};
struct seen_user {
    char name[ALLOT_NAME_MAX];
    char default_account[ALLOT_NAME_MAX];
    long line;
    int is_new;
};

struct walk {
    store_t *st;
    int apply;
    const char *cluster;
    json_t *changes, *notes;
    struct seen_account *acc;
    size_t nacc, capacc;
    struct seen_user *usr;
    size_t nusr, capusr;
    char (*qos_names)[ALLOT_NAME_MAX]; /* QOS the qos text defines */
    size_t nqos, capqos;
    char (*part_names)[ALLOT_NAME_MAX]; /* partitions the partitions text defines */
    size_t npart, cappart;
    const struct import_input *in;
    long counts[5]; /* accounts, users, assocs, qos, partitions */
    json_t *coords; /* Coordinator=: account -> {user: true}; NULL = none yet */
};

/* 1 when the dump defined account name before this point, else 0. */
int import_account_seen(struct walk *w, const char *name);
/* Remember that user coordinates each account of list (Coordinator='a,b'). */
int import_coord_note(struct walk *w, const char *user, struct slt_span list,
                      struct allot_error *err);
/* Add the remembered coordinators to their accounts, listing each change. */
int import_coords_apply(struct walk *w, struct allot_error *err);

/* One line of the reply's "changes" (printf format). */
void import_change(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copy a span into dst (size bytes) as a C string; EINVAL naming field when too long. */
int import_span_copy(char *dst, size_t size, const char *field, struct slt_span v,
                     struct allot_error *err);
/* 0 when QOS name is in the QOS text or the bank; EINVAL saying where it was looked for. */
int import_qos_known(struct walk *w, const char *name, struct allot_error *err);
/* Add limit name=v, validated in scope, to s (a mem with decimals made whole MiB). */
int import_limit_add(struct limset *s, enum limit_scope scope, const char *name, struct slt_span v,
                     struct allot_error *err);
/* Make the bank's limits of (scope, owner) exactly want, listing each change. */
int import_limits_sync(struct walk *w, enum limit_scope scope, const char *owner, const char *label,
                       const struct limset *want, struct allot_error *err);
/* The QOS of `sacctmgr show qos -P` (header first) created or updated. */
int import_qos_text(struct walk *w, const char *text, size_t len, struct allot_error *err);
/* The cluster's partitions of `scontrol show partition -o` created or updated. */
int import_partitions(struct walk *w, struct allot_error *err);

#endif
