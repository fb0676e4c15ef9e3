/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store.h - the one storage interface of allot (doc/design.md §9.1).  Only libstore speaks SQL.
 *
 * A store_t is one connection to one bank database: an SQLite file (embedded default, WAL)
 * or PostgreSQL.  Operations are domain verbs (hold, settle, credit, ...), not generic
 * get/put.  The backend is chosen by store_open() from the config; both run the same verbs
 * with the same results (the same tests run against both).
 *
 * Transactions.  Every write verb (add/modify/remove/credit/hold/settle/release/...) must
 * be called between store_begin() and store_commit(); it does not commit by itself, so the
 * daemon can group many requests into one durable commit (group commit, doc/design.md §10.1) and
 * isolate each request with store_savepoint()/_release()/_rollback().  A write verb that
 * fails has changed nothing visible once its savepoint is rolled back.  Read verbs may be
 * called inside or outside a transaction.
 *
 * Money invariant (checked by store_check): for every allocation, the cached balance equals
 * the sums of its ledger entries, and the check-and-hold of store_hold() is one atomic step
 * even across several processes sharing one PostgreSQL: no hold is ever taken that makes
 * available < 0 (doc/design.md §3.6).
 *
 * Outcomes versus errors.  A refused hold is an outcome, not an error: store_hold returns 0
 * with result->refused = 1, a job record in JOB_REFUSED and a failure row, all written in the
 * caller's transaction.  -1 means nothing was changed and err says why.
 *
 * Threads.  A store_t belongs to one thread at a time; open one per thread.  Strings passed
 * in are borrowed for the call; structs filled are the caller's.  Callbacks (`*_f`) receive
 * records borrowed for the duration of the call; a non-zero return stops the iteration and
 * becomes the verb's return value.
 */
#ifndef ALLOT_LIBSTORE_STORE_H
#define ALLOT_LIBSTORE_STORE_H

#include <stdint.h>
#include <stdio.h>

#include "allot/error.h"
#include "libcore/decay.h"
#include "libcore/model.h"

typedef struct store store_t;

struct store_config {
    const char *backend; /* "sqlite" (default when NULL) or "pg" */
    const char *target;  /* sqlite: file path; pg: libpq connection string */
    int busy_timeout_ms; /* how long to wait for a lock before EUNAVAIL; 0 = 5000 */
    int durable;         /* 1: fsync on commit (synchronous=FULL / synchronous_commit=on) */
};

/* Open a connection.  Does not create or upgrade the schema (see store_upgrade); a database
 * whose schema is older than this build is usable only for store_upgrade/store_schema_*.
 * Returns NULL with err set (EUNAVAIL when the database cannot be reached, EIO otherwise). */
store_t *store_open(const struct store_config *cfg, struct allot_error *err);
/* Close; NULL is a no-op.  An open transaction is rolled back. */
void store_close(store_t *st);
/* "sqlite" or "pg". */
const char *store_backend(const store_t *st);

/* Schema (doc/design.md §9.2): versions are numbered migrations schema/<backend>/NNNN-*.sql.
 * current = 0 for an empty database. */
int store_schema_version(store_t *st, int *current, int *latest, struct allot_error *err);
/* Readiness (allotd's /readyz): write one row as it is, in the caller's transaction, so
 * that its commit tells whether a write can commit now.  Changes no value. */
int store_write_probe(store_t *st, struct allot_error *err);
/* Apply pending migrations, each in its own transaction; idempotent. */
int store_upgrade(store_t *st, struct allot_error *err);

/* Transactions (see top).  store_begin takes the write lock at once (BEGIN IMMEDIATE on
 * SQLite) so a batch never fails half-way on lock upgrade.  rollback never fails.
 * store_commit fails with EINDOUBT when the answer to COMMIT was lost with the connection
 * (PostgreSQL): the transaction may have committed; any other failure is a rollback. */
int store_begin(store_t *st, struct allot_error *err);
int store_commit(store_t *st, struct allot_error *err);
/* Split each durable commit in two (group commit with the flush off the writer's path):
 * on 1, store_commit makes a transaction visible without waiting for the disk and
 * fdatasync(*fd) (a new descriptor the caller closes; safe from any thread) makes every
 * transaction committed so far durable.  0: not split (*fd = -1): the store is not durable
 * (nothing to sync) or its commits sync by themselves (PostgreSQL).  -1 with err.
 * Call outside a transaction. */
int store_split_sync(store_t *st, int *fd, struct allot_error *err);
void store_rollback(store_t *st);
/* Partition change watch, for a cache of partitions (allotd prices holds from one).
 * store_watch_partitions subscribes this connection to every committed change of the
 * partitions table, by anyone (PostgreSQL: LISTEN on the trigger of schema 0014; SQLite:
 * the table is read every 250 ms and compared, store_watch.c).  store_wait_partitions then
 * returns 1 when changes were committed since the last call, 0 after timeout_ms (SQLite: at
 * most 250 ms) or when wake_fd (-1: none) became readable, -1
 * with err (EUNAVAIL) when the connection is lost: what changed meanwhile is unknown, so
 * the caller drops its cache, closes this store and watches again on a new one.
 * Call outside a transaction; the store does nothing else meanwhile. */
int store_watch_partitions(store_t *st, struct allot_error *err);
int store_wait_partitions(store_t *st, int wake_fd, int timeout_ms, struct allot_error *err);
int store_savepoint(store_t *st, struct allot_error *err);
int store_savepoint_release(store_t *st, struct allot_error *err);
void store_savepoint_rollback(store_t *st);

/* ---- Reference data: clusters, accounts, users, associations, QOS, partitions ---------- */

typedef int (*store_cluster_f)(const char *name, void *arg);
int store_cluster_add(store_t *st, const char *name, struct allot_error *err);
int store_cluster_remove(store_t *st, const char *name, struct allot_error *err);
int store_cluster_list(store_t *st, store_cluster_f cb, void *arg, struct allot_error *err);

/* Accounts form a tree rooted at "root" (created by the first migration).  add: parent must
 * exist (EINVAL naming "parent" otherwise), name unique (EEXIST).  modify: replaces
 * parent/shares/description/organization of the account named a->name; a new parent that
 * is the account or one of its descendants is ECONFLICT ("cycle").  remove: ECONFLICT while
 * it has children, associations or allocations.  "root" cannot be removed or re-parented. */
typedef int (*store_account_f)(const struct account *a, void *arg);
int store_account_add(store_t *st, struct account *a, struct allot_error *err); /* sets id */
int store_account_get(store_t *st, const char *name, struct account *out, struct allot_error *err);
int store_account_modify(store_t *st, const struct account *a, struct allot_error *err);
int store_account_remove(store_t *st, const char *name, struct allot_error *err);
/* All accounts in depth-first tree order (parents before children, siblings by name). */
int store_account_list(store_t *st, store_account_f cb, void *arg, struct allot_error *err);
/* The chain from name up to root, inclusive, into out[0..*n) (out[0] = name). */
int store_account_ancestors(store_t *st, const char *name, struct account *out, int max, int *n,
                            struct allot_error *err);

typedef int (*store_user_f)(const struct user *u, void *arg);
int store_user_add(store_t *st, const struct user *u, struct allot_error *err);
int store_user_get(store_t *st, const char *name, struct user *out, struct allot_error *err);
int store_user_modify(store_t *st, const struct user *u, struct allot_error *err);
int store_user_remove(store_t *st, const char *name, struct allot_error *err);
int store_user_list(store_t *st, store_user_f cb, void *arg, struct allot_error *err);

