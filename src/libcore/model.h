/* SPDX-License-Identifier: GPL-3.0-or-later */
/* model.h - the bank's objects (doc/design.md §2) as plain fixed-size structs.
 *
 * Every string is a bounded, NUL-terminated array, so records are copied by assignment,
 * need no free and can live on the stack of a hot path.  Input longer than a field is
 * rejected at validation (model_validate_*), never truncated.  All times are UTC seconds
 * since the epoch (`_s`); money is int64 SU-minutes (`_sumin`, doc/design.md §3.1); billing is in
 * micro-units (`_micro`: 1 billing unit = 1,000,000).  An empty string means "none"
 * (e.g. allocation.cluster "" = every cluster; assoc.partition "" = all partitions).
 * Thread rule: plain data, no hidden state.
 */
#ifndef ALLOT_LIBCORE_MODEL_H
#define ALLOT_LIBCORE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

#define ALLOT_NAME_MAX 64  /* names: 1..63 chars of [A-Za-z0-9_.-], not starting with '-' */
#define ALLOT_TEXT_MAX 256 /* free text: comments, descriptions */
#define ALLOT_TRES_MAX 512 /* TRES strings and limit values in Slurm syntax */
#define ALLOT_KEY_MAX 160  /* idempotency keys */
#define ALLOT_STATE_MAX 32 /* Slurm job state text ("COMPLETED", "NODE_FAIL", ...) */
#define ALLOT_MSG_MAX 1024 /* denial / failure explanations */

struct account {
    int64_t id;
    char name[ALLOT_NAME_MAX];
    char parent[ALLOT_NAME_MAX]; /* "" only for the root account "root" */
    int64_t shares;              /* fair-share RawShares; >= 0; default 1 */
    char description[ALLOT_TEXT_MAX];
    char organization[ALLOT_NAME_MAX];
    int64_t created_s;
    char qos[ALLOT_TEXT_MAX];          /* the account association's QOS list; "" = inherited */
    char default_qos[ALLOT_NAME_MAX];  /* its default QOS; "" = inherited */
    char coordinators[ALLOT_TEXT_MAX]; /* users who read its members' usage; "" = none */
};

struct user {
    char name[ALLOT_NAME_MAX];
    int64_t uid; /* Unix uid; -1 when unknown */
    char default_account[ALLOT_NAME_MAX];
    int64_t created_s;
};

