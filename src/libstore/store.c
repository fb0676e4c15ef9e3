/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store.c - connection, transactions, savepoints and schema migrations of store.h, plus the
 * small helpers shared by the verb files (store_int.h).
 *
 * Transactions: store_begin takes the write lock at once (db_begin); savepoints nest up to
 * STORE_SAVEPOINT_MAX deep and are named sp1..spN by depth, from prepared statements, so a
 * per-request savepoint costs no SQL parsing.  Migrations are embedded (store_migrations[])
 * and applied one transaction each; the version is re-read under the write lock, so two
 * processes upgrading at once apply each migration once.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libcore/civil.h"
#include "libcore/money.h"
#include "libstore/store_int.h"

static const char SQL_COMMIT[] = "COMMIT";
static const char SQL_ROLLBACK[] = "ROLLBACK";
static const char *const SQL_SP_SAVE[STORE_SAVEPOINT_MAX] = {
    "SAVEPOINT sp1", "SAVEPOINT sp2", "SAVEPOINT sp3", "SAVEPOINT sp4",
    "SAVEPOINT sp5", "SAVEPOINT sp6", "SAVEPOINT sp7", "SAVEPOINT sp8",
};
static const char *const SQL_SP_RELEASE[STORE_SAVEPOINT_MAX] = {
    "RELEASE SAVEPOINT sp1", "RELEASE SAVEPOINT sp2", "RELEASE SAVEPOINT sp3",
    "RELEASE SAVEPOINT sp4", "RELEASE SAVEPOINT sp5", "RELEASE SAVEPOINT sp6",
    "RELEASE SAVEPOINT sp7", "RELEASE SAVEPOINT sp8",
};
static const char *const SQL_SP_ROLLBACK[STORE_SAVEPOINT_MAX] = {
    "ROLLBACK TO SAVEPOINT sp1", "ROLLBACK TO SAVEPOINT sp2", "ROLLBACK TO SAVEPOINT sp3",
    "ROLLBACK TO SAVEPOINT sp4", "ROLLBACK TO SAVEPOINT sp5", "ROLLBACK TO SAVEPOINT sp6",
    "ROLLBACK TO SAVEPOINT sp7", "ROLLBACK TO SAVEPOINT sp8",
};
static const char SQL_SCHEMA_VERSION[] = "SELECT COALESCE(MAX(version), 0) FROM schema_version";
static const char SQL_SCHEMA_RECORD[] =
    "INSERT INTO schema_version (version, applied_s) VALUES ($1, $2)";

/* The newest schema row negated, run twice: a real write (SQLite skips a row written with
 * the bytes it has, not one changed and changed back: the page is dirty and goes to the
 * WAL; PostgreSQL writes tuples and WAL) that leaves every value as it was. */
static const char SQL_WRITE_PROBE[] = "UPDATE schema_version SET applied_s = -applied_s "
                                      "WHERE version = (SELECT MAX(version) FROM schema_version)";

static int latest_version(const char *backend)
{
    int v = 0;
    for (int i = 0; i < store_migration_count; i++)
        if (strcmp(store_migrations[i].backend, backend) == 0 && store_migrations[i].version > v)
            v = store_migrations[i].version;
    return v;
}

static int read_version(store_t *st, int *current, struct allot_error *err)
{
    int exists = 0;
    if (db_table_exists(st->db, "schema_version", &exists, err) < 0)
        return -1;
    if (!exists) {
        *current = 0;
        return 0;
    }
    db_stmt_t *s = store_stmt(st, STMT_SCHEMA_VERSION, SQL_SCHEMA_VERSION, err);
    if (!s)
        return -1;
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    *current = rc == 1 ? (int)db_column_int64(s, 0) : 0;
    db_reset(s);
    return 0;
}

store_t *store_open(const struct store_config *cfg, struct allot_error *err)
{
    const char *backend = cfg->backend ? cfg->backend : "sqlite";
    store_t *st = calloc(1, sizeof *st);
    if (!st) {
        allot_errorf(err, ALLOT_ENOMEM, "store: out of memory");
        return NULL;
    }
    st->durable = cfg->durable;
    if (strcmp(backend, "sqlite") == 0) {
        st->backend = "sqlite";
        st->sqlite = 1;
        st->db = db_sqlite_open(cfg->target, cfg->busy_timeout_ms, cfg->durable, err);
    } else if (strcmp(backend, "pg") == 0) {
        st->backend = "pg";
        st->db = db_pg_open(cfg->target, cfg->busy_timeout_ms, cfg->durable, err);
    } else {
        allot_errorf(err, ALLOT_EINVAL, "backend: '%s' is not supported (sqlite, pg)", backend);
    }
    if (!st->db) {
        free(st);
        return NULL;
    }
    st->schema_latest = latest_version(st->backend);
    if (read_version(st, &st->schema_current, err) < 0) {
        store_close(st);
        return NULL;
    }
    if (st->schema_current > st->schema_latest) {
        allot_errorf(err, ALLOT_EIO,
                     "database schema version %d is newer than this build's (%d): upgrade allot",
                     st->schema_current, st->schema_latest);
        store_close(st);
        return NULL;
    }
    return st;
}

