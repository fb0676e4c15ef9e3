/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_import.c - finished jobs imported from sacct (store.h store_job_import).
 *
 * Design: one INSERT ... ON CONFLICT DO NOTHING per run makes the import idempotent per
 * (cluster, job, run) with a single statement, and RETURNING says whether the row is new,
 * so a second import writes nothing.  A run's row is its usage (store_usage.c), so usage for
 * fair-share needs nothing else.  With backfill the debits are appended per run and the
 * balances moved once per allocation for the batch (store_ledger_debits); payers are looked
 * up once per account and allocation period (an import is mostly the same few accounts).
 * Usage-only rows are settled runs with alloc_id 0 and a charge: store_check knows them by
 * settle_source "import" and expects no debit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/money.h"
#include "libstore/store_int.h"
#include "libutil/text.h"

static const char SQL_JOB_IMPORT[] =
    "INSERT INTO jobs (cluster, job_id, run, user_name, account, partition_name, qos, submit_s, "
    "start_s, end_s, req_tres, alloc_tres, billing_micro, time_limit_s, elapsed_s, slurm_state, "
    "status, hold_sumin, charge_sumin, alloc_id, payer_account, settle_source, updated_s) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, '', $10, $11, $12, $13, $14, 'settled', 0, "
    "$15, $16, $17, 'import', $18) ON CONFLICT (cluster, job_id, run) DO NOTHING RETURNING run";

#define PAYERS_MAX 64

struct payer_cache {
    struct allocation a[PAYERS_MAX];
    char key_account[PAYERS_MAX][ALLOT_NAME_MAX]; /* the job's account (a payer may be an
                                                     ancestor's allocation) */
    size_t n, next;
};

/* The allocation paying j at its start: 0 with *out, -1 with err (ENOENT naming the job). */
static int payer_of(store_t *st, struct payer_cache *c, const struct import_job *j,
                    struct allocation *out, struct allot_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct allocation *a = &c->a[i];
        if (!strcmp(c->key_account[i], j->account) && !strcmp(a->resource, j->resource) &&
            (!a->cluster[0] || !strcmp(a->cluster, j->cluster)) && j->start_s >= a->start_s &&
            j->start_s < a->end_s) {
            *out = *a;
            return 0;
        }
    }
    int rc = store_payer(st, j->account, j->resource, j->cluster, j->start_s, out, NULL, err);
    if (rc < 0)
        return -1;
    if (rc == 1)
        return allot_error_prefix(err, "job %lld run %d", (long long)j->job_id, (int)j->run);
    size_t k = c->n < PAYERS_MAX ? c->n++ : c->next++ % PAYERS_MAX;
    c->a[k] = *out;
    memcpy(c->key_account[k], j->account, ALLOT_NAME_MAX);
    return 0;
}

static int check_job(const struct import_job *j, struct allot_error *err)
{
    if (model_check_name("cluster", j->cluster, 0, err) < 0 ||
        model_check_name("user", j->user, 0, err) < 0 ||
        model_check_name("account", j->account, 0, err) < 0 ||
        model_check_name("partition", j->partition, 1, err) < 0 ||
        model_check_name("qos", j->qos, 1, err) < 0 ||
        model_check_name("resource", j->resource, 0, err) < 0)
        return -1;
    if (j->job_id <= 0 || j->run < 0)
        return allot_errorf(err, ALLOT_EINVAL, "job_id: must be positive");
    if (j->start_s <= 0 || j->end_s < j->start_s || j->elapsed_s < 0 || j->time_limit_s < 0 ||
        j->billing_micro < 0)
        return allot_errorf(err, ALLOT_EINVAL, "job %lld: times or amounts out of range",
                            (long long)j->job_id);
    return 0;
}

int store_job_import(store_t *st, const struct import_job *v, size_t n, int backfill,
                     const char *actor, int64_t now_s, struct import_result *res,
                     struct allot_error *err)
{
    memset(res, 0, sizeof *res);
    if (store_ready_write(st, "job import", err) < 0)
        return -1;
    struct payer_cache *pc = backfill ? calloc(1, sizeof *pc) : NULL;
    struct ledger_entry *deb = backfill ? calloc(n ? n : 1, sizeof *deb) : NULL;
    size_t ndeb = 0;
    int rc = -1;
    if (backfill && (!pc || !deb)) {
        allot_errorf(err, ALLOT_ENOMEM, "job import: out of memory");
        goto out;
    }
    int64_t now = store_now_or(now_s);
    for (size_t i = 0; i < n; i++) {
        const struct import_job *j = &v[i];
        struct allocation payer = {0};
        int64_t charge = 0;
        if (check_job(j, err) < 0)
            goto out;
        if (!store_is_node_fail(j->slurm_state) &&
            money_charge_sumin(j->billing_micro, j->elapsed_s, &charge, err) < 0) {
            allot_error_prefix(err, "job %lld: charge", (long long)j->job_id);
            goto out;
        }
        if (charge > STORE_AMOUNT_MAX) {
            allot_errorf(err, ALLOT_EINVAL, "job %lld: charge larger than %lld SU-minutes",
                         (long long)j->job_id, (long long)STORE_AMOUNT_MAX);
            goto out;
        }
        if (backfill && charge > 0 && payer_of(st, pc, j, &payer, err) < 0)
            goto out;
        db_stmt_t *s = store_stmt(st, STMT_JOB_IMPORT, SQL_JOB_IMPORT, err);
        if (!s)
            goto out;
        db_bind_text(s, 1, j->cluster);
        db_bind_int64(s, 2, j->job_id);
        db_bind_int64(s, 3, j->run);
        db_bind_text(s, 4, j->user);
        db_bind_text(s, 5, j->account);
        db_bind_text(s, 6, j->partition);
        db_bind_text(s, 7, j->qos);
        db_bind_int64(s, 8, j->start_s);
        db_bind_int64(s, 9, j->end_s);
        db_bind_text(s, 10, j->alloc_tres);
        db_bind_int64(s, 11, j->billing_micro);
        db_bind_int64(s, 12, j->time_limit_s);
        db_bind_int64(s, 13, j->elapsed_s);
        db_bind_text(s, 14, j->slurm_state);
        db_bind_int64(s, 15, charge);
        db_bind_int64(s, 16, payer.id);
        db_bind_text(s, 17, payer.account);
        db_bind_int64(s, 18, now);
        int step = db_step(s, err);
        db_reset(s);
        if (step < 0)
            goto out;
        if (step == 0) {
            res->already++;
            continue;
        }
        res->imported++;
        if (store_usage_charge(st, j->cluster, j->account, j->user, j->qos, j->end_s, j->elapsed_s,
                               charge, j->billing_micro, now, err) < 0)
            goto out;
        if (payer.id) {
            struct ledger_entry *e = &deb[ndeb++];
            e->alloc_id = payer.id;
            e->kind = LEDGER_DEBIT;
            e->amount_sumin = charge;
            text_copy(e->actor, sizeof e->actor, actor ? actor : "");
            e->time_s = now;
            snprintf(e->comment, sizeof e->comment, "import sacct %s", j->slurm_state);
            memcpy(e->cluster, j->cluster, sizeof e->cluster);
            e->job_id = j->job_id;
            e->run = j->run;
            res->charged_sumin += charge;
        }
    }
    rc = ndeb ? store_ledger_debits(st, deb, ndeb, err) : 0;
out:
    free(pc);
    free(deb);
    return rc;
}
