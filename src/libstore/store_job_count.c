/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_job_count.c - held runs counted by the groups of Slurm's submit limits (doc/design.md
 * §4.3): all, a user's or an account's, an account association's subtree, a QOS, a user or an
 * account within a QOS.
 *
 * Held runs stand for the jobs Slurm counts as submitted (doc/api.md).  Admission runs these
 * counts on every request that has such a limit, so each statement names status = 'held'
 * literally and starts from the column of a partial index on held jobs (jobs_held_account,
 * jobs_held_user): it reads held jobs only, never all jobs.  Both indexes hold account,
 * user, QOS and cluster (schema 0017), so every filter here is decided on index entries and
 * no count reads a jobs row (store_list_plan checks the programs).  The cluster is written
 * "($n = '' OR cluster = $n)" so that the primary key (cluster first) does not drive the
 * search instead: it would read every job of the cluster.
 */
#include "libstore/store_int.h"

/* All held runs, or a user's or an account's: the key column's placeholder first, so that
 * an account (user) count drives jobs_held_account (jobs_held_user). */
static const char SQL_JOB_COUNT_HELD[] =
    "SELECT COUNT(*) FROM jobs WHERE status = 'held' AND ($1 = '' OR cluster = $1) "
    "AND ($2 = '' OR account = $2) AND ($3 = '' OR user_name = $3)";
static const char SQL_JOB_COUNT_HELD_ACCOUNT[] =
    "SELECT COUNT(*) FROM jobs WHERE account = $1 AND status = 'held' "
    "AND ($2 = '' OR cluster = $2) AND ($3 = '' OR user_name = $3)";
static const char SQL_JOB_COUNT_HELD_USER[] =
    "SELECT COUNT(*) FROM jobs WHERE user_name = $1 AND status = 'held' "
    "AND ($2 = '' OR cluster = $2) AND ($3 = '' OR account = $3)";
/* The account and its descendants (depth bound: a corrupt tree with a cycle still ends),
 * then their held runs through jobs_held_account, one probe per account. */
static const char SQL_JOB_COUNT_SUBTREE[] =
    "WITH RECURSIVE sub(id, name, depth) AS ("
    " SELECT id, name, 0 FROM accounts WHERE name = $1"
    " UNION ALL"
    " SELECT a.id, a.name, s.depth + 1 FROM accounts a JOIN sub s ON a.parent_id = s.id"
    " WHERE s.depth < 1000)"
    " SELECT COUNT(*) FROM jobs WHERE status = 'held' AND account IN (SELECT name FROM sub)"
    " AND ($2 = '' OR cluster = $2)";
/* No index starts with qos: "account >= ''" (always true) walks jobs_held_account's entries,
 * held jobs only, and decides qos and cluster on them. */
static const char SQL_JOB_COUNT_QOS[] =
    "SELECT COUNT(*) FROM jobs WHERE qos = $1 AND account >= '' AND status = 'held' "
    "AND ($2 = '' OR cluster = $2)";
static const char SQL_JOB_COUNT_QOS_USER[] =
    "SELECT COUNT(*) FROM jobs WHERE user_name = $1 AND status = 'held' "
    "AND ($2 = '' OR cluster = $2) AND qos = $3";
static const char SQL_JOB_COUNT_QOS_ACCOUNT[] =
    "SELECT COUNT(*) FROM jobs WHERE account = $1 AND status = 'held' "
    "AND ($2 = '' OR cluster = $2) AND qos = $3";

/* SU an allocation's submit holds hold: held runs keyed by a submit token (above every Slurm
 * job id).  Only a refusal asks; "account >= ''" walks held runs only, as the QOS count. */
static const char SQL_JOB_HELD_AT_SUBMIT[] =
    "SELECT COALESCE(SUM(hold_sumin), 0) FROM jobs WHERE account >= '' AND status = 'held' "
    "AND alloc_id = $1 AND job_id >= $2";

