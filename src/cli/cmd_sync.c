/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_sync.c - `allot sync status [CLUSTER]` (doc/agent.md "Sync"): where allot's copy of a
 * cluster (accounts, users, associations, partitions) differs from Slurm, as allot-agent's
 * last sync pass found it, with Slurm's value and allot's side by side.  Without CLUSTER:
 * every cluster.  First the passes (one row per cluster), then the drifts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const struct column pass_cols[] = {
    {"Cluster", "cluster", C_STR},
    {"Mode", "mode", C_STR},
    {"LastPass", "synced", C_TIME},
    {"Drifts", "drifts", C_INT},
    {"Found", "found_total", C_INT},
    {"Resolved", "resolved_total", C_INT},
    {0},
};

static const struct column drift_cols[] = {
    {"Cluster", "cluster", C_STR}, {"Kind", "kind", C_STR},
    {"Object", "object", C_STR},   {"Field", "field", C_STR},
    {"Slurm", "slurm", C_STR},     {"Allot", "allot", C_STR},
    {"Status", "status", C_STR},   {"FirstSeen", "first_seen", C_TIME},
    {"Note", "note", C_STR},       {0},
};

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    if (!verb || strcmp(verb, "status") != 0)
        return cli_bad_verb("sync", verb, cmd_sync.verbs, err);
    if (argc > 1)
        return allot_errorf(err, ALLOT_EINVAL, "sync status: at most one CLUSTER");
    struct path p;
    path_init(&p, "/v1/sync");
    if (argc == 1)
        path_query(&p, "cluster", argv[0]);
    json_t *doc = cli_get_json(cli, p.s, err);
    path_fini(&p);
    if (!doc)
        return -1;
    if (cli->json) {
        char *text = json_dumps(doc, JSON_COMPACT);
        cli_print_json_text(text ? text : "null");
        free(text);
    } else {
        cli_print_table(cli, json_object_get(doc, "clusters"), pass_cols);
        printf("\n");
        cli_print_table(cli, json_object_get(doc, "items"), drift_cols);
    }
    json_decref(doc);
    return 0;
}

const struct cli_command cmd_sync = {
    .noun = "sync",
    .summary = "where allot's copy of a cluster differs from Slurm (allot-agent's sync)",
    .help = "usage: allot sync status [CLUSTER]\n"
            "\n"
            "First table, one row per cluster: the mode of allot-agent's last sync pass\n"
            "(follow, report or push), when it ran, the drifts it left, and the drifts\n"
            "found and resolved over every pass.  Second table, one row per drift: what\n"
            "differs (Kind partition/account/user/assoc, Object, Field) with Slurm's value\n"
            "and allot's side by side (empty: absent there), Status (reported: left as\n"
            "found; unresolvable: the mode cannot fix it; failed: fixing it failed, Note\n"
            "says why) and when it was first seen.  A resolved drift is not listed.\n"
            "\n"
            "examples:\n"
            "  allot sync status\n"
            "  allot sync status hpc -P\n",
    .run = run,
    .needs_verb = 1,
    .verbs = "status",
};
