/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_usage_acc.c - fair-share usage kept as it happens (schema 0024, doc/fairshare.md).
 *
 * Each settled run adds its usage to the accumulator of its (cluster, account, user, qos)
 * in the transaction that settles it (store_settle, store_job_import), with libcore's
 * decay_acc_add: the same arithmetic fair-share ran over all the jobs on every request
 * before, so share, tree and priority now read one row per association and QOS, whatever
 * the number of jobs stored.  PostgreSQL's batched settle (store_job_batch.c) is one SQL
 * statement that cannot run that arithmetic: it writes usage_pending rows in the same
 * statement, readers add them on the fly and the next fold (store_usage_fold) moves them
 * into usage_acc.  The QOS UsageFactor and NoDecay flag are applied when read, so changing a
 * QOS needs no rebuild; the decay (half-life, reset period) and UsageSource are the row of
 * usage_params, and a change of those rebuilds (store_usage_configure).  A rebuild reads
 * the jobs in (end, job, run) order per accumulator, as the per-request computation did.
 * Doubles are stored as their IEEE-754 bits in BIGINT columns: exact on both backends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libstore/store_int.h"
#include "libutil/text.h"

enum {
    U_PARAMS_GET,
    U_PARAMS_PUT,
    U_ACC_GET,
    U_ACC_PUT,
    U_ACC_RESET,
    U_ACC_LIST,
    U_PENDING_LIST,
    U_PENDING_DELETE,
    U_REBUILD_JOBS,
    U_CLEAR_USER,
    U_CLEAR_SUBTREE,
    U_DIRTY_LIST,
    U_DIRTY_DELETE,
    U_KEY_JOBS,
    U_NSTMT
};
_Static_assert(STMT_USAGE_ACC_FIRST + U_NSTMT - 1 <= STMT_USAGE_ACC_LAST,
               "grow the usage accumulator id block");

static const char SQL_PARAMS_GET[] =
    "SELECT halflife_s, reset_period, source FROM usage_params WHERE id = 1";
static const char SQL_PARAMS_PUT[] =
    "INSERT INTO usage_params (id, halflife_s, reset_period, source) VALUES (1, $1, $2, $3) "
    "ON CONFLICT (id) DO UPDATE SET halflife_s = excluded.halflife_s, "
    "reset_period = excluded.reset_period, source = excluded.source";
static const char SQL_ACC_GET[] =
    "SELECT ref_bits, plain_bits, ref_s, period_s, reset_s FROM usage_acc "
    "WHERE cluster = $1 AND account = $2 AND user_name = $3 AND qos = $4";
static const char SQL_ACC_PUT[] =
    "INSERT INTO usage_acc (cluster, account, user_name, qos, ref_bits, plain_bits, ref_s, "
    "period_s, reset_s) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) "
    "ON CONFLICT (cluster, account, user_name, qos) DO UPDATE SET ref_bits = excluded.ref_bits, "
    "plain_bits = excluded.plain_bits, ref_s = excluded.ref_s, period_s = excluded.period_s, "
    "reset_s = excluded.reset_s";
/* The last clear that hides an association's runs: its own (account, user), its account's
 * and any ancestor account's (user ''), as share computed per node before (depth bound as
 * store_ref.c's ancestor walk). */
static const char SQL_ACC_RESET[] =
    "WITH RECURSIVE chain(id, depth) AS ("
    " SELECT id, 0 FROM accounts WHERE name = $1"
    " UNION ALL"
    " SELECT a.parent_id, c.depth + 1 FROM chain c JOIN accounts a ON a.id = c.id"
    " WHERE a.parent_id IS NOT NULL AND c.depth < 1000)"
    " SELECT COALESCE(MAX(r.time_s), 0) FROM usage_resets r WHERE r.cluster = $2 AND"
    " ((r.account = $1 AND r.user_name IN ('', $3)) OR (r.user_name = '' AND r.account IN"
    " (SELECT a.name FROM chain c JOIN accounts a ON a.id = c.id)))";
static const char SQL_ACC_LIST[] =
    "SELECT account, user_name, qos, ref_bits, plain_bits, ref_s, period_s, reset_s "
    "FROM usage_acc WHERE cluster = $1";