/* A user's membership of an account on a cluster (optionally one partition). */
struct assoc {
    int64_t id;
    char cluster[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char user[ALLOT_NAME_MAX];
    char partition[ALLOT_NAME_MAX]; /* "" = any partition */
    int64_t shares;                 /* >= 0; default 1 */
    char default_qos[ALLOT_NAME_MAX];
    char qos[ALLOT_TEXT_MAX]; /* comma-separated allowed QOS; "" = the cluster default */
};

struct qos {
    char name[ALLOT_NAME_MAX];
    int64_t priority;
    char flags[ALLOT_TEXT_MAX]; /* comma-separated Slurm QOS flags (DenyOnLimit, NoDecay, ...) */
    int64_t usage_factor_ppm;   /* UsageFactor x 1e6; default 1000000 */
    int64_t limit_factor_ppm;   /* LimitFactor x 1e6; -1 = unset */
    char description[ALLOT_TEXT_MAX];
};

struct partition {
    char cluster[ALLOT_NAME_MAX];
    char name[ALLOT_NAME_MAX];
    char resource[ALLOT_NAME_MAX];        /* resource type billed: "cpu", "gpu", site-defined */
    char billing_weights[ALLOT_TRES_MAX]; /* Slurm TRESBillingWeights syntax; "" = CPUs */
    int max_tres;                         /* 1: billing is MAX_TRES (doc/design.md §3.2) */
    char qos[ALLOT_NAME_MAX];             /* partition QOS; "" = none */
    int64_t default_time_s;               /* DefaultTime; -1 = unset */
    int64_t max_time_s;                   /* MaxTime; -1 = UNLIMITED */
};

/* Where a limit is attached (doc/design.md §4.1). */
enum limit_scope {
    LIMIT_SCOPE_ASSOC = 0,
    LIMIT_SCOPE_ACCOUNT,
    LIMIT_SCOPE_QOS,
    LIMIT_SCOPE_PARTITION
};

/* One stored limit.  owner: assoc "<cluster>:<account>:<user>:<partition>",
 * account "<name>", qos "<name>", partition "<cluster>:<name>".  value is canonical
 * (libcore/limits.h limits_validate). */
struct limit_value {
    enum limit_scope scope;
    char owner[4 * ALLOT_NAME_MAX];
    char name[ALLOT_NAME_MAX];
    char value[ALLOT_TRES_MAX];
};

struct allocation {
    int64_t id;
    char account[ALLOT_NAME_MAX];
    char resource[ALLOT_NAME_MAX];
    char cluster[ALLOT_NAME_MAX]; /* "" = all clusters */
    int64_t start_s;              /* [start_s, end_s) */
    int64_t end_s;
    char category[ALLOT_NAME_MAX];
    char comment[ALLOT_TEXT_MAX];
    int64_t created_s;
};

/* Derived balance of one allocation (doc/design.md §2.7):
 * granted = credits + carryover + adjustments - expiry; used = debits - refunds;
 * held = holds - releases; available = granted - used - held. */
struct balance {
    int64_t alloc_id;
    int64_t granted_sumin;
    int64_t used_sumin;
    int64_t held_sumin;
    int64_t available_sumin;
};

enum ledger_kind {
    LEDGER_CREDIT = 0,
    LEDGER_HOLD,
    LEDGER_RELEASE,
    LEDGER_DEBIT,
    LEDGER_REFUND,
    LEDGER_CARRYOVER,
    LEDGER_EXPIRY,
    LEDGER_ADJUSTMENT, /* the only kind whose amount may be negative */
    LEDGER_KIND_MAX
};

struct ledger_entry {
    int64_t id; /* strictly increasing: the order entries happened in */
    int64_t alloc_id;
    enum ledger_kind kind;
    int64_t amount_sumin; /* > 0 except for adjustments */
    char actor[ALLOT_NAME_MAX];
    int64_t time_s;
    char comment[ALLOT_TEXT_MAX];
    char cluster[ALLOT_NAME_MAX]; /* job reference; "" and 0 when not about a job */
    int64_t job_id;
    int32_t run;
    char idem_key[ALLOT_KEY_MAX]; /* unique across the ledger; "" = none */
};

/* allot's view of a job run's money state. */
enum job_status {
    JOB_HELD = 0, /* a hold covers its maximum cost */
    JOB_SETTLED,  /* charged; its hold released */
    JOB_RELEASED, /* ended without charge (never started, cancelled pending) */
    JOB_REFUSED,  /* the hold was refused; a failure records why */
    JOB_STATUS_MAX
};

/* Slurm's array and het ids of a job id (schema 0020): a task of job array ARRAY_JOB_ID
 * (Slurm prints it "ARRAY_JOB_ID_ARRAY_TASK_ID"), a component of het job HET_JOB_ID
 * ("HET_JOB_ID+HET_JOB_OFFSET").  array_job_id 0: not an array task; het_job_id 0: not a
 * het component (the task id and offset are then -1). */
struct job_slurm_ids {
    int64_t array_job_id, array_task_id;
    int64_t het_job_id, het_job_offset;
};

struct job {
    char cluster[ALLOT_NAME_MAX];
    int64_t job_id;
    int32_t run; /* 0 for the first run; a requeue is a new run */
    char user[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char partition[ALLOT_NAME_MAX];
    char qos[ALLOT_NAME_MAX];
    int64_t submit_s, start_s, end_s; /* 0 = unknown */
    char req_tres[ALLOT_TRES_MAX];
    char alloc_tres[ALLOT_TRES_MAX];
    int64_t billing_micro;
    int64_t time_limit_s;
    int64_t elapsed_s;
    char slurm_state[ALLOT_STATE_MAX];
    enum job_status status;
    int64_t hold_sumin;
    int64_t charge_sumin;
    int64_t alloc_id;                   /* the allocation that holds / paid; 0 = none */
    char payer_account[ALLOT_NAME_MAX]; /* account owning alloc_id (self or ancestor) */
    char settle_source[ALLOT_NAME_MAX]; /* "epilog", "sacct", "api", ... */
    int64_t updated_s;
    /* Filled by readers that ask (store_job_ids_get); zero (none known) otherwise. */
    struct job_slurm_ids ids;
};

/* A job refused for lack of credit (or a limit), with the numbers that refused it. */
struct failure {
    int64_t id;
    char cluster[ALLOT_NAME_MAX];
    int64_t job_id; /* 0 at admission (no id yet) */
    int32_t run;
    char user[ALLOT_NAME_MAX];
    char account[ALLOT_NAME_MAX];
    char partition[ALLOT_NAME_MAX];
    int64_t alloc_id; /* 0 = no allocation found */
    char stage[16];   /* "admit" or "hold" */
    int64_t time_s;
    int64_t needed_sumin;
    int64_t available_sumin;
    int64_t held_sumin;
    char message[ALLOT_MSG_MAX];
    int observed; /* 1: EnforceMode=observe recorded it; the job was admitted or started */
};

/* Names of enums, for JSON and tables; model_*_parse returns -1 for unknown text. */
const char *model_ledger_kind_name(enum ledger_kind k);
int model_ledger_kind_parse(const char *s, enum ledger_kind *out);
/* A ledger entry's effect on its allocation's balance (doc/design.md §2.7): credit, carryover and
 * adjustment add to granted, expiry takes from it; debit adds to used, refund takes from
 * it; hold adds to held, release takes from it.  The entry's amount is added to *dg, *du or
 * *dh (granted, used, held), so the effects of several entries sum.  Returns 0, or -1 with
 * err: EINTERNAL for a kind outside the enum, EINVAL when a sum would leave int64; the
 * outputs are then untouched. */
int model_ledger_deltas(const struct ledger_entry *e, int64_t *dg, int64_t *du, int64_t *dh,
                        struct allot_error *err);
const char *model_job_status_name(enum job_status s);
int model_job_status_parse(const char *s, enum job_status *out);
const char *model_limit_scope_name(enum limit_scope s);
int model_limit_scope_parse(const char *s, enum limit_scope *out);

/* Validation of user-supplied names and text: field names the field in the error.
 * model_copy_name copies src into dst (size ALLOT_NAME_MAX) after checking it; dst is
 * untouched on error.  allow_empty: "" is accepted (means "none"). */
int model_check_name(const char *field, const char *s, int allow_empty, struct allot_error *err);
int model_copy_name(char *dst, const char *field, const char *src, int allow_empty,
                    struct allot_error *err);
/* Copy bounded free text (no control characters but tab); size is dst's size. */
int model_copy_text(char *dst, size_t size, const char *field, const char *src,
                    struct allot_error *err);

#endif
