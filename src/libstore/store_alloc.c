/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_alloc.c - allocations, the payer lookup, the ledger and cached balances.
 *
 * Every ledger entry goes through store_ledger_apply(), which changes the allocation's
 * alloc_balance row and appends the entry in the same transaction; the balance UPDATE is
 * conditional, so a check-and-change (a hold, a negative adjustment, an expiry) is one
 * atomic statement that either applies or changes nothing, whatever other connections do.
 * Balance columns per kind (doc/design.md §2.7): credit/carryover/adjustment add to granted, expiry
 * subtracts from it; debit adds to used, refund subtracts; hold adds to held, release
 * subtracts.
 * The payer is found by walking the account's chain to root with point lookups, taking the
 * first account that has an allocation of the resource whose cluster scope covers the
 * cluster and whose period contains the time.  Allocations of one (account, resource) never overlap
 * in intersecting cluster scopes, so at most one matches per account.
 */
#include <string.h>
#include <time.h>

#include "libstore/store_int.h"

static const char SQL_ALLOC_OVERLAP[] =
    "SELECT al.id FROM allocations al WHERE al.account_id = $1 AND al.resource = $2 "
    "AND (al.cluster = $3 OR al.cluster = '' OR $3 = '') "
    "AND al.start_s < $4 AND $5 < al.end_s AND al.id <> $6 ORDER BY al.id LIMIT 1";
static const char SQL_ALLOC_ADD[] =
    "INSERT INTO allocations (account_id, resource, cluster, start_s, end_s, category, "
    "comment, created_s) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id";
static const char SQL_ALLOC_BALANCE_ADD[] = "INSERT INTO alloc_balance (alloc_id) VALUES ($1)";
static const char SQL_ALLOC_GET[] =
    "SELECT " STORE_ALLOC_COLS ", " STORE_BALANCE_COLS " FROM allocations al "
    "JOIN accounts ac ON ac.id = al.account_id "
    "LEFT JOIN alloc_balance b ON b.alloc_id = al.id WHERE al.id = $1";
/* SQL_ALLOC_GET and whether a policy governs the allocation (a settle's answer). */
static const char SQL_ALLOC_GET_POLICY[] =
    "SELECT " STORE_ALLOC_COLS ", " STORE_BALANCE_COLS ", "
    "EXISTS (SELECT 1 FROM policies p WHERE p.alloc_id = al.id) FROM allocations al "
    "JOIN accounts ac ON ac.id = al.account_id "
    "LEFT JOIN alloc_balance b ON b.alloc_id = al.id WHERE al.id = $1";
static const char SQL_ALLOC_MODIFY[] = "UPDATE allocations SET start_s = $1, end_s = $2, "
                                       "category = $3, comment = $4 WHERE id = $5";
static const char SQL_ALLOC_LEDGER_COUNT[] = "SELECT COUNT(*) FROM ledger WHERE alloc_id = $1";
/* SQLite (schema 0016): the indexed entries, then the tail above the mark. */
static const char SQL_ALLOC_LEDGER_COUNT_SQLITE[] =
    "SELECT (SELECT COUNT(*) FROM ledger_alloc_index WHERE alloc_id = $1) + "
    "(SELECT COUNT(*) FROM ledger WHERE id > (SELECT upto FROM ledger_alloc_mark) "
    "AND alloc_id = $1)";
static const char SQL_ALLOC_HELD_BEFORE[] =
    "SELECT COUNT(*) FROM jobs WHERE alloc_id = $1 AND status = 'held' AND start_s >= $2";
static const char SQL_ALLOC_BALANCE_REMOVE[] = "DELETE FROM alloc_balance WHERE alloc_id = $1";
static const char SQL_ALLOC_REMOVE[] = "DELETE FROM allocations WHERE id = $1";
static const char SQL_ALLOC_LIST[] =
    "SELECT " STORE_ALLOC_COLS ", " STORE_BALANCE_COLS " FROM allocations al "
    "JOIN accounts ac ON ac.id = al.account_id "
    "LEFT JOIN alloc_balance b ON b.alloc_id = al.id "
    "WHERE ($1 = '' OR ac.name = $1) AND ($2 = '' OR al.resource = $2) "
    "AND (CAST($3 AS BIGINT) = 0 OR (al.start_s <= $3 AND $3 < al.end_s)) "
    "ORDER BY ac.name, al.resource, al.start_s, al.id";
/* The payer walk (store_payer): the account's own allocation by its name, else per ancestor
 * on the chain its allocation (allocations_payer index), nearest first.  Point lookups, not one
 * recursive query: SQLite materialises a recursive CTE in ephemeral tables on every call,
 * which cost more than the rest of a hold; a walk is usually one or two short steps.
 * At most one allocation matches per account (no overlap, file comment); the ORDER BY only
 * makes that explicit, by start_s so allocations_payer yields it in order with no sort
 * (ORDER BY al.id made SQLite build a temporary B-tree, page memsets and all, per call). */