void store_close(store_t *st)
{
    if (!st)
        return;
    if (st->in_tx)
        store_rollback(st);
    db_close(st->db);
    free(st->batch_buf);
    free(st->batch_ops);
    free(st);
}

const char *store_backend(const store_t *st)
{
    return st->backend;
}

int store_walk(db_stmt_t *s, store_row_f row, void *ctx, struct allot_error *err)
{
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        int r = row(s, ctx);
        if (r) {
            db_reset(s);
            return r;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

db_stmt_t *store_stmt(store_t *st, int id, const char *sql, struct allot_error *err)
{
    return db_stmt(st->db, id, sql, err);
}

db_stmt_t *store_stmt_texts(store_t *st, int id, const char *sql, const char *const *keys, int n,
                            struct allot_error *err)
{
    db_stmt_t *s = db_stmt(st->db, id, sql, err);
    for (int i = 0; s && i < n; i++)
        db_bind_text(s, i + 1, keys[i]);
    return s;
}

int store_first_row(store_t *st, int id, const char *sql, const char *const *keys, int n,
                    db_stmt_t **row, struct allot_error *err)
{
    db_stmt_t *s = store_stmt_texts(st, id, sql, keys, n, err);
    if (!s)
        return -1;
    int rc = db_step(s, err);
    if (rc != 1) {
        db_reset(s);
        return rc < 0 ? -1 : 0;
    }
    *row = s;
    return 1;
}

int store_ready(store_t *st, const char *verb, struct allot_error *err)
{
    if (st->schema_current != st->schema_latest)
        return allot_errorf(err, ALLOT_EUNAVAIL,
                            "%s: database schema is version %d, this build needs %d: run "
                            "'allot db upgrade'",
                            verb, st->schema_current, st->schema_latest);
    return 0;
}

int store_ready_write(store_t *st, const char *verb, struct allot_error *err)
{
    if (store_ready(st, verb, err) < 0)
        return -1;
    if (!st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "%s: write outside a transaction", verb);
    return 0;
}

void store_format_utc(int64_t t, char *buf, size_t size)
{
    char text[CIVIL_UTC_LEN + 1];
    if (t <= 0 || !civil_format_utc(t, text))
        snprintf(buf, size, "%s", t <= 0 ? "at an unknown time" : "?");
    else
        snprintf(buf, size, "%s", text);
}

void store_format_su(int64_t sumin, char *buf, size_t size)
{
    if (money_format_sumin(sumin, buf, size) < 0)
        snprintf(buf, size, "%lldm", (long long)sumin);
}

int store_check_amount(const char *field, int64_t v, int allow_negative, struct allot_error *err)
{
    if (v == 0 || (v < 0 && !allow_negative))
        return allot_errorf(err, ALLOT_EINVAL, "%s: must be %s", field,
                            allow_negative ? "non-zero" : "positive");
    if (v > STORE_AMOUNT_MAX || v < -STORE_AMOUNT_MAX) {
        char max[STORE_SU_MAX];
        store_format_su(STORE_AMOUNT_MAX, max, sizeof max);
        return allot_errorf(err, ALLOT_EINVAL, "%s: larger than %s SU (%lld SU-minutes)", field,
                            max, (long long)STORE_AMOUNT_MAX);
    }
    return 0;
}

/* ---- transactions ---- */

static int run_fixed(store_t *st, int id, const char *sql, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, id, sql, err);
    if (!s)
        return -1;
    return db_run(s, err);
}

/* SAVEPOINT and RELEASE: nothing is read back, so a driver may send them with the next
 * statement (db_run_deferred); on PostgreSQL that saves two round trips per request. */
static int run_fixed_deferred(store_t *st, int id, const char *sql, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, id, sql, err);
    if (!s)
        return -1;
    return db_run_deferred(s, err);
}

int store_begin(store_t *st, struct allot_error *err)
{
    if (st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "store_begin: a transaction is already open");
    if (db_begin(st->db, err) < 0)
        return -1;
    st->in_tx = 1;
    st->sp_depth = 0;
    st->uparams_state = 0;
    return 0;
}

