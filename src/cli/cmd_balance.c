/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_balance.c - `allot balance`: per allocation granted / used / held / available, from
 * GET /v1/balances. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static const struct field filters[] = {
    {"account", "account", V_STR, "only this account"},
    {"user", "user", V_STR, "accounts this user is associated with"},
    {"active", "active", V_BOOL, "yes: only allocations active now (default: all)"},
    {"cluster", "cluster", V_STR, "only allocations a job on this cluster may draw on"},
    {0},
};

static const struct column columns[] = {
    {"Allocation", "id", C_INT},
    {"Account", "account", C_STR},
    {"Resource", "resource", C_STR},
    {"Cluster", "cluster", C_STR},
    {"Category", "category", C_STR},
    {"Granted", "granted_sumin", C_SUMIN},
    {"Used", "used_sumin", C_SUMIN},
    {"Held", "held_sumin", C_SUMIN},
    {"Available", "available_sumin", C_SUMIN},
    {"Period", "period", C_STR},
    {0},
};

/* Length of an ISO time as shown in Period: the date alone at midnight, else all of it (an
 * allocation starting at 10:00 must not read as starting at the day's start). */
static int period_len(const char *t)
{
    return strlen(t) == 20 && !strcmp(t + 10, "T00:00:00Z") ? 10 : (int)strlen(t);
}

/* A row without a "period" gets "START..END", so people see when it applies. */
static void add_period(json_t *row)
{
    const char *s = json_string_value(json_object_get(row, "start"));
    const char *e = json_string_value(json_object_get(row, "end"));
    char buf[96];
    if (json_object_get(row, "period") || !s || !e)
        return;
    snprintf(buf, sizeof(buf), "%.*s..%.*s", period_len(s), s, period_len(e), e);
    json_object_set_new(row, "period", json_string(buf));
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    struct path p;

    (void)verb; /* `balance` has no verb: every word is a filter */
    if (args_split(argc, argv, pos, 1, &npos, &kvs, err) < 0)
        return -1;
    path_init(&p, "/v1/balances");
    if (npos) /* `allot balance chem` = account=chem */
        path_query(&p, "account", pos[0]);
    if (cli_fields_to_query(filters, &kvs, &p, err) < 0 ||
        args_check_used(&kvs, "balance", err) < 0)
        goto out;
    rc = cli_show(cli, p.s, columns, add_period, err);
out:
    path_fini(&p);
    return rc;
}

const struct cli_command cmd_balance = {
    .noun = "balance",
    .summary = "balances per allocation: granted, used, held, available",
    .help = "usage: allot balance [ACCOUNT] [account=A] [user=U] [cluster=C] [active=yes|no]\n"
            "\n"
            "Granted = credits + carryover + adjustments - expiry; Used = debits - refunds;\n"
            "Held = holds of running jobs; Available = Granted - Used - Held.  Amounts are\n"
            "SU-hours (h) and minutes (m).  Users see the accounts they belong to.\n"
            "\n"
            "A job is paid by the allocation of its account, or of the nearest account above\n"
            "it that has one, for its partition's resource, scoped to the job's cluster or to\n"
            "every cluster, active at its start.  When that allocation runs short the job is\n"
            "refused: no other allocation makes up the difference.  cluster=C lists the\n"
            "allocations a job on C may draw on (scoped to C or to every cluster).\n"
            "\n"
            "examples:\n"
            "  allot balance\n"
            "  allot balance chem\n"
            "  allot -P -n balance account=chem active=yes\n"
            "  allot balance cluster=darwin active=yes\n",
    .run = run,
    .needs_verb = 0,
};