static const char SQL_PAYER_START[] = "SELECT id, parent_id FROM accounts WHERE name = $1";
static const char SQL_PAYER_PARENT[] = "SELECT parent_id FROM accounts WHERE id = $1";
#define PAYER_OF(account)                                                                          \
    "SELECT " STORE_ALLOC_COLS ", " STORE_BALANCE_COLS " FROM allocations al"                      \
    " JOIN accounts ac ON ac.id = al.account_id"                                                   \
    " JOIN alloc_balance b ON b.alloc_id = al.id"                                                  \
    " WHERE " account " AND al.resource = $2 AND (al.cluster = $3 OR al.cluster = '')"             \
    " AND al.start_s <= $4 AND $4 < al.end_s"                                                      \
    " ORDER BY al.start_s DESC LIMIT 1"
static const char SQL_PAYER[] = PAYER_OF("al.account_id = $1");
/* The first step, when the account pays for itself (the usual case): found by its name in
 * the one statement, where the walk's first step and query were two per hold. */
static const char SQL_PAYER_NAMED[] = PAYER_OF("ac.name = $1");
static const char SQL_BALANCE_GET[] =
    "SELECT granted_sumin, used_sumin, held_sumin FROM alloc_balance WHERE alloc_id = $1";
/* $5 = 1: refuse (no row changed) when available would drop below 0. */
static const char SQL_BALANCE_APPLY[] =
    "UPDATE alloc_balance SET granted_sumin = granted_sumin + $1, used_sumin = used_sumin + $2, "
    "held_sumin = held_sumin + $3 WHERE alloc_id = $4 AND used_sumin + $2 >= 0 "
    "AND held_sumin + $3 >= 0 AND granted_sumin + $1 <= " STORE_BALANCE_MAX_SQL " "
    "AND used_sumin + $2 <= " STORE_BALANCE_MAX_SQL " "
    "AND held_sumin + $3 <= " STORE_BALANCE_MAX_SQL " "
    "AND (CAST($5 AS BIGINT) = 0 OR (granted_sumin + $1) - (used_sumin + $2) - (held_sumin + $3) "
    ">= 0)";
#define LEDGER_INSERT                                                                              \
    "INSERT INTO ledger (alloc_id, kind, amount_sumin, actor, time_s, comment, cluster, job_id, "  \
    "run, idem_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
static const char SQL_LEDGER_INSERT[] = LEDGER_INSERT " RETURNING id";
static const char SQL_LEDGER_APPEND[] = LEDGER_INSERT;
#define LEDGER_COLS_AFTER_ID                                                                       \
    "l.alloc_id, l.kind, l.amount_sumin, l.actor, l.time_s, l.comment, l.cluster, l.job_id, "      \
    "l.run, l.idem_key"
#define LEDGER_COLS "l.id, " LEDGER_COLS_AFTER_ID
/* "<> ''" lets both backends use the partial unique index ledger_idem (schema 0009). */
static const char SQL_LEDGER_BY_KEY[] =
    "SELECT " LEDGER_COLS " FROM ledger l WHERE l.idem_key = $1 AND l.idem_key <> ''";
/* A ledger listing reads through the index of its most selective filter: a job's entries
 * by ledger_job, an allocation's by ledger_alloc (in id order, so a page of LIMIT entries
 * stops early), an account's through its allocations, entries since a time by ledger_time
 * (the upper bound makes both planners see a bounded range), else the whole ledger in id
 * order.  A single text with a "($n = 0 OR ...)" term per filter drives no index at all,
 * neither on SQLite nor in a generic PostgreSQL plan (a term that may be switched off
 * cannot), and every listing was a scan of the whole ledger.  The other filters stay such
 * terms; the paging bound is "+l.id" where it must not steer SQLite back to the id order. */
#define LEDGER_FILTERS                                                                             \
    "(CAST($1 AS BIGINT) = 0 OR l.alloc_id = $1) AND ($2 = '' OR ac.name = $2) "                   \
    "AND ($3 = '' OR l.cluster = $3) AND (CAST($4 AS BIGINT) = 0 OR l.job_id = $4) "               \
    "AND l.time_s >= $5"
#define LEDGER_LIST(drive, paging)                                                                 \
    "SELECT " LEDGER_COLS " FROM ledger l JOIN allocations al ON al.id = l.alloc_id "              \
    "JOIN accounts ac ON ac.id = al.account_id WHERE " LEDGER_FILTERS " AND " paging " > $6" drive \
    " ORDER BY l.id LIMIT $7"
/* SQLite has no index on the ledger by allocation (schema 0016): an allocation's (an
 * account's) entries are those of ledger_alloc_index up to the mark, merged in id order with
 * the tail above it, which is read by id.  The two arms are disjoint by the mark; the merge
 * stops at LIMIT, so a page of an allocation still reads about LIMIT entries plus the tail.
 * The first arm gives x.id (= l.id), the column its index yields in order: with l.id SQLite
 * sorted the arm. */
