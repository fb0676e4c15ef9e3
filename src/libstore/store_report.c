/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_report.c - the sums behind `allot report usage` (doc/reports.md): settled runs and
 * refusals per group key and UTC day, in one statement that aggregates.
 *
 * Design: the database sums; allotd only folds the per-day sums into months, quarters,
 * years or allocation windows (libcore/report.h).  A run counts at its end, as fair-share
 * usage does.  Its SU are what the ledger debited for it: the run's charge, which
 * `allot db check` holds equal to its debits, except a usage-only import's (no allocation,
 * no debit: 0).  CPU and GPU counts come out of AllocTRES ("cpu=4", "gres/gpu=2"); a step
 * record's CPU time (slurm_stats.total_cpu_seconds, doc/step.md) counts with the job's last
 * run, against that run's cpu x elapsed.  The TRES and JSON extraction is the one part
 * spelt per backend.
 */
#include <string.h>

#include "libstore/store_int.h"

/* The group key of a row of jobs (j) or failures (f): the same column names. */
#define REPORT_KEY_J                                                                               \
    "CASE CAST($1 AS TEXT) WHEN 'account' THEN j.account WHEN 'user' THEN j.user_name "            \
    "WHEN 'partition' THEN j.partition_name WHEN 'cluster' THEN j.cluster "                        \
    "ELSE COALESCE(a.resource, '') END"
#define REPORT_KEY_F                                                                               \
    "CASE CAST($1 AS TEXT) WHEN 'account' THEN f.account WHEN 'user' THEN f.user_name "            \
    "WHEN 'partition' THEN f.partition_name WHEN 'cluster' THEN f.cluster "                        \
    "ELSE COALESCE(a.resource, '') END"
/* The paying allocation and its window ($2: by allocation), the owner ($3: with owner). */
#define REPORT_ALLOC_OWNER(id, acct, user)                                                         \
    "CASE WHEN CAST($2 AS BIGINT) = 1 THEN " id " ELSE 0 END, "                                    \
    "CASE WHEN CAST($2 AS BIGINT) = 1 THEN COALESCE(a.start_s, 0) ELSE 0 END, "                    \
    "CASE WHEN CAST($2 AS BIGINT) = 1 THEN COALESCE(a.end_s, 0) ELSE 0 END, "                      \
    "CASE WHEN CAST($3 AS BIGINT) = 1 THEN " acct " ELSE '' END, "                                 \
    "CASE WHEN CAST($3 AS BIGINT) = 1 THEN " user " ELSE '' END"
#define REPORT_AO_J REPORT_ALLOC_OWNER("j.alloc_id", "j.account", "j.user_name")
#define REPORT_AO_F REPORT_ALLOC_OWNER("f.alloc_id", "f.account", "f.user_name")
#define REPORT_WHERE_J                                                                             \
    "($4 = '' OR j.cluster = $4) AND ($5 = '' OR j.account = $5) "                                 \
    "AND ($6 = '' OR j.user_name = $6) AND ($7 = '' OR j.partition_name = $7) "                    \
    "AND j.end_s >= $8 AND (CAST($9 AS BIGINT) = 0 OR j.end_s < $9) "
#define REPORT_WHERE_F                                                                             \
    "($4 = '' OR f.cluster = $4) AND ($5 = '' OR f.account = $5) "                                 \
    "AND ($6 = '' OR f.user_name = $6) AND ($7 = '' OR f.partition_name = $7) "                    \
    "AND f.time_s >= $8 AND (CAST($9 AS BIGINT) = 0 OR f.time_s < $9) "
/* A usage-only import has a charge for fair-share but no debit (store_import.c). */
#define REPORT_CHARGE                                                                              \
    "SUM(CASE WHEN j.settle_source = 'import' AND j.alloc_id = 0 THEN 0 ELSE j.charge_sumin END)"
/* Steps are recorded per job, not per run: they count with its last run. */
#define REPORT_LAST_RUN                                                                            \
    "NOT EXISTS (SELECT 1 FROM jobs k WHERE k.cluster = j.cluster AND k.job_id = j.job_id "        \
    "AND k.run > j.run)"
#define REPORT_REFUSALS                                                                            \
    "UNION ALL SELECT 1, " REPORT_KEY_F ", f.time_s - f.time_s % 86400, " REPORT_AO_F              \
    ", COUNT(*), 0, 0, 0, 0, 0 FROM failures f LEFT JOIN allocations a ON a.id = f.alloc_id "      \
    "WHERE f.observed = 0 AND " REPORT_WHERE_F "GROUP BY 2, 3, 4, 5, 6, 7, 8"

/* Built per backend from the pieces: the number in AllocTRES after ",cpu=" (CPU) and
 * ",gres/gpu=" (GPU), 0 when absent, and a step's CPU seconds (NULL when not measured). */
#define REPORT_SQL(CPU, GPU, STEP_CPU)                                                             \
    "SELECT 0, " REPORT_KEY_J ", j.end_s - j.end_s % 86400, " REPORT_AO_J                          \
    ", COUNT(*), " REPORT_CHARGE ", SUM(" CPU " * j.elapsed_s), SUM(" GPU " * j.elapsed_s), "      \
    "SUM(COALESCE(s.used_s, 0)), SUM(CASE WHEN s.used_s IS NULL THEN 0 ELSE " CPU                  \
    " * j.elapsed_s END) FROM jobs j LEFT JOIN allocations a ON a.id = j.alloc_id "                \
    "LEFT JOIN (SELECT cluster, job_id, SUM(" STEP_CPU ") AS used_s FROM steps "                   \
    "GROUP BY cluster, job_id) s ON s.cluster = j.cluster AND s.job_id = j.job_id "                \
    "AND " REPORT_LAST_RUN " WHERE j.status = 'settled' AND " REPORT_WHERE_J                       \
    "GROUP BY 2, 3, 4, 5, 6, 7, 8 " REPORT_REFUSALS