/* Associations: key (cluster, account, user, partition) is unique; cluster and account
 * and user must exist.  A user's default_account must be one of its associations' accounts
 * (checked at user add/modify when it has associations). */
struct assoc_filter {
    const char *cluster; /* NULL = any */
    const char *account;
    const char *user;
};
typedef int (*store_assoc_f)(const struct assoc *a, void *arg);
int store_assoc_add(store_t *st, struct assoc *a, struct allot_error *err); /* sets id */
int store_assoc_get(store_t *st, const char *cluster, const char *account, const char *user,
                    const char *partition, struct assoc *out, struct allot_error *err);
/* The association a job of USER on ACCOUNT in PARTITION ("" for none) runs under on
 * CLUSTER: the partition's own if there is one, else the one for all partitions.  None is
 * ENOENT "user U has no association with account A on cluster C", saying also when the
 * bank has no such user or account. */
int store_assoc_of_job(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *partition, struct assoc *out, struct allot_error *err);
/* 0 when a job of USER on ACCOUNT in PARTITION has an association on CLUSTER (either kind;
 * the one for all partitions, the common one, is probed first), else as above. */
int store_assoc_exists(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *partition, struct allot_error *err);
int store_assoc_modify(store_t *st, const struct assoc *a, struct allot_error *err);
int store_assoc_remove(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *partition, struct allot_error *err);
int store_assoc_list(store_t *st, const struct assoc_filter *f, store_assoc_f cb, void *arg,
                     struct allot_error *err);

typedef int (*store_qos_f)(const struct qos *q, void *arg);
int store_qos_add(store_t *st, const struct qos *q, struct allot_error *err);
int store_qos_get(store_t *st, const char *name, struct qos *out, struct allot_error *err);
int store_qos_modify(store_t *st, const struct qos *q, struct allot_error *err);
int store_qos_remove(store_t *st, const char *name, struct allot_error *err);
int store_qos_list(store_t *st, store_qos_f cb, void *arg, struct allot_error *err);

typedef int (*store_partition_f)(const struct partition *p, void *arg);
int store_partition_add(store_t *st, const struct partition *p, struct allot_error *err);
int store_partition_get(store_t *st, const char *cluster, const char *name, struct partition *out,
                        struct allot_error *err);
int store_partition_modify(store_t *st, const struct partition *p, struct allot_error *err);
int store_partition_remove(store_t *st, const char *cluster, const char *name,
                           struct allot_error *err);
int store_partition_list(store_t *st, const char *cluster /* NULL = all */, store_partition_f cb,
                         void *arg, struct allot_error *err);

/* Limits: value already canonical (libcore/limits.h); value NULL or "" removes the limit.
 * The owner must exist (ENOENT naming it). */
typedef int (*store_limit_f)(const struct limit_value *l, void *arg);
int store_limit_set(store_t *st, enum limit_scope scope, const char *owner, const char *name,
                    const char *value, struct allot_error *err);
int store_limit_list(store_t *st, enum limit_scope scope, const char *owner /* NULL = all */,
                     store_limit_f cb, void *arg, struct allot_error *err);

/* ---- Allocations, ledger, balances ---------------------------------------------------- */

/* add: account must exist; start < end; no other allocation of the same account and
 * resource whose cluster scope intersects (same cluster, or either is "" = all) overlaps
 * [start, end): ECONFLICT naming the other allocation's id.  Sets a->id.  The initial grant
 * is a separate store_credit. */
struct alloc_filter {
    const char *account;  /* NULL = any */
    const char *resource; /* NULL = any */
    int64_t active_at_s;  /* 0 = any time; else start <= t < end */
};
typedef int (*store_alloc_f)(const struct allocation *a, const struct balance *b, void *arg);
int store_alloc_add(store_t *st, struct allocation *a, struct allot_error *err);
int store_alloc_get(store_t *st, int64_t id, struct allocation *out, struct balance *bal,
                    struct allot_error *err);
/* modify: start/end/category/comment (account, resource, cluster are fixed); overlap rule
 * as in add; shrinking end below the start of a held job's run is ECONFLICT. */
int store_alloc_modify(store_t *st, const struct allocation *a, struct allot_error *err);
/* remove: only an allocation with no ledger entries (ECONFLICT otherwise). */
int store_alloc_remove(store_t *st, int64_t id, struct allot_error *err);
int store_alloc_list(store_t *st, const struct alloc_filter *f, store_alloc_f cb, void *arg,
                     struct allot_error *err);

/* The allocation that pays for a job of `account` on `cluster` using `resource` at time
 * at_s: the account's own, else the nearest ancestor's (doc/design.md §2.6).  ENOENT when none;
 * the message names the account, resource, cluster and date. */
int store_find_payer(store_t *st, const char *account, const char *resource, const char *cluster,
                     int64_t at_s, struct allocation *out, struct balance *bal,
                     struct allot_error *err);

/* Append a money entry that is not about a job: kind is LEDGER_CREDIT, LEDGER_ADJUSTMENT
 * (amount may be negative but may not make available < 0: EFUNDS), LEDGER_REFUND,
 * LEDGER_CARRYOVER or LEDGER_EXPIRY.  e->alloc_id, kind, amount_sumin, actor, time_s, comment,
 * idem_key are inputs; e->id is set.  Idempotent on idem_key: replaying a key returns the
 * original entry in *e and sets *replay = 1 (a different amount or allocation under the same
 * key is ECONFLICT).  On an allocation whose policy has an open period, an entry that is not
 * a refund also moves that period's total (a credit, adjustment or carryover by its signed
 * amount, an expiry down) and enqueues a set_limit with the new value (store_policy_period.c). */
int store_credit(store_t *st, struct ledger_entry *e, int *replay, struct allot_error *err);

struct ledger_filter {
    int64_t alloc_id;    /* 0 = any */
    const char *account; /* NULL = any: entries of that account's allocations */
    const char *cluster; /* with job_id: entries about one job */
    int64_t job_id;      /* 0 = any */
    int64_t since_s;     /* 0 = from the beginning */
    int64_t after_id;    /* paging: entries with id > after_id */
    int limit;           /* 0 = no limit */
};
typedef int (*store_ledger_f)(const struct ledger_entry *e, void *arg);
int store_ledger_list(store_t *st, const struct ledger_filter *f, store_ledger_f cb, void *arg,
                      struct allot_error *err);

/* The exhaustion forecast of allocation a as of at_s (libcore/forecast.h) over a window of
 * days, from its ledger entries at or before at_s.  now: a's balance as of at_s when the
 * caller has it (only the window is then read), or NULL to sum it from the ledger.
 * *from (may be NULL) gets the balance the forecast started from.  Returns 0, or -1 with
 * err (EINVAL: window out of range; nothing written). */
struct forecast;
int store_alloc_forecast(store_t *st, const struct allocation *a, const struct balance *now,
                         int64_t at_s, int window, struct forecast *f, struct balance *from,
                         struct allot_error *err);

/* ---- Jobs: hold, settle, release (doc/design.md §3.5) ---------------------------------------- */

