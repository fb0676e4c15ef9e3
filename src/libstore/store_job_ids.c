/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_job_ids.c - Slurm's array and het ids of job ids (store.h, schema 0020), so a job is
 * found under the name Slurm prints for it ("54_3", "60+1") as well as its own id.
 * One row per (cluster, job id), replaced by each put (the last sender knows best: the
 * plugins and the agent read them from Slurm). */
#include <stdint.h>

#include "libstore/store_int.h"

static const char SQL_IDS_PUT[] =
    "INSERT INTO job_slurm_ids (cluster, job_id, array_job_id, array_task_id, het_job_id, "
    "het_job_offset) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (cluster, job_id) DO UPDATE "
    "SET array_job_id = excluded.array_job_id, array_task_id = excluded.array_task_id, "
    "het_job_id = excluded.het_job_id, het_job_offset = excluded.het_job_offset";
static const char SQL_IDS_GET[] =
    "SELECT array_job_id, array_task_id, het_job_id, het_job_offset FROM job_slurm_ids "
    "WHERE cluster = $1 AND job_id = $2";
/* ($3 < 0 OR ...): one task, or all of them, by the same index. */
static const char SQL_IDS_ARRAY[] =
    "SELECT job_id, array_job_id, array_task_id, het_job_id, het_job_offset FROM job_slurm_ids "
    "WHERE cluster = $1 AND array_job_id = $2 AND (CAST($3 AS BIGINT) < 0 OR array_task_id = $3) "
    "ORDER BY array_task_id, job_id";
static const char SQL_IDS_HET[] =
    "SELECT job_id, array_job_id, array_task_id, het_job_id, het_job_offset FROM job_slurm_ids "
    "WHERE cluster = $1 AND het_job_id = $2 AND (CAST($3 AS BIGINT) < 0 OR het_job_offset = $3) "
    "ORDER BY het_job_offset, job_id";

static const char SQL_IDS_ANY[] = "SELECT 1 FROM job_slurm_ids LIMIT 1";
/* The ids of job ids with no run left (scrubbed): a job id Slurm hands out again later
 * must not inherit them. */
static const char SQL_IDS_SCRUB[] =
    "DELETE FROM job_slurm_ids WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE "
    "j.cluster = job_slurm_ids.cluster AND j.job_id = job_slurm_ids.job_id)";

int store_job_ids_scrub(store_t *st, struct allot_error *err)
{
    if (store_ready_write(st, "job ids scrub", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_JOB_IDS_SCRUB, SQL_IDS_SCRUB, err);
    return s ? db_run(s, err) : -1;
}

int store_job_ids_any(store_t *st, struct allot_error *err)
{
    if (store_ready(st, "job ids", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_JOB_IDS_ANY, SQL_IDS_ANY, err);
    if (!s)
        return -1;
    int rc = db_step(s, err);
    db_reset(s);
    return rc;
}

int store_job_ids_check(const struct job_slurm_ids *ids, struct allot_error *err)
{
    if (ids->array_job_id < 0 || ids->array_job_id > UINT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "array_job_id: must be 1 .. %u", UINT32_MAX);
    if (ids->het_job_id < 0 || ids->het_job_id > UINT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "het_job_id: must be 1 .. %u", UINT32_MAX);
    if (ids->array_job_id ? ids->array_task_id < 0 || ids->array_task_id > UINT32_MAX
                          : ids->array_task_id != -1)
        return allot_errorf(err, ALLOT_EINVAL,
                            "array_task_id: 0 .. %u with an array_job_id, else none", UINT32_MAX);
    if (ids->het_job_id ? ids->het_job_offset < 0 || ids->het_job_offset > UINT32_MAX
                        : ids->het_job_offset != -1)
        return allot_errorf(err, ALLOT_EINVAL,
                            "het_job_offset: 0 .. %u with a het_job_id, else none", UINT32_MAX);
    return 0;
}

int store_job_ids_put(store_t *st, const char *cluster, int64_t job_id,
                      const struct job_slurm_ids *ids, struct allot_error *err)
{
    if (store_ready_write(st, "job ids", err) < 0 ||
        model_check_name("cluster", cluster, 0, err) < 0 || store_job_ids_check(ids, err) < 0)
        return -1;
    if (job_id <= 0 || job_id > UINT32_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "job_id: must be a Slurm job id");
    if (!ids->array_job_id && !ids->het_job_id)
        return allot_errorf(err, ALLOT_EINVAL, "job ids: neither an array nor a het job");
    db_stmt_t *s = store_stmt(st, STMT_JOB_IDS_PUT, SQL_IDS_PUT, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_int64(s, 2, job_id);
    db_bind_int64(s, 3, ids->array_job_id);
    db_bind_int64(s, 4, ids->array_task_id);
    db_bind_int64(s, 5, ids->het_job_id);
    db_bind_int64(s, 6, ids->het_job_offset);
    return db_run(s, err);
}

static void none(struct job_slurm_ids *ids)
{
    ids->array_job_id = ids->het_job_id = 0;
    ids->array_task_id = ids->het_job_offset = -1;
}

int store_job_ids_get(store_t *st, const char *cluster, int64_t job_id, struct job_slurm_ids *ids,
                      struct allot_error *err)
{
    none(ids);
    if (store_ready(st, "job ids", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_JOB_IDS_GET, SQL_IDS_GET, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_int64(s, 2, job_id);
    int rc = db_step(s, err);
    if (rc == 1) {
        ids->array_job_id = db_column_int64(s, 0);
        ids->array_task_id = db_column_int64(s, 1);
        ids->het_job_id = db_column_int64(s, 2);
        ids->het_job_offset = db_column_int64(s, 3);
    }
    db_reset(s);
    return rc;
}

int store_job_ids_find(store_t *st, const char *cluster, const struct job_slurm_ids *match,
                       store_job_ids_f cb, void *arg, struct allot_error *err)
{
    if (store_ready(st, "job ids", err) < 0)
        return -1;
    int array = match->array_job_id > 0;
    if (!array && match->het_job_id <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "job ids: an array or het job id is needed");
    db_stmt_t *s = array ? store_stmt(st, STMT_JOB_IDS_ARRAY, SQL_IDS_ARRAY, err)
                         : store_stmt(st, STMT_JOB_IDS_HET, SQL_IDS_HET, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_int64(s, 2, array ? match->array_job_id : match->het_job_id);
    db_bind_int64(s, 3, array ? match->array_task_id : match->het_job_offset);
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct job_slurm_ids ids = {db_column_int64(s, 1), db_column_int64(s, 2),
                                    db_column_int64(s, 3), db_column_int64(s, 4)};
        int r = cb(db_column_int64(s, 0), &ids, arg);
        if (r != 0) {
            db_reset(s);
            return r;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}