static const char SQL_PENDING_LIST[] =
    "SELECT id, cluster, account, user_name, qos, end_s, elapsed_s, charge_sumin, billing_micro "
    "FROM usage_pending WHERE ($1 = '' OR cluster = $1) ORDER BY id";
static const char SQL_PENDING_DELETE[] = "DELETE FROM usage_pending WHERE id <= $1";
static const char SQL_REBUILD_JOBS[] =
    "SELECT cluster, account, user_name, qos, end_s, elapsed_s, charge_sumin, billing_micro "
    "FROM jobs WHERE status = 'settled' "
    "ORDER BY cluster, account, user_name, qos, end_s, job_id, run";
static const char SQL_DIRTY_LIST[] = "SELECT cluster, account, user_name, qos FROM usage_dirty "
                                     "WHERE ($1 = '' OR cluster = $1)";
static const char SQL_DIRTY_DELETE[] = "DELETE FROM usage_dirty WHERE ($1 = '' OR cluster = $1)";
static const char SQL_KEY_JOBS[] =
    "SELECT end_s, elapsed_s, charge_sumin, billing_micro FROM jobs WHERE cluster = $1 "
    "AND account = $2 AND user_name = $3 AND qos = $4 AND status = 'settled' "
    "ORDER BY end_s, job_id, run";
static const char SQL_CLEAR_USER[] =
    "UPDATE usage_acc SET ref_bits = 0, plain_bits = 0, ref_s = 0, period_s = $1, reset_s = $2 "
    "WHERE cluster = $3 AND account = $4 AND user_name = $5";
static const char SQL_CLEAR_SUBTREE[] =
    "WITH RECURSIVE sub(id, depth) AS ("
    " SELECT id, 0 FROM accounts WHERE name = $1"
    " UNION ALL"
    " SELECT a.id, s.depth + 1 FROM sub s JOIN accounts a ON a.parent_id = s.id"
    " WHERE s.depth < 1000)"
    " UPDATE usage_acc SET ref_bits = 0, plain_bits = 0, ref_s = 0, period_s = $2, reset_s = $3"
    " WHERE cluster = $4 AND account IN (SELECT a.name FROM sub s JOIN accounts a ON a.id = s.id)";

static db_stmt_t *ustmt(store_t *st, int id, const char *sql, struct allot_error *err)
{
    return store_stmt(st, STMT_USAGE_ACC_FIRST + id, sql, err);
}

