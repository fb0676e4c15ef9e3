/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_int.h - what the store_*.c files share (internal to libstore).
 *
 * The store_t body, the ids of the prepared statements (each file owns the SQL text of
 * its ids, as static const strings at its top; an id is always prepared from the same
 * text), the embedded migrations and the helpers every verb uses: guards, account-id
 * lookup, row readers, the ledger append and the balance update.
 *
 * Invariant kept by the helpers: a ledger entry and the matching alloc_balance change are
 * always written together (store_ledger_apply), so the cached balance equals the ledger sums
 * at every commit; store_check verifies it.
 */
#ifndef ALLOT_LIBSTORE_STORE_INT_H
#define ALLOT_LIBSTORE_STORE_INT_H

#include <stdint.h>

#include "libstore/db.h"
#include "libstore/store.h"

/* Amounts beyond this are refused: it keeps every sum far from int64 overflow (SQLite would
 * silently turn an overflowing sum into a float).  10^15 SU-minutes is ~1.9e9 core-years. */
#define STORE_AMOUNT_MAX INT64_C(1000000000000000)
/* The same for the totals an allocation's balance row keeps (granted, used, held): repeated
 * credits could otherwise add up past int64.  One spelling for C and for the balance SQL. */
#define STORE_BALANCE_MAX_DIGITS 1000000000000000000
#define STORE_BALANCE_MAX ((int64_t)STORE_BALANCE_MAX_DIGITS)
#define STORE_STR_(x) #x
#define STORE_STR(x) STORE_STR_(x)
#define STORE_BALANCE_MAX_SQL STORE_STR(STORE_BALANCE_MAX_DIGITS)
#define STORE_SAVEPOINT_MAX 8

struct store_migration {
    const char *backend; /* directory name under schema/ */
    int version;         /* NNNN of the file name */
    const char *name;    /* file name */
    const char *sql;
};
/* Generated from schema/ by embed.cmake, sorted by backend then version. */
extern const struct store_migration store_migrations[];
extern const int store_migration_count;

struct store {
    db_t *db;
    const char *backend; /* static string */
    int sqlite;          /* backend is "sqlite" (SQL that differs: schema 0016) */
    int in_tx;           /* between store_begin and store_commit/rollback */
    int sp_depth;        /* open savepoints */
    int durable;         /* store_config.durable */
    int schema_current;
    int schema_latest;
    char *batch_buf; /* store_job_batch's parameter text, grown as needed, kept */
    size_t batch_cap;
    struct op_scratch *batch_ops; /* store_job_batch's per-op scratch, likewise */
    size_t batch_ops_cap;
    uint64_t part_digest;     /* SQLite partition watch: the table's digest at the last look */
    int64_t ledger_unindexed; /* SQLite: entries appended since this store's last index pass */
    /* store_usage_acc.c: usage_params as read in this transaction (0 not read, 1 none, 2 set) */
    int uparams_state;
    struct store_usage_params uparams;
};

/* SQLite: an index pass (store_ledger_index_pass) runs in the commit of a transaction once
 * this store has appended as many ledger entries since its last one; readers scan at most
 * about that many unindexed entries per allocation listing (schema 0016). */
#define STORE_LEDGER_INDEX_EVERY 2048