#define LEDGER_LIST_DEFERRED(drive)                                                                \
    "SELECT x.id, " LEDGER_COLS_AFTER_ID " FROM ledger_alloc_index x JOIN ledger l "               \
    "ON l.id = x.id "                                                                              \
    "AND l.alloc_id = x.alloc_id JOIN allocations al ON al.id = x.alloc_id "                       \
    "JOIN accounts ac ON ac.id = al.account_id WHERE " LEDGER_FILTERS drive " AND x.id > $6 "      \
    "AND x.id <= (SELECT upto FROM ledger_alloc_mark) "                                            \
    "UNION ALL SELECT " LEDGER_COLS " FROM ledger l JOIN allocations al ON al.id = l.alloc_id "    \
    "JOIN accounts ac ON ac.id = al.account_id WHERE " LEDGER_FILTERS " AND l.id > "               \
    "MAX($6, (SELECT upto FROM ledger_alloc_mark))" drive " ORDER BY 1 LIMIT $7"
static const char SQL_LEDGER_LIST_JOB[] =
    LEDGER_LIST(" AND l.cluster = $3 AND l.job_id = $4 AND l.job_id <> 0", "l.id");
static const char SQL_LEDGER_LIST_ALLOC[] = LEDGER_LIST(" AND l.alloc_id = $1", "l.id");
static const char SQL_LEDGER_LIST_ACCOUNT[] = LEDGER_LIST(" AND ac.name = $2", "l.id");
static const char SQL_LEDGER_LIST_ALLOC_SQLITE[] = LEDGER_LIST_DEFERRED(" AND al.id = $1");
static const char SQL_LEDGER_LIST_ACCOUNT_SQLITE[] = LEDGER_LIST_DEFERRED(" AND ac.name = $2");
static const char SQL_LEDGER_LIST_SINCE[] =
    LEDGER_LIST(" AND l.time_s <= 9223372036854775807", "+l.id");
static const char SQL_LEDGER_LIST[] = LEDGER_LIST("", "l.id");

/* SQLite's allocation index pass (schema 0016): the tail's pairs sorted, so that each
 * allocation's leaf of ledger_alloc_index is written once per pass rather than once per
 * commit.  OR IGNORE: a pair already there (written by hand, say; store_check names it) is
 * no reason to fail the commit that runs the pass. */
static const char SQL_LEDGER_INDEX_PASS[] =
    "INSERT OR IGNORE INTO ledger_alloc_index (alloc_id, id) SELECT alloc_id, id FROM ledger "
    "WHERE id > (SELECT upto FROM ledger_alloc_mark) ORDER BY alloc_id, id";
static const char SQL_LEDGER_INDEX_MARK[] =
    "UPDATE ledger_alloc_mark SET upto = (SELECT MAX(id) FROM ledger) "
    "WHERE (SELECT MAX(id) FROM ledger) > upto";

/* ---- readers ---- */

void store_read_alloc(db_stmt_t *s, int col, struct allocation *a)
{
    memset(a, 0, sizeof *a);
    a->id = db_column_int64(s, col);
    db_column_copy(s, col + 1, a->account, sizeof a->account);
    db_column_copy(s, col + 2, a->resource, sizeof a->resource);
    db_column_copy(s, col + 3, a->cluster, sizeof a->cluster);
    a->start_s = db_column_int64(s, col + 4);
    a->end_s = db_column_int64(s, col + 5);
    db_column_copy(s, col + 6, a->category, sizeof a->category);
    db_column_copy(s, col + 7, a->comment, sizeof a->comment);
    a->created_s = db_column_int64(s, col + 8);
}

void store_read_balance(db_stmt_t *s, int col, int64_t alloc_id, struct balance *b)
{
    b->alloc_id = alloc_id;
    b->granted_sumin = db_column_int64(s, col);
    b->used_sumin = db_column_int64(s, col + 1);
    b->held_sumin = db_column_int64(s, col + 2);
    b->available_sumin = b->granted_sumin - b->used_sumin - b->held_sumin;
}

static void read_entry(db_stmt_t *s, struct ledger_entry *e)
{
    memset(e, 0, sizeof *e);
    e->id = db_column_int64(s, 0);
    e->alloc_id = db_column_int64(s, 1);
    if (model_ledger_kind_parse(db_column_text(s, 2), &e->kind) < 0)
        e->kind = LEDGER_KIND_MAX; /* unknown text: shown as "?", flagged by store_check */
    e->amount_sumin = db_column_int64(s, 3);
    db_column_copy(s, 4, e->actor, sizeof e->actor);
    e->time_s = db_column_int64(s, 5);
    db_column_copy(s, 6, e->comment, sizeof e->comment);
    db_column_copy(s, 7, e->cluster, sizeof e->cluster);
    e->job_id = db_column_int64(s, 8);
    e->run = (int32_t)db_column_int64(s, 9);
    db_column_copy(s, 10, e->idem_key, sizeof e->idem_key);
}

int store_alloc_read_policy(store_t *st, int64_t id, struct allocation *a, struct balance *b,
                            int *policy, struct allot_error *err)
{
    db_stmt_t *s = policy ? store_stmt(st, STMT_ALLOC_GET_POLICY, SQL_ALLOC_GET_POLICY, err)
                          : store_stmt(st, STMT_ALLOC_GET, SQL_ALLOC_GET, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, id);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_ENOENT, "allocation %lld does not exist", (long long)id);
    if (a)
        store_read_alloc(s, 0, a);
    if (b)
        store_read_balance(s, STORE_ALLOC_NCOLS, id, b);
    if (policy)
        *policy = db_column_int64(s, STORE_ALLOC_NCOLS + STORE_BALANCE_NCOLS) != 0;
    db_reset(s);
    return 0;
}

