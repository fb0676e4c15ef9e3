/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_ref.c - reference data of store.h: clusters, accounts, users, associations, QOS,
 * partitions and limits.
 *
 * The store re-validates everything it writes (names, ranges, existence, the account tree's
 * shape) so the database stays consistent whoever calls it; errors name the field.  Account
 * parents are stored by id, so reads join the parent's name back in.  The depth-first account
 * listing is built in memory (sibling order by name) rather than by a path-string ORDER BY,
 * whose result would depend on the database's collation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "libstore/store_int.h"

/* ---- SQL ---- */

static const char SQL_CLUSTER_ADD[] = "INSERT INTO clusters (name, created_s) VALUES ($1, $2)";
static const char SQL_CLUSTER_GET[] = "SELECT 1 FROM clusters WHERE name = $1";
static const char SQL_CLUSTER_USED[] = "SELECT (SELECT COUNT(*) FROM assocs WHERE cluster = $1) + "
                                       "(SELECT COUNT(*) FROM partitions WHERE cluster = $1) + "
                                       "(SELECT COUNT(*) FROM allocations WHERE cluster = $1)";
static const char SQL_CLUSTER_REMOVE[] = "DELETE FROM clusters WHERE name = $1";
static const char SQL_CLUSTER_LIST[] = "SELECT name FROM clusters ORDER BY name";

#define ACCOUNT_COLS                                                                               \
    "a.id, a.name, COALESCE(p.name, ''), a.shares, a.description, a.organization, a.created_s, "   \
    "a.qos, a.default_qos, a.coordinators"
static const char SQL_ACCOUNT_ID[] = "SELECT id FROM accounts WHERE name = $1";
static const char SQL_ACCOUNT_ADD[] =
    "INSERT INTO accounts (name, parent_id, shares, description, organization, created_s, qos, "
    "default_qos, coordinators) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id";
static const char SQL_ACCOUNT_GET[] = "SELECT " ACCOUNT_COLS " FROM accounts a "
                                      "LEFT JOIN accounts p ON p.id = a.parent_id "
                                      "WHERE a.name = $1";
static const char SQL_ACCOUNT_MODIFY[] = "UPDATE accounts SET parent_id = $1, shares = $2, "
                                         "description = $3, organization = $4, qos = $5, "
                                         "default_qos = $6, coordinators = $7 WHERE id = $8";
static const char SQL_ACCOUNT_USED[] =
    "SELECT (SELECT COUNT(*) FROM accounts WHERE parent_id = $1), "
    "(SELECT COUNT(*) FROM assocs WHERE account_id = $1), "
    "(SELECT COUNT(*) FROM allocations WHERE account_id = $1)";
static const char SQL_ACCOUNT_REMOVE[] = "DELETE FROM accounts WHERE id = $1";
static const char SQL_ACCOUNT_LIST[] = "SELECT " ACCOUNT_COLS " FROM accounts a "
                                       "LEFT JOIN accounts p ON p.id = a.parent_id "
                                       "ORDER BY a.name";
/* The depth bound stops the walk should the tree ever contain a cycle. */
static const char SQL_ACCOUNT_ANCESTORS[] =
    "WITH RECURSIVE chain(id, depth) AS ("
    " SELECT id, 0 FROM accounts WHERE name = $1"
    " UNION ALL"
    " SELECT a.parent_id, c.depth + 1 FROM chain c JOIN accounts a ON a.id = c.id"
    " WHERE a.parent_id IS NOT NULL AND c.depth < 1000)"
    " SELECT " ACCOUNT_COLS " FROM chain c JOIN accounts a ON a.id = c.id"
    " LEFT JOIN accounts p ON p.id = a.parent_id ORDER BY c.depth";

#define USER_COLS "name, uid, default_account, created_s"
static const char SQL_USER_ADD[] =
    "INSERT INTO users (name, uid, default_account, created_s) VALUES ($1, $2, $3, $4)";
static const char SQL_USER_GET[] = "SELECT " USER_COLS " FROM users WHERE name = $1";
static const char SQL_USER_MODIFY[] =
    "UPDATE users SET uid = $1, default_account = $2 WHERE name = $3";
static const char SQL_USER_USED[] = "SELECT COUNT(*) FROM assocs WHERE user_name = $1";
static const char SQL_USER_REMOVE[] = "DELETE FROM users WHERE name = $1";
static const char SQL_USER_LIST[] = "SELECT " USER_COLS " FROM users ORDER BY name";
static const char SQL_USER_ASSOC_ACCOUNT[] =
    "SELECT COUNT(*) FROM assocs s JOIN accounts ac ON ac.id = s.account_id "
    "WHERE s.user_name = $1 AND ac.name = $2";

#define ASSOC_COLS                                                                                 \
    "s.id, s.cluster, ac.name, s.user_name, s.partition_name, s.shares, s.default_qos, s.qos"
static const char SQL_ASSOC_ADD[] =
    "INSERT INTO assocs (cluster, account_id, user_name, partition_name, shares, default_qos, "
    "qos) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id";
static const char SQL_ASSOC_GET[] =
    "SELECT " ASSOC_COLS " FROM assocs s JOIN accounts ac ON ac.id = s.account_id "
    "WHERE s.cluster = $1 AND ac.name = $2 AND s.user_name = $3 AND s.partition_name = $4";
static const char SQL_ASSOC_MODIFY[] =
    "UPDATE assocs SET shares = $1, default_qos = $2, qos = $3 WHERE id = $4";
static const char SQL_ASSOC_REMOVE[] = "DELETE FROM assocs WHERE id = $1";
static const char SQL_ASSOC_LIST[] =
    "SELECT " ASSOC_COLS " FROM assocs s JOIN accounts ac ON ac.id = s.account_id "
    "WHERE ($1 = '' OR s.cluster = $1) AND ($2 = '' OR ac.name = $2) "
    "AND ($3 = '' OR s.user_name = $3) "
    "ORDER BY s.cluster, ac.name, s.user_name, s.partition_name";
/* Remaining associations of a user with an account (after removing one). */
static const char SQL_ASSOC_DEFAULT_USED[] =
    "SELECT COUNT(*) FROM users u WHERE u.name = $1 AND u.default_account = $2 AND NOT EXISTS "
    "(SELECT 1 FROM assocs s JOIN accounts ac ON ac.id = s.account_id "
    "WHERE s.user_name = u.name AND ac.name = u.default_account) AND EXISTS "
    "(SELECT 1 FROM assocs s WHERE s.user_name = u.name)";

#define QOS_COLS "name, priority, flags, usage_factor_ppm, limit_factor_ppm, description"
static const char SQL_QOS_ADD[] = "INSERT INTO qos (" QOS_COLS ") VALUES ($1, $2, $3, $4, $5, $6)";
static const char SQL_QOS_GET[] = "SELECT " QOS_COLS " FROM qos WHERE name = $1";
static const char SQL_QOS_MODIFY[] =
    "UPDATE qos SET priority = $1, flags = $2, usage_factor_ppm = $3, limit_factor_ppm = $4, "
    "description = $5 WHERE name = $6";
static const char SQL_QOS_REMOVE[] = "DELETE FROM qos WHERE name = $1";
static const char SQL_QOS_LIST[] = "SELECT " QOS_COLS " FROM qos ORDER BY name";
/* Rows that may name a QOS: an association's qos column is a comma list, matched in C
 * (qos_list_has) because LIKE would read the '_' names may hold as a wildcard.  Column 2:
 * 0 = association, 1 = partition. */
static const char SQL_QOS_USED[] =
    "SELECT default_qos, qos, 0 FROM assocs WHERE default_qos = $1 OR qos <> '' "
    "UNION ALL SELECT default_qos, qos, 0 FROM accounts WHERE default_qos = $1 OR qos <> '' "
    "UNION ALL SELECT qos, '', 1 FROM partitions WHERE qos = $1";

#define PART_COLS                                                                                  \
    "cluster, name, resource, billing_weights, max_tres, qos, default_time_s, max_time_s"
