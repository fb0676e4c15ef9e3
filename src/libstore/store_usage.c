/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_usage.c - usage queries for fair-share and usage reports, usage clears, job scrub.
 *
 * Usage is not stored apart from the jobs: a settled run's row in `jobs` (end time, charge,
 * billing, elapsed) is the usage record, so fair-share is always recomputable from the
 * bank's own books and never drifts from them.  A clear (`allot usage clear`) is a row in
 * usage_resets: jobs that ended before it stop counting for that association; nothing is
 * deleted.  A scrub deletes old finished job rows (their ledger entries stay) and records
 * its horizon in job_scrubs.
 * Statement ids: this file uses the last ids of the db statement cache, above STMT_MAX.
 */
#include <string.h>

#include "libstore/store_int.h"

enum {
    STMT_USAGE_JOBS = DB_STMT_MAX - 6,
    STMT_USAGE_CLEAR,
    STMT_USAGE_RESETS,
    STMT_JOB_SCRUB,
    STMT_JOB_SCRUB_RECORD,
};
_Static_assert(STMT_MAX <= DB_STMT_MAX - 6, "store_usage.c's statement ids collide");

static const char SQL_USAGE_JOBS[] =
    "SELECT cluster, account, user_name, qos, end_s, elapsed_s, charge_sumin, billing_micro "
    "FROM jobs WHERE status = 'settled' AND ($1 = '' OR cluster = $1) "
    "AND ($2 = '' OR account = $2) AND ($3 = '' OR user_name = $3) AND end_s >= $4 "
    "AND (CAST($5 AS BIGINT) = 0 OR end_s < $5) ORDER BY end_s, cluster, job_id, run";
static const char SQL_USAGE_CLEAR[] =
    "INSERT INTO usage_resets (cluster, account, user_name, time_s) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (cluster, account, user_name) DO UPDATE SET time_s = excluded.time_s";
static const char SQL_USAGE_RESETS[] =
    "SELECT cluster, account, user_name, time_s FROM usage_resets WHERE ($1 = '' OR cluster = $1) "
    "ORDER BY cluster, account, user_name";
static const char SQL_JOB_SCRUB[] = "DELETE FROM jobs WHERE status <> 'held' AND updated_s < $1";
static const char SQL_JOB_SCRUB_RECORD[] =
    "INSERT INTO job_scrubs (before_s, time_s, deleted) VALUES ($1, $2, $3)";

int store_usage_jobs(store_t *st, const struct usage_filter *f, store_usage_job_f cb, void *arg,
                     struct allot_error *err)
{
    if (store_ready(st, "usage jobs", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_USAGE_JOBS, SQL_USAGE_JOBS, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, f && f->cluster ? f->cluster : "");
    db_bind_text(s, 2, f && f->account ? f->account : "");
    db_bind_text(s, 3, f && f->user ? f->user : "");
    db_bind_int64(s, 4, f ? f->since_s : 0);
    db_bind_int64(s, 5, f ? f->until_s : 0);
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct usage_job u;
        memset(&u, 0, sizeof u);
        db_column_copy(s, 0, u.cluster, sizeof u.cluster);
        db_column_copy(s, 1, u.account, sizeof u.account);
        db_column_copy(s, 2, u.user, sizeof u.user);
        db_column_copy(s, 3, u.qos, sizeof u.qos);
        u.end_s = db_column_int64(s, 4);
        u.elapsed_s = db_column_int64(s, 5);
        u.charge_sumin = db_column_int64(s, 6);
        u.billing_micro = db_column_int64(s, 7);
        int stop = cb(&u, arg);
        if (stop) {
            db_reset(s);
            return stop;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

int store_usage_clear(store_t *st, const char *cluster, const char *account, const char *user,
                      int64_t now_s, struct allot_error *err)
{
    int64_t id;
    if (store_ready_write(st, "usage clear", err) < 0 ||
        model_check_name("cluster", cluster, 0, err) < 0 ||
        model_check_name("account", account, 0, err) < 0 ||
        model_check_name("user", user ? user : "", 1, err) < 0)
        return -1;
    int ok = store_cluster_exists(st, cluster, err);
    if (ok < 0)
        return -1;
    if (!ok)
        return allot_errorf(err, ALLOT_ENOENT, "cluster: no cluster named '%s'", cluster);
    if (store_account_id(st, "account", account, &id, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_USAGE_CLEAR, SQL_USAGE_CLEAR, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_text(s, 2, account);
    db_bind_text(s, 3, user ? user : "");
    db_bind_int64(s, 4, now_s);
    if (db_run(s, err) < 0)
        return -1;
    return store_usage_acc_clear(st, cluster, account, user, now_s, err);
}

int store_usage_resets(store_t *st, const char *cluster, store_usage_reset_f cb, void *arg,
                       struct allot_error *err)
{
    if (store_ready(st, "usage resets", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_USAGE_RESETS, SQL_USAGE_RESETS, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster ? cluster : "");
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        char c[ALLOT_NAME_MAX], a[ALLOT_NAME_MAX], u[ALLOT_NAME_MAX];
        db_column_copy(s, 0, c, sizeof c);
        db_column_copy(s, 1, a, sizeof a);
        db_column_copy(s, 2, u, sizeof u);
        int stop = cb(c, a, u, db_column_int64(s, 3), arg);
        if (stop) {
            db_reset(s);
            return stop;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

int store_job_scrub(store_t *st, int64_t before_s, int64_t now_s, int64_t *deleted,
                    struct allot_error *err)
{
    if (store_ready_write(st, "job scrub", err) < 0)
        return -1;
    if (before_s > now_s)
        return allot_errorf(err, ALLOT_EINVAL, "before: must not be in the future");
    db_stmt_t *s = store_stmt(st, STMT_JOB_SCRUB, SQL_JOB_SCRUB, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, before_s);
    if (db_run(s, err) < 0)
        return -1;
    int64_t n = db_changes(s);
    if (store_job_ids_scrub(st, err) < 0)
        return -1;
    s = store_stmt(st, STMT_JOB_SCRUB_RECORD, SQL_JOB_SCRUB_RECORD, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, before_s);
    db_bind_int64(s, 2, now_s);
    db_bind_int64(s, 3, n);
    if (db_run(s, err) < 0)
        return -1;
    if (deleted)
        *deleted = n;
    /* The deleted runs no longer count: schema 0024's trigger marked their accumulators,
     * which the fold recomputes from the runs that remain. */
    return store_usage_fold(st, now_s, err);
}