static int64_t dbits(double v)
{
    int64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double bitsd(int64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static const char *source_name(int billing)
{
    return billing ? "billing" : "charge";
}

/* The stored params: 1 with *p filled, 0 when none are stored, -1 on error. */
static int params_get(store_t *st, struct store_usage_params *p, struct allot_error *err)
{
    if (st->uparams_state) {
        *p = st->uparams;
        return st->uparams_state == 2;
    }
    db_stmt_t *s = ustmt(st, U_PARAMS_GET, SQL_PARAMS_GET, err);
    if (!s)
        return -1;
    int rc = db_step(s, err);
    if (rc == 1) {
        memset(p, 0, sizeof *p);
        p->decay.halflife_s = db_column_int64(s, 0);
        p->decay.reset = (enum decay_reset)db_column_int64(s, 1);
        p->billing = strcmp(db_column_text(s, 2), "billing") == 0;
    }
    db_reset(s);
    if (rc < 0)
        return -1;
    /* Cached for the transaction (store_begin forgets it): settles read it once. */
    st->uparams = *p;
    st->uparams_state = rc == 1 ? 2 : 1;
    return rc == 1;
}

static int params_equal(const struct store_usage_params *a, const struct store_usage_params *b)
{
    return a->decay.halflife_s == b->decay.halflife_s && a->decay.reset == b->decay.reset &&
           !a->billing == !b->billing;
}

int store_usage_params_get(store_t *st, struct store_usage_params *p, struct allot_error *err)
{
    if (store_ready(st, "usage params", err) < 0)
        return -1;
    return params_get(st, p, err);
}

/* The usage a run adds, in the configured unit (as api_share charged it per job). */
static double run_usage(const struct store_usage_params *p, int64_t elapsed_s, int64_t charge,
                        int64_t billing_micro)
{
    return p->billing ? (double)billing_micro / 1e6 * (double)elapsed_s : (double)charge;
}

/* Add one run to acc (both parts: decaying and undecayed; the QOS decides at read). */
static void acc_add(decay_acc_t *acc, const struct store_usage_params *p, int64_t end_s,
                    double usage)
{
    /* Both calls only fail for a negative or non-finite usage, which no stored run has. */
    if (!isfinite(usage) || usage < 0.0)
        return;
    decay_acc_add(acc, &p->decay, end_s, usage, 1.0, false, NULL);
    decay_acc_add(acc, &p->decay, end_s, usage, 1.0, true, NULL);
}

static int acc_reset_time(store_t *st, const char *cluster, const char *account, const char *user,
                          int64_t *out, struct allot_error *err)
{
    db_stmt_t *s = ustmt(st, U_ACC_RESET, SQL_ACC_RESET, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, account);
    db_bind_text(s, 2, cluster);
    db_bind_text(s, 3, user);
    int rc = db_step(s, err);
    *out = rc == 1 ? db_column_int64(s, 0) : 0;
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

/* The accumulator row of a key; a key with no row starts empty at its reset time. */
static int acc_get(store_t *st, const struct usage_acc_row *k, const char *cluster,
                   struct usage_acc_row *out, struct allot_error *err)
{
    db_stmt_t *s = ustmt(st, U_ACC_GET, SQL_ACC_GET, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_text(s, 2, k->account);
    db_bind_text(s, 3, k->user);
    db_bind_text(s, 4, k->qos);
    int rc = db_step(s, err);
    if (out != k)
        memcpy(out, k, sizeof *out);
    decay_acc_init(&out->acc);
    out->reset_s = 0;
    if (rc == 1) {
        out->acc.ref_value = bitsd(db_column_int64(s, 0));
        out->acc.nodecay_value = bitsd(db_column_int64(s, 1));
        out->acc.ref_s = db_column_int64(s, 2);
        out->acc.period_start_s = db_column_int64(s, 3);
        out->reset_s = db_column_int64(s, 4);
    }
    db_reset(s);
    if (rc < 0)
        return -1;
    if (rc == 0 && acc_reset_time(st, cluster, k->account, k->user, &out->reset_s, err) < 0)
        return -1;
    return 0;
}

static int acc_put(store_t *st, const char *cluster, const struct usage_acc_row *r,
                   struct allot_error *err)
{
    db_stmt_t *s = ustmt(st, U_ACC_PUT, SQL_ACC_PUT, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_text(s, 2, r->account);
    db_bind_text(s, 3, r->user);
    db_bind_text(s, 4, r->qos);
    db_bind_int64(s, 5, dbits(r->acc.ref_value));
    db_bind_int64(s, 6, dbits(r->acc.nodecay_value));
    db_bind_int64(s, 7, r->acc.ref_s);
    db_bind_int64(s, 8, r->acc.period_start_s);
    db_bind_int64(s, 9, r->reset_s);
    return db_run(s, err);
}

static void row_key(struct usage_acc_row *r, const char *account, const char *user, const char *qos)
{
    memset(r, 0, sizeof *r);
    text_copy(r->account, sizeof r->account, account);
    text_copy(r->user, sizeof r->user, user);
    text_copy(r->qos, sizeof r->qos, qos);
}

int store_usage_charge(store_t *st, const char *cluster, const char *account, const char *user,
                       const char *qos, int64_t end_s, int64_t elapsed_s, int64_t charge_sumin,
                       int64_t billing_micro, int64_t now_s, struct allot_error *err)
{
    struct store_usage_params p;
    int have = params_get(st, &p, err);
    if (have <= 0)
        return have; /* not kept yet: the rebuild at allotd's start counts this run */
    struct usage_acc_row r;
    row_key(&r, account, user, qos);
    if (acc_get(st, &r, cluster, &r, err) < 0)
        return -1;
    /* Usage only decays from the past: an end after now counts as ending now. */
    int64_t end = end_s < now_s ? end_s : now_s;
    if (end < r.reset_s)
        return 0;
    acc_add(&r.acc, &p, end, run_usage(&p, elapsed_s, charge_sumin, billing_micro));
    return acc_put(st, cluster, &r, err);
}

/* ---- reading ---------------------------------------------------------------------------- */

struct rows {
    struct usage_acc_row *v;
    size_t n, cap;
    int sorted;
};

static struct usage_acc_row *rows_push(struct rows *x, struct allot_error *err)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        struct usage_acc_row *v = realloc(x->v, cap * sizeof *v);
        if (!v) {
            allot_errorf(err, ALLOT_ENOMEM, "usage: out of memory for %zu accumulators", cap);
            return NULL;
        }
        x->v = v;
        x->cap = cap;
    }
    return &x->v[x->n++];
}

static int row_cmp(const void *a, const void *b)
{
    const struct usage_acc_row *x = a, *y = b;
    int c = strcmp(x->account, y->account);
    if (!c)
        c = strcmp(x->user, y->user);
    return c ? c : strcmp(x->qos, y->qos);
}

static struct usage_acc_row *rows_find(struct rows *x, const struct usage_acc_row *k)
{
    if (!x->sorted) { /* only when a run is pending or a key dirty: a plain read needs no order */
        if (x->n > 1)
            qsort(x->v, x->n, sizeof *x->v, row_cmp);
        x->sorted = 1;
    }
    return x->n ? bsearch(k, x->v, x->n, sizeof *k, row_cmp) : NULL;
}

/* The row of key k in x, added empty (at its reset time) when missing. */
static struct usage_acc_row *rows_get(store_t *st, const char *cluster, struct rows *x,
                                      const struct usage_acc_row *k, struct allot_error *err)
{
    struct usage_acc_row *r = rows_find(x, k);
    if (r)
        return r;
    struct usage_acc_row e = *k;
    decay_acc_init(&e.acc);
    if (acc_reset_time(st, cluster, e.account, e.user, &e.reset_s, err) < 0 ||
        !(r = rows_push(x, err)))
        return NULL;
    *r = e;
    qsort(x->v, x->n, sizeof *x->v, row_cmp); /* rare: a key's first run */
    return bsearch(&e, x->v, x->n, sizeof e, row_cmp);
}

/* r's accumulator again from its settled runs (a key marked in usage_dirty). */
static int key_recompute(store_t *st, const char *cluster, const struct store_usage_params *p,
                         struct usage_acc_row *r, int64_t now_s, struct allot_error *err)
{
    decay_acc_init(&r->acc);
    if (acc_reset_time(st, cluster, r->account, r->user, &r->reset_s, err) < 0)
        return -1;
    db_stmt_t *s = ustmt(st, U_KEY_JOBS, SQL_KEY_JOBS, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    db_bind_text(s, 2, r->account);
    db_bind_text(s, 3, r->user);
    db_bind_text(s, 4, r->qos);
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        int64_t end = db_column_int64(s, 0);
        if (end > now_s)
            end = now_s;
        if (end >= r->reset_s)
            acc_add(
                &r->acc, p, end,
                run_usage(p, db_column_int64(s, 1), db_column_int64(s, 2), db_column_int64(s, 3)));
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

/* A run or key of another table, with its cluster. */
struct ckey {
    char cluster[ALLOT_NAME_MAX];
    struct usage_acc_row k;
    int64_t end_s, elapsed_s, charge, billing; /* pending runs only */
};

struct ckeys {
    struct ckey *v;
    size_t n, cap;
    int64_t last; /* pending: the largest id read */
};

static struct ckey *ckeys_push(struct ckeys *x, struct allot_error *err)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 16;
        struct ckey *v = realloc(x->v, cap * sizeof *v);
        if (!v) {
            allot_errorf(err, ALLOT_ENOMEM, "usage: out of memory for %zu keys", cap);
            return NULL;
        }
        x->v = v;
        x->cap = cap;
    }
    struct ckey *e = &x->v[x->n++];
    memset(e, 0, sizeof *e);
    return e;
}

/* The dirty keys, or the pending runs, of cluster ("" = all), read whole: the accumulator
 * statements run afterwards. */
static int ckeys_load(store_t *st, int pending, const char *cluster, struct ckeys *x,
                      struct allot_error *err)
{
    db_stmt_t *s = pending ? ustmt(st, U_PENDING_LIST, SQL_PENDING_LIST, err)
                           : ustmt(st, U_DIRTY_LIST, SQL_DIRTY_LIST, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    int rc, c = pending ? 1 : 0;
    while ((rc = db_step(s, err)) == 1) {
        struct ckey *e = ckeys_push(x, err);
        if (!e) {
            rc = -1;
            break;
        }
        if (pending)
            x->last = db_column_int64(s, 0);
        text_copy(e->cluster, sizeof e->cluster, db_column_text(s, c));
        row_key(&e->k, db_column_text(s, c + 1), db_column_text(s, c + 2),
                db_column_text(s, c + 3));
        if (pending) {
            e->end_s = db_column_int64(s, 5);
            e->elapsed_s = db_column_int64(s, 6);
            e->charge = db_column_int64(s, 7);
            e->billing = db_column_int64(s, 8);
        }
    }
    db_reset(s);
    return rc < 0 ? -1 : 0;
}

static int ckeys_has(const struct ckeys *d, const struct ckey *e)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->v[i].cluster, e->cluster) && !row_cmp(&d->v[i].k, &e->k))
            return 1;
    return 0;
}

/* Pending runs and dirty keys of cluster applied to x (as the next fold will). */
static int add_unfolded(store_t *st, const char *cluster, const struct store_usage_params *p,
                        struct rows *x, int64_t now_s, struct allot_error *err)
{
    struct ckeys d = {0}, pend = {0};
    int rc = ckeys_load(st, 0, cluster, &d, err);
    if (rc == 0)
        rc = ckeys_load(st, 1, cluster, &pend, err);
    for (size_t i = 0; rc == 0 && i < pend.n; i++) {
        const struct ckey *e = &pend.v[i];
        if (ckeys_has(&d, e))
            continue; /* recomputed below from all its runs, this one included */
        struct usage_acc_row *r = rows_get(st, cluster, x, &e->k, err);
        if (!r) {
            rc = -1;
            break;
        }
        int64_t end = e->end_s < now_s ? e->end_s : now_s;
        if (end >= r->reset_s)
            acc_add(&r->acc, p, end, run_usage(p, e->elapsed_s, e->charge, e->billing));
    }
    for (size_t i = 0; rc == 0 && i < d.n; i++) {
        struct usage_acc_row *r = rows_get(st, cluster, x, &d.v[i].k, err);
        if (!r || key_recompute(st, cluster, p, r, now_s, err) < 0)
            rc = -1;
    }
    free(d.v);
    free(pend.v);
    return rc;
}

int store_usage_acc_list(store_t *st, const char *cluster, const struct store_usage_params *want,
                         int64_t now_s, store_usage_acc_f cb, void *arg, struct allot_error *err)
{
    if (store_ready(st, "usage accumulators", err) < 0 ||
        model_check_name("cluster", cluster, 0, err) < 0)
        return -1;
    struct store_usage_params p;
    int have = params_get(st, &p, err);
    if (!st->in_tx)
        st->uparams_state = 0; /* a reader has no store_begin: ask again next time */
    if (have < 0)
        return -1;
    if (!have)
        return allot_errorf(err, ALLOT_EUNAVAIL,
                            "usage: the accumulators are not built yet (allotd builds them when "
                            "it starts; `allot usage rebuild` builds them now)");
    if (want && !params_equal(&p, want))
        return allot_errorf(err, ALLOT_ECONFLICT,
                            "usage: the accumulators were kept with PriorityDecayHalfLife=%lld, "
                            "reset period %d, UsageSource=%s; restart allotd or run `allot usage "
                            "rebuild` to apply the configuration",
                            (long long)p.decay.halflife_s, (int)p.decay.reset,
                            source_name(p.billing));
    struct rows x = {0};
    db_stmt_t *s = ustmt(st, U_ACC_LIST, SQL_ACC_LIST, err);
    if (!s)
        return -1;
    db_bind_text(s, 1, cluster);
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        struct usage_acc_row *r = rows_push(&x, err);
        if (!r) {
            rc = -1;
            break;
        }
        row_key(r, db_column_text(s, 0), db_column_text(s, 1), db_column_text(s, 2));
        r->acc.ref_value = bitsd(db_column_int64(s, 3));
        r->acc.nodecay_value = bitsd(db_column_int64(s, 4));
        r->acc.ref_s = db_column_int64(s, 5);
        r->acc.period_start_s = db_column_int64(s, 6);
        r->reset_s = db_column_int64(s, 7);
    }
    db_reset(s);
    if (rc == 0)
        rc = add_unfolded(st, cluster, &p, &x, now_s, err);
    for (size_t i = 0; rc == 0 && i < x.n; i++) {
        int stop = cb(&x.v[i], &p, arg);
        if (stop)
            rc = stop;
    }
    free(x.v);
    return rc;
}

