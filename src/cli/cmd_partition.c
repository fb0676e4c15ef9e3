/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_partition.c - `allot partition ...`: Slurm partitions with the resource type they bill
 * and their TRES billing weights (doc/design.md §2.5, §3.2).  A partition is named within a
 * cluster, so every verb but add/show needs cluster=. */
#include "cli/cli.h"

static const struct field fields[] = {
    {"cluster", "cluster", V_STR, "cluster name (required)"},
    {"resource", "resource", V_STR, "resource type billed: cpu, gpu, ..."},
    {"billing", "billing_weights", V_STR, "TRESBillingWeights, e.g. CPU=1.0,Mem=0.25G"},
    {"billingweights", "billing_weights", V_STR, "same as billing"},
    {"maxtres", "max_tres", V_BOOL, "yes: billing is MAX_TRES"},
    {"qos", "qos", V_STR, "partition QOS"},
    {"defaulttime", "default_time_s", V_TIMELIMIT, "DefaultTime, Slurm syntax or NONE"},
    {"maxtime", "max_time_s", V_TIMELIMIT, "MaxTime, Slurm syntax or UNLIMITED"},
    {0},
};

static const struct field modify_fields[] = {
    {"resource", "resource", V_STR, "resource type billed"},
    {"billing", "billing_weights", V_STR, "TRESBillingWeights"},
    {"billingweights", "billing_weights", V_STR, "same as billing"},
    {"maxtres", "max_tres", V_BOOL, "yes: billing is MAX_TRES"},
    {"qos", "qos", V_STR, "partition QOS"},
    {"defaulttime", "default_time_s", V_TIMELIMIT, "DefaultTime; NONE (or empty) unsets it"},
    {"maxtime", "max_time_s", V_TIMELIMIT, "MaxTime; UNLIMITED (or empty) unsets it"},
    {0},
};

static const struct field filters[] = {
    {"cluster", "cluster", V_STR, "only this cluster"},
    {0},
};

static const struct column columns[] = {
    {"Cluster", "cluster", C_STR},
    {"Partition", "name", C_STR},
    {"Resource", "resource", C_STR},
    {"BillingWeights", "billing_weights", C_STR},
    {"MaxTRES", "max_tres", C_BOOL},
    {"QOS", "qos", C_STR},
    {"DefaultTime", "default_time_s", C_DEFTIME},
    {"MaxTime", "max_time_s", C_DURATION},
    {0},
};

static const struct crud crud = {
    .noun = "partition",
    .collection = "/v1/partitions",
    .name_json = "name",
    .item_prefix_key = "cluster",
    .add = fields,
    .modify = modify_fields,
    .filters = filters,
    .columns = columns,
};

const struct cli_command cmd_partition = {
    .noun = "partition",
    .summary = "partitions: resource type and TRES billing weights",
    .help = "usage: allot partition add NAME cluster=C [resource=cpu|gpu|...] [billing=WEIGHTS]\n"
            "                                [maxtres=yes] [qos=Q] [defaulttime=T] [maxtime=T]\n"
            "       allot partition show [NAME cluster=C] [cluster=C]\n"
            "       allot partition modify NAME cluster=C key=value...\n"
            "       allot partition remove NAME cluster=C\n"
            "\n"
            "defaulttime= and maxtime= take Slurm's time syntax, or NONE (also UNLIMITED,\n"
            "INFINITE, or empty) to unset them.  As in Slurm, show prints an unset MaxTime\n"
            "as UNLIMITED and an unset DefaultTime as NONE.\n"
            "\n"
            "examples:\n"
            "  allot partition add standard cluster=darwin resource=cpu\n"
            "  allot partition add gpu-v100 cluster=darwin resource=gpu \\\n"
            "        billing=CPU=0.0625,Mem=0.03125G,GRES/gpu=1.0 maxtres=yes maxtime=7-00:00:00\n"
            "  allot partition show cluster=darwin\n",
    .needs_verb = 1,
    .crud = &crud,
};
