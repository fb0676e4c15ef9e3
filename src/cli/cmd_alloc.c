/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_alloc.c - `allot alloc ...` (allocations: an account's SU for one resource type over
 * [start, end)) and `allot credit ID su=...` (a ledger entry adding to one).
 * Amounts are read here with money_parse_sumin and sent as SU-minutes, so a bad amount is
 * refused (exit 2) before anything is sent. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct field add_fields[] = {
    {"resource", "resource", V_STR, "resource type (cpu, gpu, ...), required"},
    {"cluster", "cluster", V_STR, "one cluster (default: all clusters)"},
    {"start", "start", V_TIME, "first day, YYYY-MM-DD (UTC), required"},
    {"end", "end", V_TIME, "end (exclusive), YYYY-MM-DD (UTC), required"},
    {"category", "category", V_STR, "category label (startup, research, ...)"},
    {"comment", "comment", V_STR, "free text"},
    {"su", "amount_sumin", V_AMOUNT, "initial credit, e.g. 100000h, 90m"},
    {0},
};

static const struct field modify_fields[] = {
    {"start", "start", V_TIME, "new start"},
    {"end", "end", V_TIME, "new end"},
    {"category", "category", V_STR, "category label"},
    {"comment", "comment", V_STR, "free text"},
    {0},
};

static const struct field filters[] = {
    {"account", "account", V_STR, "only this account"},
    {"resource", "resource", V_STR, "only this resource type"},
    {"active", "active", V_BOOL, "yes: only allocations active now"},
    {0},
};

static const struct column columns[] = {
    {"ID", "id", C_INT},
    {"Account", "account", C_STR},
    {"Resource", "resource", C_STR},
    {"Cluster", "cluster", C_STR},
    {"Category", "category", C_STR},
    {"Start", "start", C_TIME},
    {"End", "end", C_TIME},
    {"Granted", "balance.granted_sumin", C_SUMIN},
    {"Used", "balance.used_sumin", C_SUMIN},
    {"Held", "balance.held_sumin", C_SUMIN},
    {"Available", "balance.available_sumin", C_SUMIN},
    {"Comment", "comment", C_STR},
    {0},
};

static const struct crud crud = {
    .noun = "alloc",
    .collection = "/v1/allocations",
    .name_json = "account",
    .add = add_fields,
    .modify = modify_fields,
    .filters = filters,
    .columns = columns,
};

static int run_alloc(struct cli *cli, const char *verb, int argc, char **argv,
                     struct allot_error *err)
{
    /* show/modify/remove take the allocation's id, add the account: `alloc show chem` is
     * the likely slip, so say what to type instead of allotd's "not an id". */
    static const char *const by_id[] = {"show", "list", "modify", "update", "remove", "delete"};
    int takes_id = 0;
    for (size_t i = 0; verb && i < sizeof(by_id) / sizeof(by_id[0]); i++)
        takes_id |= !strcmp(verb, by_id[i]);
    if (takes_id) {
        for (int i = 0; i < argc; i++) {
            int64_t id;
            if (strchr(argv[i], '='))
                continue;
            if (args_uint("id", argv[i], &id, NULL) < 0 || id == 0)
                return allot_errorf(err, ALLOT_EINVAL,
                                    "alloc %s: '%s' is not an allocation id (for an account's "
                                    "allocations: allot alloc show account=%s)",
                                    verb, argv[i], argv[i]);
            break;
        }
    }
    return crud_run(cli, &crud, verb, argc, argv, err);
}

const struct cli_command cmd_alloc = {
    .noun = "alloc",
    .summary = "allocations: SU granted to an account for a resource type and period",
    .help = "usage: allot alloc add ACCOUNT resource=R start=DATE end=DATE [su=AMOUNT]\n"
            "                           [cluster=C] [category=TEXT] [comment=TEXT]\n"
            "       allot alloc show [ID] [account=A] [resource=R] [active=yes]\n"
            "       allot alloc modify ID [start=DATE] [end=DATE] [category=..] [comment=..]\n"
            "       allot alloc remove ID\n"
            "\n"
            "Amounts are SU-hours with unit suffixes: 100000h, 1.5h, 90m, 12h30m (a bare number\n"
            "is hours); su=0, or no su=, makes an empty allocation.  Dates are UTC:\n"
            "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ; end is exclusive.\n"
            "Two allocations of one account and resource may not overlap in time (exit 3).\n"
            "\n"
            "examples:\n"
            "  allot alloc add chem resource=cpu su=100000h start=2026-01-01 end=2027-01-01\n"
            "  allot alloc show account=chem active=yes\n"
            "  allot credit 7 su=5000h comment=\"supplement, ticket 1234\"\n",
    .run = run_alloc,
    .needs_verb = 1,
    .crud = &crud,
};

