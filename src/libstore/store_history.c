/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_history.c - whether history names a cluster (store.h): jobs, ledger entries, steps
 * and commands keep the name of a cluster removed since, so a listing filtered by a name
 * that is not a cluster now asks here before it calls the name a misspelling.  Each
 * statement is one probe of an index whose first column is the cluster (store_list_plan),
 * never a walk of the table: a typo must not cost a scan of the whole ledger.
 */
#include "libstore/store_int.h"

static const char *const SQL_HISTORY[] = {
    [STORE_HISTORY_JOBS] = "SELECT 1 FROM jobs WHERE cluster = $1 LIMIT 1",
    /* "job_id <> 0" makes it the partial index ledger_job's probe. */
    [STORE_HISTORY_LEDGER] = "SELECT 1 FROM ledger WHERE cluster = $1 AND job_id <> 0 LIMIT 1",
    [STORE_HISTORY_STEPS] = "SELECT 1 FROM steps WHERE cluster = $1 LIMIT 1",
    [STORE_HISTORY_COMMANDS] = "SELECT 1 FROM commands WHERE cluster = $1 LIMIT 1",
};

const char *store_history_sql(int h)
{
    if (h < 0 || (size_t)h >= sizeof SQL_HISTORY / sizeof SQL_HISTORY[0])
        return NULL;
    return SQL_HISTORY[h];
}

int store_history_names_cluster(store_t *st, enum store_history h, const char *cluster,
                                struct allot_error *err)
{
    const char *sql = store_history_sql((int)h);
    if (!sql)
        return allot_errorf(err, ALLOT_EINTERNAL, "history: unknown kind %d", (int)h);
    if (store_ready(st, "history", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_HISTORY_JOBS + (int)h, sql, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    int rc = db_step(s, err);
    db_reset(s);
    return rc;
}
