/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_step.c - `allot step ...`: `list` shows the step records allotd keeps for a job
 * (GET /v1/steps); every other verb hands over to the allot-step program (step
 * monitoring, doc/design.md §7).  It is looked up next to the running allot (installed side by
 * side), then in the build tree layout (src/step/ beside src/cli/), then on PATH.
 * The words after `step` are not parsed by allot.c (they belong to allot-step), so list
 * reads its own -P, -n and --json. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/xalloc.h"

static const struct column step_columns[] = {
    {"Cluster", "cluster", C_STR},
    {"JobID", "job_id", C_INT},
    {"Step", "step_name", C_STR},
    {"Attempt", "attempt", C_INT},
    {"User", "user", C_STR},
    {"Status", "status", C_STR},
    {"RC", "return_code", C_INT},
    {"Elapsed", "exec_text", C_STR},
    {"PeakMem", "peak_mem_text", C_STR},
    {"AvgCPU", "avg_cpu_text", C_STR},
    {"SlurmStep", "record.slurm_stats.slurm_step_id", C_STR},
    {"Recorded", "created", C_TIME},
    {0},
};

/* Display members derived from the record: elapsed with milliseconds, memory with a unit,
 * CPU as a percentage ("" when the record has no data). */
static void fix_step(json_t *row)
{
    char buf[64] = "";
    json_t *res = json_object_get(json_object_get(row, "record"), "result");
    json_t *ms = json_object_get(row, "exec_ms");
    if (json_is_integer(ms)) {
        json_int_t v = json_integer_value(ms);
        snprintf(buf, sizeof buf, "%lld.%03llds", (long long)(v / 1000), (long long)(v % 1000));
    }
    json_object_set_new(row, "exec_text", json_string(buf));
    buf[0] = '\0';
    json_t *mem = json_object_get(res, "peak_memory_bytes");
    if (json_is_integer(mem))
        cli_format_bytes(json_integer_value(mem), buf, sizeof buf);
    json_object_set_new(row, "peak_mem_text", json_string(buf));
    buf[0] = '\0';
    json_t *cpu = json_object_get(res, "avg_cpu_percent");
    if (json_is_number(cpu))
        snprintf(buf, sizeof buf, "%.1f%%", json_number_value(cpu));
    json_object_set_new(row, "avg_cpu_text", json_string(buf));
}

/* allot step list [CLUSTER:]JOBID [cluster=C] [user=U] [-P] [-n] [--json] */
static int step_list(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    const char *job = NULL, *cluster = NULL, *user = NULL;
    char cbuf[128];
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--json"))
            cli->json = 1;
        else if (!strcmp(w, "-P") || !strcmp(w, "--parsable"))
            cli->parsable = 1;
        else if (!strcmp(w, "-n") || !strcmp(w, "--noheader"))
            cli->noheader = 1;
        else if (!strcmp(w, "-Pn") || !strcmp(w, "-nP"))
            cli->parsable = cli->noheader = 1;
        else if (!strncmp(w, "cluster=", 8))
            cluster = w + 8;
        else if (!strncmp(w, "user=", 5))
            user = w + 5;
        else if (!job && w[0] != '-' && !strchr(w, '='))
            job = w;
        else
            return allot_errorf(err, ALLOT_EINVAL, "step list: unexpected '%s'", w);
    }
    if (!job)
        return allot_errorf(err, ALLOT_EINVAL,
                            "step list: which job? (allot step list [CLUSTER:]JOBID)");
    const char *colon = strchr(job, ':');
    if (colon) {
        size_t n = (size_t)(colon - job);
        if (n == 0 || n >= sizeof cbuf)
            return allot_errorf(err, ALLOT_EINVAL, "step list: bad job '%s'", job);
        memcpy(cbuf, job, n);
        cbuf[n] = '\0';
        cluster = cbuf;
        job = colon + 1;
    }
    int64_t id;
    if (args_uint("job", job, &id, err) < 0)
        return -1;
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)id);
    struct path p;
    path_init(&p, "/v1/steps");
    path_query(&p, "job", num);
    if (cluster)
        path_query(&p, "cluster", cluster);
    if (user)
        path_query(&p, "user", user);
    int rc = cli_show(cli, p.s, step_columns, fix_step, err);
    path_fini(&p);
    return rc;
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    if (argc > 0 && !strcmp(argv[0], "list"))
        return step_list(cli, argc - 1, argv + 1, err);
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
            "       allot step list [CLUSTER:]JOBID [cluster=C] [user=U] [-P] [--json]\n"
            "\n"
            "run: runs allot-step with the same arguments; see 'allot-step --help'.  With\n"
            "ALLOT_URL set (or --record) the step's record is also filed in allotd.\n"
            "list: the step records allotd keeps for a job (users see their own jobs').\n"
            "\n"
            "examples:\n"
            "  allot step run --name=prep --cpus=2 -- ./prepare.sh\n"
            "  allot step list darwin:1234\n",
    .run = run,
    .needs_verb = 0,
    .verbs = "run, list",
};
