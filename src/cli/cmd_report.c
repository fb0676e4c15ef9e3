/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_report.c - `allot report observe`: what enforcement would have refused while allotd
 * ran EnforceMode=observe (doc/adopt.md), per account, with the message each user would
 * have read.  One table: a summary line per account, then its refusals oldest first. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static const struct field observe_filters[] = {
    {"since", "since", V_TIME, "refusals at or after this time"},
    {"account", "account", V_STR, "only this account"},
    {"cluster", "cluster", V_STR, "only this cluster"},
    {0},
};

static const struct column summary_columns[] = {
    {"Account", "account", C_STR},
    {"Refusals", "refusals", C_INT},
    {"Jobs", "jobs", C_INT},
    {"Needed", "needed_sumin", C_SUMIN},
    {0},
};

static const struct column refusal_columns[] = {
    {"Account", "account", C_STR},
    {"Time", "time", C_TIME},
    {"Stage", "stage", C_STR},
    {"Cluster", "cluster", C_STR},
    {"JobID", "job_id", C_INT},
    {"User", "user", C_STR},
    {"Partition", "partition", C_STR},
    {"Needed", "needed_sumin", C_SUMIN},
    {"Available", "available_sumin", C_SUMIN},
    {"Message", "message", C_STR},
    {0},
};

static int report_observe(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    struct kvlist kvs;
    int npos = 0, rc = -1;
    struct path p;
    json_t *root = NULL;

    if (args_split(argc, argv, NULL, 0, &npos, &kvs, err) < 0)
        return -1;
    path_init(&p, "/v1/reports/observe");
    if (cli_fields_to_query(observe_filters, &kvs, &p, err) < 0 ||
        args_check_used(&kvs, "report observe", err) < 0)
        goto out;
    if (cli->json) {
        rc = cli_show(cli, p.s, refusal_columns, NULL, err);
        goto out;
    }
    root = cli_get_json(cli, p.s, err);
    if (!root)
        goto out;
    json_t *accounts = json_object_get(root, "accounts");
    json_t *rows = json_array();
    size_t i;
    json_t *a;
    json_array_foreach(accounts, i, a)
    {
        size_t j;
        json_t *f;
        json_array_foreach(json_object_get(a, "items"), j, f) json_array_append(rows, f);
    }
    if (!cli->parsable) {
        const char *mode = json_string_value(json_object_get(root, "enforce_mode"));
        printf("EnforceMode=%s; what enforcement would have refused, per account:\n",
               mode ? mode : "?");
        cli_print_table(cli, accounts, summary_columns);
        printf("\n");
    }
    cli_print_table(cli, rows, refusal_columns);
    json_decref(rows);
    rc = 0;
out:
    json_decref(root);
    path_fini(&p);
    return rc;
}

static int run_report(struct cli *cli, const char *verb, int argc, char **argv,
                      struct allot_error *err)
{
    if (!strcmp(verb, "observe"))
        return report_observe(cli, argc, argv, err);
    return cli_bad_verb("report", verb, cmd_report.verbs, err);
}

const struct cli_command cmd_report = {
    .noun = "report",
    .summary = "reports: what EnforceMode=observe saw enforcement would refuse",
    .help = "usage: allot report observe [since=DATE] [account=A] [cluster=C]\n"
            "\n"
            "Every admission and hold the bank would have refused while allotd ran with\n"
            "EnforceMode=observe (allot.conf), per account: how many refusals, how many of\n"
            "them name a started job (a hold; an admission has no job id yet), the SU they\n"
            "needed, then each refusal oldest first with the message the user would have\n"
            "read.  Fix the allocations it names before setting EnforceMode=enforce.\n"
            "With -P only the refusal rows are printed.\n"
            "\n"
            "examples:\n"
            "  allot report observe since=2026-11-01\n"
            "  allot -P report observe account=chem\n",
    .run = run_report,
    .needs_verb = 1,
    .verbs = "observe",
};