static const char SQL_PART_ADD[] =
    "INSERT INTO partitions (" PART_COLS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
static const char SQL_PART_GET[] =
    "SELECT " PART_COLS " FROM partitions WHERE cluster = $1 AND name = $2";
static const char SQL_PART_MODIFY[] =
    "UPDATE partitions SET resource = $1, billing_weights = $2, max_tres = $3, qos = $4, "
    "default_time_s = $5, max_time_s = $6 WHERE cluster = $7 AND name = $8";
static const char SQL_PART_REMOVE[] = "DELETE FROM partitions WHERE cluster = $1 AND name = $2";
/* Associations that name a partition (an association's partition must exist). */
static const char SQL_PART_USED[] =
    "SELECT COUNT(*), MIN(a.name || ':' || s.user_name) FROM assocs s "
    "JOIN accounts a ON a.id = s.account_id WHERE s.cluster = $1 AND s.partition_name = $2";
static const char SQL_PART_LIST[] = "SELECT " PART_COLS " FROM partitions "
                                    "WHERE ($1 = '' OR cluster = $1) ORDER BY cluster, name";

static const char SQL_LIMIT_SET[] =
    "INSERT INTO limits (scope, owner, name, value) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (scope, owner, name) DO UPDATE SET value = excluded.value";
static const char SQL_LIMIT_DELETE[] =
    "DELETE FROM limits WHERE scope = $1 AND owner = $2 AND name = $3";
static const char SQL_LIMIT_LIST[] =
    "SELECT scope, owner, name, value FROM limits WHERE scope = $1 ORDER BY owner, name";
static const char SQL_LIMIT_LIST_OWNER[] = "SELECT scope, owner, name, value FROM limits "
                                           "WHERE scope = $1 AND owner = $2 ORDER BY name";
static const char SQL_LIMIT_DROP_OWNER[] = "DELETE FROM limits WHERE scope = $1 AND owner = $2";

/* ---- helpers ---- */

static int64_t now_or(int64_t t)
{
    return t > 0 ? t : (int64_t)time(NULL);
}

/* Run a single-row COUNT-like query whose first column is read into *out. */
static int query_int(db_stmt_t *s, int64_t *out, struct allot_error *err)
{
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    *out = rc == 1 ? db_column_int64(s, 0) : 0;
    db_reset(s);
    return 0;
}

/* One entity's statement and its row decoder (which fills the struct of that entity). */
struct ref_query {
    int id;
    const char *sql;
    void (*decode)(db_stmt_t *s, void *row);
};

/* The row q finds for keys[0..n), decoded into row: 0, 1 when there is none, or -1. */
static int ref_get(store_t *st, const struct ref_query *q, const char *const *keys, int n,
                   void *row, struct allot_error *err)
{
    db_stmt_t *s;
    int rc = store_first_row(st, q->id, q->sql, keys, n, &s, err);
    if (rc != 1)
        return rc < 0 ? -1 : 1;
    q->decode(s, row);
    db_reset(s);
    return 0;
}

/* Run the statement (id, sql) with the text parameters keys[0..n): a remove.  0 or -1. */
static int ref_exec(store_t *st, int id, const char *sql, const char *const *keys, int n,
                    struct allot_error *err)
{
    db_stmt_t *s = store_stmt_texts(st, id, sql, keys, n, err);
    return s ? db_run(s, err) : -1;
}

/* The first column of the statement's one row with keys[0..n) into *out (0 without a row):
 * how many rows name an object about to be removed.  0 or -1. */
static int ref_count(store_t *st, int id, const char *sql, const char *const *keys, int n,
                     int64_t *out, struct allot_error *err)
{
    db_stmt_t *s = store_stmt_texts(st, id, sql, keys, n, err);
    return s ? query_int(s, out, err) : -1;
}

/* A listing: each row of q decoded into a union ref_row and handed to the callback of its
 * entity (one member of cb; call picks it). */
union ref_row {
    char cluster[ALLOT_NAME_MAX];
    struct user user;
    struct assoc assoc;
    struct qos qos;
    struct partition partition;
    struct limit_value limit;
};
struct ref_walk {
    const struct ref_query *q;
    int (*call)(const struct ref_walk *w, union ref_row *row);
    union {
        store_cluster_f cluster;
        store_user_f user;
        store_assoc_f assoc;
        store_qos_f qos;
        store_partition_f partition;
        store_limit_f limit;
    } cb;
    void *arg;
    enum limit_scope scope; /* of a limit listing */
};

static int ref_row(db_stmt_t *s, void *ctx)
{
    const struct ref_walk *w = ctx;
    union ref_row row;
    w->q->decode(s, &row);
    return w->call(w, &row);
}

