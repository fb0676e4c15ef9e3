/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_sync.c - drift between allot's copy of a cluster and Slurm, as allot-agent's sync
 * pass reports it (schema 0018-sync-drifts; doc/agent.md "Sync").
 *
 * A pass replaces the cluster's set in one transaction: the cluster's generation goes up by
 * one, each drift is upserted with it (first_seen_s kept for a drift seen before), and rows
 * of older generations, the drifts this pass no longer found, are deleted.
 * Statement ids: a block below store_step.c's.
 */
#include <string.h>

#include "libstore/store_int.h"

enum {
    STMT_SYNC_STATE_PUT = DB_STMT_MAX - 20,
    STMT_SYNC_DRIFT_PUT,
    STMT_SYNC_DRIFT_PRUNE,
    STMT_SYNC_DRIFT_LIST,
    STMT_SYNC_STATE_LIST,
};
_Static_assert(STMT_MAX <= DB_STMT_MAX - 20, "store_sync.c's statement ids collide");
_Static_assert(STMT_SYNC_STATE_LIST < DB_STMT_MAX - 12, "store_sync.c's ids reach store_step.c's");

static const char SQL_SYNC_STATE_PUT[] =
    "INSERT INTO sync_state (cluster, mode, generation, synced_s, found_total, resolved_total) "
    "VALUES ($1, $2, 1, $3, $4, $5) ON CONFLICT (cluster) DO UPDATE SET mode = $2, "
    "generation = sync_state.generation + 1, synced_s = $3, "
    "found_total = sync_state.found_total + $4, "
    "resolved_total = sync_state.resolved_total + $5 RETURNING generation";
static const char SQL_SYNC_DRIFT_PUT[] =
    "INSERT INTO sync_drifts (cluster, kind, object, field, slurm_value, allot_value, status, "
    "note, generation, first_seen_s, last_seen_s) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
    "$10, $10) ON CONFLICT (cluster, kind, object, field) DO UPDATE SET slurm_value = $5, "
    "allot_value = $6, status = $7, note = $8, generation = $9, last_seen_s = $10";
static const char SQL_SYNC_DRIFT_PRUNE[] =
    "DELETE FROM sync_drifts WHERE cluster = $1 AND generation < $2";
#define DRIFT_COLS                                                                                 \
    "cluster, kind, object, field, slurm_value, allot_value, status, note, first_seen_s, "         \
    "last_seen_s"
static const char SQL_SYNC_DRIFT_LIST[] =
    "SELECT " DRIFT_COLS " FROM sync_drifts WHERE ($1 = '' OR cluster = $1) "
    "ORDER BY cluster, kind, object, field";
static const char SQL_SYNC_STATE_LIST[] =
    "SELECT s.cluster, s.mode, s.generation, s.synced_s, s.found_total, s.resolved_total, "
    "(SELECT COUNT(*) FROM sync_drifts d WHERE d.cluster = s.cluster) FROM sync_state s "
    "WHERE ($1 = '' OR s.cluster = $1) ORDER BY s.cluster";

static int check_text(const char *field, const char *v, struct allot_error *err)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return allot_errorf(err, ALLOT_EINVAL, "%s: control characters are not allowed", field);
    return 0;
}

static int check_drift(const struct sync_drift *d, struct allot_error *err)
{
    static const char *const kinds[] = {"partition", "account", "user", "assoc"};
    static const char *const statuses[] = {"reported", "unresolvable", "failed"};
    int ok = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        ok |= strcmp(d->kind, kinds[i]) == 0;
    if (!ok)
        return allot_errorf(err, ALLOT_EINVAL,
                            "kind: must be partition, account, user or assoc, not '%s'", d->kind);
    ok = 0;
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        ok |= strcmp(d->status, statuses[i]) == 0;
    if (!ok)
        return allot_errorf(err, ALLOT_EINVAL,
                            "status: must be reported, unresolvable or failed, not '%s'",
                            d->status);
    if (!d->object[0])
        return allot_errorf(err, ALLOT_EINVAL, "object: missing");
    if (!d->field[0])
        return allot_errorf(err, ALLOT_EINVAL, "field: missing");
    return check_text("object", d->object, err) < 0 || check_text("field", d->field, err) < 0 ||
                   check_text("slurm", d->slurm_value, err) < 0 ||
                   check_text("allot", d->allot_value, err) < 0 ||
                   check_text("note", d->note, err) < 0
               ? -1
               : 0;
}