/* The extractions are bounded so that no value a client wrote (a TRES count past a billion,
 * a step's CPU time that is negative, not a number or past 10^12 s) can fail the statement
 * or overflow a sum: such a value counts as 0 (a count) or not measured (a step). */
#define STEP_CPU_MAX "1000000000000"
/* SQLite: CAST of "4,mem=1G" as INTEGER reads its leading number. */
#define SQLITE_TRES(k)                                                                             \
    "(CASE WHEN instr(',' || j.alloc_tres, '," k "=') > 0 THEN min(max(CAST(substr(',' || "        \
    "j.alloc_tres, instr(',' || j.alloc_tres, '," k "=') + length('," k "=')) AS INTEGER), 0), "   \
    "999999999) ELSE 0 END)"
#define SQLITE_STEP_CPU_AT "'$.slurm_stats.total_cpu_seconds'"
static const char SQL_REPORT_SQLITE[] =
    REPORT_SQL(SQLITE_TRES("cpu"), SQLITE_TRES("gres/gpu"),
               "CASE WHEN json_type(record, " SQLITE_STEP_CPU_AT ") IN ('integer', 'real') AND "
               "json_extract(record, " SQLITE_STEP_CPU_AT ") BETWEEN 0 AND " STEP_CPU_MAX " THEN "
               "CAST(json_extract(record, " SQLITE_STEP_CPU_AT ") AS INTEGER) END");

#define PG_TRES(k)                                                                                 \
    "COALESCE(CAST(substring(',' || j.alloc_tres from '," k "=([0-9]{1,9})(,|$)') AS BIGINT), 0)"
#define PG_STEP_CPU "CAST(record AS JSONB) #> '{slurm_stats,total_cpu_seconds}'"
/* Nested CASE: PostgreSQL may evaluate the operands of an AND in any order, and the cast of a
 * JSON string to NUMERIC fails. */
static const char SQL_REPORT_PG[] =
    REPORT_SQL(PG_TRES("cpu"), PG_TRES("gres/gpu"),
               "CASE WHEN jsonb_typeof(" PG_STEP_CPU ") = 'number' THEN CASE WHEN CAST(" PG_STEP_CPU
               " AS NUMERIC) BETWEEN 0 AND " STEP_CPU_MAX " THEN CAST(FLOOR(CAST(" PG_STEP_CPU
               " AS NUMERIC)) AS BIGINT) END END");

static void read_sum(db_stmt_t *s, struct report_sum *r)
{
    memset(r, 0, sizeof *r);
    r->kind = db_column_int64(s, 0) ? REPORT_SUM_REFUSALS : REPORT_SUM_JOBS;
    db_column_copy(s, 1, r->key, sizeof r->key);
    r->day_s = db_column_int64(s, 2);
    r->alloc_id = db_column_int64(s, 3);
    r->alloc_start_s = db_column_int64(s, 4);
    r->alloc_end_s = db_column_int64(s, 5);
    db_column_copy(s, 6, r->account, sizeof r->account);
    db_column_copy(s, 7, r->user, sizeof r->user);
    r->count = db_column_int64(s, 8);
    r->charge_sumin = db_column_int64(s, 9);
    r->cpu_s = db_column_int64(s, 10);
    r->gpu_s = db_column_int64(s, 11);
    r->cpu_used_s = db_column_int64(s, 12);
    r->cpu_alloc_s = db_column_int64(s, 13);
}

STORE_ROWS(report, struct report_sum, store_report_sum_f, read_sum(s, &row))

static const char *const report_groups[] = {"account", "user", "partition", "resource", "cluster"};

int store_report_usage(store_t *st, const struct report_filter *f, store_report_sum_f cb, void *arg,
                       struct allot_error *err)
{
    int known = 0;
    for (size_t i = 0; i < sizeof report_groups / sizeof *report_groups; i++)
        known |= f->group && !strcmp(f->group, report_groups[i]);
    if (!known)
        return allot_errorf(err, ALLOT_EINVAL,
                            "group: expected account, user, partition, resource or cluster");
    if (f->end_s && f->end_s <= f->start_s)
        return allot_errorf(err, ALLOT_EINVAL, "end: must be after start");
    if (store_ready(st, "usage report", err) < 0)
        return -1;
    db_stmt_t *s =
        store_stmt(st, STMT_REPORT_USAGE, st->sqlite ? SQL_REPORT_SQLITE : SQL_REPORT_PG, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, f->group);
    db_bind_int64(s, 2, f->by_alloc ? 1 : 0);
    db_bind_int64(s, 3, f->with_owner ? 1 : 0);
    db_bind_text(s, 4, f->cluster ? f->cluster : "");
    db_bind_text(s, 5, f->account ? f->account : "");
    db_bind_text(s, 6, f->user ? f->user : "");
    db_bind_text(s, 7, f->partition ? f->partition : "");
    db_bind_int64(s, 8, f->start_s);
    db_bind_int64(s, 9, f->end_s);
    return store_walk(s, report_row, &(struct report_walk){cb, arg}, err);
}
