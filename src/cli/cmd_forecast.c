/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_forecast.c - `allot forecast`: when each allocation's available balance reaches zero
 * at its recent burn, with a band, and what is left at its end (GET /v1/forecasts, or GET
 * /v1/allocations/{id}/forecast for one; the model is doc/forecast.md's). */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static const struct field filters[] = {
    {"account", "account", V_STR, "only this account"},
    {"user", "user", V_STR, "accounts this user is associated with"},
    {"active", "active", V_BOOL, "yes: only allocations active now (default: all)"},
    {"window", "window", V_INT, "days of history the burn is taken from (default 14)"},
    {0},
};

static const struct field one_filters[] = {
    {"window", "window", V_INT, "days of history the burn is taken from (default 14)"},
    {"at", "at", V_TIME, "the forecast as made at this time, from the entries written by then"},
    {0},
};

static const struct column columns[] = {
    {"Allocation", "id", C_INT},
    {"Account", "account", C_STR},
    {"Resource", "resource", C_STR},
    {"Available", "available_sumin", C_SUMIN},
    {"Burn/day", "burn_sumin_per_day", C_SUMIN},
    {"Exhausts", "exhausts", C_TIME},
    {"Earliest", "exhausts_early", C_TIME},
    {"Latest", "exhausts_late", C_TIME},
    {"DaysLeft", "days_left", C_STR},
    {"End", "end", C_TIME},
    {"AtEnd", "end_balance_sumin", C_SUMIN},
    {0},
};

/* "never" for a balance that does not run out at this rate; days left with 2 decimals. */
static void fix_row(json_t *row)
{
    static const char *const when[] = {"exhausts", "exhausts_early", "exhausts_late"};
    for (size_t i = 0; i < sizeof(when) / sizeof(when[0]); i++)
        if (json_is_null(json_object_get(row, when[i])))
            json_object_set_new(row, when[i], json_string("never"));
    json_t *d = json_object_get(row, "days_left");
    char buf[64];
    if (json_is_number(d))
        snprintf(buf, sizeof buf, "%.2f", json_number_value(d));
    else
        snprintf(buf, sizeof buf, "never");
    json_object_set_new(row, "days_left", json_string(buf));
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    struct path p;
    char buf[96];

    (void)verb; /* `forecast` has no verb: every word is a filter */
    if (args_split(argc, argv, pos, 1, &npos, &kvs, err) < 0)
        return -1;
    const char *alloc = args_get(&kvs, "alloc");
    if (alloc) {
        int64_t id;
        if (args_uint("alloc", alloc, &id, err) < 0)
            return -1;
        if (npos)
            return allot_errorf(err, ALLOT_EINVAL, "forecast: give an account or alloc=, not both");
        snprintf(buf, sizeof buf, "/v1/allocations/%lld/forecast", (long long)id);
        path_init(&p, buf);
        if (cli_fields_to_query(one_filters, &kvs, &p, err) < 0)
            goto out;
    } else {
        path_init(&p, "/v1/forecasts");
        if (npos) /* `allot forecast chem` = account=chem */
            path_query(&p, "account", pos[0]);
        if (cli_fields_to_query(filters, &kvs, &p, err) < 0)
            goto out;
    }
    if (args_check_used(&kvs, "forecast", err) < 0)
        goto out;
    rc = cli_show(cli, p.s, columns, fix_row, err);
out:
    path_fini(&p);
    return rc;
}

const struct cli_command cmd_forecast = {
    .noun = "forecast",
    .summary = "when each allocation runs out at its recent burn, and what is left at its end",
    .help = "usage: allot forecast [ACCOUNT] [account=A] [user=U] [active=yes|no] [window=DAYS]\n"
            "       allot forecast alloc=ID [window=DAYS] [at=DATE]\n"
            "\n"
            "Burn/day is the net use (debits - refunds) of the last DAYS whole days (default\n"
            "14), weighted toward recent days; Exhausts is when Available reaches zero at that\n"
            "rate (never: no burn), Earliest..Latest the band at one standard deviation of the\n"
            "daily burn either side; AtEnd the available balance expected at the allocation's\n"
            "end (negative: the shortfall).  Holds of running and pending jobs are already out\n"
            "of Available.  at= shows the forecast as it was made at that time.\n"
            "\n"
            "examples:\n"
            "  allot forecast\n"
            "  allot forecast chem active=yes\n"
            "  allot -P forecast alloc=3 window=14\n",
    .run = run,
    .needs_verb = 0,
};
