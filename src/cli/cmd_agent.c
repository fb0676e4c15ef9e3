/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_agent.c - `allot agent status [CLUSTER]` (doc/design.md §5): per cluster, when its
 * allot-agent last polled, how many commands wait for it and since when (the backlog), and how far
 * its sacct reconciliation got (every job that ended before ReconciledUntil is settled or
 * reported).  Without CLUSTER: every cluster allotd knows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const struct column cols[] = {
    {"Cluster", "cluster", C_STR},
    {"LastSeen", "last_seen", C_TIME},
    {"Waiting", "waiting", C_INT},
    {"WaitingSince", "waiting_since", C_TIME},
    {"ReconciledUntil", "reconcile.until", C_TIME},
    {"Settled", "reconcile.settled", C_INT},
    {"Unknown", "reconcile.unknown", C_INT},
    {"LastReport", "reconcile.report", C_STR},
    {0},
};

/* GET /v1/agents/<cluster>, appended to rows. */
static int one(struct cli *cli, const char *cluster, json_t *rows, struct allot_error *err)
{
    struct path p;
    path_init(&p, "/v1/agents");
    path_segment(&p, cluster);
    json_t *doc = cli_get_json(cli, p.s, err);
    path_fini(&p);
    if (!doc)
        return -1;
    json_array_append_new(rows, doc);
    return 0;
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    if (!verb || strcmp(verb, "status") != 0)
        return cli_bad_verb("agent", verb, cmd_agent.verbs, err);
    if (argc > 1)
        return allot_errorf(err, ALLOT_EINVAL, "agent status: at most one CLUSTER");
    json_t *rows = json_array();
    int rc = 0;
    if (argc == 1) {
        rc = one(cli, argv[0], rows, err);
    } else {
        json_t *cl = cli_get_json(cli, "/v1/clusters", err);
        if (!cl)
            rc = -1;
        size_t i;
        json_t *c;
        json_array_foreach(cli_rows(cl), i, c)
        {
            const char *name = json_string_value(json_object_get(c, "name"));
            if (name && (rc = one(cli, name, rows, err)) < 0)
                break;
        }
        json_decref(cl);
    }
    if (rc == 0) {
        if (cli->json) {
            char *text = json_dumps(argc == 1 ? json_array_get(rows, 0) : rows, JSON_COMPACT);
            cli_print_json_text(text ? text : "null");
            free(text);
        } else {
            cli_print_table(cli, rows, cols);
        }
    }
    json_decref(rows);
    return rc;
}

const struct cli_command cmd_agent = {
    .noun = "agent",
    .summary = "allot-agent status per cluster: last seen, backlog, reconciliation",
    .help = "usage: allot agent status [CLUSTER]\n"
            "\n"
            "LastSeen: the agent's last poll.  Waiting/WaitingSince: commands not yet\n"
            "confirmed or failed, and the creation time of the oldest (a reset that waits\n"
            "since midnight means the agent is down or cannot reach allotd).\n"
            "ReconciledUntil: every job that ended before it was settled from sacct or\n"
            "reported as unknown (LastReport); Settled/Unknown count them.\n"
            "\n"
            "examples:\n"
            "  allot agent status\n"
            "  allot agent status hpc -P\n",
    .run = run,
    .needs_verb = 1,
    .verbs = "status",
};