struct hold_req {
    char cluster[ALLOT_NAME_MAX];
    int64_t job_id;
    int32_t run;
    char user[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char partition[ALLOT_NAME_MAX];
    char qos[ALLOT_NAME_MAX];
    char resource[ALLOT_NAME_MAX]; /* the partition's resource type */
    int64_t submit_s, start_s;     /* start_s picks the paying allocation */
    int64_t time_limit_s;
    int64_t billing_micro;
    char req_tres[ALLOT_TRES_MAX];
    char alloc_tres[ALLOT_TRES_MAX];
    int64_t amount_sumin; /* = money_hold_sumin(billing, time limit), computed by the caller */
    int64_t tasks;        /* a submit hold of a job array: amount is tasks x one task's; 0 = 1 */
    char actor[ALLOT_NAME_MAX];
    int64_t now_s;
    int observe; /* 1: allot.conf EnforceMode=observe (store_hold: what a refusal writes) */
};

struct hold_result {
    int replay;                 /* 1: this run was already held/refused; nothing new was written */
    int refused;                /* 1: available < amount; job is JOB_REFUSED, failure recorded */
    struct job job;             /* the job record after the call */
    struct allocation alloc;    /* the payer (zeroed when none was found) */
    struct balance bal;         /* its balance after the call */
    struct failure failure;     /* when refused */
    int64_t held_pending_sumin; /* when refused: of failure.held_sumin, what submit holds
                                   of pending jobs hold (store_alloc_held_at_submit) */
    int observed; /* with refused: only observed (req->observe); no job record, no hold */
};

/* Atomic check-and-hold, idempotent per (cluster, job_id, run): a replay returns the first
 * outcome.  No payer: refused with a failure whose alloc_id is 0.
 * With req->observe, a refusal writes only its failure, marked observed (res->observed = 1):
 * no job record and no hold, so the run may start and its settle is post-paid, charged as
 * a run never held (doc/money.md "Observe mode").  A replay of an observed refusal (no job
 * record, an observed hold failure of the run) returns it again.  An observed refusal of a
 * submit token's provisional hold is recorded at stage "admit" with job id 0: it was the
 * admission, and the token is no job id. */
int store_hold(store_t *st, const struct hold_req *req, struct hold_result *res,
               struct allot_error *err);

/* The refusal text (libcore/denial.h) of the refused hold req -> res: the failure's message
 * (with_job 1: "job J run R: " in front), or the admission's wording for an admit whose
 * provisional hold was refused (with_job 0, HoldMode=submit). */
void store_hold_denial(const struct hold_req *req, const struct hold_result *res, int with_job,
                       char *buf, size_t size);

struct settle_req {
    char cluster[ALLOT_NAME_MAX];
    int64_t job_id;
    int32_t run;
    int64_t start_s, end_s;
    int64_t elapsed_s;
    char slurm_state[ALLOT_STATE_MAX];
    int64_t billing_micro;           /* a run never held: its billing; a held run keeps the billing
                                        its hold was priced at, whatever this says (doc/design.md §3.3) */
    char alloc_tres[ALLOT_TRES_MAX]; /* "" = keep */
    int64_t charge_sumin;            /* -1: the store computes money_charge_sumin(billing, elapsed);
                                        a held run pays at most its hold, NODE_FAIL (slurm_state)
                                        always costs 0 (doc/design.md §3.3); >= 0: an explicit charge */
    char settle_source[ALLOT_NAME_MAX];
    /* For a job that was never held (post-paid, reconciled from sacct): who and where. */
    char user[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char partition[ALLOT_NAME_MAX];
    char qos[ALLOT_NAME_MAX];
    char resource[ALLOT_NAME_MAX];
    int64_t time_limit_s;
    char actor[ALLOT_NAME_MAX];
    int64_t now_s;
};

struct settle_result {
    int replay;                /* 1: already settled or released; nothing new was written */
    int64_t capped_from_sumin; /* > 0: the run used this much, more than its hold, and was
                                * charged its hold (the debit's comment says so) */
    struct job job;
    struct allocation alloc;
    struct balance bal;
    /* 1: alloc is known to have no policy, so a threshold check after this settle has
     * nothing to evaluate; 0: it has one, or not known (look it up).  Set by a settle that
     * wrote (store_settle, store_job_batch); 0 on a replay and on a release. */
    int no_policy;
};

/* Settle a run: release its whole hold and debit charge_sumin, both against the allocation
 * that holds the hold (a straddling job pays from it, doc/design.md §3.4).  A run never held is
 * debited from its payer at start_s without a funds check (the usage happened); ENOENT when
 * it has no payer.  A refused run settles to charge 0 (nothing to release).  Without an end
 * time the run ended at start + elapsed (at the settle when the start is unknown or that is
 * later than the settle), so that usage by end time counts it.  Idempotent. */
int store_settle(store_t *st, const struct settle_req *req, struct settle_result *res,
                 struct allot_error *err);

/* A held run's time limit changed (scontrol update ... timelimit=): its hold re-priced at
 * the billing it was held at (store_job_adjust.c). */
struct hold_adjust_req {
    char cluster[ALLOT_NAME_MAX];
    int64_t job_id; /* a job id, or a submit token (HoldMode=submit, run 0) */
    int32_t run;
    int64_t time_limit_s; /* the new limit, > 0 */
    char actor[ALLOT_NAME_MAX];
    int64_t now_s;
};

struct hold_adjust_result {
    int replay;  /* 1: the hold is already priced at this time limit */
    int refused; /* 1: a raise the allocation cannot cover; nothing moved */
    int64_t old_hold_sumin, old_time_limit_s;
    int64_t delta_sumin; /* > 0 held more, < 0 released, 0 same price */
    struct job job;      /* the run after the call */
    struct allocation alloc;
    struct balance bal;     /* the payer's balance after the call */
    struct failure failure; /* when refused: recorded, with the denial text */
};

/* Re-price held run (cluster, job_id, run) at time_limit_s: a raise appends a checked hold
 * of the difference (refused with a failure when the allocation cannot cover it), a cut a
 * release of the difference; the run's hold and time limit are then the new ones, which its
 * settle caps the charge at.  Ledger entries are appended, never changed.  Idempotent: the
 * same time limit again is a replay.  ENOENT for an unknown run, ECONFLICT for a run that is
 * not held (settled, released, refused). */
int store_hold_adjust(store_t *st, const struct hold_adjust_req *req,
                      struct hold_adjust_result *res, struct allot_error *err);

/* Release a held run without charge (never started, cancelled while pending).  Idempotent;
 * ENOENT for an unknown run. */
int store_release(store_t *st, const char *cluster, int64_t job_id, int32_t run, const char *actor,
                  const char *comment, int64_t now_s, struct settle_result *res,
                  struct allot_error *err);

/* A run the Slurm plugins cancelled before it started, without a hold the bank answered
 * (FailMode=closed, allotd unreachable at the hold): it is never charged. */
struct void_req {
    char cluster[ALLOT_NAME_MAX];
    int64_t job_id;
    int32_t run;
    char user[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char partition[ALLOT_NAME_MAX];
    char qos[ALLOT_NAME_MAX];
    int64_t submit_s, start_s; /* 0 = unknown */
    int64_t time_limit_s;
    char alloc_tres[ALLOT_TRES_MAX];
    char reason[ALLOT_MSG_MAX]; /* why the plugin cancelled it, for the failure record */
    char actor[ALLOT_NAME_MAX];
    int64_t now_s;
};

/* Record run (cluster, job_id, run) as void: a run allot does not know is recorded as
 * released with no hold and no charge (settle_source "void", state CANCELLED) and a
 * failure (stage "hold") carries REASON; a held run (its hold was taken but the answer never
 * reached the plugin) has its hold released and is marked the same way.  Every later
 * settle or release of the run is then a replay: nothing is charged.  A run already
 * settled, released or refused is a replay here too (res->replay).  Idempotent. */
int store_void(store_t *st, const struct void_req *req, struct settle_result *res,
               struct allot_error *err);

/* Many holds and settles at once (group commit, PostgreSQL), in a write transaction of
 * their own.  The writer offers a batch's job verbs here before running the rest in its
 * transaction: on PostgreSQL one statement applies every op of the common case -- a settle
 * of a held run, a new hold paid by its own account's allocation with the funds -- and
 * commits, all in one round trip (db_step_tx: BEGIN, the write lock, the statement,
 * COMMIT), marks each op it applied done and fills its result, exactly as the verb would
 * have (the batch's settles first, then its holds, each in array order).  Ops left not
 * done (replays, refusals, runs named twice in the batch, ancestor payers, anything
 * unusual) are for the caller to run with store_hold/store_settle afterwards: a valid
 * order, because none of the batch's requests has been answered yet.  Any n >= 1: a
 * single op takes the same statement (the verbs' PostgreSQL fast path).
 * Outside a transaction.  SQLite does nothing here (done stays 0, no transaction): its
 * verbs cost no round trips; store_batches_jobs says which.  0, or -1 with err: no op is
 * done and the statement's work does not stand (except when its answer could not be read
 * after the commit, an internal error: the verbs then answer those ops as replays; and
 * EINDOUBT: the answer to its COMMIT was lost, so it may stand: running the ops one by one
 * on the next connection answers them as replays if it does). */
struct store_job_op {
    const struct hold_req *hold; /* exactly one of hold and settle */
    const struct settle_req *settle;
    struct hold_result *hold_res;     /* with hold */
    struct settle_result *settle_res; /* with settle */
    int done;                         /* out: 1 = applied, result filled */
};
int store_job_batch(store_t *st, struct store_job_op *ops, int n, struct allot_error *err);
/* 1 when store_job_batch applies ops on this backend (PostgreSQL), 0 when it never does. */
int store_batches_jobs(const store_t *st);

struct job_filter {
    const char *cluster; /* NULL = any */
    int64_t job_id;      /* 0 = any */
    const char *account; /* NULL = any */
    const char *user;    /* NULL = any */
    int status;          /* -1 = any, else enum job_status */
    int64_t since_s;     /* updated at or after; 0 = any */
    int limit;           /* 0 = no limit; newest first */
};
typedef int (*store_job_f)(const struct job *j, void *arg);
int store_job_get(store_t *st, const char *cluster, int64_t job_id, int32_t run, struct job *out,
                  struct allot_error *err);
int store_job_list(store_t *st, const struct job_filter *f, store_job_f cb, void *arg,
                   struct allot_error *err);
/* Slurm's array and het ids of job ids (store_job_ids.c, schema 0020).  put: record IDS
 * for (CLUSTER, JOB_ID), replacing what was recorded (ids with neither an array nor a het
 * job id are refused: EINVAL).  get: 1 with *IDS, 0 when none is recorded (*IDS zeroed).
 * find: call CB for each job id of CLUSTER that is a task of array MATCH->array_job_id
 * (only task MATCH->array_task_id when >= 0), or else a component of het job
 * MATCH->het_job_id (only offset MATCH->het_job_offset when >= 0), in task / offset order;
 * a CB returning non-zero stops the walk with that value. */
int store_job_ids_put(store_t *st, const char *cluster, int64_t job_id,
                      const struct job_slurm_ids *ids, struct allot_error *err);
int store_job_ids_get(store_t *st, const char *cluster, int64_t job_id, struct job_slurm_ids *ids,
                      struct allot_error *err);
typedef int (*store_job_ids_f)(int64_t job_id, const struct job_slurm_ids *ids, void *arg);
int store_job_ids_find(store_t *st, const char *cluster, const struct job_slurm_ids *match,
                       store_job_ids_f cb, void *arg, struct allot_error *err);
/* Forget the ids of job ids that have no run left (store_job_scrub calls it). */
int store_job_ids_scrub(store_t *st, struct allot_error *err);
/* 1 when any job id has ids recorded, else 0 (readers skip the lookups then). */
int store_job_ids_any(store_t *st, struct allot_error *err);
/* EINVAL unless IDS is none (all zero / -1), an array task (array_job_id > 0, task >= 0),
 * or a het component (het_job_id > 0, offset >= 0), or both; ids of 32 bits. */
int store_job_ids_check(const struct job_slurm_ids *ids, struct allot_error *err);

/* Number of runs in JOB_HELD for a user and/or account (NULL = any): submit-time counts. */
int store_job_count_held(store_t *st, const char *cluster, const char *account, const char *user,
                         int64_t *count, struct allot_error *err);
/* Held runs on cluster (required) counted by the groups of Slurm's submit limits
 * (store_job_count.c).  _subtree: runs of account and of every account below it (GrpSubmitJobs
 * of an account association).  _qos: runs whose job QOS is qos, optionally only user's or only
 * account's (NULL = any): a QOS's GrpSubmitJobs, MaxSubmitJobsPerUser, MaxSubmitJobsPerAccount.
 * *count untouched on error. */
int store_job_count_held_subtree(store_t *st, const char *cluster, const char *account,
                                 int64_t *count, struct allot_error *err);
int store_job_count_held_qos(store_t *st, const char *cluster, const char *qos, const char *user,
                             const char *account, int64_t *count, struct allot_error *err);
/* The part of allocation alloc_id's held SU that submit holds (HoldMode=submit: jobs still
 * pending) hold; the rest of its held balance is held by runs that started.  For a refusal's
 * text (libcore/denial.h). */
int store_alloc_held_at_submit(store_t *st, int64_t alloc_id, int64_t *sumin,
                               struct allot_error *err);

/* Failures: store_hold records its own; admission denials are recorded with this. */
struct failure_filter {
    const char *account; /* NULL = any */
    const char *user;
    const char *cluster; /* with job_id: one job's failures */
    int64_t job_id;      /* 0 = any */
    int64_t since_s;
    int limit; /* 0 = no limit; newest first */
};
typedef int (*store_failure_f)(const struct failure *f, void *arg);
int store_failure_add(store_t *st, struct failure *f, struct allot_error *err); /* sets id */
int store_failure_list(store_t *st, const struct failure_filter *f, store_failure_f cb, void *arg,
                       struct allot_error *err);

/* ---- Imported history (store_import.c; doc/adopt.md "Bring the history") -------------- */

/* One finished job from sacct, its billing priced by the caller as a settle of a run never
 * held prices it (alloc_tres with the partition's weights).  The store charges it as that
 * settle would: money_charge_sumin(billing, elapsed), 0 for NODE_FAIL. */
struct import_job {
    char cluster[ALLOT_NAME_MAX];
    int64_t job_id;
    int32_t run;
    char user[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char partition[ALLOT_NAME_MAX];
    char qos[ALLOT_NAME_MAX];
    char resource[ALLOT_NAME_MAX]; /* the partition's resource type */
    int64_t start_s, end_s, elapsed_s, time_limit_s;
    char slurm_state[ALLOT_STATE_MAX];
    char alloc_tres[ALLOT_TRES_MAX];
    int64_t billing_micro;
};
struct import_result {
    int64_t imported;      /* new runs written */
    int64_t already;       /* runs the bank had (imported before, or settled by the plugins) */
    int64_t charged_sumin; /* backfill: debited in all */
};
/* Write v[0..n) as settled runs with settle_source "import", in the caller's transaction;
 * idempotent per (cluster, job_id, run): a run the bank has is left as it is (already).
 * backfill 0: usage only -- the run counts for fair-share (its charge_sumin, its billing x
 * elapsed) but no allocation pays it (alloc_id 0, no ledger entry).  backfill 1: each new
 * run with a charge is debited from its payer at its start (store_find_payer; ENOENT names
 * the job when none), one debit entry per run with the comment "import sacct <state>", no
 * funds check (the usage happened).  -1 with err: nothing of the batch stands once the
 * caller's savepoint is rolled back. */
int store_job_import(store_t *st, const struct import_job *v, size_t n, int backfill,
                     const char *actor, int64_t now_s, struct import_result *res,
                     struct allot_error *err);

/* ---- History by cluster ------------------------------------------------------------- */

/* The records that keep the name of a cluster removed since. */
enum store_history {
    STORE_HISTORY_JOBS,     /* job runs (and so usage) */
    STORE_HISTORY_LEDGER,   /* ledger entries (a job's: only they carry a cluster) */
    STORE_HISTORY_STEPS,    /* step records */
    STORE_HISTORY_COMMANDS, /* the agents' outbox */
};
/* Does any record of history h name cluster?  1 yes, 0 no, -1 with err.  One index probe:
 * a listing asks it only for a name that is not a cluster now. */
int store_history_names_cluster(store_t *st, enum store_history h, const char *cluster,
                                struct allot_error *err);

/* ---- Integrity ---------------------------------------------------------------------- */

/* Verify the invariants: each cached balance equals its ledger sums; held >= 0; every
 * JOB_HELD run has exactly one unreleased hold; every settled run exactly one debit entry
 * (or none when charged 0) and one release; available >= 0 where only holds changed it.
 * Calls cb once per problem with a sentence; returns the number of problems (>= 0) or -1.
 * Outside a transaction it reads in one read-only snapshot, so concurrent commits cannot
 * show as problems (and writers do not wait for it). */
typedef void (*store_problem_f)(const char *problem, void *arg);
int store_check(store_t *st, store_problem_f cb, void *arg, struct allot_error *err);

/* ---- Usage for fair-share and reports (store_usage.c, doc/design.md §6) ---------------------- */

/* One settled job as usage: who, when it ended and what it cost. */
struct usage_job {
    char cluster[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char user[ALLOT_NAME_MAX];
    char qos[ALLOT_NAME_MAX];
    int64_t end_s;
    int64_t elapsed_s;
    int64_t charge_sumin;  /* what the bank debited */
    int64_t billing_micro; /* billing (TRESBillingWeights) in micro-units */
};
struct usage_filter {
    const char *cluster; /* NULL = any */
    const char *account; /* NULL = any */
    const char *user;    /* NULL = any */
    int64_t since_s;     /* end_s >= since_s */
    int64_t until_s;     /* end_s < until_s; 0 = no bound */
};
typedef int (*store_usage_job_f)(const struct usage_job *u, void *arg);
/* Every settled run matching f, oldest end first (cb may stop it). */
int store_usage_jobs(store_t *st, const struct usage_filter *f, store_usage_job_f cb, void *arg,
                     struct allot_error *err);
/* Clear usage (write verb): jobs of (cluster, account, user) that ended before now_s stop
 * counting; user "" means the account and every association under it.  The account must
 * exist (ENOENT); cluster must exist. */
int store_usage_clear(store_t *st, const char *cluster, const char *account, const char *user,
                      int64_t now_s, struct allot_error *err);
typedef int (*store_usage_reset_f)(const char *cluster, const char *account, const char *user,
                                   int64_t time_s, void *arg);
/* The recorded clears of cluster (NULL = all). */
int store_usage_resets(store_t *st, const char *cluster, store_usage_reset_f cb, void *arg,
                       struct allot_error *err);
#ifdef ALLOT_TEST
/* Rows the calling thread's statements have returned so far (test builds: what a request
 * reads, counted; allotd in TestMode=local answers it as X-Allot-Rows-Read). */
int64_t store_rows_read(void);
#endif

/* Fair-share usage accumulators (store_usage_acc.c, schema 0024, doc/fairshare.md): the
 * decay they are kept with, and one row per (cluster, account, user, qos) with settled runs. */
struct store_usage_params {
    struct decay_params decay; /* PriorityDecayHalfLife, PriorityUsageResetPeriod */
    int billing;               /* UsageSource=billing (billing x elapsed s), else charge */
};
struct usage_acc_row {
    char account[ALLOT_NAME_MAX];
    char user[ALLOT_NAME_MAX];
    char qos[ALLOT_NAME_MAX];
    decay_acc_t acc; /* usage x 1: ref_value decays, nodecay_value is the same runs undecayed */
    int64_t reset_s; /* runs that ended before it are not in acc (`allot usage clear`) */
};
typedef int (*store_usage_acc_f)(const struct usage_acc_row *r, const struct store_usage_params *p,
                                 void *arg);
/* The stored params: 1 and *p, or 0 when the accumulators are not built yet; -1 on error. */
int store_usage_params_get(store_t *st, struct store_usage_params *p, struct allot_error *err);
/* Every accumulator of cluster, runs written by a batch and not folded yet included (their
 * end is taken as at most now_s).  want: the params the caller computes with; ECONFLICT when
 * the rows were kept with others, EUNAVAIL when none are built.  cb may stop the walk.
 * Cost: the cluster's accumulators (plus unfolded runs), never the jobs. */
int store_usage_acc_list(store_t *st, const char *cluster, const struct store_usage_params *want,
                         int64_t now_s, store_usage_acc_f cb, void *arg, struct allot_error *err);
/* r's usage at now_s: the decaying part, or for a NoDecay QOS the undecayed one. */
double store_usage_acc_value(const struct usage_acc_row *r, const struct store_usage_params *p,
                             int nodecay, int64_t now_s);
/* Write verbs.  Rebuild: every accumulator again from the settled runs, kept with p from now
 * on; *rows (may be NULL) gets the number of accumulators.  Configure: as rebuild when p
 * differs from the stored params (or none are stored; *rebuilt 1), else a fold.  Fold: move
 * the runs a batch wrote into the accumulators.  Clear: zero the accumulators a usage clear
 * hides (store_usage_clear calls it). */
int store_usage_rebuild(store_t *st, const struct store_usage_params *p, int64_t now_s,
                        int64_t *rows, struct allot_error *err);
int store_usage_configure(store_t *st, const struct store_usage_params *p, int64_t now_s,
                          int *rebuilt, struct allot_error *err);
int store_usage_fold(store_t *st, int64_t now_s, struct allot_error *err);
int store_usage_acc_clear(store_t *st, const char *cluster, const char *account, const char *user,
                          int64_t now_s, struct allot_error *err);
/* Delete job records (write verb) that are not held and were last updated before before_s;
 * ledger entries stay.  *deleted gets the count.  Records the scrub in job_scrubs. */
int store_job_scrub(store_t *st, int64_t before_s, int64_t now_s, int64_t *deleted,
                    struct allot_error *err);

/* ---- Usage reports (store_report.c, doc/reports.md) ------------------------------------- */

/* What a usage report sums over: settled runs ending in [start_s, end_s) and refusals
 * recorded then (EnforceMode=observe's excepted), of the matching names. */
struct report_filter {
    const char *group;   /* the key: "account", "user", "partition", "resource", "cluster" */
    const char *cluster; /* NULL = any, likewise below */
    const char *account;
    const char *user;
    const char *partition;
    int64_t start_s; /* end (refusal time) >= start_s */
    int64_t end_s;   /* end < end_s; 0 = no bound */
    int by_alloc;    /* also sum per paying allocation (a report by allocation window) */
    int with_owner;  /* also sum per (account, user): for a caller who may not see all */
};
enum report_sum_kind { REPORT_SUM_JOBS = 0, REPORT_SUM_REFUSALS };
/* One sum of the report's query: the runs (or refusals) of one key on one UTC day. */
struct report_sum {
    enum report_sum_kind kind;
    char key[ALLOT_NAME_MAX];
    int64_t day_s;                                /* the UTC midnight starting the day */
    int64_t alloc_id, alloc_start_s, alloc_end_s; /* by_alloc; 0 otherwise or none */
    char account[ALLOT_NAME_MAX];                 /* with_owner; "" otherwise */
    char user[ALLOT_NAME_MAX];
    int64_t count;        /* runs or refusals */
    int64_t charge_sumin; /* the runs' debits (a usage-only import's: 0) */
    int64_t cpu_s, gpu_s; /* AllocTRES cpu (gres/gpu) x elapsed */
    int64_t cpu_used_s;   /* CPU time the runs' step records measured */
    int64_t cpu_alloc_s;  /* cpu x elapsed of the runs with such records */
};
typedef int (*store_report_sum_f)(const struct report_sum *s, void *arg);
/* The sums of f, one statement that aggregates (unordered; cb may stop it). */
int store_report_usage(store_t *st, const struct report_filter *f, store_report_sum_f cb, void *arg,
                       struct allot_error *err);

/* ---- Periodic policies, command outbox, evaluation log (doc/design.md §5; store_policy*.c) ----
 */

#define STORE_PERIOD_MAX 16           /* "2026-Q3", "total" (PERIOD_STR_MAX of libcore/period.h) */
#define POLICY_FORECAST_DAYS_MAX 3660 /* forecast_days: ten years */

/* A policy on one allocation (at most one per allocation).  Amounts are SU-minutes, ratios
 * parts per million.  The state fields (current_period .. flags) are written only by
 * store_policy_roll / store_policy_evaluate. */
struct policy {
    int64_t id;
    int64_t alloc_id;
    char account[ALLOT_NAME_MAX];      /* the allocation's account (read only) */
    char cluster[ALLOT_NAME_MAX];      /* where its commands go (must exist) */
    char period_kind[ALLOT_NAME_MAX];  /* "month", "quarter", "year", "total" */
    int64_t base_sumin;                /* credited at each period start */
    int carryover;                     /* 1: carry unused (doc/design.md §5.3), never for total */
    int64_t carry_factor_ppm;          /* cap of the carry, x base (default 500000) */
    int64_t grace_ppm;                 /* default 200000; pause at 1e6 + grace */
    int64_t notify_ppm;                /* default 800000 */
    int64_t downscale_ppm;             /* default 1000000 */
    char slow_qos[ALLOT_NAME_MAX];     /* "" = no downscale action */
    char normal_qos[ALLOT_NAME_MAX];   /* QOS restored when downscale clears */
    int reset_raw_usage;               /* 1: reset RawUsage at boundaries (never for total) */
    char limit_type[ALLOT_NAME_MAX];   /* GrpTRESMins | MaxTRESMins | GrpTRES */
    char tres_weights[ALLOT_TRES_MAX]; /* informative, as pushed to the partition */
    int64_t fairshare;                 /* >= 0: pushed at each boundary; -1 = not managed */
    int64_t forecast_days; /* notify when the forecast runs out within this many days; 0 = off */
    /* add only, not stored: what becomes of SU the allocation was granted before the policy.
     * "" refuses such an allocation, "add" keeps them on top of the first period's base,
     * "expire" expires its free balance at once (the first period then holds its base). */
    char initial[ALLOT_NAME_MAX];
    char actor[ALLOT_NAME_MAX]; /* add only: who added it (the initial expiry's actor) */
    /* state */
    char current_period[STORE_PERIOD_MAX]; /* the durable period marker; "" = none yet */
    int64_t period_start_s, period_end_s;  /* of current_period (UTC) */
    int64_t period_total_sumin;            /* base + carry + hand credits of current_period */
    int64_t period_used_open_sumin;        /* allocation's used_sumin when the period opened */
    unsigned flags;                        /* enum carryover_flag in force at the last evaluation */
    int64_t created_s;
};

/* add: allocation and cluster must exist, kind and limit_type valid, amounts and ppm in
 * range; EEXIST when the allocation already has a policy; EINVAL when it was granted SU
 * and p->initial does not say what becomes of them.  Sets p->id, state empty. */
int store_policy_add(store_t *st, struct policy *p, struct allot_error *err);
int store_policy_get(store_t *st, int64_t id, struct policy *out, struct allot_error *err);
/* The policy of allocation alloc_id; ENOENT when none. */
int store_policy_get_by_alloc(store_t *st, int64_t alloc_id, struct policy *out,
                              struct allot_error *err);
typedef int (*store_policy_f)(const struct policy *p, void *arg);
/* All policies by id; after_id/limit page (0 = from the start / no limit). */
int store_policy_list(store_t *st, int64_t after_id, int limit, store_policy_f cb, void *arg,
                      struct allot_error *err);

/* What one period boundary did (store_policy_roll). */
struct policy_roll {
    int rolled;                        /* 0: marker already at the current period */
    char old_period[STORE_PERIOD_MAX]; /* "" for the first period */
    char new_period[STORE_PERIOD_MAX];
    int64_t prev_used_sumin; /* use counted for the closed period */
    int64_t expired_sumin, carry_sumin, credit_sumin, total_sumin;
    int64_t limit_value; /* the value pushed with limit_type */
    int64_t command_ids[8];
    int ncommands;
};

/* The boundary transaction (doc/design.md §5.4), inside the caller's transaction: when the period
 * of now_s (in the zone whose UTC offset tz gives, NULL = UTC) differs from the marker, credit base
 * + carry for the new period, then close the marker's period by expiring all it did not debit (the
 * free balance and the holds of running jobs, whose charges then count as the new period's use;
 * never below zero available), record its use (ledger keys "policy:<id>:<period>:..." so a replay
 * writes nothing), enqueue reset_raw_usage (unless disabled or total), set_limit, set_fairshare,
 * and undo active downscale/pause, then advance the marker by compare-and-set.  Periods skipped
 * while allotd was down get no credit of their own: the marker period's use is counted as the
 * previous period's.  A now_s before the marker's period (clock stepped back) changes nothing, and
 * so does one before the allocation's start; one at or after its end closes its last period once
 * (key "...:end-expiry": the free balance expires, running jobs' holds stay for their
 * settles) and undoes downscale/pause.  Errors: ENOENT (policy), EINVAL (period
 * computation), storage. */
struct period_tz;
int store_policy_roll(store_t *st, int64_t policy_id, int64_t now_s, const struct period_tz *tz,
                      const char *actor, struct policy_roll *out, struct allot_error *err);

/* One threshold evaluation (inside the caller's transaction; nothing is evaluated at or after
 * the allocation's end): rolls first, then compares
 * the period's use (allocation used now - used at open) with its total, enqueues the actions
 * of raised and cleared flags (notify is logged only; downscale sets slow_qos, pause sets
 * GrpJobs=0; clearing undoes them), stores the new flags and appends an evaluation row.
 * *out receives the evaluation (may be NULL).  A dry run is this call in a transaction the
 * caller rolls back. */
struct policy_eval {
    int64_t id;
    int64_t policy_id;
    char period[STORE_PERIOD_MAX];
    int64_t time_s;
    int64_t used_sumin, total_sumin, usage_ppm;
    unsigned prev_flags, new_flags;
    char actions[ALLOT_TEXT_MAX];     /* e.g. "notify,downscale" or "" */
    char command_ids[ALLOT_TEXT_MAX]; /* comma-separated */
    struct policy_roll roll;          /* the boundary work done first (rolled = 0: none) */
};
int store_policy_evaluate(store_t *st, int64_t policy_id, int64_t now_s, const struct period_tz *tz,
                          const char *actor, struct policy_eval *out, struct allot_error *err);
struct eval_filter {
    int64_t policy_id;  /* 0 = any */
    const char *period; /* NULL = any */
    int limit;          /* 0 = no limit; newest first */
};
typedef int (*store_eval_f)(const struct policy_eval *e, void *arg);
int store_eval_list(store_t *st, const struct eval_filter *f, store_eval_f cb, void *arg,
                    struct allot_error *err);

/* Per-period history of a policy (policy_periods rows), oldest first. */
struct policy_period_row {
    char period[STORE_PERIOD_MAX];
    int64_t start_s, end_s, base_sumin, carry_sumin, total_sumin, used_open_sumin;
    int64_t opened_s, closed_s, used_sumin, expired_sumin;
};
typedef int (*store_policy_period_f)(const struct policy_period_row *r, void *arg);
int store_policy_periods(store_t *st, int64_t policy_id, store_policy_period_f cb, void *arg,
                         struct allot_error *err);

/* ---- Command outbox ---- */
enum command_state { COMMAND_PENDING = 0, COMMAND_SENT, COMMAND_CONFIRMED, COMMAND_FAILED };
const char *store_command_state_name(enum command_state s);
struct command {
    int64_t id;
    char cluster[ALLOT_NAME_MAX];
    char kind[ALLOT_NAME_MAX];    /* reset_raw_usage, set_limit, set_fairshare, set_qos, ... */
    char target[ALLOT_NAME_MAX];  /* the Slurm account */
    char payload[ALLOT_TRES_MAX]; /* "GrpTRESMins=billing=90000", "qos=slow", ... */
    int64_t policy_id;
    char period[STORE_PERIOD_MAX];
    enum command_state state;
    int64_t attempts;
    char result[ALLOT_TEXT_MAX];
    char idem_key[ALLOT_KEY_MAX];
    int64_t created_s, sent_s, done_s;
};
/* Enqueue (caller's transaction): idempotent on c->idem_key; *replay = 1 and *c = the
 * existing command when the key exists.  Sets id, state pending, created_s = now_s. */
int store_command_add(store_t *st, struct command *c, int64_t now_s, int *replay,
                      struct allot_error *err);
int store_command_get(store_t *st, int64_t id, struct command *out, struct allot_error *err);
struct command_filter {
    const char *cluster; /* NULL = any */
    int64_t policy_id;   /* 0 = any */
    const char *period;  /* NULL = any */
    int state;           /* -1 = any */
    int64_t after_id;
    int limit; /* 0 = no limit; oldest first */
};
typedef int (*store_command_f)(const struct command *c, void *arg);
int store_command_list(store_t *st, const struct command_filter *f, store_command_f cb, void *arg,
                       struct allot_error *err);
/* The agent's poll (caller's transaction): hand out up to max commands of cluster that are
 * pending, or sent more than lease_s ago without a result (the agent died), oldest first,
 * marking them sent (attempts + 1, sent_s = now_s); records the agent as seen. */
int store_command_claim(store_t *st, const char *cluster, int64_t now_s, int64_t lease_s, int max,
                        store_command_f cb, void *arg, struct allot_error *err);
/* The agent's result for command id: state COMMAND_CONFIRMED or COMMAND_FAILED, with text.
 * A result for a command already confirmed or failed is a replay (*replay = 1, nothing
 * changes) so an agent retrying its post is harmless.  ENOENT for an unknown id. */
int store_command_result(store_t *st, int64_t id, enum command_state state, const char *result,
                         int64_t now_s, int *replay, struct allot_error *err);
/* The last poll time of cluster's agent (0 = never) and the oldest unfinished command's
 * created_s (0 = none) and count. */
int store_agent_status(store_t *st, const char *cluster, int64_t *last_seen_s,
                       int64_t *oldest_waiting_s, int64_t *waiting, struct allot_error *err);

/* The agent's sacct reconciliation marker of a cluster (store_reconcile.c): every job that
 * ended before until_s has been settled or reported.  get: a cluster never reconciled
 * reads until_s = 0.  set (write verb): moves until_s forward only (a smaller value keeps
 * the stored one), adds the counts, replaces the report; ENOENT for an unknown cluster. */
struct reconcile_mark {
    char cluster[ALLOT_NAME_MAX];
    int64_t until_s, updated_s;  /* UTC; 0 = never */
    int64_t settled, unknown;    /* running totals reported by the agent */
    char report[ALLOT_TEXT_MAX]; /* the last window's unknown jobs, "" = none */
};
int store_reconcile_get(store_t *st, const char *cluster, struct reconcile_mark *out,
                        struct allot_error *err);
int store_reconcile_set(store_t *st, const char *cluster, int64_t until_s, int64_t settled,
                        int64_t unknown, const char *report, int64_t now_s,
                        struct allot_error *err);

/* ---- Monitored step records (store_step.c, doc/design.md §7) --------------------------------- */

#define STORE_STEP_RECORD_MAX (48 * 1024) /* bytes of record text (API bodies are <= 64 KiB) */
/* One step of a job, keyed (cluster, job_id, step_name, attempt).  record is the step's
 * JSON text as allotd canonicalised it; store_step_add borrows it for the call, callbacks
 * of store_step_list receive it borrowed for the duration of the call. */
struct step_record {
    char cluster[ALLOT_NAME_MAX];
    int64_t job_id;
    char step_name[ALLOT_NAME_MAX];
    int64_t attempt;           /* 1.. */
    char user[ALLOT_NAME_MAX]; /* the job's user, "" = unknown to the bank */
    char status[16];           /* completed | failed | oom | timeout */
    int64_t return_code;
    int64_t exec_ms;
    const char *record;
    char actor[ALLOT_NAME_MAX]; /* who recorded it */
    int64_t created_s;
};
/* Record a step (write verb).  Idempotent on the key: the same record text again sets
 * *replay = 1 and fills r with the stored row (actor, created_s of the first write); a
 * different text is ECONFLICT and changes nothing.  EINVAL for a bad field (named),
 * ETOOBIG for a record over STORE_STEP_RECORD_MAX. */
int store_step_add(store_t *st, struct step_record *r, int *replay, struct allot_error *err);
struct step_filter {
    const char *cluster; /* NULL = any */
    int64_t job_id;      /* 0 = any */
    const char *user;    /* NULL = any */
    int limit;           /* 0 = no limit */
};
typedef int (*store_step_f)(const struct step_record *r, void *arg);
/* Steps matching f by cluster, job, time recorded, name, attempt. */
int store_step_list(store_t *st, const struct step_filter *f, store_step_f cb, void *arg,
                    struct allot_error *err);

/* ---- Drift between allot's copy and Slurm (store_sync.c; doc/agent.md "Sync") ---------- */

#define STORE_SYNC_DRIFTS_MAX 10000 /* drifts one pass may report */

/* One difference found by allot-agent's sync pass, keyed (cluster, kind, object, field).
 * kind: partition, account, user, assoc; object: the name ("big", "alice",
 * "chem/alice/" for an association account/user/partition); field: what differs
 * (billing_weights, max_time, default_account, exists).  status: reported, unresolvable
 * or failed (a resolved drift is not stored). */
struct sync_drift {
    char cluster[ALLOT_NAME_MAX];
    char kind[16];
    char object[3 * ALLOT_NAME_MAX];
    char field[32];
    char slurm_value[ALLOT_TEXT_MAX]; /* "" = absent in Slurm */
    char allot_value[ALLOT_TEXT_MAX]; /* "" = absent in allot */
    char status[16];
    char note[ALLOT_TEXT_MAX];
    int64_t first_seen_s, last_seen_s;
};
/* A cluster's last sync pass and its running totals. */
struct sync_state {
    char cluster[ALLOT_NAME_MAX];
    char mode[16]; /* follow | report | push */
    int64_t generation;
    int64_t synced_s;
    int64_t found_total;    /* drifts found over every pass */
    int64_t resolved_total; /* drifts the mode resolved over every pass */
    int64_t drifts;         /* drifts stored now (store_sync_states) */
};
/* Replace CLUSTER's drifts with D[0..N-1] found by a pass in MODE at NOW_S, which also
 * resolved RESOLVED others (write verb).  A drift already stored keeps its first_seen_s.
 * EINVAL for a bad field (named), ENOENT for an unknown cluster, ETOOBIG over
 * STORE_SYNC_DRIFTS_MAX. */
int store_sync_replace(store_t *st, const char *cluster, const char *mode, int64_t now_s,
                       const struct sync_drift *d, int n, int64_t resolved,
                       struct allot_error *err);
typedef int (*store_sync_drift_f)(const struct sync_drift *d, void *arg);
typedef int (*store_sync_state_f)(const struct sync_state *s, void *arg);
/* Stored drifts of CLUSTER (NULL or "": every cluster) by cluster, kind, object, field. */
int store_sync_drifts(store_t *st, const char *cluster, store_sync_drift_f cb, void *arg,
                      struct allot_error *err);
/* Clusters' last passes (NULL or "": every cluster), with the number of drifts stored. */
int store_sync_states(store_t *st, const char *cluster, store_sync_state_f cb, void *arg,
                      struct allot_error *err);

/* ---- Export and import (store_dump.c; `allot db export|import`) ------------------------ */

/* Write every bank table (not schema_version) to out as the versioned JSON-lines dump
 * described in store_dump.c: a header, one object per row in dependency order with the
 * stored ids, a trailer with counts.  Runs in its own transaction under the write lock (a
 * consistent picture; writers wait), so it must not be called inside one.  *rows (may be
 * NULL) gets the number of rows.  Errors: EUNAVAIL (schema not current), EIO (write failed,
 * text not UTF-8), storage errors.  The file is left as written so far on failure. */
struct store_dump_progress; /* below */
int store_dump_export(store_t *st, FILE *out, int64_t now_s, int64_t *rows,
                      const struct store_dump_progress *pg, struct allot_error *err);
/* Read a dump from in into this database in ONE transaction it opens and commits.  The
 * database must be upgraded to the dump's schema version and empty (only the root account
 * the migrations create; EEXIST otherwise).  Every row is checked (known table, order, every
 * column once with its type), the trailer's counts must match (a truncated file is EINVAL),
 * and store_check must pass on the result (cached balances equal to ledger sums); any
 * failure rolls everything back.  *rows (may be NULL) gets the number imported. */
int store_dump_import(store_t *st, FILE *in, int64_t *rows, const struct store_dump_progress *pg,
                      struct allot_error *err);
/* Progress of an export or import (pg may be NULL): fn is called after each row with the rows
 * done so far and the total, -1 when not known (an import reads it in the trailer, last).
 * An export given pg counts every table's rows first. */
struct store_dump_progress {
    void (*fn)(void *arg, int64_t done, int64_t total);
    void *arg;
};
/* Name of the i-th table a dump holds (dependency order), NULL past the last.  With the next
 * one, the dump's tested contract: store_dump's test checks that every table of the schema
 * is either dumped or derived, so a new table cannot be left out of a dump unnoticed. */
const char *store_dump_table(int i);
/* Name of the i-th table a dump leaves out because import rebuilds it from the tables it
 * holds (SQLite's ledger_alloc_index and its mark, schema 0016), NULL past the last. */
const char *store_dump_derived_table(int i);

/* Hold-at-submit (store_submit.c, HoldMode=submit).  A provisional hold is a store_hold()
 * whose job_id is a submit token: job_submit makes it from the time and a counter, always in
 * [STORE_SUBMIT_TOKEN_MIN, STORE_SUBMIT_TOKEN_MAX], above every 32-bit Slurm job id. */
#define STORE_SUBMIT_TOKEN_MIN ((int64_t)1 << 32)
#define STORE_SUBMIT_TOKEN_MAX ((int64_t)1 << 62)
/* 1 if TOKEN is in the submit-token range, else 0.  Pure; any thread. */
int store_submit_token_valid(int64_t token);
/* Hold REQ (a real job run) in place of the provisional hold of TOKEN (its last run): if that
 * run is still held for the same user and account, one task's share of it is released first
 * (all of it for a single job; the rest is held again as the token's next run), in the
 * caller's transaction, so the same amount is held again without needing new credit;
 * otherwise REQ is an ordinary store_hold.  A replay of REQ's run takes no share.  Outcomes as
 * store_hold (refused = 0 with res->refused). Errors: EINVAL (bad token, or a token as job id),
 * store errors; nothing changed on -1. */
int store_submit_bind(store_t *st, int64_t token, const struct hold_req *req,
                      struct hold_result *res, struct allot_error *err);
/* Release what TOKEN's provisional hold holds (its last run) above KEEP tasks' shares:
 * KEEP 0, all of it (the job, or the whole job array, ended before it started); KEEP > 0,
 * a job array whose other tasks were cancelled pending keeps the shares of the KEEP tasks
 * that may still start.  Holding KEEP shares or fewer already: a replay that writes
 * nothing.  res->job: the token's run that holds what is left (or the released one).
 * Errors: EINVAL, ENOENT (no such token), store errors. */
int store_submit_release_all(store_t *st, const char *cluster, int64_t token, int64_t keep,
                             const char *actor, const char *comment, int64_t now_s,
                             struct settle_result *res, struct allot_error *err);
/* Release at most MAX provisional holds not updated for TTL_S seconds before NOW_S (their job
 * was cancelled while pending, refused later, or never created); *RELEASED = how many.
 * Write transaction of the caller.  Errors: EINVAL, ENOMEM, store errors. */
int store_submit_sweep(store_t *st, int64_t ttl_s, const char *actor, int64_t now_s, int max,
                       int *released, struct allot_error *err);

#endif
