/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_dump.c - `allot db export` / `allot db import`: a portable, versioned dump of every
 * bank table, so a bank moves between SQLite and PostgreSQL (or between hosts) unchanged.
 *
 * Format (JSON lines, one JSON object per line, UTF-8):
 *   {"allot_dump":1,"backend":"sqlite","schema":5,"created_s":...}      header
 *   {"table":"clusters","row":{"name":"c1","created_s":...}}             one per row
 *   ...
 *   {"end":true,"rows":N,"tables":{"clusters":1,...}}                     trailer
 * Tables come in dependency order (a row's foreign keys point at rows earlier in the dump;
 * accounts parents before children), rows in key order, every column by name with its stored
 * value: integers as JSON integers (money stays exact int64 SU-minutes), text as strings,
 * SQL NULL as null.  Row ids (accounts, allocations, ledger, ...) are kept, so ledger ids,
 * job references and idempotency keys mean the same after a move.  schema_version is not
 * dumped: the header's schema must equal the target's.
 *
 * Invariants of import: it writes only into an upgraded database holding nothing but what
 * the migrations created (the root account), in ONE transaction, and commits only when every
 * line parsed, every column of every table was given exactly once with the right type, the
 * trailer's counts match what was read (a truncated file is refused), and store_check finds
 * the imported cached balances equal to the imported ledger sums.  Any failure rolls back,
 * leaving the target empty.  On PostgreSQL the identity sequences are moved past the
 * imported ids so new rows do not collide; SQLite's rowids need nothing.
 *
 * The table descriptions below are the single list of what a dump holds: a new table or
 * column in schema/ must be added here (test/dump.c fails when a table of the schema is left out),
 * or to the derived tables that import rebuilds (store_dump_derived_table).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libstore/store_int.h"
#include "libutil/text.h"

#define DUMP_FORMAT 1
#define DUMP_LINE_MAX (1024 * 1024) /* longest accepted line (step records are <= 48 KiB) */
#define DUMP_COLS_MAX 24
#define DUMP_SQL_MAX 1024

/* One column: name, 'i' (BIGINT) or 't' (TEXT), nullable. */
struct dump_col {
    const char *name;
    char type;
    int nullable;
};

/* One table: select lists columns in col order; upsert is the conflict target for tables
 * whose rows the migrations already created (accounts: root). */
struct dump_table {
    const char *name;
    const char *order_by; /* key order; NULL: the select text is given whole */
    const char *select;   /* full SELECT when order needs a join (accounts) */
    const char *conflict; /* "id": INSERT ... ON CONFLICT (id) DO UPDATE */
    const char *identity; /* identity column moved past the max id on PostgreSQL */
    struct dump_col cols[DUMP_COLS_MAX];
};

#define I(n)                                                                                       \
    {                                                                                              \
        n, 'i', 0                                                                                  \
    }
#define T(n)                                                                                       \
    {                                                                                              \
        n, 't', 0                                                                                  \
    }

/* Accounts by depth so a parent is always inserted before its children. */
static const char SQL_ACCOUNTS_SELECT[] =
    "WITH RECURSIVE tree(id, depth) AS (SELECT id, 0 FROM accounts WHERE parent_id IS NULL "
    "UNION ALL SELECT a.id, tree.depth + 1 FROM accounts a JOIN tree ON a.parent_id = tree.id) "
    "SELECT a.id, a.name, a.parent_id, a.shares, a.description, a.organization, a.created_s, "
    "a.qos, a.default_qos, a.coordinators "
    "FROM accounts a JOIN tree ON tree.id = a.id ORDER BY tree.depth, a.id";