int store_alloc_read(store_t *st, int64_t id, struct allocation *a, struct balance *b,
                     struct allot_error *err)
{
    return store_alloc_read_policy(st, id, a, b, NULL, err);
}

int store_balance_get(store_t *st, int64_t id, struct balance *b, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_BALANCE_GET, SQL_BALANCE_GET, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, id);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_ENOENT, "allocation %lld has no balance", (long long)id);
    store_read_balance(s, 0, id, b);
    db_reset(s);
    return 0;
}

/* ---- ledger append ---- */

/* Move allocation alloc_id's balance by (dg, du, dh) in one UPDATE; what names the
 * change in an error.  0 applied, 1 refused (checked: available would go negative), -1. */
static int balance_move(store_t *st, int64_t alloc_id, int64_t dg, int64_t du, int64_t dh,
                        int checked, const char *what, int64_t amount, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_BALANCE_APPLY, SQL_BALANCE_APPLY, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, dg);
    db_bind_int64(s, 2, du);
    db_bind_int64(s, 3, dh);
    db_bind_int64(s, 4, alloc_id);
    db_bind_int64(s, 5, checked ? 1 : 0);
    if (db_run(s, err) < 0)
        return -1;
    if (db_changes(s) == 1)
        return 0;
    struct balance b;
    if (store_balance_get(st, alloc_id, &b, err) < 0)
        return -1;
    if (b.used_sumin + du < 0 || b.held_sumin + dh < 0)
        return allot_errorf(err, ALLOT_EINTERNAL,
                            "allocation %lld: %s of %lld would make used or held negative "
                            "(used %lld, held %lld)",
                            (long long)alloc_id, what, (long long)amount, (long long)b.used_sumin,
                            (long long)b.held_sumin);
    if (b.granted_sumin + dg > STORE_BALANCE_MAX || b.used_sumin + du > STORE_BALANCE_MAX ||
        b.held_sumin + dh > STORE_BALANCE_MAX)
        return allot_errorf(err, ALLOT_EINVAL,
                            "amount_sumin: allocation %lld cannot take a %s of %lld: its totals "
                            "are limited to %lld SU-minutes (granted %lld, used %lld, held %lld)",
                            (long long)alloc_id, what, (long long)amount,
                            (long long)STORE_BALANCE_MAX, (long long)b.granted_sumin,
                            (long long)b.used_sumin, (long long)b.held_sumin);
    if (!checked) /* nothing else can stop an unchecked move */
        return allot_errorf(err, ALLOT_EINTERNAL, "allocation %lld: %s of %lld changed no balance",
                            (long long)alloc_id, what, (long long)amount);
    return 1; /* the funds check refused it */
}

/* Append e to the ledger (its id into e->id when want_id, else e->id = 0). */
static int ledger_append(store_t *st, struct ledger_entry *e, int want_id, struct allot_error *err)
{
    db_stmt_t *s = want_id ? store_stmt(st, STMT_LEDGER_INSERT, SQL_LEDGER_INSERT, err)
                           : store_stmt(st, STMT_LEDGER_APPEND, SQL_LEDGER_APPEND, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, e->alloc_id);
    db_bind_text(s, 2, model_ledger_kind_name(e->kind));
    db_bind_int64(s, 3, e->amount_sumin);
    db_bind_text(s, 4, e->actor);
    db_bind_int64(s, 5, e->time_s);
    db_bind_text(s, 6, e->comment);
    db_bind_text(s, 7, e->cluster);
    db_bind_int64(s, 8, e->job_id);
    db_bind_int64(s, 9, e->run);
    db_bind_text(s, 10, e->idem_key);
    if (st->sqlite) /* indexed by allocation later (schema 0016) */
        st->ledger_unindexed++;
    if (!want_id) {
        e->id = 0;
        return db_run(s, err);
    }
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "ledger: no id returned");
    e->id = db_column_int64(s, 0);
    db_reset(s);
    return 0;
}

static int ledger_apply(store_t *st, struct ledger_entry *e, int checked, int want_id,
                        struct allot_error *err)
{
    int64_t dg = 0, du = 0, dh = 0;
    if (model_ledger_deltas(e, &dg, &du, &dh, err) < 0)
        return -1;
    int rc = balance_move(st, e->alloc_id, dg, du, dh, checked, model_ledger_kind_name(e->kind),
                          e->amount_sumin, err);
    if (rc != 0)
        return rc;
    return ledger_append(st, e, want_id, err);
}

int store_ledger_apply(store_t *st, struct ledger_entry *e, int checked, struct allot_error *err)
{
    return ledger_apply(st, e, checked, 1, err);
}

int store_ledger_apply_noid(store_t *st, struct ledger_entry *e, int checked,
                            struct allot_error *err)
{
    return ledger_apply(st, e, checked, 0, err);
}