double store_usage_acc_value(const struct usage_acc_row *r, const struct store_usage_params *p,
                             int nodecay, int64_t now_s)
{
    decay_acc_t a = r->acc;
    if (nodecay)
        a.ref_value = 0.0;
    else
        a.nodecay_value = 0.0;
    return decay_acc_value(&a, &p->decay, now_s);
}

/* ---- writing: fold, rebuild, configure, clear ------------------------------------------- */

int store_usage_fold(store_t *st, int64_t now_s, struct allot_error *err)
{
    if (store_ready_write(st, "usage fold", err) < 0)
        return -1;
    struct store_usage_params p;
    int have = params_get(st, &p, err);
    if (have <= 0)
        return have; /* the rebuild that sets the params empties both tables */
    int64_t now = store_now_or(now_s);
    struct ckeys d = {0}, pend = {0};
    int rc = ckeys_load(st, 0, "", &d, err);
    if (rc == 0)
        rc = ckeys_load(st, 1, "", &pend, err);
    for (size_t i = 0; rc == 0 && i < pend.n; i++) {
        const struct ckey *e = &pend.v[i];
        if (!ckeys_has(&d, e))
            rc = store_usage_charge(st, e->cluster, e->k.account, e->k.user, e->k.qos, e->end_s,
                                    e->elapsed_s, e->charge, e->billing, now, err);
    }
    for (size_t i = 0; rc == 0 && i < d.n; i++) {
        struct usage_acc_row r = d.v[i].k;
        rc = key_recompute(st, d.v[i].cluster, &p, &r, now, err);
        if (rc == 0)
            rc = acc_put(st, d.v[i].cluster, &r, err);
    }
    db_stmt_t *s;
    if (rc == 0 && pend.n > 0) {
        s = ustmt(st, U_PENDING_DELETE, SQL_PENDING_DELETE, err);
        if (!s)
            rc = -1;
        else {
            db_bind_int64(s, 1, pend.last);
            rc = db_run(s, err);
        }
    }
    if (rc == 0 && d.n > 0) {
        s = ustmt(st, U_DIRTY_DELETE, SQL_DIRTY_DELETE, err);
        if (!s)
            rc = -1;
        else {
            db_bind_text(s, 1, "");
            rc = db_run(s, err);
        }
    }
    free(d.v);
    free(pend.v);
    return rc < 0 ? -1 : 0;
}

