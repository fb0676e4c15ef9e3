/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_report.c - `allot report`: reports for people who decide on allocations.
 *   observe: what enforcement would have refused while allotd ran EnforceMode=observe
 *            (doc/adopt.md), per account, with the message each user would have read: a
 *            summary line per account, then its refusals oldest first.
 *   usage:   sreport's utilization by group and period (doc/reports.md): SU charged, jobs,
 *            CPU and GPU hours, CPU efficiency and refusals, from GET /v1/reports/usage. */
#include "cli/cli.h"

#include <inttypes.h>
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

static const struct field usage_filters[] = {
    {"group", "group", V_STR, "account, user, partition, resource or cluster (account)"},
    {"period", "period", V_STR, "month, quarter, year, total or alloc (month)"},
    {"start", "start", V_TIME, "runs that ended (refusals) at or after this time"},
    {"end", "end", V_TIME, "... and before this time"},
    {"cluster", "cluster", V_STR, "only this cluster"},
    {"account", "account", V_STR, "only this account"},
    {"user", "user", V_STR, "only this user"},
    {"partition", "partition", V_STR, "only this partition"},
    {0},
};

/* The group's column header: the group= value, capitalised as Slurm's headers are. */
static const struct {
    const char *group, *header;
} group_headers[] = {{"account", "Account"},
                     {"user", "User"},
                     {"partition", "Partition"},
                     {"resource", "Resource"},
                     {"cluster", "Cluster"}};

/* Hours from seconds, to the hundredth, rounded down (exact integer arithmetic). */
static void set_hours(json_t *row, const char *from, const char *to)
{
    json_int_t s = json_integer_value(json_object_get(row, from));
    char buf[48];
    snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT ".%02" JSON_INTEGER_FORMAT, s / 3600,
             s % 3600 * 100 / 3600);
    json_object_set_new(row, to, json_string(buf));
}

static void fix_usage_row(json_t *row)
{
    set_hours(row, "cpu_s", "cpu_hours");
    set_hours(row, "gpu_s", "gpu_hours");
    json_t *e = json_object_get(row, "cpu_efficiency");
    char buf[32] = "";
    if (json_is_number(e))
        snprintf(buf, sizeof buf, "%.1f", json_number_value(e));
    json_object_set_new(row, "cpu_efficiency", json_string(buf));
}

static int report_usage(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    struct kvlist kvs;
    int npos = 0, rc = -1;
    struct path p;

    if (args_split(argc, argv, NULL, 0, &npos, &kvs, err) < 0)
        return -1;
    const char *group = "account";
    for (int i = 0; i < kvs.n; i++)
        if (!strcmp(kvs.kv[i].key, "group"))
            group = kvs.kv[i].value;
    const char *header = NULL;
    for (size_t i = 0; i < sizeof group_headers / sizeof *group_headers; i++)
        if (!strcmp(group, group_headers[i].group))
            header = group_headers[i].header;
    if (!header)
        return allot_errorf(err, ALLOT_EINVAL,
                            "group: expected account, user, partition, resource or cluster");
    const struct column cols[] = {
        {header, group, C_STR},
        {"Period", "period", C_STR},
        {"Start", "start", C_TIME},
        {"End", "end", C_TIME},
        {"Jobs", "jobs", C_INT},
        {"Charged", "charged_sumin", C_SUMIN},
        {"CPUHours", "cpu_hours", C_STR},
        {"GPUHours", "gpu_hours", C_STR},
        {"CPUEff%", "cpu_efficiency", C_STR},
        {"Refusals", "refusals", C_INT},
        {0},
    };
    path_init(&p, "/v1/reports/usage");
    if (cli_fields_to_query(usage_filters, &kvs, &p, err) < 0 ||
        args_check_used(&kvs, "report usage", err) < 0)
        goto out;
    rc = cli_show(cli, p.s, cols, fix_usage_row, err);
out:
    path_fini(&p);
    return rc;
}

static int run_report(struct cli *cli, const char *verb, int argc, char **argv,
                      struct allot_error *err)
{
    if (!strcmp(verb, "observe"))
        return report_observe(cli, argc, argv, err);
    if (!strcmp(verb, "usage"))
        return report_usage(cli, argc, argv, err);
    return cli_bad_verb("report", verb, cmd_report.verbs, err);
}

const struct cli_command cmd_report = {
    .noun = "report",
    .summary = "reports: usage per group and period; what EnforceMode=observe saw",
    .help = "usage: allot report usage [group=G] [period=P] [start=DATE] [end=DATE]\n"
            "                          [cluster=C] [account=A] [user=U] [partition=P]\n"
            "       allot report observe [since=DATE] [account=A] [cluster=C]\n"
            "\n"
            "usage: what was used, like sreport, per group (group=account, user, partition,\n"
            "resource: the paying allocation's, or cluster) and period (period=month,\n"
            "quarter, year, total, or alloc: the window of the allocation that paid): the\n"
            "jobs settled, the SU charged (what the ledger debited for them), CPU and GPU\n"
            "hours (AllocTRES cpu and gres/gpu times elapsed), the CPU efficiency of the\n"
            "jobs with step records (allot-step) and the refusals.  A job counts in the\n"
            "period it ended in, a refusal in the one it happened in; periods are UTC.\n"
            "start and end bound those times (end excluded).  Users see their own jobs and\n"
            "refusals, their accounts' jobs, and the refusals of accounts they coordinate.\n"
            "-P, --csv and --json for scripts.\n"
            "\n"
            "observe: every admission and hold the bank would have refused while allotd ran with\n"
            "EnforceMode=observe (allot.conf), per account: how many refusals, how many of\n"
            "them name a started job (a hold; an admission has no job id yet), the SU they\n"
            "needed, then each refusal oldest first with the message the user would have\n"
            "read.  Fix the allocations it names before setting EnforceMode=enforce.\n"
            "With -P only the refusal rows are printed.\n"
            "\n"
            "examples:\n"
            "  allot report usage start=2026-01-01 end=2027-01-01 period=quarter\n"
            "  allot --csv report usage account=chem group=user\n"
            "  allot report observe since=2026-11-01\n"
            "  allot -P report observe account=chem\n",
    .run = run_report,
    .needs_verb = 1,
    .verbs = "usage, observe",
};