int store_ledger_apply_pair(store_t *st, struct ledger_entry *e1, struct ledger_entry *e2,
                            struct allot_error *err)
{
    int64_t dg = 0, du = 0, dh = 0;
    if (e2 && e2->alloc_id != e1->alloc_id)
        return allot_errorf(err, ALLOT_EINTERNAL, "ledger: a pair spans two allocations");
    if (model_ledger_deltas(e1, &dg, &du, &dh, err) < 0 ||
        (e2 && model_ledger_deltas(e2, &dg, &du, &dh, err) < 0))
        return -1;
    if (balance_move(st, e1->alloc_id, dg, du, dh, 0, "settle", e1->amount_sumin, err) < 0)
        return -1;
    if (ledger_append(st, e1, 0, err) < 0)
        return -1;
    return e2 ? ledger_append(st, e2, 0, err) : 0;
}

int store_ledger_debits(store_t *st, struct ledger_entry *v, size_t n, struct allot_error *err)
{
    /* One balance move per allocation: an import batch pays from a few allocations. */
    int64_t ids[64], sums[64];
    size_t nids = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind != LEDGER_DEBIT || v[i].amount_sumin <= 0)
            return allot_errorf(err, ALLOT_EINTERNAL, "ledger debits: entry %zu is no debit", i);
        size_t k = 0;
        while (k < nids && ids[k] != v[i].alloc_id)
            k++;
        if (k == nids) {
            if (nids == sizeof ids / sizeof ids[0]) { /* flush: many payers in one batch */
                for (size_t j = 0; j < nids; j++)
                    if (balance_move(st, ids[j], 0, sums[j], 0, 0, "debit", sums[j], err) < 0)
                        return -1;
                nids = k = 0;
            }
            ids[nids] = v[i].alloc_id;
            sums[nids++] = 0;
        }
        if (sums[k] > STORE_BALANCE_MAX - v[i].amount_sumin)
            return allot_errorf(err, ALLOT_EINVAL, "amount_sumin: debits too large");
        sums[k] += v[i].amount_sumin;
        if (ledger_append(st, &v[i], 0, err) < 0)
            return -1;
    }
    for (size_t j = 0; j < nids; j++)
        if (balance_move(st, ids[j], 0, sums[j], 0, 0, "debit", sums[j], err) < 0)
            return -1;
    return 0;
}

/* ---- allocations ---- */

static int alloc_validate(const struct allocation *a, struct allot_error *err)
{
    char tmp[ALLOT_TEXT_MAX];
    if (model_check_name("account", a->account, 0, err) < 0 ||
        model_check_name("resource", a->resource, 0, err) < 0 ||
        model_check_name("cluster", a->cluster, 1, err) < 0 ||
        model_check_name("category", a->category, 1, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "comment", a->comment, err) < 0)
        return -1;
    if (a->start_s < 0)
        return allot_errorf(err, ALLOT_EINVAL, "start: must not be before 1970");
    if (a->start_s >= a->end_s)
        return allot_errorf(err, ALLOT_EINVAL, "end: must be after start");
    return 0;
}

static int check_overlap(store_t *st, int64_t account_id, const struct allocation *a,
                         struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_ALLOC_OVERLAP, SQL_ALLOC_OVERLAP, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, account_id);
    db_bind_text(s, 2, a->resource);
    db_bind_text(s, 3, a->cluster);
    db_bind_int64(s, 4, a->end_s);
    db_bind_int64(s, 5, a->start_s);
    db_bind_int64(s, 6, a->id);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        long long other = (long long)db_column_int64(s, 0);
        db_reset(s);
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "start: overlaps allocation %lld of account '%s' for resource '%s'",
                            other, a->account, a->resource);
    }
    db_reset(s);
    return 0;
}