enum store_stmt_id {
    /* store.c */
    STMT_COMMIT,
    STMT_ROLLBACK,
    STMT_SP_SAVE,
    STMT_SP_RELEASE = STMT_SP_SAVE + STORE_SAVEPOINT_MAX,
    STMT_SP_ROLLBACK = STMT_SP_RELEASE + STORE_SAVEPOINT_MAX,
    STMT_SCHEMA_VERSION = STMT_SP_ROLLBACK + STORE_SAVEPOINT_MAX,
    STMT_SCHEMA_RECORD,
    STMT_WRITE_PROBE,
    STMT_LEDGER_INDEX_PASS,
    STMT_LEDGER_INDEX_MARK,
    /* store_ref.c */
    STMT_CLUSTER_ADD,
    STMT_CLUSTER_GET,
    STMT_CLUSTER_USED,
    STMT_CLUSTER_REMOVE,
    STMT_CLUSTER_LIST,
    STMT_ACCOUNT_ID,
    STMT_ACCOUNT_ADD,
    STMT_ACCOUNT_GET,
    STMT_ACCOUNT_MODIFY,
    STMT_ACCOUNT_USED,
    STMT_ACCOUNT_REMOVE,
    STMT_ACCOUNT_LIST,
    STMT_ACCOUNT_ANCESTORS,
    STMT_USER_ADD,
    STMT_USER_GET,
    STMT_USER_MODIFY,
    STMT_USER_USED,
    STMT_USER_REMOVE,
    STMT_USER_LIST,
    STMT_USER_ASSOC_ACCOUNT,
    STMT_ASSOC_ADD,
    STMT_ASSOC_GET,
    STMT_ASSOC_MODIFY,
    STMT_ASSOC_REMOVE,
    STMT_ASSOC_LIST,
    STMT_ASSOC_DEFAULT_USED,
    STMT_QOS_ADD,
    STMT_QOS_GET,
    STMT_QOS_MODIFY,
    STMT_QOS_REMOVE,
    STMT_QOS_LIST,
    STMT_PART_ADD,
    STMT_PART_GET,
    STMT_PART_MODIFY,
    STMT_PART_REMOVE,
    STMT_PART_USED,
    STMT_PART_LIST,
    STMT_LIMIT_SET,
    STMT_LIMIT_DELETE,
    STMT_LIMIT_LIST,
    STMT_LIMIT_LIST_OWNER,
    STMT_LIMIT_DROP_OWNER,
    /* store_alloc.c */
    STMT_ALLOC_OVERLAP,
    STMT_ALLOC_ADD,
    STMT_ALLOC_BALANCE_ADD,
    STMT_ALLOC_GET,
    STMT_ALLOC_GET_POLICY,
    STMT_ALLOC_MODIFY,
    STMT_ALLOC_LEDGER_COUNT,
    STMT_ALLOC_HELD_BEFORE,
    STMT_ALLOC_BALANCE_REMOVE,
    STMT_ALLOC_REMOVE,
    STMT_ALLOC_LIST,
    STMT_PAYER_START,
    STMT_PAYER_PARENT,
    STMT_PAYER,
    STMT_PAYER_NAMED,
    STMT_BALANCE_GET,
    STMT_BALANCE_APPLY,
    STMT_LEDGER_INSERT,
    STMT_LEDGER_APPEND,
    STMT_LEDGER_BY_KEY,
    STMT_LEDGER_LIST,
    STMT_HISTORY_JOBS,
    STMT_HISTORY_LEDGER,
    STMT_HISTORY_STEPS,
    STMT_HISTORY_COMMANDS,
    STMT_LEDGER_LIST_JOB,
    STMT_LEDGER_LIST_ALLOC,
    STMT_LEDGER_LIST_ACCOUNT,
    STMT_LEDGER_LIST_SINCE,
    /* store_job.c */
    STMT_JOB_GET,
    STMT_JOB_GET_PAYER,
    STMT_JOB_MAX_ID,
    STMT_JOB_INSERT,
    STMT_JOB_SETTLE,
    STMT_JOB_BATCH,
    STMT_JOB_RELEASE,
    STMT_JOB_ADJUST,
    STMT_JOB_VOID_MARK, /* store_job_void.c */
    STMT_JOB_LIST,
    STMT_JOB_LIST_KEY,
    STMT_JOB_COUNT_HELD,
    STMT_JOB_COUNT_HELD_ACCOUNT,
    STMT_JOB_COUNT_HELD_USER,
    STMT_FAILURE_INSERT,
    STMT_FAILURE_OF_JOB,
    STMT_FAILURE_LIST,
    STMT_FAILURE_LIST_JOB,
    STMT_FAILURE_LIST_ACCOUNT,
    STMT_FAILURE_LIST_USER,
    STMT_FAILURE_LIST_SINCE,
    /* store_job_count.c: held runs per submit-limit group (account subtree, QOS) */
    STMT_JOB_COUNT_SUBTREE,
    STMT_JOB_COUNT_QOS,
    STMT_JOB_COUNT_QOS_USER,
    STMT_JOB_COUNT_QOS_ACCOUNT,
    STMT_JOB_HELD_AT_SUBMIT,
    /* store_check.c */
    STMT_CHECK_BALANCES,
    STMT_CHECK_LEDGER,
    STMT_CHECK_JOBS,
    STMT_CHECK_ORPHANS,
    STMT_CHECK_INDEX,
    /* store_policy*.c: a block of ids, numbered by enum pstmt in store_policy_int.h */
    STMT_POLICY_FIRST,
    STMT_POLICY_LAST = STMT_POLICY_FIRST + 39,
    /* store_command.c: the command outbox and the agents' last claims */
    STMT_COMMAND_FIRST,
    STMT_COMMAND_LAST = STMT_COMMAND_FIRST + 15,
    /* store_reconcile.c */
    STMT_RECONCILE_GET,
    STMT_RECONCILE_SET,
    /* store_ref.c: associations and partitions naming a QOS (qos remove) */
    STMT_QOS_USED,
    /* store_job_ids.c */
    STMT_JOB_IDS_PUT,
    STMT_JOB_IDS_GET,
    STMT_JOB_IDS_ARRAY,
    STMT_JOB_IDS_HET,
    STMT_JOB_IDS_ANY,
    STMT_JOB_IDS_SCRUB,
    /* store_import.c */
    STMT_JOB_IMPORT,
    /* store_report.c */
    STMT_REPORT_USAGE,
    /* store_usage_acc.c: a block of ids, numbered inside that file */
    STMT_USAGE_ACC_FIRST,
    STMT_USAGE_ACC_LAST = STMT_USAGE_ACC_FIRST + 15,
    STMT_MAX
};
_Static_assert(STMT_MAX <= DB_STMT_MAX, "raise DB_STMT_MAX");

