/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_reconcile.c - the agents' reconcile marks of store.h: per cluster, how far back the
 * agent has compared sacct with the bank, and what its last pass settled and found unknown.
 * The mark only moves forward, so a late or replayed report cannot undo a later one.
 */
#include <string.h>

#include "libstore/store_int.h"
#include "libutil/text.h"

static const char SQL_R_GET[] = "SELECT until_s, updated_s, settled, unknown, report "
                                "FROM reconcile_marks WHERE cluster = $1";
/* The marker only moves forward (a late or replayed report cannot move it back). */
static const char SQL_R_SET[] =
    "INSERT INTO reconcile_marks (cluster, until_s, updated_s, settled, unknown, report) "
    "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (cluster) DO UPDATE SET until_s = CASE WHEN "
    "excluded.until_s > reconcile_marks.until_s THEN excluded.until_s ELSE "
    "reconcile_marks.until_s END, updated_s = excluded.updated_s, settled = "
    "reconcile_marks.settled + excluded.settled, unknown = reconcile_marks.unknown + "
    "excluded.unknown, report = excluded.report";

int store_reconcile_get(store_t *st, const char *cluster, struct reconcile_mark *out,
                        struct allot_error *err)
{
    if (store_ready(st, "reconcile marker", err) < 0)
        return -1;
    db_stmt_t *s;
    int rc = store_first_row(st, STMT_RECONCILE_GET, SQL_R_GET, &cluster, 1, &s, err);
    if (rc < 0)
        return -1;
    memset(out, 0, sizeof *out);
    text_copy(out->cluster, sizeof out->cluster, cluster);
    if (rc == 1) {
        out->until_s = db_column_int64(s, 0);
        out->updated_s = db_column_int64(s, 1);
        out->settled = db_column_int64(s, 2);
        out->unknown = db_column_int64(s, 3);
        db_column_copy(s, 4, out->report, sizeof out->report);
        db_reset(s);
    }
    return 0;
}

int store_reconcile_set(store_t *st, const char *cluster, int64_t until_s, int64_t settled,
                        int64_t unknown, const char *report, int64_t now_s, struct allot_error *err)
{
    char tmp[ALLOT_TEXT_MAX];
    if (store_ready_write(st, "reconcile marker", err) < 0)
        return -1;
    if (until_s <= 0)
        return allot_errorf(err, ALLOT_EINVAL, "until: must be a time after 1970");
    if (settled < 0 || unknown < 0)
        return allot_errorf(err, ALLOT_EINVAL, "settled, unknown: must not be negative");
    int ex = store_cluster_exists(st, cluster, err);
    if (ex < 0)
        return -1;
    if (!ex)
        return allot_errorf(err, ALLOT_ENOENT, "cluster: '%s' does not exist", cluster);
    /* A long list of unknown jobs is cut to fit rather than refused: it is a report. */
    text_copy(tmp, sizeof tmp, report ? report : "");
    db_stmt_t *s = store_stmt(st, STMT_RECONCILE_SET, SQL_R_SET, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_int64(s, 2, until_s);
    db_bind_int64(s, 3, now_s);
    db_bind_int64(s, 4, settled);
    db_bind_int64(s, 5, unknown);
    db_bind_text(s, 6, tmp);
    return db_run(s, err);
}
