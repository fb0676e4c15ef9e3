/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_ledger.c - `allot ledger` (the append-only entries behind every balance) and
 * `allot failures` (jobs refused for lack of credit or a limit, with the numbers). */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static const struct field ledger_filters[] = {
    {"account", "account", V_STR, "entries of this account's allocations"},
    {"alloc", "alloc", V_INT, "entries of one allocation"},
    {"cluster", "cluster", V_STR, "entries about jobs of this cluster"},
    {"job", "job", V_INT, "entries about one job id"},
    {"since", "since", V_TIME, "entries at or after this time"},
    {"after", "after", V_INT, "entries after this entry id (paging)"},
    {"limit", "limit", V_INT, "at most this many entries"},
    {0},
};

static const struct column ledger_columns[] = {
    {"ID", "id", C_INT},       {"Alloc", "alloc_id", C_INT},        {"Time", "time", C_TIME},
    {"Kind", "kind", C_STR},   {"Amount", "amount_sumin", C_SUMIN}, {"Actor", "actor", C_STR},
    {"Job", "job_ref", C_STR}, {"Comment", "comment", C_STR},       {0},
};

/* "cluster:job_id" (".run" for requeued runs) for entries about a job. */
static void add_job_ref(json_t *row)
{
    const char *c = json_string_value(json_object_get(row, "cluster"));
    json_int_t id = json_integer_value(json_object_get(row, "job_id"));
    json_int_t run = json_integer_value(json_object_get(row, "run"));
    char buf[128];
    if (id <= 0)
        return;
    if (run > 0)
        snprintf(buf, sizeof(buf), "%s:%lld.%lld", c ? c : "", (long long)id, (long long)run);
    else
        snprintf(buf, sizeof(buf), "%s:%lld", c ? c : "", (long long)id);
    json_object_set_new(row, "job_ref", json_string(buf));
}

/* rows: what the list holds, for the hint when limit= may have cut it ("entries"); by_id: the
 * API pages it by next_after (cli_page). */
static int list(struct cli *cli, const char *base, const char *what, const char *rows, int by_id,
                int argc, char **argv, const struct field *filters, const struct column *cols,
                row_fix_f fix, struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    struct path p;
    struct cli_page pg = {rows, 0, by_id};

    if (args_split(argc, argv, pos, 1, &npos, &kvs, err) < 0)
        return -1;
    path_init(&p, base);
    if (npos) /* the one positional word is the account */
        path_query(&p, "account", pos[0]);
    if (cli_fields_to_query(filters, &kvs, &p, err) < 0 ||
        cli_page_limit(&kvs, &pg.limit, err) < 0 || args_check_used(&kvs, what, err) < 0)
        goto out;
    rc = cli_show_page(cli, p.s, cols, fix, &pg, err);
out:
    path_fini(&p);
    return rc;
}

static int run_ledger(struct cli *cli, const char *verb, int argc, char **argv,
                      struct allot_error *err)
{
    (void)verb;
    if (argc == 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "ledger: name an account or alloc=ID (see 'allot ledger --help')");
    return list(cli, "/v1/ledger", "ledger", "entries", 1, argc, argv, ledger_filters,
                ledger_columns, add_job_ref, err);
}

const struct cli_command cmd_ledger = {
    .noun = "ledger",
    .summary = "ledger entries (credits, holds, debits, refunds, ...) behind a balance",
    .help = "usage: allot ledger ACCOUNT [cluster=C] [job=ID] [since=DATE] [after=ID] [limit=N]\n"
            "       allot ledger alloc=ID [...]\n"
            "\n"
            "The ledger is append-only: corrections are new entries.  Kinds: credit, hold,\n"
            "release, debit, refund, carryover, expiry, adjustment.  Long lists are paged:\n"
            "with limit=N, a page that may not be the last ends with a note on stderr\n"
            "giving the after=ID of the next page (the last ID shown).\n"
            "\n"
            "examples:\n"
            "  allot ledger chem\n"
            "  allot ledger alloc=7 since=2026-03-01\n"
            "  allot ledger chem limit=100 after=500\n"
            "  allot -P ledger chem job=1234 cluster=darwin\n",
    .run = run_ledger,
    .needs_verb = 0,
};

static const struct field failure_filters[] = {
    {"account", "account", V_STR, "only this account"},
    {"user", "user", V_STR, "only this user"},
    {"since", "since", V_TIME, "at or after this time"},
    {"limit", "limit", V_INT, "at most this many rows"},
    {0},
};

static const struct column failure_columns[] = {
    {"ID", "id", C_INT},
    {"Time", "time", C_TIME},
    {"Job", "job_ref", C_STR},
    {"User", "user", C_STR},
    {"Account", "account", C_STR},
    {"Partition", "partition", C_STR},
    {"Stage", "stage", C_STR},
    {"Needed", "needed_sumin", C_SUMIN},
    {"Available", "available_sumin", C_SUMIN},
    {"Held", "held_sumin", C_SUMIN},
    {"Message", "message", C_STR},
    {0},
};

static int run_failures(struct cli *cli, const char *verb, int argc, char **argv,
                        struct allot_error *err)
{
    (void)verb;
    return list(cli, "/v1/failures", "failures", "failures", 0, argc, argv, failure_filters,
                failure_columns, add_job_ref, err);
}

const struct cli_command cmd_failures = {
    .noun = "failures",
    .summary = "jobs refused for lack of credit or a limit, and why",
    .help = "usage: allot failures [ACCOUNT] [account=A] [user=U] [since=DATE] [limit=N]\n"
            "\n"
            "Each row keeps the numbers that refused the job: what it needed, what was\n"
            "available and what running jobs held, and the message the user was given.\n"
            "\n"
            "examples:\n"
            "  allot failures\n"
            "  allot failures user=alice since=2026-03-01\n",
    .run = run_failures,
    .needs_verb = 0,
};