static const struct dump_table dump_tables[] = {
    {"clusters", "name", NULL, NULL, NULL, {T("name"), I("created_s")}},
    {"accounts",
     NULL,
     SQL_ACCOUNTS_SELECT,
     "id",
     "id",
     {I("id"),
      T("name"),
      {"parent_id", 'i', 1},
      I("shares"),
      T("description"),
      T("organization"),
      I("created_s"),
      T("qos"),
      T("default_qos"),
      T("coordinators")}},
    {"users",
     "name",
     NULL,
     NULL,
     NULL,
     {T("name"), I("uid"), T("default_account"), I("created_s")}},
    {"assocs",
     "id",
     NULL,
     NULL,
     "id",
     {I("id"), T("cluster"), I("account_id"), T("user_name"), T("partition_name"), I("shares"),
      T("default_qos"), T("qos")}},
    {"qos",
     "name",
     NULL,
     NULL,
     NULL,
     {T("name"), I("priority"), T("flags"), I("usage_factor_ppm"), I("limit_factor_ppm"),
      T("description")}},
    {"partitions",
     "cluster, name",
     NULL,
     NULL,
     NULL,
     {T("cluster"), T("name"), T("resource"), T("billing_weights"), I("max_tres"), T("qos"),
      I("default_time_s"), I("max_time_s")}},
    {"limits",
     "scope, owner, name",
     NULL,
     NULL,
     NULL,
     {T("scope"), T("owner"), T("name"), T("value")}},
    {"allocations",
     "id",
     NULL,
     NULL,
     "id",
     {I("id"), I("account_id"), T("resource"), T("cluster"), I("start_s"), I("end_s"),
      T("category"), T("comment"), I("created_s")}},
    {"alloc_balance",
     "alloc_id",
     NULL,
     NULL,
     NULL,
     {I("alloc_id"), I("granted_sumin"), I("used_sumin"), I("held_sumin")}},
    {"ledger",
     "id",
     NULL,
     NULL,
     "id",
     {I("id"), I("alloc_id"), T("kind"), I("amount_sumin"), T("actor"), I("time_s"), T("comment"),
      T("cluster"), I("job_id"), I("run"), T("idem_key")}},
    {"jobs",
     "cluster, job_id, run",
     NULL,
     NULL,
     NULL,
     {T("cluster"),       I("job_id"),         I("run"),          T("user_name"),
      T("account"),       T("partition_name"), T("qos"),          I("submit_s"),
      I("start_s"),       I("end_s"),          T("req_tres"),     T("alloc_tres"),
      I("billing_micro"), I("time_limit_s"),   I("elapsed_s"),    T("slurm_state"),
      T("status"),        I("hold_sumin"),     I("charge_sumin"), I("alloc_id"),
      T("payer_account"), T("settle_source"),  I("updated_s")}},
    {"failures",
     "id",
     NULL,
     NULL,
     "id",
     {I("id"), T("cluster"), I("job_id"), I("run"), T("user_name"), T("account"),
      T("partition_name"), I("alloc_id"), T("stage"), I("time_s"), I("needed_sumin"),
      I("available_sumin"), I("held_sumin"), T("message"), I("observed")}},
    {"policies",
     "id",
     NULL,
     NULL,
     "id",
     {I("id"), I("alloc_id"), T("cluster"), T("period_kind"), I("base_sumin"), I("carryover"),
      I("carry_factor_ppm"), I("grace_ppm"), I("notify_ppm"), I("downscale_ppm"), T("slow_qos"),
      T("normal_qos"), I("reset_raw_usage"), T("limit_type"), T("tres_weights"), I("fairshare"),
      T("current_period"), I("flags"), I("created_s")}},
    {"policy_periods",
     "policy_id, period",
     NULL,
     NULL,
     NULL,
     {I("policy_id"), T("period"), I("start_s"), I("end_s"), I("base_sumin"), I("carry_sumin"),
      I("total_sumin"), I("used_open_sumin"), I("opened_s"), I("closed_s"), I("used_sumin"),
      I("expired_sumin")}},
    {"commands",
     "id",
     NULL,
     NULL,
     "id",
     {I("id"), T("cluster"), T("kind"), T("target"), T("payload"), I("policy_id"), T("period"),
      T("state"), I("attempts"), T("result"), T("idem_key"), I("created_s"), I("sent_s"),
      I("done_s")}},
    {"evaluations",
     "id",
     NULL,
     NULL,
     "id",
     {I("id"), I("policy_id"), T("period"), I("time_s"), I("used_sumin"), I("total_sumin"),
      I("usage_ppm"), I("prev_flags"), I("new_flags"), T("actions"), T("command_ids")}},
    {"agents", "cluster", NULL, NULL, NULL, {T("cluster"), I("last_seen_s"), T("version")}},
    {"usage_resets",
     "cluster, account, user_name",
     NULL,
     NULL,
     NULL,
     {T("cluster"), T("account"), T("user_name"), I("time_s")}},
    {"job_scrubs",
     "time_s, before_s, deleted",
     NULL,
     NULL,
     NULL,
     {I("before_s"), I("time_s"), I("deleted")}},
    {"reconcile_marks",
     "cluster",
     NULL,
     NULL,
     NULL,
     {T("cluster"), I("until_s"), I("updated_s"), I("settled"), I("unknown"), T("report")}},
    {"steps",
     "cluster, job_id, step_name, attempt",
     NULL,
     NULL,
     NULL,
     {T("cluster"), I("job_id"), T("step_name"), I("attempt"), T("user_name"), T("status"),
      I("return_code"), I("exec_ms"), T("record"), T("actor"), I("created_s")}},
    {"sync_state",
     "cluster",
     NULL,
     NULL,
     NULL,
     {T("cluster"), T("mode"), I("generation"), I("synced_s"), I("found_total"),
      I("resolved_total")}},
    {"sync_drifts",
     "cluster, kind, object, field",
     NULL,
     NULL,
     NULL,
     {T("cluster"), T("kind"), T("object"), T("field"), T("slurm_value"), T("allot_value"),
      T("status"), T("note"), I("generation"), I("first_seen_s"), I("last_seen_s")}},
    {"job_slurm_ids",
     "cluster, job_id",
     NULL,
     NULL,
     NULL,
     {T("cluster"), I("job_id"), I("array_job_id"), I("array_task_id"), I("het_job_id"),
      I("het_job_offset")}},
};
#undef I
#undef T