int store_alloc_add(store_t *st, struct allocation *a, struct allot_error *err)
{
    int64_t account_id;
    if (store_ready_write(st, "alloc add", err) < 0 || alloc_validate(a, err) < 0 ||
        store_account_id(st, "account", a->account, &account_id, err) < 0)
        return -1;
    if (a->cluster[0]) {
        int rc = store_cluster_exists(st, a->cluster, err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return allot_errorf(err, ALLOT_ENOENT, "cluster: '%s' does not exist", a->cluster);
    }
    struct allocation probe = *a;
    probe.id = 0;
    if (check_overlap(st, account_id, &probe, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_ALLOC_ADD, SQL_ALLOC_ADD, err);
    if (!s)
        return -1;
    int64_t created = a->created_s > 0 ? a->created_s : (int64_t)time(NULL);
    db_bind_int64(s, 1, account_id);
    db_bind_text(s, 2, a->resource);
    db_bind_text(s, 3, a->cluster);
    db_bind_int64(s, 4, a->start_s);
    db_bind_int64(s, 5, a->end_s);
    db_bind_text(s, 6, a->category);
    db_bind_text(s, 7, a->comment);
    db_bind_int64(s, 8, created);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "alloc add: no id returned");
    int64_t id = db_column_int64(s, 0);
    db_reset(s);
    s = store_stmt(st, STMT_ALLOC_BALANCE_ADD, SQL_ALLOC_BALANCE_ADD, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, id);
    if (db_run(s, err) < 0)
        return -1;
    a->id = id;
    a->created_s = created;
    return 0;
}

int store_alloc_get(store_t *st, int64_t id, struct allocation *out, struct balance *bal,
                    struct allot_error *err)
{
    if (store_ready(st, "alloc get", err) < 0)
        return -1;
    return store_alloc_read(st, id, out, bal, err);
}

int store_alloc_modify(store_t *st, const struct allocation *a, struct allot_error *err)
{
    struct allocation cur;
    int64_t account_id, n;
    if (store_ready_write(st, "alloc modify", err) < 0 ||
        store_alloc_read(st, a->id, &cur, NULL, err) < 0)
        return -1;
    /* account, resource and cluster are fixed: validate the new values over the old key. */
    struct allocation next = cur;
    next.start_s = a->start_s;
    next.end_s = a->end_s;
    memcpy(next.category, a->category, sizeof next.category);
    memcpy(next.comment, a->comment, sizeof next.comment);
    if (memchr(a->category, '\0', sizeof a->category) == NULL ||
        memchr(a->comment, '\0', sizeof a->comment) == NULL)
        return allot_errorf(err, ALLOT_EINVAL, "comment: not terminated");
    if (alloc_validate(&next, err) < 0 ||
        store_account_id(st, "account", cur.account, &account_id, err) < 0 ||
        check_overlap(st, account_id, &next, err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_ALLOC_HELD_BEFORE, SQL_ALLOC_HELD_BEFORE, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, a->id);
    db_bind_int64(s, 2, next.end_s);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    n = rc == 1 ? db_column_int64(s, 0) : 0;
    db_reset(s);
    if (n > 0)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "end: %lld held jobs of allocation %lld started at or after it",
                            (long long)n, (long long)a->id);
    s = store_stmt(st, STMT_ALLOC_MODIFY, SQL_ALLOC_MODIFY, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, next.start_s);
    db_bind_int64(s, 2, next.end_s);
    db_bind_text(s, 3, next.category);
    db_bind_text(s, 4, next.comment);
    db_bind_int64(s, 5, a->id);
    return db_run(s, err);
}

int store_alloc_remove(store_t *st, int64_t id, struct allot_error *err)
{
    struct allocation cur;
    if (store_ready_write(st, "alloc remove", err) < 0 ||
        store_alloc_read(st, id, &cur, NULL, err) < 0)
        return -1;
    db_stmt_t *s =
        store_stmt(st, STMT_ALLOC_LEDGER_COUNT,
                   st->sqlite ? SQL_ALLOC_LEDGER_COUNT_SQLITE : SQL_ALLOC_LEDGER_COUNT, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, id);
    int rc = db_step(s, err);
    if (rc < 0)
        return -1;
    int64_t n = rc == 1 ? db_column_int64(s, 0) : 0;
    db_reset(s);
    if (n > 0)
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "allocation %lld has %lld ledger entries and cannot be removed",
                            (long long)id, (long long)n);
    s = store_stmt(st, STMT_ALLOC_BALANCE_REMOVE, SQL_ALLOC_BALANCE_REMOVE, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, id);
    if (db_run(s, err) < 0)
        return -1;
    s = store_stmt(st, STMT_ALLOC_REMOVE, SQL_ALLOC_REMOVE, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, id);
    return db_run(s, err);
}

