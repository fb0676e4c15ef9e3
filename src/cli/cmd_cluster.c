/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_cluster.c - `allot cluster add|show|remove`: the Slurm clusters the bank serves. */
#include "cli/cli.h"

static const struct field no_fields[] = {{0}};

static const struct column columns[] = {
    {"Cluster", "name", C_STR},
    {0},
};

static const struct crud crud = {
    .noun = "cluster",
    .collection = "/v1/clusters",
    .name_json = "name",
    .add = no_fields,
    .columns = columns,
    .flags = CRUD_NO_MODIFY | CRUD_NO_GET_ONE,
};

const struct cli_command cmd_cluster = {
    .noun = "cluster",
    .summary = "add, show or remove the Slurm clusters the bank serves",
    .help = "usage: allot cluster add NAME\n"
            "       allot cluster show [NAME]\n"
            "       allot cluster remove NAME\n"
            "\n"
            "Clusters are Slurm ClusterName values; jobs are keyed by (cluster, job id, run).\n"
            "\n"
            "examples:\n"
            "  allot cluster add darwin\n"
            "  allot -P cluster show\n",
    .needs_verb = 1,
    .crud = &crud,
};