/* The verb `what` (a read) listing w's rows for keys[0..n). */
static int ref_list(store_t *st, const char *what, struct ref_walk *w, const char *const *keys,
                    int n, struct allot_error *err)
{
    if (store_ready(st, what, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt_texts(st, w->q->id, w->q->sql, keys, n, err);
    return s ? store_walk(s, ref_row, w, err) : -1;
}

/* Replace a driver's unique-violation text by one naming the object. */
static int exists_error(struct allot_error *err, const char *what, const char *name)
{
    if (err && err->code == ALLOT_EEXIST)
        return allot_errorf(err, ALLOT_EEXIST, "%s '%s' already exists", what, name);
    return -1;
}

int store_cluster_exists(store_t *st, const char *name, struct allot_error *err)
{
    db_stmt_t *s;
    int rc = store_first_row(st, STMT_CLUSTER_GET, SQL_CLUSTER_GET, &name, 1, &s, err);
    if (rc == 1)
        db_reset(s);
    return rc;
}

int store_account_id(store_t *st, const char *field, const char *name, int64_t *id,
                     struct allot_error *err)
{
    db_stmt_t *s;
    int rc = store_first_row(st, STMT_ACCOUNT_ID, SQL_ACCOUNT_ID, &name, 1, &s, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_ENOENT, "%s: account '%s' does not exist", field, name);
    *id = db_column_int64(s, 0);
    db_reset(s);
    return 0;
}

static int need_cluster(store_t *st, const char *name, struct allot_error *err)
{
    int rc = store_cluster_exists(st, name, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_ENOENT, "cluster: '%s' does not exist", name);
    return 0;
}

static int drop_limits(store_t *st, enum limit_scope scope, const char *owner,
                       struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_LIMIT_DROP_OWNER, SQL_LIMIT_DROP_OWNER, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, model_limit_scope_name(scope));
    db_bind_text(s, 2, owner);
    return db_run(s, err);
}

/* ---- clusters ---- */

int store_cluster_add(store_t *st, const char *name, struct allot_error *err)
{
    if (store_ready_write(st, "cluster add", err) < 0 || model_check_name("name", name, 0, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_CLUSTER_ADD, SQL_CLUSTER_ADD, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, name);
    db_bind_int64(s, 2, (int64_t)time(NULL));
    if (db_run(s, err) < 0)
        return exists_error(err, "cluster", name);
    return 0;
}

int store_cluster_remove(store_t *st, const char *name, struct allot_error *err)
{
    if (store_ready_write(st, "cluster remove", err) < 0 ||
        model_check_name("name", name, 0, err) < 0 || need_cluster(st, name, err) < 0)
        return -1;
    int64_t used;
    if (ref_count(st, STMT_CLUSTER_USED, SQL_CLUSTER_USED, &name, 1, &used, err) < 0)
        return -1;
    if (used > 0)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "cluster '%s' is in use by %lld associations, partitions or "
                            "allocations",
                            name, (long long)used);
    return ref_exec(st, STMT_CLUSTER_REMOVE, SQL_CLUSTER_REMOVE, &name, 1, err);
}

static void read_cluster(db_stmt_t *s, void *row)
{
    db_column_copy(s, 0, row, ALLOT_NAME_MAX);
}

static int cluster_call(const struct ref_walk *w, union ref_row *row)
{
    return w->cb.cluster(row->cluster, w->arg);
}

int store_cluster_list(store_t *st, store_cluster_f cb, void *arg, struct allot_error *err)
{
    static const struct ref_query q = {STMT_CLUSTER_LIST, SQL_CLUSTER_LIST, read_cluster};
    struct ref_walk w = {.q = &q, .call = cluster_call, .cb.cluster = cb, .arg = arg};
    return ref_list(st, "cluster list", &w, NULL, 0, err);
}

/* ---- accounts ---- */

static int qos_fields_check(store_t *st, const char *list, const char *dflt,
                            struct allot_error *err);
static int coordinators_check(store_t *st, const char *list, struct allot_error *err);

static void read_account(db_stmt_t *s, void *row)
{
    struct account *a = row;
    memset(a, 0, sizeof *a);
    a->id = db_column_int64(s, 0);
    db_column_copy(s, 1, a->name, sizeof a->name);
    db_column_copy(s, 2, a->parent, sizeof a->parent);
    a->shares = db_column_int64(s, 3);
    db_column_copy(s, 4, a->description, sizeof a->description);
    db_column_copy(s, 5, a->organization, sizeof a->organization);
    a->created_s = db_column_int64(s, 6);
    db_column_copy(s, 7, a->qos, sizeof a->qos);
    db_column_copy(s, 8, a->default_qos, sizeof a->default_qos);
    db_column_copy(s, 9, a->coordinators, sizeof a->coordinators);
}

/* Validate the fields add and modify share; "" parent means root. */
static int account_validate(const struct account *a, const char **parent, struct allot_error *err)
{
    char tmp[ALLOT_TEXT_MAX];
    if (model_check_name("name", a->name, 0, err) < 0 ||
        model_check_name("parent", a->parent, 1, err) < 0 ||
        model_check_name("organization", a->organization, 1, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "description", a->description, err) < 0)
        return -1;
    if (a->shares < 0 || a->shares > UINT32_MAX) /* Slurm's fairshare is a uint32 */
        return allot_errorf(err, ALLOT_EINVAL, "shares: must be 0..4294967295");
    *parent = a->parent[0] ? a->parent : "root";
    return 0;
}

int store_account_add(store_t *st, struct account *a, struct allot_error *err)
{
    const char *parent;
    int64_t parent_id;
    if (store_ready_write(st, "account add", err) < 0 || account_validate(a, &parent, err) < 0 ||
        qos_fields_check(st, a->qos, a->default_qos, err) < 0 ||
        coordinators_check(st, a->coordinators, err) < 0)
        return -1;
    if (store_account_id(st, "parent", parent, &parent_id, err) < 0) {
        if (err && err->code == ALLOT_ENOENT)
            err->code = ALLOT_EINVAL; /* store.h: a missing parent is invalid input */
        return -1;
    }
    db_stmt_t *s = store_stmt(st, STMT_ACCOUNT_ADD, SQL_ACCOUNT_ADD, err);
    if (!s)
        return -1;
    int64_t created = now_or(a->created_s);
    db_bind_text(s, 1, a->name);
    db_bind_int64(s, 2, parent_id);
    db_bind_int64(s, 3, a->shares);
    db_bind_text(s, 4, a->description);
    db_bind_text(s, 5, a->organization);
    db_bind_int64(s, 6, created);
    db_bind_text(s, 7, a->qos);
    db_bind_text(s, 8, a->default_qos);
    db_bind_text(s, 9, a->coordinators);
    int rc = db_step(s, err);
    if (rc < 0)
        return exists_error(err, "account", a->name);
    if (rc == 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "account add: no id returned");
    int64_t id = db_column_int64(s, 0);
    db_reset(s);
    a->id = id;
    a->created_s = created;
    if (!a->parent[0])
        memcpy(a->parent, "root", 5);
    return 0;
}

int store_account_get(store_t *st, const char *name, struct account *out, struct allot_error *err)
{
    static const struct ref_query q = {STMT_ACCOUNT_GET, SQL_ACCOUNT_GET, read_account};
    if (store_ready(st, "account get", err) < 0 || model_check_name("name", name, 0, err) < 0)
        return -1;
    int rc = ref_get(st, &q, &name, 1, out, err);
    if (rc == 1)
        return allot_errorf(err, ALLOT_ENOENT, "account '%s' does not exist", name);
    return rc;
}

int store_account_ancestors(store_t *st, const char *name, struct account *out, int max, int *n,
                            struct allot_error *err)
{
    if (store_ready(st, "account ancestors", err) < 0 || model_check_name("name", name, 0, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_ACCOUNT_ANCESTORS, SQL_ACCOUNT_ANCESTORS, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, name);
    int rc, k = 0;
    while ((rc = db_step(s, err)) == 1) {
        if (k >= max) {
            db_reset(s);
            return allot_errorf(err, ALLOT_ETOOBIG, "account '%s': more than %d ancestors", name,
                                max);
        }
        read_account(s, &out[k++]);
    }
    db_reset(s);
    if (rc < 0)
        return -1;
    if (k == 0)
        return allot_errorf(err, ALLOT_ENOENT, "account '%s' does not exist", name);
    *n = k;
    return 0;
}

int store_account_modify(store_t *st, const struct account *a, struct allot_error *err)
{
    const char *parent;
    struct account cur;
    if (store_ready_write(st, "account modify", err) < 0 || account_validate(a, &parent, err) < 0 ||
        qos_fields_check(st, a->qos, a->default_qos, err) < 0 ||
        coordinators_check(st, a->coordinators, err) < 0 ||
        store_account_get(st, a->name, &cur, err) < 0)
        return -1;
    int is_root = strcmp(a->name, "root") == 0;
    int64_t parent_id = 0;
    if (is_root) {
        if (a->parent[0])
            return allot_errorf(err, ALLOT_ECONFLICT, "parent: the root account has no parent");
    } else {
        if (store_account_id(st, "parent", parent, &parent_id, err) < 0) {
            if (err && err->code == ALLOT_ENOENT)
                err->code = ALLOT_EINVAL;
            return -1;
        }
        /* A cycle: the new parent is the account itself or one of its descendants, i.e.
         * the account appears on the new parent's chain to root. */
        db_stmt_t *s = store_stmt(st, STMT_ACCOUNT_ANCESTORS, SQL_ACCOUNT_ANCESTORS, err);
        if (!s)
            return -1;
        db_bind_text(s, 1, parent);
        int rc, cycle = 0;
        while ((rc = db_step(s, err)) == 1)
            if (db_column_int64(s, 0) == cur.id)
                cycle = 1;
        db_reset(s);
        if (rc < 0)
            return -1;
        if (cycle)
            return allot_errorf(err, ALLOT_ECONFLICT, "parent: '%s' is '%s' or below it (cycle)",
                                parent, a->name);
    }
    db_stmt_t *s = store_stmt(st, STMT_ACCOUNT_MODIFY, SQL_ACCOUNT_MODIFY, err);
    if (!s)
        return -1;
    if (is_root)
        db_bind_null(s, 1);
    else
        db_bind_int64(s, 1, parent_id);
    db_bind_int64(s, 2, a->shares);
    db_bind_text(s, 3, a->description);
    db_bind_text(s, 4, a->organization);
    db_bind_text(s, 5, a->qos);
    db_bind_text(s, 6, a->default_qos);
    db_bind_text(s, 7, a->coordinators);
    db_bind_int64(s, 8, cur.id);
    return db_run(s, err);
}

int store_account_remove(store_t *st, const char *name, struct allot_error *err)
{
    int64_t id;
    if (store_ready_write(st, "account remove", err) < 0 ||
        model_check_name("name", name, 0, err) < 0)
        return -1;
    if (strcmp(name, "root") == 0)
        return allot_errorf(err, ALLOT_ECONFLICT, "account 'root' cannot be removed");
    if (store_account_id(st, "name", name, &id, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_ACCOUNT_USED, SQL_ACCOUNT_USED, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, id);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    int64_t children = db_column_int64(s, 0), assocs = db_column_int64(s, 1),
            allocs = db_column_int64(s, 2);
    db_reset(s);
    if (children || assocs || allocs)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "account '%s' still has %lld sub-accounts, %lld associations and "
                            "%lld allocations",
                            name, (long long)children, (long long)assocs, (long long)allocs);
    if (drop_limits(st, LIMIT_SCOPE_ACCOUNT, name, err) < 0)
        return -1;
    s = store_stmt(st, STMT_ACCOUNT_REMOVE, SQL_ACCOUNT_REMOVE, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, id);
    return db_run(s, err);
}

static int cmp_account_name(const void *a, const void *b)
{
    return strcmp(((const struct account *)a)->name, ((const struct account *)b)->name);
}

int store_account_list(store_t *st, store_account_f cb, void *arg, struct allot_error *err)
{
    if (store_ready(st, "account list", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_ACCOUNT_LIST, SQL_ACCOUNT_LIST, err);
    if (!s)
        return -1;
    struct account *all = NULL;
    int *first = NULL, *next = NULL, *stack = NULL;
    size_t n = 0, cap = 0;
    int rc, ret = -1;
    while ((rc = db_step(s, err)) == 1) {
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            struct account *p = realloc(all, ncap * sizeof *all);
            if (!p) {
                allot_errorf(err, ALLOT_ENOMEM, "account list: out of memory");
                goto out;
            }
            all = p;
            cap = ncap;
        }
        read_account(s, &all[n++]);
    }
    db_reset(s);
    if (rc < 0)
        goto out;
    /* Rows arrive sorted by name in SQL, but sort again in C (bytewise) so the bsearch below
     * never depends on the database's collation. */
    if (n > 0)
        qsort(all, n, sizeof *all, cmp_account_name);
    first = malloc((n + 1) * sizeof *first);
    next = malloc((n + 1) * sizeof *next);
    stack = malloc((n + 1) * sizeof *stack);
    if (!first || !next || !stack) {
        allot_errorf(err, ALLOT_ENOMEM, "account list: out of memory");
        goto out;
    }
    /* Children lists: appending in name order keeps siblings sorted.  tail[] reuses stack. */
    int *tail = stack;
    for (size_t i = 0; i < n; i++)
        first[i] = next[i] = tail[i] = -1;
    for (size_t i = 0; i < n; i++) {
        struct account key;
        memcpy(key.name, all[i].parent, sizeof key.name);
        struct account *p =
            all[i].parent[0] ? bsearch(&key, all, n, sizeof *all, cmp_account_name) : NULL;
        if (!p)
            continue; /* root (or an orphan, reported by store_check) */
        size_t pi = (size_t)(p - all);
        if (tail[pi] < 0)
            first[pi] = (int)i;
        else
            next[tail[pi]] = (int)i;
        tail[pi] = (int)i;
    }
    /* Depth-first from each root in name order, with an explicit stack of next siblings. */
    ret = 0;
    for (size_t r = 0; r < n && ret == 0; r++) {
        struct account key;
        memcpy(key.name, all[r].parent, sizeof key.name);
        if (all[r].parent[0] && bsearch(&key, all, n, sizeof *all, cmp_account_name))
            continue;
        int sp = 0;
        stack[sp++] = (int)r;
        while (sp > 0 && ret == 0) {
            int i = stack[--sp];
            ret = cb(&all[i], arg);
            if (ret)
                break;
            /* Push children in reverse so the first child is visited first. */
            int base = sp;
            for (int c = first[i]; c >= 0; c = next[c])
                stack[sp++] = c;
            for (int lo = base, hi = sp - 1; lo < hi; lo++, hi--) {
                int t = stack[lo];
                stack[lo] = stack[hi];
                stack[hi] = t;
            }
        }
    }
out:
    free(all);
    free(first);
    free(next);
    free(stack);
    return ret;
}

/* ---- users ---- */

static void read_user(db_stmt_t *s, void *row)
{
    struct user *u = row;
    memset(u, 0, sizeof *u);
    db_column_copy(s, 0, u->name, sizeof u->name);
    u->uid = db_column_int64(s, 1);
    db_column_copy(s, 2, u->default_account, sizeof u->default_account);
    u->created_s = db_column_int64(s, 3);
}

static int user_validate(store_t *st, const struct user *u, struct allot_error *err)
{
    if (model_check_name("name", u->name, 0, err) < 0 ||
        model_check_name("default_account", u->default_account, 1, err) < 0)
        return -1;
    if (u->uid < -1 || u->uid > INT64_C(4294967295))
        return allot_errorf(err, ALLOT_EINVAL, "uid: must be -1 (unknown) or 0..4294967295");
    if (u->default_account[0]) {
        int64_t id;
        if (store_account_id(st, "default_account", u->default_account, &id, err) < 0)
            return -1;
        /* With associations, the default must be one of their accounts (store.h). */
        int64_t nassoc, nwith;
        db_stmt_t *s = store_stmt(st, STMT_USER_USED, SQL_USER_USED, err);
        if (!s)
            return -1;
        db_bind_text(s, 1, u->name);
        if (query_int(s, &nassoc, err) < 0)
            return -1;
        if (nassoc > 0) {
            s = store_stmt(st, STMT_USER_ASSOC_ACCOUNT, SQL_USER_ASSOC_ACCOUNT, err);
            if (!s)
                return -1;
            db_bind_text(s, 1, u->name);
            db_bind_text(s, 2, u->default_account);
            if (query_int(s, &nwith, err) < 0)
                return -1;
            if (nwith == 0)
                return allot_errorf(err, ALLOT_EINVAL,
                                    "default_account: user '%s' has no association with "
                                    "account '%s'",
                                    u->name, u->default_account);
        }
    }
    return 0;
}

int store_user_add(store_t *st, const struct user *u, struct allot_error *err)
{
    if (store_ready_write(st, "user add", err) < 0 || user_validate(st, u, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_USER_ADD, SQL_USER_ADD, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, u->name);
    db_bind_int64(s, 2, u->uid);
    db_bind_text(s, 3, u->default_account);
    db_bind_int64(s, 4, now_or(u->created_s));
    if (db_run(s, err) < 0)
        return exists_error(err, "user", u->name);
    return 0;
}

static int user_get(store_t *st, const char *name, struct user *out, struct allot_error *err)
{
    static const struct ref_query q = {STMT_USER_GET, SQL_USER_GET, read_user};
    int rc = ref_get(st, &q, &name, 1, out, err);
    if (rc == 1)
        return allot_errorf(err, ALLOT_ENOENT, "user '%s' does not exist", name);
    return rc;
}

int store_user_get(store_t *st, const char *name, struct user *out, struct allot_error *err)
{
    if (store_ready(st, "user get", err) < 0 || model_check_name("name", name, 0, err) < 0)
        return -1;
    return user_get(st, name, out, err);
}

int store_user_modify(store_t *st, const struct user *u, struct allot_error *err)
{
    struct user cur;
    if (store_ready_write(st, "user modify", err) < 0 || user_validate(st, u, err) < 0 ||
        user_get(st, u->name, &cur, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_USER_MODIFY, SQL_USER_MODIFY, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, u->uid);
    db_bind_text(s, 2, u->default_account);
    db_bind_text(s, 3, u->name);
    return db_run(s, err);
}

struct coord_find {
    const char *user;
    char account[ALLOT_NAME_MAX]; /* the first account user coordinates; "" = none */
};

static int qos_list_has(const char *list, const char *name);

static int on_coord_find(const struct account *a, void *arg)
{
    struct coord_find *cf = arg;
    if (!cf->account[0] && qos_list_has(a->coordinators, cf->user))
        memcpy(cf->account, a->name, sizeof cf->account);
    return 0;
}

int store_user_remove(store_t *st, const char *name, struct allot_error *err)
{
    struct user cur;
    int64_t n;
    if (store_ready_write(st, "user remove", err) < 0 ||
        model_check_name("name", name, 0, err) < 0 || user_get(st, name, &cur, err) < 0)
        return -1;
    if (ref_count(st, STMT_USER_USED, SQL_USER_USED, &name, 1, &n, err) < 0)
        return -1;
    if (n > 0)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "user '%s' still has %lld associations: remove them first", name,
                            (long long)n);
    /* A name left in a coordinators list would hand the account to whoever is added
     * under that name next. */
    struct coord_find cf = {.user = name};
    if (store_account_list(st, on_coord_find, &cf, err) < 0)
        return -1;
    if (cf.account[0])
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "user '%s' coordinates account '%s': take it out of the account's "
                            "coordinators first",
                            name, cf.account);
    return ref_exec(st, STMT_USER_REMOVE, SQL_USER_REMOVE, &name, 1, err);
}

static int user_call(const struct ref_walk *w, union ref_row *row)
{
    return w->cb.user(&row->user, w->arg);
}

int store_user_list(store_t *st, store_user_f cb, void *arg, struct allot_error *err)
{
    static const struct ref_query q = {STMT_USER_LIST, SQL_USER_LIST, read_user};
    struct ref_walk w = {.q = &q, .call = user_call, .cb.user = cb, .arg = arg};
    return ref_list(st, "user list", &w, NULL, 0, err);
}

/* ---- associations ---- */

static void read_assoc(db_stmt_t *s, void *row)
{
    struct assoc *a = row;
    memset(a, 0, sizeof *a);
    a->id = db_column_int64(s, 0);
    db_column_copy(s, 1, a->cluster, sizeof a->cluster);
    db_column_copy(s, 2, a->account, sizeof a->account);
    db_column_copy(s, 3, a->user, sizeof a->user);
    db_column_copy(s, 4, a->partition, sizeof a->partition);
    a->shares = db_column_int64(s, 5);
    db_column_copy(s, 6, a->default_qos, sizeof a->default_qos);
    db_column_copy(s, 7, a->qos, sizeof a->qos);
}

static int assoc_key_check(const char *cluster, const char *account, const char *user,
                           const char *partition, struct allot_error *err)
{
    if (model_check_name("cluster", cluster, 0, err) < 0 ||
        model_check_name("account", account, 0, err) < 0 ||
        model_check_name("user", user, 0, err) < 0 ||
        model_check_name("partition", partition, 1, err) < 0)
        return -1;
    return 0;
}

static int qos_lookup(store_t *st, const char *name, struct qos *out, struct allot_error *err);

/* The next item of a comma list at *p: sets *item and *len, moves *p past the item's comma;
 * 0 at the end of the list. */
static int comma_next(const char **p, const char **item, size_t *len)
{
    if (!**p)
        return 0;
    *item = *p;
    *len = strcspn(*p, ",");
    *p += *len;
    if (**p == ',')
        (*p)++;
    return 1;
}

/* Is name one of the comma-separated QOS names of list? */
static int qos_list_has(const char *list, const char *name)
{
    size_t n = strlen(name), l;
    for (const char *p = list, *it; comma_next(&p, &it, &l);)
        if (l == n && strncmp(it, name, n) == 0)
            return 1;
    return 0;
}

/* Every QOS an association (of a user or an account) names must exist (as partition qos=
 * must), and, as sacctmgr insists, a default QOS must be one of the allowed ones when the
 * list is set. */
static int qos_fields_check(store_t *st, const char *list, const char *dflt,
                            struct allot_error *err)
{
    char tmp[ALLOT_TEXT_MAX];
    struct qos q;
    if (model_check_name("default_qos", dflt, 1, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "qos", list, err) < 0)
        return -1;
    size_t l;
    for (const char *p = list, *it; comma_next(&p, &it, &l);) {
        char name[ALLOT_NAME_MAX];
        if (l >= sizeof name)
            return allot_errorf(err, ALLOT_EINVAL, "qos: name longer than %d characters",
                                ALLOT_NAME_MAX - 1);
        memcpy(name, it, l);
        name[l] = '\0';
        if (model_check_name("qos", name, 0, err) < 0)
            return -1;
        if (qos_lookup(st, name, &q, err) < 0)
            return allot_error_prefix(err, "qos");
    }
    if (dflt[0]) {
        if (qos_lookup(st, dflt, &q, err) < 0)
            return allot_error_prefix(err, "default_qos");
        if (list[0] && !qos_list_has(list, dflt))
            return allot_errorf(err, ALLOT_EINVAL,
                                "default_qos: '%s' is not in the association's qos list '%s'", dflt,
                                list);
    }
    return 0;
}

/* An account's coordinators: known users, each named once (as sacctmgr add coordinator
 * insists on existing users). */
static int coordinators_check(store_t *st, const char *list, struct allot_error *err)
{
    char tmp[ALLOT_TEXT_MAX];
    if (model_copy_text(tmp, sizeof tmp, "coordinators", list, err) < 0)
        return -1;
    size_t l;
    for (const char *p = list, *it; comma_next(&p, &it, &l);) {
        char name[ALLOT_NAME_MAX];
        if (l >= sizeof name)
            return allot_errorf(err, ALLOT_EINVAL, "coordinators: name longer than %d characters",
                                ALLOT_NAME_MAX - 1);
        memcpy(name, it, l);
        name[l] = '\0';
        struct user u;
        if (model_check_name("coordinators", name, 0, err) < 0)
            return -1;
        if (user_get(st, name, &u, err) < 0) {
            if (err && err->code == ALLOT_ENOENT)
                err->code = ALLOT_EINVAL; /* store.h: a missing referent is invalid input */
            return allot_error_prefix(err, "coordinators");
        }
        /* A name seen earlier in the list: it + l is past this item. */
        char probe[ALLOT_TEXT_MAX];
        size_t before = (size_t)(it - list);
        memcpy(probe, list, before);
        probe[before] = '\0';
        if (qos_list_has(probe, name))
            return allot_errorf(err, ALLOT_EINVAL, "coordinators: '%s' is named twice", name);
    }
    return 0;
}

static int assoc_fields_check(store_t *st, const struct assoc *a, struct allot_error *err)
{
    if (a->shares < 0 || a->shares > UINT32_MAX) /* Slurm's fairshare is a uint32 */
        return allot_errorf(err, ALLOT_EINVAL, "shares: must be 0..4294967295");
    return qos_fields_check(st, a->qos, a->default_qos, err);
}

static int assoc_lookup(store_t *st, const char *cluster, const char *account, const char *user,
                        const char *partition, struct assoc *out, struct allot_error *err)
{
    static const struct ref_query q = {STMT_ASSOC_GET, SQL_ASSOC_GET, read_assoc};
    const char *key[] = {cluster, account, user, partition};
    int rc = ref_get(st, &q, key, 4, out, err);
    if (rc == 1)
        return allot_errorf(err, ALLOT_ENOENT,
                            "association cluster=%s account=%s user=%s partition=%s does not "
                            "exist",
                            cluster, account, user, partition);
    return rc;
}

int store_assoc_add(store_t *st, struct assoc *a, struct allot_error *err)
{
    int64_t account_id;
    struct user u;
    if (store_ready_write(st, "assoc add", err) < 0 ||
        assoc_key_check(a->cluster, a->account, a->user, a->partition, err) < 0 ||
        assoc_fields_check(st, a, err) < 0 || need_cluster(st, a->cluster, err) < 0 ||
        store_account_id(st, "account", a->account, &account_id, err) < 0)
        return -1;
    if (user_get(st, a->user, &u, err) < 0)
        return allot_error_prefix(err, "user");
    db_stmt_t *s = store_stmt(st, STMT_ASSOC_ADD, SQL_ASSOC_ADD, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, a->cluster);
    db_bind_int64(s, 2, account_id);
    db_bind_text(s, 3, a->user);
    db_bind_text(s, 4, a->partition);
    db_bind_int64(s, 5, a->shares);
    db_bind_text(s, 6, a->default_qos);
    db_bind_text(s, 7, a->qos);
    int rc = db_step(s, err);
    if (rc < 0) {
        if (err && err->code == ALLOT_EEXIST)
            return allot_errorf(err, ALLOT_EEXIST,
                                "association cluster=%s account=%s user=%s partition=%s "
                                "already exists",
                                a->cluster, a->account, a->user, a->partition);
        return -1;
    }
    if (rc == 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "assoc add: no id returned");
    a->id = db_column_int64(s, 0);
    db_reset(s);
    return 0;
}

int store_assoc_get(store_t *st, const char *cluster, const char *account, const char *user,
                    const char *partition, struct assoc *out, struct allot_error *err)
{
    if (store_ready(st, "assoc get", err) < 0 ||
        assoc_key_check(cluster, account, user, partition, err) < 0)
        return -1;
    return assoc_lookup(st, cluster, account, user, partition, out, err);
}

/* store_assoc_of_job and store_assoc_exists: two probes of the unique key, PARTITION's
 * and the one for all partitions (''), the first found wins; cheaper for SQLite than one
 * statement with an IN list (bench/bank_callgrind.sh: +12k instructions an admit). */
static int assoc_probe(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *partition, int any_first, struct assoc *out,
                       struct allot_error *err)
{
    if (store_ready(st, "assoc of job", err) < 0 ||
        assoc_key_check(cluster, account, user, partition, err) < 0)
        return -1;
    const char *order[2] = {partition, ""};
    if (any_first) {
        order[0] = "";
        order[1] = partition;
    }
    struct allot_error miss = {0};
    for (int i = 0; i < 2; i++) {
        if (i == 1 && !partition[0])
            break;
        if (assoc_lookup(st, cluster, account, user, order[i], out, &miss) == 0)
            return 0;
        if (miss.code != ALLOT_ENOENT) {
            if (err)
                *err = miss;
            return -1;
        }
    }
    /* Off the hot path: say what the bank lacks.  The sentence stays the same whatever it
     * is (job_submit/allot tells the agent's sync lag by it). */
    struct user u;
    int64_t id;
    struct allot_error e2;
    const char *why = "";
    if (user_get(st, user, &u, &e2) < 0)
        why = " (the bank has no such user)";
    else if (store_account_id(st, "account", account, &id, &e2) < 0)
        why = " (the bank has no such account)";
    if (*why && e2.code != ALLOT_ENOENT) {
        if (err)
            *err = e2;
        return -1;
    }
    return allot_errorf(err, ALLOT_ENOENT,
                        "user %s has no association with account %s on cluster %s%s", user, account,
                        cluster, why);
}

int store_assoc_of_job(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *partition, struct assoc *out, struct allot_error *err)
{
    return assoc_probe(st, cluster, account, user, partition, 0, out, err);
}

int store_assoc_exists(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *partition, struct allot_error *err)
{
    struct assoc a;
    return assoc_probe(st, cluster, account, user, partition, 1, &a, err);
}

int store_assoc_modify(store_t *st, const struct assoc *a, struct allot_error *err)
{
    struct assoc cur;
    if (store_ready_write(st, "assoc modify", err) < 0 ||
        assoc_key_check(a->cluster, a->account, a->user, a->partition, err) < 0 ||
        assoc_fields_check(st, a, err) < 0 ||
        assoc_lookup(st, a->cluster, a->account, a->user, a->partition, &cur, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_ASSOC_MODIFY, SQL_ASSOC_MODIFY, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, a->shares);
    db_bind_text(s, 2, a->default_qos);
    db_bind_text(s, 3, a->qos);
    db_bind_int64(s, 4, cur.id);
    return db_run(s, err);
}

int store_assoc_remove(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *partition, struct allot_error *err)
{
    struct assoc cur;
    if (store_ready_write(st, "assoc remove", err) < 0 ||
        assoc_key_check(cluster, account, user, partition, err) < 0 ||
        assoc_lookup(st, cluster, account, user, partition, &cur, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_ASSOC_REMOVE, SQL_ASSOC_REMOVE, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, cur.id);
    if (db_run(s, err) < 0)
        return -1;
    /* The user's default account must stay one of its associations' accounts. */
    int64_t stale;
    const char *key[] = {user, account};
    if (ref_count(st, STMT_ASSOC_DEFAULT_USED, SQL_ASSOC_DEFAULT_USED, key, 2, &stale, err) < 0)
        return -1;
    if (stale)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "account '%s' is user '%s''s default account: change "
                            "default_account first",
                            account, user);
    char owner[4 * ALLOT_NAME_MAX];
    snprintf(owner, sizeof owner, "%s:%s:%s:%s", cluster, account, user, partition);
    return drop_limits(st, LIMIT_SCOPE_ASSOC, owner, err);
}

static int assoc_call(const struct ref_walk *w, union ref_row *row)
{
    return w->cb.assoc(&row->assoc, w->arg);
}

int store_assoc_list(store_t *st, const struct assoc_filter *f, store_assoc_f cb, void *arg,
                     struct allot_error *err)
{
    static const struct ref_query q = {STMT_ASSOC_LIST, SQL_ASSOC_LIST, read_assoc};
    struct ref_walk w = {.q = &q, .call = assoc_call, .cb.assoc = cb, .arg = arg};
    const char *key[] = {f && f->cluster ? f->cluster : "", f && f->account ? f->account : "",
                         f && f->user ? f->user : ""};
    return ref_list(st, "assoc list", &w, key, 3, err);
}

/* ---- QOS ---- */

static void read_qos(db_stmt_t *s, void *row)
{
    struct qos *q = row;
    memset(q, 0, sizeof *q);
    db_column_copy(s, 0, q->name, sizeof q->name);
    q->priority = db_column_int64(s, 1);
    db_column_copy(s, 2, q->flags, sizeof q->flags);
    q->usage_factor_ppm = db_column_int64(s, 3);
    q->limit_factor_ppm = db_column_int64(s, 4);
    db_column_copy(s, 5, q->description, sizeof q->description);
}

/* flags: a comma list of Slurm's QOS flags (sacctmgr's spelling, any case), so that a typo
 * is refused here rather than silently never matching (limits_qos_flags ignores unknowns). */
static int qos_flags_check(const char *flags, struct allot_error *err)
{
    static const char *const known[] = {
        "DenyOnLimit", "EnforceUsageThreshold", "NoDecay",           "NoReserve",
        "OverPartQOS", "PartitionMaxNodes",     "PartitionMinNodes", "PartitionTimeLimit",
        "Relative",    "RequiresReservation",   "UsageFactorSafe"};
    size_t l;
    for (const char *p = flags, *it; comma_next(&p, &it, &l);) {
        size_t i = 0;
        while (i < sizeof known / sizeof known[0] &&
               !(strlen(known[i]) == l && strncasecmp(known[i], it, l) == 0))
            i++;
        if (i == sizeof known / sizeof known[0])
            return allot_errorf(err, ALLOT_EINVAL,
                                "flags: unknown QOS flag '%.*s' (Slurm's: DenyOnLimit, "
                                "EnforceUsageThreshold, NoDecay, NoReserve, OverPartQOS, "
                                "PartitionMaxNodes, PartitionMinNodes, PartitionTimeLimit, "
                                "Relative, RequiresReservation, UsageFactorSafe)",
                                (int)(l > 64 ? 64 : l), it);
    }
    return 0;
}

static int qos_validate(const struct qos *q, struct allot_error *err)
{
    char tmp[ALLOT_TEXT_MAX];
    if (model_check_name("name", q->name, 0, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "flags", q->flags, err) < 0 ||
        qos_flags_check(q->flags, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "description", q->description, err) < 0)
        return -1;
    if (q->priority < 0 || q->priority > UINT32_MAX) /* Slurm's QOS priority is a uint32 */
        return allot_errorf(err, ALLOT_EINVAL, "priority: must be 0..4294967295");
    if (q->usage_factor_ppm < 0)
        return allot_errorf(err, ALLOT_EINVAL, "usage_factor: must be >= 0");
    if (q->limit_factor_ppm < -1 || q->limit_factor_ppm == 0)
        return allot_errorf(err, ALLOT_EINVAL, "limit_factor: must be positive or unset");
    return 0;
}

static int qos_lookup(store_t *st, const char *name, struct qos *out, struct allot_error *err)
{
    static const struct ref_query q = {STMT_QOS_GET, SQL_QOS_GET, read_qos};
    int rc = ref_get(st, &q, &name, 1, out, err);
    if (rc == 1)
        return allot_errorf(err, ALLOT_ENOENT, "qos '%s' does not exist", name);
    return rc;
}

int store_qos_add(store_t *st, const struct qos *q, struct allot_error *err)
{
    if (store_ready_write(st, "qos add", err) < 0 || qos_validate(q, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_QOS_ADD, SQL_QOS_ADD, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, q->name);
    db_bind_int64(s, 2, q->priority);
    db_bind_text(s, 3, q->flags);
    db_bind_int64(s, 4, q->usage_factor_ppm);
    db_bind_int64(s, 5, q->limit_factor_ppm);
    db_bind_text(s, 6, q->description);
    if (db_run(s, err) < 0)
        return exists_error(err, "qos", q->name);
    return 0;
}

int store_qos_get(store_t *st, const char *name, struct qos *out, struct allot_error *err)
{
    if (store_ready(st, "qos get", err) < 0 || model_check_name("name", name, 0, err) < 0)
        return -1;
    return qos_lookup(st, name, out, err);
}

int store_qos_modify(store_t *st, const struct qos *q, struct allot_error *err)
{
    struct qos cur;
    if (store_ready_write(st, "qos modify", err) < 0 || qos_validate(q, err) < 0 ||
        qos_lookup(st, q->name, &cur, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_QOS_MODIFY, SQL_QOS_MODIFY, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, q->priority);
    db_bind_text(s, 2, q->flags);
    db_bind_int64(s, 3, q->usage_factor_ppm);
    db_bind_int64(s, 4, q->limit_factor_ppm);
    db_bind_text(s, 5, q->description);
    db_bind_text(s, 6, q->name);
    return db_run(s, err);
}

/* ECONFLICT while an association (allowed or default QOS) or a partition (partition QOS)
 * names the QOS: admission would then fail on it.  Held runs keep the name as text only. */
static int qos_unused(store_t *st, const char *name, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_QOS_USED, SQL_QOS_USED, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, name);
    long long assocs = 0, parts = 0;
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        char dflt[ALLOT_NAME_MAX], list[ALLOT_TEXT_MAX];
        db_column_copy(s, 0, dflt, sizeof dflt);
        db_column_copy(s, 1, list, sizeof list);
        if (db_column_int64(s, 2))
            parts++;
        else if (strcmp(dflt, name) == 0 || qos_list_has(list, name))
            assocs++;
    }
    db_reset(s);
    if (rc < 0)
        return -1;
    if (assocs || parts)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "qos '%s' is in use by %lld associations and %lld partitions", name,
                            assocs, parts);
    return 0;
}

int store_qos_remove(store_t *st, const char *name, struct allot_error *err)
{
    struct qos cur;
    if (store_ready_write(st, "qos remove", err) < 0 ||
        model_check_name("name", name, 0, err) < 0 || qos_lookup(st, name, &cur, err) < 0 ||
        qos_unused(st, name, err) < 0 || drop_limits(st, LIMIT_SCOPE_QOS, name, err) < 0)
        return -1;
    return ref_exec(st, STMT_QOS_REMOVE, SQL_QOS_REMOVE, &name, 1, err);
}

static int qos_call(const struct ref_walk *w, union ref_row *row)
{
    return w->cb.qos(&row->qos, w->arg);
}

int store_qos_list(store_t *st, store_qos_f cb, void *arg, struct allot_error *err)
{
    static const struct ref_query q = {STMT_QOS_LIST, SQL_QOS_LIST, read_qos};
    struct ref_walk w = {.q = &q, .call = qos_call, .cb.qos = cb, .arg = arg};
    return ref_list(st, "qos list", &w, NULL, 0, err);
}

/* ---- partitions ---- */

static void read_part(db_stmt_t *s, void *row)
{
    struct partition *p = row;
    memset(p, 0, sizeof *p);
    db_column_copy(s, 0, p->cluster, sizeof p->cluster);
    db_column_copy(s, 1, p->name, sizeof p->name);
    db_column_copy(s, 2, p->resource, sizeof p->resource);
    db_column_copy(s, 3, p->billing_weights, sizeof p->billing_weights);
    p->max_tres = (int)db_column_int64(s, 4);
    db_column_copy(s, 5, p->qos, sizeof p->qos);
    p->default_time_s = db_column_int64(s, 6);
    p->max_time_s = db_column_int64(s, 7);
}

static int part_validate(store_t *st, const struct partition *p, struct allot_error *err)
{
    char tmp[ALLOT_TRES_MAX];
    if (model_check_name("cluster", p->cluster, 0, err) < 0 ||
        model_check_name("name", p->name, 0, err) < 0 ||
        model_check_name("resource", p->resource, 0, err) < 0 ||
        model_check_name("qos", p->qos, 1, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "billing_weights", p->billing_weights, err) < 0)
        return -1;
    if (p->max_tres != 0 && p->max_tres != 1)
        return allot_errorf(err, ALLOT_EINVAL, "max_tres: must be 0 or 1");
    if (p->default_time_s < -1 || p->default_time_s == 0)
        return allot_errorf(err, ALLOT_EINVAL, "default_time_s: must be positive or -1 (unset)");
    if (p->max_time_s < -1 || p->max_time_s == 0)
        return allot_errorf(err, ALLOT_EINVAL, "max_time_s: must be positive or -1 (UNLIMITED)");
    if (p->qos[0]) {
        struct qos q;
        if (qos_lookup(st, p->qos, &q, err) < 0)
            return allot_error_prefix(err, "qos");
    }
    return need_cluster(st, p->cluster, err);
}

static int part_lookup(store_t *st, const char *cluster, const char *name, struct partition *out,
                       struct allot_error *err)
{
    static const struct ref_query q = {STMT_PART_GET, SQL_PART_GET, read_part};
    const char *key[] = {cluster, name};
    int rc = ref_get(st, &q, key, 2, out, err);
    if (rc == 1)
        return allot_errorf(err, ALLOT_ENOENT, "partition '%s' of cluster '%s' does not exist",
                            name, cluster);
    return rc;
}

int store_partition_add(store_t *st, const struct partition *p, struct allot_error *err)
{
    if (store_ready_write(st, "partition add", err) < 0 || part_validate(st, p, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_PART_ADD, SQL_PART_ADD, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, p->cluster);
    db_bind_text(s, 2, p->name);
    db_bind_text(s, 3, p->resource);
    db_bind_text(s, 4, p->billing_weights);
    db_bind_int64(s, 5, p->max_tres);
    db_bind_text(s, 6, p->qos);
    db_bind_int64(s, 7, p->default_time_s);
    db_bind_int64(s, 8, p->max_time_s);
    if (db_run(s, err) < 0)
        return exists_error(err, "partition", p->name);
    return 0;
}

int store_partition_get(store_t *st, const char *cluster, const char *name, struct partition *out,
                        struct allot_error *err)
{
    if (store_ready(st, "partition get", err) < 0 ||
        model_check_name("cluster", cluster, 0, err) < 0 ||
        model_check_name("name", name, 0, err) < 0)
        return -1;
    return part_lookup(st, cluster, name, out, err);
}

int store_partition_modify(store_t *st, const struct partition *p, struct allot_error *err)
{
    struct partition cur;
    if (store_ready_write(st, "partition modify", err) < 0 || part_validate(st, p, err) < 0 ||
        part_lookup(st, p->cluster, p->name, &cur, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_PART_MODIFY, SQL_PART_MODIFY, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, p->resource);
    db_bind_text(s, 2, p->billing_weights);
    db_bind_int64(s, 3, p->max_tres);
    db_bind_text(s, 4, p->qos);
    db_bind_int64(s, 5, p->default_time_s);
    db_bind_int64(s, 6, p->max_time_s);
    db_bind_text(s, 7, p->cluster);
    db_bind_text(s, 8, p->name);
    return db_run(s, err);
}

/* A partition that associations name stays: removing it would leave them naming nothing. */
static int part_unused(store_t *st, const char *cluster, const char *name, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_PART_USED, SQL_PART_USED, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_text(s, 2, name);
    int rc = db_step(s, err);
    long long n = rc == 1 ? (long long)db_column_int64(s, 0) : 0;
    char first[2 * ALLOT_NAME_MAX] = "";
    if (rc == 1 && n > 0)
        db_column_copy(s, 1, first, sizeof first);
    db_reset(s);
    if (rc < 0)
        return -1;
    if (n > 0)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "partition '%s' of cluster '%s' is in use by %lld associations "
                            "(account:user %s%s); remove them or give them another partition "
                            "first",
                            name, cluster, n, first, n > 1 ? ", ..." : "");
    return 0;
}

int store_partition_remove(store_t *st, const char *cluster, const char *name,
                           struct allot_error *err)
{
    struct partition cur;
    if (store_ready_write(st, "partition remove", err) < 0 ||
        model_check_name("cluster", cluster, 0, err) < 0 ||
        model_check_name("name", name, 0, err) < 0 ||
        part_lookup(st, cluster, name, &cur, err) < 0 || part_unused(st, cluster, name, err) < 0)
        return -1;
    char owner[2 * ALLOT_NAME_MAX];
    snprintf(owner, sizeof owner, "%s:%s", cluster, name);
    if (drop_limits(st, LIMIT_SCOPE_PARTITION, owner, err) < 0)
        return -1;
    const char *key[] = {cluster, name};
    return ref_exec(st, STMT_PART_REMOVE, SQL_PART_REMOVE, key, 2, err);
}

static int partition_call(const struct ref_walk *w, union ref_row *row)
{
    return w->cb.partition(&row->partition, w->arg);
}

int store_partition_list(store_t *st, const char *cluster, store_partition_f cb, void *arg,
                         struct allot_error *err)
{
    static const struct ref_query q = {STMT_PART_LIST, SQL_PART_LIST, read_part};
    struct ref_walk w = {.q = &q, .call = partition_call, .cb.partition = cb, .arg = arg};
    const char *key = cluster ? cluster : "";
    return ref_list(st, "partition list", &w, &key, 1, err);
}

/* ---- limits ---- */

/* Split owner into up to `want` ':'-separated names (the last ones may be empty only where
 * allow_empty_last says), copying into parts[i][ALLOT_NAME_MAX]. */
static int split_owner(const char *owner, int want, char parts[][ALLOT_NAME_MAX],
                       struct allot_error *err)
{
    const char *p = owner;
    for (int i = 0; i < want; i++) {
        const char *end = strchr(p, ':');
        if ((i < want - 1) != (end != NULL))
            return allot_errorf(err, ALLOT_EINVAL, "owner: expected %d ':'-separated fields", want);
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n >= ALLOT_NAME_MAX)
            return allot_errorf(err, ALLOT_EINVAL, "owner: field %d too long", i + 1);
        memcpy(parts[i], p, n);
        parts[i][n] = '\0';
        p = end ? end + 1 : p + n;
    }
    return 0;
}

static int limit_owner_exists(store_t *st, enum limit_scope scope, const char *owner,
                              struct allot_error *err)
{
    char parts[4][ALLOT_NAME_MAX];
    switch (scope) {
    case LIMIT_SCOPE_ACCOUNT: {
        int64_t id;
        if (model_check_name("owner", owner, 0, err) < 0)
            return -1;
        return store_account_id(st, "owner", owner, &id, err);
    }
    case LIMIT_SCOPE_QOS: {
        struct qos q;
        if (model_check_name("owner", owner, 0, err) < 0 || qos_lookup(st, owner, &q, err) < 0)
            return allot_error_prefix(err, "owner");
        return 0;
    }
    case LIMIT_SCOPE_PARTITION: {
        struct partition p;
        if (split_owner(owner, 2, parts, err) < 0 ||
            model_check_name("owner cluster", parts[0], 0, err) < 0 ||
            model_check_name("owner partition", parts[1], 0, err) < 0 ||
            part_lookup(st, parts[0], parts[1], &p, err) < 0)
            return allot_error_prefix(err, "owner");
        return 0;
    }
    case LIMIT_SCOPE_ASSOC: {
        struct assoc a;
        if (split_owner(owner, 4, parts, err) < 0 ||
            assoc_key_check(parts[0], parts[1], parts[2], parts[3], err) < 0 ||
            assoc_lookup(st, parts[0], parts[1], parts[2], parts[3], &a, err) < 0)
            return allot_error_prefix(err, "owner");
        return 0;
    }
    }
    return allot_errorf(err, ALLOT_EINVAL, "scope: unknown limit scope %d", (int)scope);
}

int store_limit_set(store_t *st, enum limit_scope scope, const char *owner, const char *name,
                    const char *value, struct allot_error *err)
{
    char tmp[ALLOT_TRES_MAX];
    if (store_ready_write(st, "limit set", err) < 0)
        return -1;
    if (!owner)
        return allot_errorf(err, ALLOT_EINVAL, "owner: missing");
    if (model_check_name("name", name, 0, err) < 0 || limit_owner_exists(st, scope, owner, err) < 0)
        return -1;
    db_stmt_t *s;
    if (!value || !value[0]) {
        s = store_stmt(st, STMT_LIMIT_DELETE, SQL_LIMIT_DELETE, err);
        if (!s)
            return -1;
        db_bind_text(s, 1, model_limit_scope_name(scope));
        db_bind_text(s, 2, owner);
        db_bind_text(s, 3, name);
        return db_run(s, err);
    }
    if (model_copy_text(tmp, sizeof tmp, "value", value, err) < 0)
        return -1;
    s = store_stmt(st, STMT_LIMIT_SET, SQL_LIMIT_SET, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, model_limit_scope_name(scope));
    db_bind_text(s, 2, owner);
    db_bind_text(s, 3, name);
    db_bind_text(s, 4, value);
    return db_run(s, err);
}

static void read_limit(db_stmt_t *s, void *row)
{
    struct limit_value *l = row;
    memset(l, 0, sizeof *l);
    db_column_copy(s, 1, l->owner, sizeof l->owner);
    db_column_copy(s, 2, l->name, sizeof l->name);
    db_column_copy(s, 3, l->value, sizeof l->value);
}

static int limit_call(const struct ref_walk *w, union ref_row *row)
{
    row->limit.scope = w->scope;
    return w->cb.limit(&row->limit, w->arg);
}

int store_limit_list(store_t *st, enum limit_scope scope, const char *owner, store_limit_f cb,
                     void *arg, struct allot_error *err)
{
    static const struct ref_query all = {STMT_LIMIT_LIST, SQL_LIMIT_LIST, read_limit};
    static const struct ref_query one = {STMT_LIMIT_LIST_OWNER, SQL_LIMIT_LIST_OWNER, read_limit};
    if (store_ready(st, "limit list", err) < 0)
        return -1;
    if (scope < LIMIT_SCOPE_ASSOC || scope > LIMIT_SCOPE_PARTITION)
        return allot_errorf(err, ALLOT_EINVAL, "scope: unknown limit scope %d", (int)scope);
    struct ref_walk w = {
        .q = owner ? &one : &all, .call = limit_call, .cb.limit = cb, .arg = arg, .scope = scope};
    const char *key[] = {model_limit_scope_name(scope), owner};
    return ref_list(st, "limit list", &w, key, owner ? 2 : 1, err);
}