int store_alloc_list(store_t *st, const struct alloc_filter *f, store_alloc_f cb, void *arg,
                     struct allot_error *err)
{
    if (store_ready(st, "alloc list", err) < 0)
        return -1;
    db_stmt_t *s = store_stmt(st, STMT_ALLOC_LIST, SQL_ALLOC_LIST, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, f && f->account ? f->account : "");
    db_bind_text(s, 2, f && f->resource ? f->resource : "");
    db_bind_int64(s, 3, f ? f->active_at_s : 0);
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct allocation a;
        struct balance b;
        store_read_alloc(s, 0, &a);
        store_read_balance(s, STORE_ALLOC_NCOLS, a.id, &b);
        int r = cb(&a, &b, arg);
        if (r) {
            db_reset(s);
            return r;
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

/* $1 of a walk's statement: the account by name when named, else by id. */
static void bind_account(db_stmt_t *s, const char *name, int64_t id)
{
    if (name)
        db_bind_text(s, 1, name);
    else
        db_bind_int64(s, 1, id);
}

/* One step of the walk: the id and parent of the first account (by name) or the parent of
 * an account (by id).  Returns 1 with self and parent set (parent 0: none), 0 when the row is
 * missing. */
static int payer_step(store_t *st, const char *name, int64_t id, int64_t *self, int64_t *parent,
                      struct allot_error *err)
{
    db_stmt_t *s = name ? store_stmt(st, STMT_PAYER_START, SQL_PAYER_START, err)
                        : store_stmt(st, STMT_PAYER_PARENT, SQL_PAYER_PARENT, err);
    if (!s)
        return -1;
    bind_account(s, name, id);
    int rc = db_step(s, err);
    if (rc == 1) {
        int col = name ? 1 : 0;
        *self = name ? db_column_int64(s, 0) : id;
        *parent = db_column_is_null(s, col) ? 0 : db_column_int64(s, col);
    }
    db_reset(s);
    return rc;
}

/* The allocation of SQL_PAYER (by account id) or SQL_PAYER_NAMED (by name): 1 found (into
 * *out, *bal when not NULL), 0 none, -1 error. */
static int payer_query(store_t *st, const char *name, int64_t id, const char *resource,
                       const char *cluster, int64_t at_s, struct allocation *out,
                       struct balance *bal, struct allot_error *err)
{
    db_stmt_t *s = name ? store_stmt(st, STMT_PAYER_NAMED, SQL_PAYER_NAMED, err)
                        : store_stmt(st, STMT_PAYER, SQL_PAYER, err);
    if (!s)
        return -1;
    bind_account(s, name, id);
    db_bind_text(s, 2, resource);
    db_bind_text(s, 3, cluster);
    db_bind_int64(s, 4, at_s);
    int found = db_step(s, err);
    if (found == 1) {
        if (out)
            store_read_alloc(s, 0, out);
        if (bal)
            store_read_balance(s, STORE_ALLOC_NCOLS, db_column_int64(s, 0), bal);
    }
    db_reset(s);
    return found;
}

const char *store_payer_sql(int named)
{
    return named ? SQL_PAYER_NAMED : SQL_PAYER;
}

int store_payer(store_t *st, const char *account, const char *resource, const char *cluster,
                int64_t at_s, struct allocation *out, struct balance *bal, struct allot_error *err)
{
    int found = payer_query(st, account, 0, resource, cluster, at_s, out, bal, err);
    if (found != 0)
        return found < 0 ? -1 : 0;
    /* Not the account itself: its ancestors, nearest first. */
    int64_t id = 0, parent = 0;
    int rc = payer_step(st, account, 0, &id, &parent, err);
    /* Depth bound as a guard against a cycle the account verbs should never let in. */
    for (int depth = 0; rc == 1 && parent && depth < 1000; depth++) {
        rc = payer_step(st, NULL, parent, &id, &parent, err);
        if (rc != 1)
            break;
        found = payer_query(st, NULL, id, resource, cluster, at_s, out, bal, err);
        if (found != 0)
            return found < 0 ? -1 : 0;
    }
    if (rc < 0)
        return -1;
    char date[32];
    store_format_utc(at_s, date, sizeof date);
    allot_errorf(err, ALLOT_ENOENT,
                 "account '%s' and its parents have no '%s' allocation for cluster '%s' "
                 "active at %s",
                 account, resource, cluster, date);
    return 1;
}

int store_find_payer(store_t *st, const char *account, const char *resource, const char *cluster,
                     int64_t at_s, struct allocation *out, struct balance *bal,
                     struct allot_error *err)
{
    if (store_ready(st, "find payer", err) < 0 ||
        model_check_name("account", account, 0, err) < 0 ||
        model_check_name("resource", resource, 0, err) < 0 ||
        model_check_name("cluster", cluster, 0, err) < 0)
        return -1;
    int rc = store_payer(st, account, resource, cluster, at_s, out, bal, err);
    return rc == 0 ? 0 : -1;
}

/* ---- credits and the ledger ---- */

int store_credit_entry(store_t *st, struct ledger_entry *e, int *replay, struct allot_error *err)
{
    char tmp[ALLOT_TEXT_MAX];
    struct balance b;
    if (replay)
        *replay = 0;
    if (store_ready_write(st, "credit", err) < 0)
        return -1;
    switch (e->kind) {
    case LEDGER_CREDIT:
    case LEDGER_ADJUSTMENT:
    case LEDGER_REFUND:
    case LEDGER_CARRYOVER:
    case LEDGER_EXPIRY:
        break;
    default:
        return allot_errorf(err, ALLOT_EINVAL,
                            "kind: must be credit, adjustment, refund, carryover or expiry");
    }
    if (store_check_amount("amount", e->amount_sumin, e->kind == LEDGER_ADJUSTMENT, err) < 0 ||
        model_check_name("actor", e->actor, 1, err) < 0 ||
        model_check_name("cluster", e->cluster, 1, err) < 0 ||
        model_copy_text(tmp, sizeof tmp, "comment", e->comment, err) < 0 ||
        model_copy_text(tmp, ALLOT_KEY_MAX, "idempotency_key", e->idem_key, err) < 0)
        return -1;
    if (e->job_id < 0 || e->run < 0)
        return allot_errorf(err, ALLOT_EINVAL, "job_id: must not be negative");
    if (e->idem_key[0]) {
        db_stmt_t *s = store_stmt(st, STMT_LEDGER_BY_KEY, SQL_LEDGER_BY_KEY, err);
        if (!s)
            return -1;
        db_bind_text(s, 1, e->idem_key);
        int rc = db_step(s, err);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            struct ledger_entry old;
            read_entry(s, &old);
            db_reset(s);
            if (old.alloc_id != e->alloc_id || old.kind != e->kind ||
                old.amount_sumin != e->amount_sumin) {
                char was[STORE_SU_MAX];
                store_format_su(old.amount_sumin, was, sizeof was);
                return allot_errorf(err, ALLOT_ECONFLICT,
                                    "idempotency_key: '%s' was used for entry %lld (%s of %s SU "
                                    "on allocation %lld)",
                                    e->idem_key, (long long)old.id,
                                    model_ledger_kind_name(old.kind), was, (long long)old.alloc_id);
            }
            *e = old;
            if (replay)
                *replay = 1;
            return 0;
        }
        db_reset(s);
    }
    if (store_balance_get(st, e->alloc_id, &b, err) < 0) {
        if (err && err->code == ALLOT_ENOENT)
            return allot_errorf(err, ALLOT_ENOENT, "allocation %lld does not exist",
                                (long long)e->alloc_id);
        return -1;
    }
    char amount[STORE_SU_MAX], have[STORE_SU_MAX];
    store_format_su(e->amount_sumin, amount, sizeof amount);
    if (e->kind == LEDGER_REFUND && e->amount_sumin > b.used_sumin) {
        store_format_su(b.used_sumin, have, sizeof have);
        return allot_errorf(err, ALLOT_EINVAL,
                            "amount: refund of %s SU exceeds the %s SU used on allocation %lld",
                            amount, have, (long long)e->alloc_id);
    }
    if (e->time_s <= 0)
        e->time_s = (int64_t)time(NULL);
    /* Only entries that lower the balance are checked (an overdrawn post-paid allocation
     * still takes credits). */
    int checked = e->kind == LEDGER_EXPIRY || (e->kind == LEDGER_ADJUSTMENT && e->amount_sumin < 0);
    int rc = store_ledger_apply(st, e, checked, err);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        store_format_su(b.available_sumin, have, sizeof have);
        return allot_errorf(err, ALLOT_EFUNDS,
                            "amount: %s of %s SU would make allocation %lld's available balance "
                            "negative (available %s SU)",
                            model_ledger_kind_name(e->kind), amount, (long long)e->alloc_id, have);
    }
    return 0;
}