#define DUMP_NTABLES ((int)(sizeof dump_tables / sizeof dump_tables[0]))

const char *store_dump_table(int i)
{
    return i >= 0 && i < DUMP_NTABLES ? dump_tables[i].name : NULL;
}

const char *store_dump_derived_table(int i)
{
    /* The usage accumulators (schema 0024) are derived from the jobs: an imported bank has no
     * usage_params row, so allotd rebuilds them when it first starts on it. */
    static const char *const derived[] = {"ledger_alloc_index", "ledger_alloc_mark", "usage_acc",
                                          "usage_params",       "usage_pending",     "usage_dirty"};
    return i >= 0 && i < (int)(sizeof derived / sizeof derived[0]) ? derived[i] : NULL;
}

static int ncols(const struct dump_table *t)
{
    int n = 0;
    while (n < DUMP_COLS_MAX && t->cols[n].name)
        n++;
    return n;
}

/* The column list "a, b, c" of t into buf. */
static int col_list(const struct dump_table *t, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < ncols(t); i++) {
        int n = snprintf(buf + off, size - off, "%s%s", i ? ", " : "", t->cols[i].name);
        if (n < 0 || (size_t)n >= size - off)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

/* SQL built from the fixed descriptions above (identifiers only; values are always bound). */
static int select_sql(const struct dump_table *t, char *sql, size_t size)
{
    char cols[DUMP_SQL_MAX];
    if (t->select)
        return text_copy(sql, size, t->select) ? -1 : 0;
    if (col_list(t, cols, sizeof cols) < 0)
        return -1;
    int n = snprintf(sql, size, "SELECT %s FROM %s ORDER BY %s", cols, t->name, t->order_by);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int insert_sql(const struct dump_table *t, char *sql, size_t size)
{
    char cols[DUMP_SQL_MAX];
    size_t off;
    int n, nc = ncols(t);

    if (col_list(t, cols, sizeof cols) < 0)
        return -1;
    n = snprintf(sql, size, "INSERT INTO %s (%s) VALUES (", t->name, cols);
    if (n < 0 || (size_t)n >= size)
        return -1;
    off = (size_t)n;
    for (int i = 0; i < nc; i++) {
        n = snprintf(sql + off, size - off, "%s$%d", i ? ", " : "", i + 1);
        if (n < 0 || (size_t)n >= size - off)
            return -1;
        off += (size_t)n;
    }
    n = snprintf(sql + off, size - off, ")");
    if (n < 0 || (size_t)n >= size - off)
        return -1;
    off += (size_t)n;
    if (t->conflict) {
        /* Rows the migrations created (root) take the dump's values. */
        n = snprintf(sql + off, size - off, " ON CONFLICT (%s) DO UPDATE SET ", t->conflict);
        if (n < 0 || (size_t)n >= size - off)
            return -1;
        off += (size_t)n;
        int first = 1;
        for (int i = 0; i < nc; i++) {
            if (!strcmp(t->cols[i].name, t->conflict))
                continue;
            n = snprintf(sql + off, size - off, "%s%s = excluded.%s", first ? "" : ", ",
                         t->cols[i].name, t->cols[i].name);
            if (n < 0 || (size_t)n >= size - off)
                return -1;
            off += (size_t)n;
            first = 0;
        }
    }
    return 0;
}

/* A statement outside the cache: dump SQL runs once per export/import. */
static db_stmt_t *prepare_once(store_t *st, const char *sql, struct allot_error *err)
{
    db_stmt_t *s = st->db->ops->prepare(st->db, sql, err);
    if (s) {
        s->db = st->db;
        s->bind_failed = 0;
    }
    return s;
}

static void finalize_once(db_stmt_t *s)
{
    if (s)
        s->db->ops->finalize(s);
}

static int write_line(FILE *out, json_t *o, struct allot_error *err)
{
    if (!o)
        return allot_errorf(err, ALLOT_ENOMEM, "db export: out of memory");
    int rc = json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (rc < 0 || fputc('\n', out) == EOF)
        return allot_errorf(err, ALLOT_EIO, "db export: write failed: %s", strerror(errno));
    return 0;
}

/* Rows of every dumped table, for an export's progress. */
static int count_rows(store_t *st, int64_t *total, struct allot_error *err)
{
    char sql[128];
    *total = 0;
    for (int i = 0; i < DUMP_NTABLES; i++) {
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", dump_tables[i].name);
        db_stmt_t *s = prepare_once(st, sql, err);
        if (!s)
            return allot_error_prefix(err, "db export: %s", dump_tables[i].name);
        int rc = db_step(s, err);
        if (rc == 1)
            *total += db_column_int64(s, 0);
        finalize_once(s);
        if (rc != 1)
            return rc < 0 ? -1
                          : allot_errorf(err, ALLOT_EINTERNAL, "db export: no count of %s",
                                         dump_tables[i].name);
    }
    return 0;
}

/* Write every row of table t; *count gets the number.  pg (may be NULL) hears of each row:
 * done before this table, and the total. */
static int export_table(store_t *st, const struct dump_table *t, FILE *out, int64_t *count,
                        const struct store_dump_progress *pg, int64_t done, int64_t total,
                        struct allot_error *err)
{
    char sql[DUMP_SQL_MAX * 2];
    int nc = ncols(t), rc;
    db_stmt_t *s;

    *count = 0;
    if (select_sql(t, sql, sizeof sql) < 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "db export: SQL for %s too long", t->name);
    s = prepare_once(st, sql, err);
    if (!s)
        return allot_error_prefix(err, "db export: %s", t->name);
    while ((rc = db_step(s, err)) == 1) {
        json_t *row = json_object();
        json_t *line = json_object();
        int bad = !row || !line;
        for (int i = 0; i < nc && !bad; i++) {
            json_t *v;
            if (db_column_is_null(s, i))
                v = json_null();
            else if (t->cols[i].type == 'i')
                v = json_integer((json_int_t)db_column_int64(s, i));
            else
                v = json_string(db_column_text(s, i));
            bad = !v || json_object_set_new(row, t->cols[i].name, v) < 0;
        }
        if (!bad) {
            bad = json_object_set_new(line, "table", json_string(t->name)) < 0 ||
                  json_object_set(line, "row", row) < 0;
        }
        json_decref(row);
        if (bad) {
            json_decref(line);
            rc = allot_errorf(err, ALLOT_EIO,
                              "db export: %s: a row cannot be written as JSON (text not UTF-8?)",
                              t->name);
            break;
        }
        if (write_line(out, line, err) < 0) {
            rc = -1;
            break;
        }
        (*count)++;
        if (pg)
            pg->fn(pg->arg, done + *count, total);
    }
    finalize_once(s);
    return rc < 0 ? -1 : 0;
}

int store_dump_export(store_t *st, FILE *out, int64_t now_s, int64_t *rows,
                      const struct store_dump_progress *pg, struct allot_error *err)
{
    int64_t total = 0, expected = -1;
    json_t *counts = NULL;
    int rc = -1;

    if (store_ready(st, "db export", err) < 0)
        return -1;
    if (st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "db export: called inside a transaction");
    /* The write lock gives one consistent picture of the bank on both backends (PostgreSQL
     * writers all take the advisory lock); nothing is written and the transaction is rolled
     * back. */
    if (store_begin(st, err) < 0)
        return -1;
    counts = json_object();
    if (!counts) {
        allot_errorf(err, ALLOT_ENOMEM, "db export: out of memory");
        goto out;
    }
    if (pg && count_rows(st, &expected, err) < 0)
        goto out;
    if (write_line(out,
                   json_pack("{s:i, s:s, s:i, s:I}", "allot_dump", DUMP_FORMAT, "backend",
                             st->backend, "schema", st->schema_current, "created_s",
                             (json_int_t)now_s),
                   err) < 0)
        goto out;
    for (int i = 0; i < DUMP_NTABLES; i++) {
        int64_t n;
        if (export_table(st, &dump_tables[i], out, &n, pg, total, expected, err) < 0)
            goto out;
        if (json_object_set_new(counts, dump_tables[i].name, json_integer((json_int_t)n)) < 0) {
            allot_errorf(err, ALLOT_ENOMEM, "db export: out of memory");
            goto out;
        }
        total += n;
    }
    if (write_line(
            out,
            json_pack("{s:b, s:I, s:O}", "end", 1, "rows", (json_int_t)total, "tables", counts),
            err) < 0)
        goto out;
    if (fflush(out) == EOF || ferror(out)) {
        allot_errorf(err, ALLOT_EIO, "db export: write failed: %s", strerror(errno));
        goto out;
    }
    if (rows)
        *rows = total;
    rc = 0;
out:
    json_decref(counts);
    store_rollback(st);
    return rc;
}

/* ---- import ---- */

static const struct dump_table *find_table(const char *name, int *index)
{
    for (int i = 0; i < DUMP_NTABLES; i++) {
        if (!strcmp(dump_tables[i].name, name)) {
            *index = i;
            return &dump_tables[i];
        }
    }
    return NULL;
}

/* The target holds only what the migrations created: the root account. */
static int check_empty(store_t *st, struct allot_error *err)
{
    char sql[DUMP_SQL_MAX];
    for (int i = 0; i < DUMP_NTABLES; i++) {
        const struct dump_table *t = &dump_tables[i];
        int n =
            snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s%s", t->name,
                     !strcmp(t->name, "accounts") ? " WHERE NOT (id = 1 AND name = 'root')" : "");
        if (n < 0 || (size_t)n >= sizeof sql)
            return allot_errorf(err, ALLOT_EINTERNAL, "db import: SQL too long");
        db_stmt_t *s = prepare_once(st, sql, err);
        if (!s)
            return -1;
        int rc = db_step(s, err);
        int64_t count = rc == 1 ? db_column_int64(s, 0) : 0;
        finalize_once(s);
        if (rc < 0)
            return -1;
        if (count > 0)
            return allot_errorf(err, ALLOT_EEXIST,
                                "db import: the target database is not empty (table %s has "
                                "%lld row%s): import only into a new, upgraded database",
                                t->name, (long long)count, count == 1 ? "" : "s");
    }
    return 0;
}

struct importer {
    store_t *st;
    int table;         /* index of the current table, -1 before the first row */
    db_stmt_t *insert; /* of the current table */
    int64_t counts[DUMP_NTABLES];
    int64_t total;
    long line;
};

/* Bind the row object's columns to imp->insert in the table's order. */
static int bind_row(struct importer *imp, const struct dump_table *t, json_t *row,
                    struct allot_error *err)
{
    int nc = ncols(t);
    if (!json_is_object(row))
        return allot_errorf(err, ALLOT_EINVAL, "db import: line %ld: \"row\" is not an object",
                            imp->line);
    if ((int)json_object_size(row) != nc) {
        const char *key;
        json_t *v;
        json_object_foreach(row, key, v)
        {
            int known = 0;
            for (int i = 0; i < nc; i++)
                known |= !strcmp(t->cols[i].name, key);
            if (!known)
                return allot_errorf(err, ALLOT_EINVAL,
                                    "db import: line %ld: table %s has no column '%s'", imp->line,
                                    t->name, key);
        }
    }
    for (int i = 0; i < nc; i++) {
        const struct dump_col *c = &t->cols[i];
        json_t *v = json_object_get(row, c->name);
        if (!v)
            return allot_errorf(err, ALLOT_EINVAL, "db import: line %ld: %s row lacks column '%s'",
                                imp->line, t->name, c->name);
        if (json_is_null(v) && c->nullable)
            db_bind_null(imp->insert, i + 1);
        else if (c->type == 'i' && json_is_integer(v))
            db_bind_int64(imp->insert, i + 1, (int64_t)json_integer_value(v));
        else if (c->type == 't' && json_is_string(v))
            db_bind_text(imp->insert, i + 1, json_string_value(v));
        else
            return allot_errorf(
                err, ALLOT_EINVAL, "db import: line %ld: %s.%s must be %s%s", imp->line, t->name,
                c->name, c->type == 'i' ? "an integer" : "a string", c->nullable ? " or null" : "");
    }
    return 0;
}

static int import_row(struct importer *imp, json_t *o, struct allot_error *err)
{
    const char *name = json_string_value(json_object_get(o, "table"));
    const struct dump_table *t;
    int index;

    if (!name)
        return allot_errorf(err, ALLOT_EINVAL, "db import: line %ld: no \"table\"", imp->line);
    t = find_table(name, &index);
    if (!t)
        return allot_errorf(err, ALLOT_EINVAL, "db import: line %ld: unknown table '%s'", imp->line,
                            name);
    if (index < imp->table)
        return allot_errorf(err, ALLOT_EINVAL,
                            "db import: line %ld: table %s after %s (dump out of order)", imp->line,
                            name, dump_tables[imp->table].name);
    if (index != imp->table) {
        char sql[DUMP_SQL_MAX * 2];
        finalize_once(imp->insert);
        imp->insert = NULL;
        imp->table = index;
        if (insert_sql(t, sql, sizeof sql) < 0)
            return allot_errorf(err, ALLOT_EINTERNAL, "db import: SQL for %s too long", name);
        imp->insert = prepare_once(imp->st, sql, err);
        if (!imp->insert)
            return -1;
    } else {
        db_reset(imp->insert);
    }
    if (bind_row(imp, t, json_object_get(o, "row"), err) < 0)
        return -1;
    if (db_run(imp->insert, err) < 0)
        return allot_error_prefix(err, "db import: line %ld (%s)", imp->line, name);
    imp->counts[index]++;
    imp->total++;
    return 0;
}

/* The trailer's counts must equal what was imported (a cut file has no trailer). */
static int check_trailer(struct importer *imp, json_t *o, struct allot_error *err)
{
    json_t *tables = json_object_get(o, "tables");
    json_t *rows = json_object_get(o, "rows");
    if (!json_is_integer(rows) || json_integer_value(rows) != imp->total || !json_is_object(tables))
        return allot_errorf(err, ALLOT_EINVAL,
                            "db import: line %ld: the trailer counts %lld rows, %lld were read",
                            imp->line, (long long)json_integer_value(rows), (long long)imp->total);
    for (int i = 0; i < DUMP_NTABLES; i++) {
        json_t *n = json_object_get(tables, dump_tables[i].name);
        if (!json_is_integer(n) || json_integer_value(n) != imp->counts[i])
            return allot_errorf(err, ALLOT_EINVAL,
                                "db import: table %s: the trailer counts %lld rows, %lld were "
                                "read",
                                dump_tables[i].name, (long long)json_integer_value(n),
                                (long long)imp->counts[i]);
    }
    return 0;
}

static int check_header(store_t *st, json_t *o, long line, struct allot_error *err)
{
    json_t *fmt = json_object_get(o, "allot_dump");
    json_t *schema = json_object_get(o, "schema");
    if (!json_is_integer(fmt))
        return allot_errorf(err, ALLOT_EINVAL, "db import: line %ld: not an allot dump", line);
    if (json_integer_value(fmt) != DUMP_FORMAT)
        return allot_errorf(err, ALLOT_EINVAL, "db import: dump format %lld, this build reads %d",
                            (long long)json_integer_value(fmt), DUMP_FORMAT);
    if (!json_is_integer(schema) || json_integer_value(schema) != st->schema_current)
        return allot_errorf(err, ALLOT_EINVAL,
                            "db import: the dump is of schema %lld, the target is at %d: "
                            "upgrade the source database and export again",
                            (long long)json_integer_value(schema), st->schema_current);
    return 0;
}

struct first_problem {
    int n;
    char text[ALLOT_MSG_MAX];
};

static void on_problem(const char *problem, void *arg)
{
    struct first_problem *p = arg;
    if (p->n++ == 0)
        text_copy(p->text, sizeof p->text, problem);
}

/* PostgreSQL identities continue after the imported ids (SQLite's rowid does by itself). */
static int advance_identities(store_t *st, struct allot_error *err)
{
    char sql[DUMP_SQL_MAX];
    if (strcmp(st->backend, "pg") != 0)
        return 0;
    for (int i = 0; i < DUMP_NTABLES; i++) {
        const struct dump_table *t = &dump_tables[i];
        if (!t->identity)
            continue;
        int n = snprintf(sql, sizeof sql,
                         "SELECT setval(pg_get_serial_sequence('%s', '%s'), "
                         "COALESCE(MAX(%s), 0) + 1, false) FROM %s",
                         t->name, t->identity, t->identity, t->name);
        if (n < 0 || (size_t)n >= sizeof sql)
            return allot_errorf(err, ALLOT_EINTERNAL, "db import: SQL too long");
        if (db_exec(st->db, sql, err) < 0)
            return allot_error_prefix(err, "db import: identity of %s", t->name);
    }
    return 0;
}

int store_dump_import(store_t *st, FILE *in, int64_t *rows, const struct store_dump_progress *pg,
                      struct allot_error *err)
{
    struct importer imp = {.st = st, .table = -1};
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = -1, seen_header = 0, seen_end = 0;

    if (store_ready(st, "db import", err) < 0)
        return -1;
    if (st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "db import: called inside a transaction");
    if (store_begin(st, err) < 0)
        return -1;
    if (check_empty(st, err) < 0)
        goto out;
    while ((len = getline(&buf, &cap, in)) >= 0) {
        json_error_t jerr;
        json_t *o;
        int r;

        imp.line++;
        if (len > DUMP_LINE_MAX) {
            allot_errorf(err, ALLOT_ETOOBIG, "db import: line %ld is longer than %d bytes",
                         imp.line, DUMP_LINE_MAX);
            goto out;
        }
        if (seen_end) {
            allot_errorf(err, ALLOT_EINVAL, "db import: line %ld: data after the trailer",
                         imp.line);
            goto out;
        }
        o = json_loadb(buf, (size_t)len, 0, &jerr);
        if (!json_is_object(o)) {
            json_decref(o);
            allot_errorf(err, ALLOT_EINVAL, "db import: line %ld: not a JSON object (%s)", imp.line,
                         jerr.text);
            goto out;
        }
        if (!seen_header) {
            r = check_header(st, o, imp.line, err);
            seen_header = 1;
        } else if (json_object_get(o, "end")) {
            r = check_trailer(&imp, o, err);
            seen_end = 1;
        } else {
            r = import_row(&imp, o, err);
            if (r == 0 && pg)
                pg->fn(pg->arg, imp.total, -1);
        }
        json_decref(o);
        if (r < 0)
            goto out;
    }
    if (ferror(in)) {
        allot_errorf(err, ALLOT_EIO, "db import: read failed: %s", strerror(errno));
        goto out;
    }
    if (!seen_end) {
        allot_errorf(err, ALLOT_EINVAL,
                     "db import: the dump ends at line %ld without its trailer (truncated?)",
                     imp.line);
        goto out;
    }
    finalize_once(imp.insert);
    imp.insert = NULL;
    /* SQLite's allocation index of the ledger is derived: built here, not imported. */
    if (st->sqlite && store_ledger_index_pass(st, err) < 0)
        goto out;
    /* Balances are verified, not trusted: the cached sums must equal the ledger. */
    struct first_problem p = {0};
    int problems = store_check(st, on_problem, &p, err);
    if (problems < 0)
        goto out;
    if (problems > 0) {
        allot_errorf(err, ALLOT_EINVAL,
                     "db import: the dump is inconsistent (%d problem%s; "
                     "first: %s)",
                     problems, problems == 1 ? "" : "s", p.text);
        goto out;
    }
    if (advance_identities(st, err) < 0 || store_commit(st, err) < 0)
        goto out;
    if (rows)
        *rows = imp.total;
    rc = 0;
out:
    finalize_once(imp.insert);
    free(buf);
    if (rc < 0 && st->in_tx)
        store_rollback(st);
    return rc;
}