const char *store_job_count_sql(int id)
{
    switch (id) {
    case STMT_JOB_COUNT_HELD:
        return SQL_JOB_COUNT_HELD;
    case STMT_JOB_COUNT_HELD_ACCOUNT:
        return SQL_JOB_COUNT_HELD_ACCOUNT;
    case STMT_JOB_COUNT_HELD_USER:
        return SQL_JOB_COUNT_HELD_USER;
    case STMT_JOB_COUNT_SUBTREE:
        return SQL_JOB_COUNT_SUBTREE;
    case STMT_JOB_COUNT_QOS:
        return SQL_JOB_COUNT_QOS;
    case STMT_JOB_COUNT_QOS_USER:
        return SQL_JOB_COUNT_QOS_USER;
    case STMT_JOB_COUNT_QOS_ACCOUNT:
        return SQL_JOB_COUNT_QOS_ACCOUNT;
    case STMT_JOB_HELD_AT_SUBMIT:
        return SQL_JOB_HELD_AT_SUBMIT;
    default:
        return NULL;
    }
}

/* Bind texts to $1.. and read the one COUNT(*). */
static int count_one(store_t *st, int id, const char *const *args, int nargs, int64_t *count,
                     struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, id, store_job_count_sql(id), err);
    if (!s)
        return -1;
    for (int i = 0; i < nargs; i++)
        db_bind_text(s, i + 1, args[i]);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    *count = rc == 1 ? db_column_int64(s, 0) : 0;
    db_reset(s);
    return 0;
}

int store_job_count_held(store_t *st, const char *cluster, const char *account, const char *user,
                         int64_t *count, struct allot_error *err)
{
    if (store_ready(st, "job count", err) < 0)
        return -1;
    const char *c = cluster ? cluster : "", *a = account ? account : "", *u = user ? user : "";
    if (*a) {
        const char *args[] = {a, c, u};
        return count_one(st, STMT_JOB_COUNT_HELD_ACCOUNT, args, 3, count, err);
    }
    if (*u) {
        const char *args[] = {u, c, a};
        return count_one(st, STMT_JOB_COUNT_HELD_USER, args, 3, count, err);
    }
    const char *args[] = {c, a, u};
    return count_one(st, STMT_JOB_COUNT_HELD, args, 3, count, err);
}

int store_job_count_held_subtree(store_t *st, const char *cluster, const char *account,
                                 int64_t *count, struct allot_error *err)
{
    if (store_ready(st, "job count", err) < 0)
        return -1;
    if (!cluster || !*cluster || !account || !*account)
        return allot_errorf(err, ALLOT_EINVAL, "%s: required",
                            cluster && *cluster ? "account" : "cluster");
    const char *args[] = {account, cluster};
    return count_one(st, STMT_JOB_COUNT_SUBTREE, args, 2, count, err);
}

int store_job_count_held_qos(store_t *st, const char *cluster, const char *qos, const char *user,
                             const char *account, int64_t *count, struct allot_error *err)
{
    if (store_ready(st, "job count", err) < 0)
        return -1;
    if (!cluster || !*cluster || !qos || !*qos)
        return allot_errorf(err, ALLOT_EINVAL, "%s: required",
                            cluster && *cluster ? "qos" : "cluster");
    if (user && *user && account && *account)
        return allot_errorf(err, ALLOT_EINVAL, "job count: user or account, not both");
    if (user && *user) { /* the key column's placeholder first, as store_job_count_held */
        const char *args[] = {user, cluster, qos};
        return count_one(st, STMT_JOB_COUNT_QOS_USER, args, 3, count, err);
    }
    if (account && *account) {
        const char *args[] = {account, cluster, qos};
        return count_one(st, STMT_JOB_COUNT_QOS_ACCOUNT, args, 3, count, err);
    }
    const char *args[] = {qos, cluster};
    return count_one(st, STMT_JOB_COUNT_QOS, args, 2, count, err);
}

int store_alloc_held_at_submit(store_t *st, int64_t alloc_id, int64_t *sumin,
                               struct allot_error *err)
{
    if (store_ready(st, "held at submit", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_JOB_HELD_AT_SUBMIT, SQL_JOB_HELD_AT_SUBMIT, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, alloc_id);
    db_bind_int64(s, 2, STORE_SUBMIT_TOKEN_MIN);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    *sumin = rc == 1 ? db_column_int64(s, 0) : 0;
    db_reset(s);
    return 0;
}