int store_sync_replace(store_t *st, const char *cluster, const char *mode, int64_t now_s,
                       const struct sync_drift *d, int n, int64_t resolved, struct allot_error *err)
{
    if (store_ready_write(st, "sync replace", err) < 0 ||
        model_check_name("cluster", cluster, 0, err) < 0)
        return -1;
    if (strcmp(mode, "follow") && strcmp(mode, "report") && strcmp(mode, "push"))
        return allot_errorf(err, ALLOT_EINVAL, "mode: must be follow, report or push, not '%s'",
                            mode);
    if (n < 0 || n > STORE_SYNC_DRIFTS_MAX)
        return allot_errorf(err, ALLOT_ETOOBIG, "drifts: at most %d", STORE_SYNC_DRIFTS_MAX);
    if (resolved < 0 || resolved > STORE_AMOUNT_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "resolved: must be 0 .. %lld",
                            (long long)STORE_AMOUNT_MAX);
    for (int i = 0; i < n; i++)
        if (check_drift(&d[i], err) < 0)
            return allot_error_prefix(err, "drifts[%d]", i);
    int ex = store_cluster_exists(st, cluster, err);
    if (ex < 0)
        return -1;
    if (!ex)
        return allot_errorf(err, ALLOT_ENOENT, "cluster '%s' does not exist", cluster);
    db_stmt_t *s = store_stmt(st, STMT_SYNC_STATE_PUT, SQL_SYNC_STATE_PUT, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_text(s, 2, mode);
    db_bind_int64(s, 3, now_s);
    db_bind_int64(s, 4, n + resolved);
    db_bind_int64(s, 5, resolved);
    int rc = db_step(s, err);
    if (rc <= 0) {
        db_reset(s);
        return rc < 0 ? -1 : allot_errorf(err, ALLOT_EINTERNAL, "sync replace: no generation");
    }
    int64_t gen = db_column_int64(s, 0);
    db_reset(s);
    for (int i = 0; i < n; i++) {
        s = store_stmt(st, STMT_SYNC_DRIFT_PUT, SQL_SYNC_DRIFT_PUT, err);
        if (!s)
            return -1;
        db_bind_text(s, 1, cluster);
        db_bind_text(s, 2, d[i].kind);
        db_bind_text(s, 3, d[i].object);
        db_bind_text(s, 4, d[i].field);
        db_bind_text(s, 5, d[i].slurm_value);
        db_bind_text(s, 6, d[i].allot_value);
        db_bind_text(s, 7, d[i].status);
        db_bind_text(s, 8, d[i].note);
        db_bind_int64(s, 9, gen);
        db_bind_int64(s, 10, now_s);
        if (db_run(s, err) < 0)
            return -1;
    }
    s = store_stmt(st, STMT_SYNC_DRIFT_PRUNE, SQL_SYNC_DRIFT_PRUNE, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_int64(s, 2, gen);
    return db_run(s, err);
}

int store_sync_drifts(store_t *st, const char *cluster, store_sync_drift_f cb, void *arg,
                      struct allot_error *err)
{
    if (store_ready(st, "sync drifts", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_SYNC_DRIFT_LIST, SQL_SYNC_DRIFT_LIST, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster ? cluster : "");
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct sync_drift d;
        memset(&d, 0, sizeof d);
        db_column_copy(s, 0, d.cluster, sizeof d.cluster);
        db_column_copy(s, 1, d.kind, sizeof d.kind);
        db_column_copy(s, 2, d.object, sizeof d.object);
        db_column_copy(s, 3, d.field, sizeof d.field);
        db_column_copy(s, 4, d.slurm_value, sizeof d.slurm_value);
        db_column_copy(s, 5, d.allot_value, sizeof d.allot_value);
        db_column_copy(s, 6, d.status, sizeof d.status);
        db_column_copy(s, 7, d.note, sizeof d.note);
        d.first_seen_s = db_column_int64(s, 8);
        d.last_seen_s = db_column_int64(s, 9);
        int stop = cb(&d, arg);
        if (stop) {
            db_reset(s);
            return stop;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

int store_sync_states(store_t *st, const char *cluster, store_sync_state_f cb, void *arg,
                      struct allot_error *err)
{
    if (store_ready(st, "sync states", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_SYNC_STATE_LIST, SQL_SYNC_STATE_LIST, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster ? cluster : "");
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct sync_state x;
        memset(&x, 0, sizeof x);
        db_column_copy(s, 0, x.cluster, sizeof x.cluster);
        db_column_copy(s, 1, x.mode, sizeof x.mode);
        x.generation = db_column_int64(s, 2);
        x.synced_s = db_column_int64(s, 3);
        x.found_total = db_column_int64(s, 4);
        x.resolved_total = db_column_int64(s, 5);
        x.drifts = db_column_int64(s, 6);
        int stop = cb(&x, arg);
        if (stop) {
            db_reset(s);
            return stop;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}
