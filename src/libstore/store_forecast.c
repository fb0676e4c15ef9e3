/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_forecast.c - an allocation's exhaustion forecast from its stored ledger
 * (libcore/forecast.h has the model; this file only reads the entries it needs). */
#include "libcore/forecast.h"
#include "libcore/money.h"
#include "libstore/store_int.h"

struct gather {
    struct forecast_burn burn;
    int64_t at_s;
    int want_balance;
    int64_t granted, used, held;
    struct allot_error *err;
};

static int on_entry(const struct ledger_entry *e, void *arg)
{
    struct gather *g = arg;
    if (e->time_s > g->at_s)
        return 0; /* after the forecast's instant */
    if (g->want_balance && model_ledger_deltas(e, &g->granted, &g->used, &g->held, g->err) < 0)
        return -1;
    return forecast_burn_add(&g->burn, e, g->err) < 0 ? -1 : 0;
}

int store_alloc_forecast(store_t *st, const struct allocation *a, const struct balance *now,
                         int64_t at_s, int window, struct forecast *f, struct balance *from,
                         struct allot_error *err)
{
    struct gather g = {.at_s = at_s, .want_balance = now == NULL, .err = err};
    if (forecast_burn_init(&g.burn, a->start_s, at_s, window, err) < 0)
        return -1;
    /* With the balance given only the window is read; else every entry up to at_s. */
    struct ledger_filter lf = {.alloc_id = a->id, .since_s = now ? g.burn.from_s : 0};
    if (store_ledger_list(st, &lf, on_entry, &g, err) < 0)
        return allot_error_prefix(err, "allocation %lld", (long long)a->id);
    struct balance b = {
        .alloc_id = a->id, .granted_sumin = g.granted, .used_sumin = g.used, .held_sumin = g.held};
    if (now)
        b = *now;
    else if (money_sub(b.granted_sumin, b.used_sumin, &b.available_sumin) < 0 ||
             money_sub(b.available_sumin, b.held_sumin, &b.available_sumin) < 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "allocation %lld: its balance leaves int64",
                            (long long)a->id);
    if (forecast_compute(&g.burn, b.available_sumin, a->end_s, f, err) < 0)
        return allot_error_prefix(err, "allocation %lld", (long long)a->id);
    if (from)
        *from = b;
    return 0;
}
