/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_user.c - `allot user ...`: people known to the bank. */
#include "cli/cli.h"

static const struct field fields[] = {
    {"uid", "uid", V_OPTINT, "Unix uid; an empty value (uid=) unsets it"},
    {"defaultaccount", "default_account", V_STR, "default account (one of its associations)"},
    {"default_account", "default_account", V_STR, "same as defaultaccount"},
    {0},
};

static const struct column columns[] = {
    {"User", "name", C_STR},
    {"UID", "uid", C_OPTINT},
    {"DefaultAccount", "default_account", C_STR},
    {0},
};

static const struct crud crud = {
    .noun = "user",
    .collection = "/v1/users",
    .name_json = "name",
    .add = fields,
    .columns = columns,
};

const struct cli_command cmd_user = {
    .noun = "user",
    .summary = "manage users (use 'assoc' to put a user in an account)",
    .help = "usage: allot user add NAME [uid=N] [defaultaccount=ACCOUNT]\n"
            "       allot user show [NAME]\n"
            "       allot user modify NAME key=value...\n"
            "       allot user remove NAME\n"
            "\n"
            "examples:\n"
            "  allot user add alice uid=1001\n"
            "  allot assoc add cluster=darwin account=chem user=alice\n"
            "  allot user modify alice defaultaccount=chem\n"
            "  allot user modify alice uid=\n",
    .needs_verb = 1,
    .crud = &crud,
};