/* ---- credit ----------------------------------------------------------------------------- */

static const struct column ledger_columns[] = {
    {"ID", "id", C_INT},
    {"Alloc", "alloc_id", C_INT},
    {"Time", "time", C_TIME},
    {"Kind", "kind", C_STR},
    {"Amount", "amount_sumin", C_SUMIN},
    {"Actor", "actor", C_STR},
    {"Comment", "comment", C_STR},
    {0},
};

/* The keys credit reads by hand, so allotd's field names in errors become them. */
static const struct field credit_keys[] = {
    {"su", "amount_sumin", V_SAMOUNT, "amount"},
    {"key", "idempotency_key", V_STR, "idempotency key"},
    {0},
};

static int run_credit(struct cli *cli, const char *verb, int argc, char **argv,
                      struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    const char *amount, *kind, *v;
    int64_t id, sumin;
    json_t *body = NULL, *root = NULL;
    char *reply = NULL;
    struct path p = {0};

    /* `credit` has no verb: the word after it is the allocation id. */
    if (!verb)
        return allot_errorf(err, ALLOT_EINVAL, "credit: missing the allocation id");
    if (args_uint("allocation id", verb, &id, err) < 0 || id == 0)
        return allot_errorf(err, ALLOT_EINVAL, "credit: '%s' is not an allocation id", verb);
    if (args_split(argc, argv, pos, 0, &npos, &kvs, err) < 0)
        return -1;
    kind = args_get(&kvs, "kind");
    if (!kind)
        kind = "credit";
    if (strcmp(kind, "credit") && strcmp(kind, "adjustment") && strcmp(kind, "refund"))
        return allot_errorf(err, ALLOT_EINVAL, "kind: must be credit, adjustment or refund");
    amount = args_get(&kvs, "su");
    if (!amount)
        return allot_errorf(err, ALLOT_EINVAL, "su: required (e.g. su=100h)");
    if (args_amount("su", amount, !strcmp(kind, "adjustment"), &sumin, err) < 0)
        return -1;
    if (sumin == 0)
        return allot_errorf(err, ALLOT_EINVAL, "su: must not be zero");
    body = json_pack("{s:s, s:I}", "kind", kind, "amount_sumin", (json_int_t)sumin);
    if ((v = args_get(&kvs, "comment")))
        json_object_set_new(body, "comment", json_string(v));
    if ((v = args_get(&kvs, "key")))
        json_object_set_new(body, "idempotency_key", json_string(v));
    if (args_check_used(&kvs, "credit", err) < 0)
        goto out;
    char idtext[32];
    snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
    path_init(&p, "/v1/allocations");
    path_segment(&p, idtext);
    path_segment(&p, "credit");
    rc = cli_request(cli, "POST", p.s, body, &reply, err);
    if (rc < 0)
        cli_error_keys(credit_keys, err);
    if (rc == 0) {
        if (cli->json) {
            cli_print_json_text(reply);
        } else {
            root = json_loads(reply ? reply : "", 0, NULL);
            if (json_is_object(root)) {
                json_t *rows = json_array();
                json_t *entry = json_object_get(root, "entry");
                json_array_append(rows, json_is_object(entry) ? entry : root);
                cli_print_table(cli, rows, ledger_columns);
                json_decref(rows);
            }
        }
    }
out:
    json_decref(root);
    json_decref(body);
    free(reply);
    path_fini(&p);
    return rc;
}

const struct cli_command cmd_credit = {
    .noun = "credit",
    .summary = "add SU to an allocation (credit, adjustment or refund ledger entry)",
    .help = "usage: allot credit ALLOC-ID su=AMOUNT [kind=credit|adjustment|refund]\n"
            "                    [comment=TEXT] [key=IDEMPOTENCY-KEY]\n"
            "\n"
            "Appends one ledger entry; balances are derived from the ledger.  Adjustments may be\n"
            "negative (su=-10h).  With key=, repeating the command adds nothing the second time.\n"
            "\n"
            "examples:\n"
            "  allot credit 7 su=5000h comment=\"supplement\"\n"
            "  allot credit 7 su=-2h kind=adjustment comment=\"correction, ticket 99\" key=t99\n",
    .run = run_credit,
    .needs_verb = 1,
};