/* Guards at the top of every verb: the schema is current (and, for writes, a transaction
 * is open, as store.h requires).  Return 0 or -1 with err naming the verb. */
int store_ready(store_t *st, const char *verb, struct allot_error *err);
int store_ready_write(store_t *st, const char *verb, struct allot_error *err);

/* The cached statement id for sql (db_stmt). */
db_stmt_t *store_stmt(store_t *st, int id, const char *sql, struct allot_error *err);

/* Statement id (text sql) prepared, with the text parameters keys[0..n) bound as $1..$n;
 * NULL with err. */
db_stmt_t *store_stmt_texts(store_t *st, int id, const char *sql, const char *const *keys, int n,
                            struct allot_error *err);
/* The same, stepped to its first row: 1 with *row on it (read its columns, then db_reset
 * it), 0 when there is none, -1 with err (reset either way). */
int store_first_row(store_t *st, int id, const char *sql, const char *const *keys, int n,
                    db_stmt_t **row, struct allot_error *err);

/* The walk of a list verb: steps s (bound) to its last row, calling row(s, ctx) on each; a
 * nonzero row ends the walk and is returned.  -1 with err when a step fails, else 0; s is
 * reset either way. */
typedef int (*store_row_f)(db_stmt_t *s, void *ctx);
int store_walk(db_stmt_t *s, store_row_f row, void *ctx, struct allot_error *err);
/* The row function of a list verb whose callback (of type cb_type) takes one decoded row:
 * STORE_ROWS(ledger, struct ledger_entry, store_ledger_f, read_entry(s, &row)) defines
 * struct ledger_walk {cb, arg} and ledger_row, which decodes each row into `row` with the
 * decode statement (it sees s and row) and hands it to cb; the verb then returns
 * store_walk(s, ledger_row, &(struct ledger_walk){cb, arg}, err). */
#define STORE_ROWS(name, type, cb_type, decode)                                                    \
    struct name##_walk {                                                                           \
        cb_type cb;                                                                                \
        void *arg;                                                                                 \
    };                                                                                             \
    static int name##_row(db_stmt_t *s, void *ctx)                                                 \
    {                                                                                              \
        const struct name##_walk *w = ctx;                                                         \
        type row;                                                                                  \
        decode;                                                                                    \
        return w->cb(&row, w->arg);                                                                \
    }

/* The id of account `name`; ENOENT naming `field` and the account when missing. */
int store_account_id(store_t *st, const char *field, const char *name, int64_t *id,
                     struct allot_error *err);
/* 1 if cluster `name` exists, 0 if not, -1 on error. */
int store_cluster_exists(store_t *st, const char *name, struct allot_error *err);