/* One accumulator being rebuilt: its key and the runs of that key, in end order. */
struct rebuild {
    char cluster[ALLOT_NAME_MAX];
    struct usage_acc_row r;
    int open;
};

static int rebuild_flush(store_t *st, struct rebuild *b, struct allot_error *err)
{
    if (!b->open)
        return 0;
    b->open = 0;
    return acc_put(st, b->cluster, &b->r, err);
}

int store_usage_rebuild(store_t *st, const struct store_usage_params *p, int64_t now_s,
                        int64_t *rows, struct allot_error *err)
{
    if (store_ready_write(st, "usage rebuild", err) < 0 || decay_params_check(&p->decay, err) < 0)
        return -1;
    int64_t now = store_now_or(now_s);
    if (db_exec(st->db, "DELETE FROM usage_acc", err) < 0 ||
        db_exec(st->db, "DELETE FROM usage_pending", err) < 0 ||
        db_exec(st->db, "DELETE FROM usage_dirty", err) < 0)
        return -1;
    db_stmt_t *s = ustmt(st, U_PARAMS_PUT, SQL_PARAMS_PUT, err);
    if (!s)
        return -1;
    db_bind_int64(s, 1, p->decay.halflife_s);
    db_bind_int64(s, 2, (int64_t)p->decay.reset);
    db_bind_text(s, 3, source_name(p->billing));
    if (db_run(s, err) < 0)
        return -1;
    st->uparams = *p;
    st->uparams_state = 2;
    s = ustmt(st, U_REBUILD_JOBS, SQL_REBUILD_JOBS, err);
    if (!s)
        return -1;
    struct rebuild b = {0};
    int64_t n = 0;
    int rc;
    while ((rc = db_step(s, err)) == 1) {
        const char *c = db_column_text(s, 0), *a = db_column_text(s, 1), *u = db_column_text(s, 2),
                   *q = db_column_text(s, 3);
        if (!b.open || strcmp(b.cluster, c) || strcmp(b.r.account, a) || strcmp(b.r.user, u) ||
            strcmp(b.r.qos, q)) {
            if (rebuild_flush(st, &b, err) < 0) {
                rc = -1;
                break;
            }
            text_copy(b.cluster, sizeof b.cluster, c);
            row_key(&b.r, a, u, q);
            decay_acc_init(&b.r.acc);
            if (acc_reset_time(st, b.cluster, b.r.account, b.r.user, &b.r.reset_s, err) < 0) {
                rc = -1;
                break;
            }
            b.open = 1;
            n++;
        }
        int64_t end = db_column_int64(s, 4);
        if (end > now)
            end = now;
        if (end >= b.r.reset_s)
            acc_add(
                &b.r.acc, p, end,
                run_usage(p, db_column_int64(s, 5), db_column_int64(s, 6), db_column_int64(s, 7)));
    }
    db_reset(s);
    if (rc < 0 || rebuild_flush(st, &b, err) < 0)
        return -1;
    if (rows)
        *rows = n;
    return 0;
}

