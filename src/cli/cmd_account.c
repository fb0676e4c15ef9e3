/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_account.c - `allot account ...`: the account tree (doc/design.md §2). */
#include "cli/cli.h"

static const struct field fields[] = {
    {"parent", "parent", V_STR, "parent account (default root)"},
    {"fairshare", "shares", V_INT, "fair-share RawShares (default 1)"},
    {"shares", "shares", V_INT, "same as fairshare"},
    {"description", "description", V_STR, "free text"},
    {"organization", "organization", V_STR, "organization name"},
    {"qos", "qos", V_STR, "the account association's QOS list (\"\" = inherited)"},
    {"defaultqos", "default_qos", V_STR, "its default QOS (\"\" = inherited)"},
    {"coordinators", "coordinators", V_STR, "users who may read its members' usage (A,B)"},
    {0},
};

/* The same keys as add; parent's default means nothing on modify. */
static const struct field modify_fields[] = {
    {"parent", "parent", V_STR, "move the account under this parent"},
    {"fairshare", "shares", V_INT, "fair-share RawShares"},
    {"shares", "shares", V_INT, "same as fairshare"},
    {"description", "description", V_STR, "free text"},
    {"organization", "organization", V_STR, "organization name"},
    {"coordinators", "coordinators", V_STR, "users who may read its members' usage (\"\" = none)"},
    {0},
};

static const struct column columns[] = {
    {"Account", "name", C_STR},
    {"Parent", "parent", C_STR},
    {"Shares", "shares", C_INT},
    {"Organization", "organization", C_STR},
    {"Description", "description", C_STR},
    {"Coordinators", "coordinators", C_STR},
    {0},
};

static const struct crud crud = {
    .noun = "account",
    .collection = "/v1/accounts",
    .name_json = "name",
    .add = fields,
    .modify = modify_fields,
    .columns = columns,
};

const struct cli_command cmd_account = {
    .noun = "account",
    .summary = "manage the account tree (Slurm accounts, banks, projects)",
    .help = "usage: allot account add NAME [parent=ACCOUNT] [fairshare=N] [description=TEXT]\n"
            "                              [organization=NAME]\n"
            "       allot account show [NAME]\n"
            "       allot account modify NAME key=value...\n"
            "       allot account remove NAME\n"
            "\n"
            "Accounts form a tree under 'root'.  An account cannot be removed while it has\n"
            "children, associations or allocations (exit 3).\n"
            "\n"
            "coordinators=USER,... names the account's coordinators (its PIs, as Slurm's\n"
            "coordinators): each may read the account's per-user usage, jobs, refusals and\n"
            "forecasts, on the command line and on the dashboard; they change nothing.\n"
            "\n"
            "examples:\n"
            "  allot account add science\n"
            "  allot account add chem parent=science fairshare=100 description=\"Chemistry\"\n"
            "  allot account modify chem fairshare=200\n"
            "  allot account modify chem coordinators=alice\n"
            "  allot account show\n",
    .needs_verb = 1,
    .crud = &crud,
};