/* t as "2026-11-24T20:11:50Z" in messages ("an unknown time" when t <= 0). */
void store_format_utc(int64_t t, char *buf, size_t size);
/* SU-minutes as the CLI writes them ("12h30m"; money_format_sumin) in messages. */
#define STORE_SU_MAX 32
void store_format_su(int64_t sumin, char *buf, size_t size);

/* Amount validation: 0 < v <= STORE_AMOUNT_MAX (or v != 0 and |v| <= max when signed). */
int store_check_amount(const char *field, int64_t v, int allow_negative, struct allot_error *err);

/* Allocation row readers: the column lists are STORE_ALLOC_COLS / STORE_BALANCE_COLS in
 * that order, starting at column `col`. */
#define STORE_ALLOC_COLS                                                                           \
    "al.id, ac.name, al.resource, al.cluster, al.start_s, al.end_s, al.category, al.comment, "     \
    "al.created_s"
#define STORE_ALLOC_NCOLS 9
#define STORE_BALANCE_COLS "b.granted_sumin, b.used_sumin, b.held_sumin"
#define STORE_BALANCE_NCOLS 3
void store_read_alloc(db_stmt_t *s, int col, struct allocation *a);
void store_read_balance(db_stmt_t *s, int col, int64_t alloc_id, struct balance *b);

/* Job rows and the job verbs' shared pieces (store_job.c), also used by the batched path
 * (store_job_batch.c).  store_read_job reads STORE_JOB_COLS from column `col`. */
#define STORE_JOB_COLS STORE_JOB_COLS_OF("")
/* The same list with every column qualified by a table alias ("j."), for joins. */
#define STORE_JOB_COLS_OF(t)                                                                       \
    t "cluster, " t "job_id, " t "run, " t "user_name, " t "account, " t "partition_name, " t      \
      "qos, " t "submit_s, " t "start_s, " t "end_s, " t "req_tres, " t "alloc_tres, " t           \
      "billing_micro, " t "time_limit_s, " t "elapsed_s, " t "slurm_state, " t "status, " t        \
      "hold_sumin, " t "charge_sumin, " t "alloc_id, " t "payer_account, " t "settle_source, " t   \
      "updated_s"
#define STORE_JOB_NCOLS 23
void store_read_job(db_stmt_t *s, int col, struct job *j);
/* Add a settled run's usage to its accumulator (store_usage_acc.c): called by every verb
 * that settles a run, in its transaction.  A no-op until usage_params is set. */
int store_usage_charge(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *qos, int64_t end_s, int64_t elapsed_s, int64_t charge_sumin,
                       int64_t billing_micro, int64_t now_s, struct allot_error *err);
/* Insert run J as it is (store_job.c; store_job_void.c records a void run with it). */
int store_job_insert(store_t *st, const struct job *j, struct allot_error *err);
int64_t store_now_or(int64_t t); /* t, or the current time when t <= 0 */
int store_hold_validate(const struct hold_req *r, struct allot_error *err);
int store_settle_validate(const struct settle_req *r, struct allot_error *err);
/* The jobs row a new hold writes (payer NULL: none found). */
void store_hold_job(const struct hold_req *req, int64_t now, int refused,
                    const struct allocation *payer, struct job *j);
int store_is_node_fail(const char *slurm_state); /* NODE_FAIL costs 0 (doc/design.md §3.3) */
/* The time that picks a hold's paying allocation: its start, or now when not started. */
int64_t store_hold_at(const struct hold_req *r, int64_t now);
/* The run's elapsed seconds: as given, or end - start when given as 0 with both known. */
int64_t store_settle_elapsed(const struct settle_req *r);

/* Read allocation id with its balance; ENOENT when missing. */
int store_alloc_read(store_t *st, int64_t id, struct allocation *a, struct balance *b,
                     struct allot_error *err);
/* The same, and *policy = 1 when a policy governs it (a settle's no_policy); policy NULL:
 * store_alloc_read. */
int store_alloc_read_policy(store_t *st, int64_t id, struct allocation *a, struct balance *b,
                            int *policy, struct allot_error *err);

/* The cached balance of allocation id; ENOENT when it has none. */
int store_balance_get(store_t *st, int64_t id, struct balance *b, struct allot_error *err);