int store_usage_configure(store_t *st, const struct store_usage_params *p, int64_t now_s,
                          int *rebuilt, struct allot_error *err)
{
    if (store_ready_write(st, "usage configure", err) < 0)
        return -1;
    struct store_usage_params have;
    st->uparams_state = 0;
    int rc = params_get(st, &have, err);
    if (rc < 0)
        return -1;
    if (rebuilt)
        *rebuilt = 0;
    if (rc == 1 && params_equal(&have, p))
        return store_usage_fold(st, now_s, err);
    if (rebuilt)
        *rebuilt = 1;
    return store_usage_rebuild(st, p, now_s, NULL, err);
}

int store_usage_acc_clear(store_t *st, const char *cluster, const char *account, const char *user,
                          int64_t now_s, struct allot_error *err)
{
    /* Pending runs first: they ended before the clear and must be hidden by it too. */
    if (store_usage_fold(st, now_s, err) < 0)
        return -1;
    struct decay_acc empty;
    decay_acc_init(&empty);
    db_stmt_t *s;
    if (user && user[0]) {
        s = ustmt(st, U_CLEAR_USER, SQL_CLEAR_USER, err);
        if (!s)
            return -1;
        db_bind_int64(s, 1, empty.period_start_s);
        db_bind_int64(s, 2, now_s);
        db_bind_text(s, 3, cluster);
        db_bind_text(s, 4, account);
        db_bind_text(s, 5, user);
    } else {
        s = ustmt(st, U_CLEAR_SUBTREE, SQL_CLEAR_SUBTREE, err);
        if (!s)
            return -1;
        db_bind_text(s, 1, account);
        db_bind_int64(s, 2, empty.period_start_s);
        db_bind_int64(s, 3, now_s);
        db_bind_text(s, 4, cluster);
    }
    return db_run(s, err);
}