int store_commit(store_t *st, struct allot_error *err)
{
    if (!st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "store_commit: no open transaction");
    if (st->ledger_unindexed >= STORE_LEDGER_INDEX_EVERY) {
        if (store_ledger_index_pass(st, err) < 0) {
            store_rollback(st);
            return -1;
        }
        st->ledger_unindexed = 0;
    }
    if (run_fixed(st, STMT_COMMIT, SQL_COMMIT, err) < 0) {
        /* A failed COMMIT (e.g. disk full) may leave the transaction open; end it so the
         * connection is usable and nothing half-done survives. */
        store_rollback(st);
        return -1;
    }
    st->in_tx = 0;
    st->sp_depth = 0;
    return 0;
}

int store_split_sync(store_t *st, int *fd, struct allot_error *err)
{
    *fd = -1;
    if (st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "store_split_sync: inside a transaction");
    if (!st->durable)
        return 0;
    return db_split_sync(st->db, fd, err);
}

void store_rollback(store_t *st)
{
    if (!st->in_tx)
        return;
    /* Best effort by contract; SQLite may already have rolled back on an I/O error. */
    (void)run_fixed(st, STMT_ROLLBACK, SQL_ROLLBACK, NULL);
    st->in_tx = 0;
    st->uparams_state = 0;
    st->sp_depth = 0;
}

int store_savepoint(store_t *st, struct allot_error *err)
{
    if (!st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "store_savepoint: no open transaction");
    if (st->sp_depth >= STORE_SAVEPOINT_MAX)
        return allot_errorf(err, ALLOT_EINTERNAL, "store_savepoint: more than %d nested",
                            STORE_SAVEPOINT_MAX);
    int d = st->sp_depth;
    if (run_fixed_deferred(st, STMT_SP_SAVE + d, SQL_SP_SAVE[d], err) < 0)
        return -1;
    st->sp_depth++;
    return 0;
}

int store_savepoint_release(store_t *st, struct allot_error *err)
{
    if (!st->in_tx || st->sp_depth == 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "store_savepoint_release: no savepoint");
    int d = st->sp_depth - 1;
    if (run_fixed_deferred(st, STMT_SP_RELEASE + d, SQL_SP_RELEASE[d], err) < 0)
        return -1;
    st->sp_depth--;
    return 0;
}

void store_savepoint_rollback(store_t *st)
{
    if (!st->in_tx || st->sp_depth == 0)
        return;
    int d = st->sp_depth - 1;
    /* ROLLBACK TO keeps the savepoint open; RELEASE then pops it. */
    if (run_fixed(st, STMT_SP_ROLLBACK + d, SQL_SP_ROLLBACK[d], NULL) < 0 ||
        run_fixed(st, STMT_SP_RELEASE + d, SQL_SP_RELEASE[d], NULL) < 0) {
        /* The savepoint could not be undone alone: undo the whole transaction rather than
         * let a failed request's writes reach a commit. */
        store_rollback(st);
        return;
    }
    st->sp_depth--;
    st->uparams_state = 0;
}

/* ---- schema ---- */

int store_schema_version(store_t *st, int *current, int *latest, struct allot_error *err)
{
    int cur;
    if (read_version(st, &cur, err) < 0)
        return -1;
    st->schema_current = cur;
    if (current)
        *current = cur;
    if (latest)
        *latest = st->schema_latest;
    return 0;
}

int store_write_probe(store_t *st, struct allot_error *err)
{
    if (store_ready_write(st, "write probe", err) < 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        db_stmt_t *s = store_stmt(st, STMT_WRITE_PROBE, SQL_WRITE_PROBE, err);
        if (!s || db_run(s, err) < 0)
            return -1;
    }
    return 0;
}

int store_upgrade(store_t *st, struct allot_error *err)
{
    if (st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "store_upgrade: inside a transaction");
    for (int i = 0; i < store_migration_count; i++) {
        const struct store_migration *m = &store_migrations[i];
        if (strcmp(m->backend, st->backend) != 0)
            continue;
        if (store_begin(st, err) < 0)
            return -1;
        int cur;
        if (read_version(st, &cur, err) < 0)
            goto fail;
        if (m->version <= cur) {
            store_rollback(st);
            continue;
        }
        if (m->version != cur + 1) {
            allot_errorf(err, ALLOT_EINTERNAL, "schema: migration %s follows version %d", m->name,
                         cur);
            goto fail;
        }
        if (db_exec(st->db, m->sql, err) < 0) {
            allot_error_prefix(err, "schema migration %s", m->name);
            goto fail;
        }
        db_stmt_t *s = store_stmt(st, STMT_SCHEMA_RECORD, SQL_SCHEMA_RECORD, err);
        if (!s)
            goto fail;
        db_bind_int64(s, 1, m->version);
        db_bind_int64(s, 2, (int64_t)time(NULL));
        if (db_run(s, err) < 0 || store_commit(st, err) < 0)
            goto fail;
        st->schema_current = m->version;
    }
    return store_schema_version(st, NULL, NULL, err);
fail:
    store_rollback(st);
    return -1;
}
