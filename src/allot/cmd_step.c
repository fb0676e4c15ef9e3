/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_step.c - `allot step ...`: hand over to the allot-step program (Torc step monitoring,
 * DESIGN §7).  It is looked up next to the running allot (installed side by side), then in
 * the build tree layout (src/step/ beside src/allot/), then on PATH. */
#include "allot/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/xalloc.h"

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char **args = xcalloc((size_t)argc + 2, sizeof(char *));
    const char *tried = "PATH";

    (void)cli;
    (void)verb;
    args[0] = (char *)"allot-step";
    for (int i = 0; i < argc; i++)
        args[i + 1] = argv[i];
    fflush(stdout);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            char *next = xasprintf("%s/allot-step", self);
            char *build = xasprintf("%s/../step/allot-step", self);
            if (access(next, X_OK) == 0)
                execv(next, args);
            if (access(build, X_OK) == 0)
                execv(build, args);
            free(next);
            free(build);
            tried = "next to allot and on PATH";
        }
    }
    execvp("allot-step", args);
    free(args);
    return allot_errorf(err, ALLOT_EUNAVAIL, "step: cannot run allot-step (looked %s): %s", tried,
                        strerror(errno));
}

const struct cli_command cmd_step = {
    .noun = "step",
    .summary = "run a command as a monitored Slurm step (runs allot-step)",
    .help = "usage: allot step run [options] -- COMMAND [ARGS...]\n"
            "\n"
            "Runs allot-step with the same arguments; see 'allot-step --help'.\n"
            "\n"
            "examples:\n"
            "  allot step run --name=prep --cpus=2 -- ./prepare.sh\n",
    .run = run,
    .needs_verb = 0,
};