/* The payer query of store_find_payer without its guards: 0 found, 1 none (err holds the
 * ENOENT message naming account, resource, cluster and date), -1 error. */
int store_payer(store_t *st, const char *account, const char *resource, const char *cluster,
                int64_t at_s, struct allocation *out, struct balance *bal, struct allot_error *err);

/* Append the debits v[0..n) (kind LEDGER_DEBIT, amount > 0) and add them to their
 * allocations' used, one balance move per allocation, unchecked (usage that happened, as a
 * post-paid settle's debit).  Imported history (store_import.c). */
int store_ledger_debits(store_t *st, struct ledger_entry *v, size_t n, struct allot_error *err);

/* Append e (alloc_id, kind, amount, actor, time_s, comment, cluster, job_id, run, idem_key
 * as given; e->id set) and apply it to the allocation's cached balance in the same
 * transaction.  checked: refuse (return 1, nothing written) when the entry would make
 * available < 0.  Returns 0 applied, 1 refused (only when checked), -1 error (EINTERNAL
 * when the balance row would go negative in used or held, or is missing: the books are
 * inconsistent). */
int store_ledger_apply(store_t *st, struct ledger_entry *e, int checked, struct allot_error *err);
/* The same for a job's own entry (hold, release, debit) whose id nobody reads: e->id is
 * left 0.  The append has no RETURNING clause, which on SQLite buffers the returned row in
 * a temporary table per statement (a third of a ledger append's cost). */
int store_ledger_apply_noid(store_t *st, struct ledger_entry *e, int checked,
                            struct allot_error *err);
/* A settle's release (e1) and debit (e2, may be NULL) of one allocation, unchecked: both
 * entries appended (ids left 0) and the balance row moved by one UPDATE.  0 or -1. */
int store_ledger_apply_pair(store_t *st, struct ledger_entry *e1, struct ledger_entry *e2,
                            struct allot_error *err);

/* SQLite (schema 0016): copy the ledger entries above ledger_alloc_mark into
 * ledger_alloc_index, sorted by allocation, and raise the mark to the last entry; inside the
 * caller's transaction.  0 or -1. */
int store_ledger_index_pass(store_t *st, struct allot_error *err);

/* store_credit without its effect on a policy's period: for the policy's own boundary
 * entries (store_policy_period.c), which make the period total rather than move it. */
int store_credit_entry(store_t *st, struct ledger_entry *e, int *replay, struct allot_error *err);
/* Entry e, just made by hand (store_credit, not a replay), on an allocation whose policy has
 * an open period at e->time_s: a credit, adjustment or carryover raises that period's total
 * (an expiry lowers it; a refund, which lowers the period's use, leaves it), and a set_limit
 * with the new value is enqueued when the value changed (store_policy_period.c).  0 also when there
 * is no policy or no open period; -1 with err. */
int store_policy_hand_credit(store_t *st, const struct ledger_entry *e, struct allot_error *err);

/* The statement (its STMT_ id, and its text in *sql) that a listing runs for filter f, each
 * read through the index of f's most selective filter (doc/storage.md, "SQL rules"):
 * ledger by job, allocation, account or time (store_alloc.c; backend "sqlite" or "pg": they
 * index an allocation's entries differently, schema 0016); one job's runs by the key,
 * failures by account, user or time (store_job.c); steps by job or user (store_step.c). */
int store_ledger_list_sql(const char *backend, const struct ledger_filter *f, const char **sql);
int store_job_list_sql(const struct job_filter *f, const char **sql);
/* The text of a STMT_JOB_COUNT_* statement (store_job_count.c), NULL for another id. */
const char *store_job_count_sql(int id);
/* The payer walk's allocation query (store_alloc.c): by the account's name (the first step)
 * when named, else by an ancestor's id; for the plan test. */
const char *store_payer_sql(int named);
/* The settle's lookup of a run with its allocation (store_job.c); for the plan test. */
const char *store_job_payer_sql(void);
/* store_history_names_cluster's statement for h (for store_list_plan), NULL if none. */
const char *store_history_sql(int h);
int store_failure_list_sql(const struct failure_filter *f, const char **sql);
int store_step_list_sql(const struct step_filter *f, const char **sql);

#endif
