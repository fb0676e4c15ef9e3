/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_qos.c - `allot qos ...`: Slurm QOS as the bank knows them (doc/design.md §2.4, §4). */
#include "cli/cli.h"

static const struct field fields[] = {
    {"priority", "priority", V_INT, "QOS priority"},
    {"flags", "flags", V_STR, "comma-separated Slurm QOS flags (DenyOnLimit,NoDecay,...)"},
    {"usagefactor", "usage_factor", V_DECIMAL, "UsageFactor, e.g. 1.5"},
    {"limitfactor", "limit_factor", V_DECIMAL, "LimitFactor, e.g. 2"},
    {"description", "description", V_STR, "free text"},
    {0},
};

static const struct column columns[] = {
    {"Name", "name", C_STR},
    {"Priority", "priority", C_INT},
    {"Flags", "flags", C_STR},
    {"UsageFactor", "usage_factor", C_STR},
    {"LimitFactor", "limit_factor", C_STR},
    {"Description", "description", C_STR},
    {0},
};

static const struct crud crud = {
    .noun = "qos",
    .collection = "/v1/qos",
    .name_json = "name",
    .add = fields,
    .columns = columns,
};

const struct cli_command cmd_qos = {
    .noun = "qos",
    .summary = "manage quality-of-service levels",
    .help = "usage: allot qos add NAME [priority=N] [flags=F1,F2] [usagefactor=X]\n"
            "                          [limitfactor=X] [description=TEXT]\n"
            "       allot qos show [NAME]\n"
            "       allot qos modify NAME key=value...\n"
            "       allot qos remove NAME\n"
            "\n"
            "examples:\n"
            "  allot qos add normal priority=10\n"
            "  allot qos add slow priority=0 usagefactor=0.5 flags=DenyOnLimit\n",
    .needs_verb = 1,
    .crud = &crud,
};