/* A credit by hand is part of its period's total: the thresholds and the pushed limit are
 * of base + carry + what was credited by hand in the period (doc/policies.md). */
int store_credit(store_t *st, struct ledger_entry *e, int *replay, struct allot_error *err)
{
    int again = 0;
    if (store_credit_entry(st, e, &again, err) < 0)
        return -1;
    if (replay)
        *replay = again;
    return again ? 0 : store_policy_hand_credit(st, e, err); /* a replay moved nothing */
}

int store_ledger_index_pass(store_t *st, struct allot_error *err)
{
    db_stmt_t *s = store_stmt(st, STMT_LEDGER_INDEX_PASS, SQL_LEDGER_INDEX_PASS, err);
    if (!s || db_run(s, err) < 0)
        return allot_error_prefix(err, "ledger index pass");
    s = store_stmt(st, STMT_LEDGER_INDEX_MARK, SQL_LEDGER_INDEX_MARK, err);
    if (!s || db_run(s, err) < 0)
        return allot_error_prefix(err, "ledger index pass");
    return 0;
}

int store_ledger_list_sql(const char *backend, const struct ledger_filter *f, const char **sql)
{
    int sqlite = strcmp(backend, "sqlite") == 0;
    if (f && f->job_id && f->cluster && f->cluster[0]) {
        *sql = SQL_LEDGER_LIST_JOB;
        return STMT_LEDGER_LIST_JOB;
    }
    if (f && f->alloc_id) {
        *sql = sqlite ? SQL_LEDGER_LIST_ALLOC_SQLITE : SQL_LEDGER_LIST_ALLOC;
        return STMT_LEDGER_LIST_ALLOC;
    }
    if (f && f->account && f->account[0]) {
        *sql = sqlite ? SQL_LEDGER_LIST_ACCOUNT_SQLITE : SQL_LEDGER_LIST_ACCOUNT;
        return STMT_LEDGER_LIST_ACCOUNT;
    }
    if (f && f->since_s > 0) {
        *sql = SQL_LEDGER_LIST_SINCE;
        return STMT_LEDGER_LIST_SINCE;
    }
    *sql = SQL_LEDGER_LIST;
    return STMT_LEDGER_LIST;
}

STORE_ROWS(ledger, struct ledger_entry, store_ledger_f, read_entry(s, &row))

int store_ledger_list(store_t *st, const struct ledger_filter *f, store_ledger_f cb, void *arg,
                      struct allot_error *err)
{
    if (store_ready(st, "ledger list", err) < 0)
        return -1;
    const char *sql;
    int id = store_ledger_list_sql(st->backend, f, &sql);
    db_stmt_t *s = store_stmt(st, id, sql, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, f ? f->alloc_id : 0);
    db_bind_text(s, 2, f && f->account ? f->account : "");
    db_bind_text(s, 3, f && f->cluster ? f->cluster : "");
    db_bind_int64(s, 4, f ? f->job_id : 0);
    db_bind_int64(s, 5, f ? f->since_s : 0);
    db_bind_int64(s, 6, f ? f->after_id : 0);
    db_bind_int64(s, 7, f && f->limit > 0 ? f->limit : INT64_MAX);
    return store_walk(s, ledger_row, &(struct ledger_walk){cb, arg}, err);
}
