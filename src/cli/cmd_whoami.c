/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_whoami.c - `allot whoami`: the identity and role allotd sees for this caller. */
#include "cli/cli.h"

static const struct column columns[] = {
    {"User", "user", C_STR},
    {"UID", "uid", C_OPTINT},
    {"Role", "role", C_STR},
    {0},
};

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    (void)argv;
    if (verb || argc > 0)
        return allot_errorf(err, ALLOT_EINVAL, "whoami: takes no arguments");
    return cli_show(cli, "/v1/whoami", columns, NULL, err);
}

const struct cli_command cmd_whoami = {
    .noun = "whoami",
    .summary = "show the user and role allotd sees for you",
    .help = "usage: allot whoami\n"
            "\n"
            "Roles: superuser, admin, operator, user.  With --as USER, a superuser or admin\n"
            "sees what USER would see.\n"
            "\n"
            "examples:\n"
            "  allot whoami\n"
            "  allot --as alice whoami\n",
    .run = run,
    .needs_verb = 0,
};
