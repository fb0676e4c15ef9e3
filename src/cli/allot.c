/* SPDX-License-Identifier: GPL-3.0-or-later */
/* allot.c - the `allot` command: global options, then `NOUN [VERB] [NAME] [key=value...]`
 * dispatched to the table of commands (cmd_<noun>.c), sacctmgr's style (doc/design.md §8.4).
 *
 * main() is the table of contents: parse the global options, find the command, run it,
 * print `allot: error: <message>` on failure and exit with allot_error_exit_status().
 * Global options may appear anywhere before `--` (so `allot balance -P` works), except
 * after `step`, whose arguments belong to allot-step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "libutil/xalloc.h"

#ifndef ALLOT_CLI_DB
/* Built without libstore (cmake -DALLOT_CLI_DB=OFF): say so instead of "unknown command". */
static int db_absent(struct cli *cli, const char *verb, int argc, char **argv,
                     struct allot_error *err)
{
    (void)cli, (void)verb, (void)argc, (void)argv;
    return allot_errorf(err, ALLOT_EUNAVAIL,
                        "db: this allot was built without libstore (ALLOT_CLI_DB=OFF)");
}
const struct cli_command cmd_db = {
    .noun = "db",
    .summary = "database commands (not in this build)",
    .help = "usage: allot db upgrade|check|version\n\nNot in this build (ALLOT_CLI_DB=OFF).\n",
    .run = db_absent,
    .needs_verb = 1,
    .verbs = "upgrade, check, version",
};
#endif

static const struct cli_command *const commands[] = {
    &cmd_cluster,   &cmd_account,  &cmd_user,    &cmd_assoc,   &cmd_qos,   &cmd_partition,
    &cmd_alloc,     &cmd_credit,   &cmd_balance, &cmd_ledger,  &cmd_job,   &cmd_failures,
    &cmd_limits,    &cmd_db,       &cmd_whoami,  &cmd_step,    &cmd_share, &cmd_tree,
    &cmd_usage,     &cmd_priority, &cmd_policy,  &cmd_command, &cmd_agent, &cmd_sync,
    &cmd_dashboard, &cmd_import,   &cmd_export,  &cmd_report, /* cmd_report.c */
    &cmd_forecast,                                            /* cmd_forecast.c */
    &cmd_whatif,                                              /* cmd_whatif.c */
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fputs("usage: allot [options] NOUN [VERB] [NAME] [key=value ...]\n"
          "\n"
          "allot is the command-line client of allotd, the allocation bank: accounts,\n"
          "allocations of service units (SU), balances, ledgers, job charges and limits.\n"
          "Amounts are SU-hours with unit suffixes (100000h, 1.5h, 90m); dates are UTC.\n"
          "\n"
          "options:\n"
          "  --url URL        allotd address: http://HOST:PORT or unix:/PATH\n"
          "                   (default $ALLOT_URL, else unix:/run/allot/allotd.sock)\n"
          "  --as USER        act as USER (superusers and admins)\n"
          "  --json           print the API's JSON\n"
          "  -P, --parsable   '|'-separated output with a header line\n"
          "  -p               the same, every line ending with '|' (sacctmgr -p)\n"
          "  --csv            comma-separated output (RFC 4180) with a header line\n"
          "  -n, --noheader   no header line\n"
          "  -o, --format F   a listing's columns by header name, in order, widths\n"
          "                   after %: -o Account,Available%12 (or format=F, sacctmgr's)\n"
          "  --timeout SEC    give up on allotd after SEC seconds (or Nms; default 5)\n"
          "  --dry-run        allot import: print the changes, write nothing\n"
          "  --config FILE    allot.conf for 'allot db' (default /etc/allot/allot.conf)\n"
          "  -h, --help       this text; 'allot NOUN --help' for a command\n"
          "  --version        print the version\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i]->noun, commands[i]->summary);
    fputs("\n"
          "examples:\n"
          "  allot account add chem parent=science fairshare=100\n"
          "  allot alloc add chem resource=cpu su=100000h start=2026-01-01 end=2027-01-01\n"
          "  allot balance\n"
          "  allot ledger chem\n"
          "  allot job show 1234\n"
          "  allot limits show alice\n"
          "\n"
          "exit status: 0 ok, 1 refused (funds or limits), 2 invalid input, 3 not found or\n"
          "conflict, 4 authentication or permission, 5 allotd unavailable or internal error.\n",
          f);
}

static void print_fields(const char *title, const struct field *fields)
{
    if (!fields || !fields->key)
        return;
    printf("\n%s:\n", title);
    for (const struct field *f = fields; f->key; f++)
        printf("  %-16s %s\n", f->key, f->help ? f->help : "");
}

/* A plain crud noun has no run function of its own: crud_run serves it. */
static int command_run(const struct cli_command *cmd, struct cli *cli, const char *verb, int argc,
                       char **argv, struct allot_error *err)
{
    if (cmd->run)
        return cmd->run(cli, verb, argc, argv, err);
    return crud_run(cli, cmd->crud, verb, argc, argv, err);
}

static void command_help(const struct cli_command *c)
{
    fputs(c->help, stdout);
    if (c->crud) {
        if (!(c->crud->flags & CRUD_NO_ADD))
            print_fields("keys for add", c->crud->add);
        if (!(c->crud->flags & CRUD_NO_MODIFY))
            print_fields("keys for modify", c->crud->modify ? c->crud->modify : c->crud->add);
        print_fields("filters for show", c->crud->filters);
    }
}

static const struct cli_command *find_command(const char *noun)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i]->noun, noun))
            return commands[i];
    /* A few sacctmgr-style plurals and aliases. */
    static const struct {
        const char *alias, *noun;
    } aliases[] = {{"accounts", "account"},     {"users", "user"},      {"clusters", "cluster"},
                   {"allocation", "alloc"},     {"allocs", "alloc"},    {"association", "assoc"},
                   {"partitions", "partition"}, {"jobs", "job"},        {"failure", "failures"},
                   {"limit", "limits"},         {"balances", "balance"}};
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (!strcmp(aliases[i].alias, noun))
            return find_command(aliases[i].noun);
    return NULL;
}

/* --timeout: seconds ("5", at most 600) or milliseconds ("250ms"). */
static int parse_timeout(const char *s, long *ms, struct allot_error *err)
{
    size_t n = strlen(s);
    int64_t v;
    char num[32];
    int millis = n > 2 && !strcmp(s + n - 2, "ms");
    if (millis)
        n -= 2;
    if (n == 0 || n >= sizeof(num))
        return allot_errorf(err, ALLOT_EINVAL, "--timeout: expected seconds or Nms");
    memcpy(num, s, n);
    num[n] = '\0';
    if (args_uint("--timeout", num, &v, err) < 0)
        return -1;
    if (!millis)
        v = v > ALLOT_MAX_TIMEOUT_MS / 1000 ? ALLOT_MAX_TIMEOUT_MS + 1 : v * 1000;
    if (v < 1 || v > ALLOT_MAX_TIMEOUT_MS)
        return allot_errorf(err, ALLOT_EINVAL, "--timeout: must be 1 ms .. %d s",
                            ALLOT_MAX_TIMEOUT_MS / 1000);
    *ms = (long)v;
    return 0;
}

/* The value of an option given as "--opt=V" or "--opt V".  *i advances past a separate
 * value.  NULL when this word is not the option. */
static const char *opt_value(const char *name, int argc, char **argv, int *i,
                             struct allot_error *err, int *bad)
{
    size_t n = strlen(name);
    const char *w = argv[*i];
    if (strncmp(w, name, n) != 0)
        return NULL;
    const char *v;
    if (w[n] == '=')
        v = w + n + 1;
    else if (w[n] != '\0')
        return NULL;
    else if (*i + 1 >= argc)
        v = NULL;
    else
        v = argv[++*i];
    /* An empty value (--as "" from an unset variable) would quietly mean the default
     * (yourself, the default socket): refuse it like a missing one. */
    if (!v || !*v) {
        allot_errorf(err, ALLOT_EINVAL, "%s: missing value", name);
        *bad = 1;
        return NULL;
    }
    return v;
}

enum parse_result { PARSE_RUN, PARSE_HELP, PARSE_VERSION, PARSE_ERROR };

/* Take the global options out of argv; the remaining words go to words[0..*nwords). */
static enum parse_result parse_options(int argc, char **argv, struct cli *cli, char **words,
                                       int *nwords, struct allot_error *err)
{
    int nw = 0, passthrough = 0, help = 0;

    for (int i = 1; i < argc; i++) {
        const char *w = argv[i], *v;
        int bad = 0;
        /* `allot step --help` is ours; later words belong to allot-step. */
        if (passthrough && nw == 1 && (!strcmp(w, "--help") || !strcmp(w, "-h"))) {
            help = 1;
            continue;
        }
        if (!passthrough && !strncasecmp(w, "format=", 7)) { /* sacctmgr's format= */
            cli->format = w + 7;
            continue;
        }
        if (passthrough || w[0] != '-' || w[1] == '\0' ||
            (w[1] >= '0' && w[1] <= '9')) { /* negative numbers are not options */
            words[nw++] = argv[i];
            if (nw == 1 && !strcmp(w, "step"))
                passthrough = 1;
            continue;
        }
        if (!strcmp(w, "--")) {
            passthrough = 1;
            continue;
        }
        if (!strcmp(w, "--json")) {
            cli->json = 1;
        } else if (!strcmp(w, "-P") || !strcmp(w, "--parsable") || !strcmp(w, "--parsable2")) {
            cli->parsable = 1;
        } else if (!strcmp(w, "--csv")) {
            cli->parsable = 3;
        } else if (!strcmp(w, "-n") || !strcmp(w, "--noheader")) {
            cli->noheader = 1;
        } else if (!strcmp(w, "-p")) {
            cli->parsable = 2;
        } else if (!strcmp(w, "-Pn") || !strcmp(w, "-nP")) {
            cli->parsable = cli->noheader = 1;
        } else if (!strcmp(w, "-pn") || !strcmp(w, "-np")) {
            cli->parsable = 2;
            cli->noheader = 1;
        } else if (!strcmp(w, "-h") || !strcmp(w, "--help")) {
            help = 1;
        } else if (!strcmp(w, "--dry-run")) {
            cli->dry_run = 1;
        } else if (!strcmp(w, "--version") || !strcmp(w, "-V")) {
            return PARSE_VERSION;
        } else if ((v = opt_value("--url", argc, argv, &i, err, &bad))) {
            cli->url = v;
        } else if ((v = opt_value("--as", argc, argv, &i, err, &bad))) {
            cli->as = v;
        } else if ((v = opt_value("--config", argc, argv, &i, err, &bad))) {
            cli->config = v;
        } else if ((v = opt_value("--format", argc, argv, &i, err, &bad)) ||
                   (!bad && (v = opt_value("-o", argc, argv, &i, err, &bad)))) {
            cli->format = v;
        } else if ((v = opt_value("--timeout", argc, argv, &i, err, &bad))) {
            if (parse_timeout(v, &cli->timeout_ms, err) < 0)
                return PARSE_ERROR;
        } else if (!bad) {
            allot_errorf(err, ALLOT_EINVAL, "unknown option '%s' (see allot --help)", w);
            return PARSE_ERROR;
        }
        if (bad)
            return PARSE_ERROR;
    }
    *nwords = nw;
    return help ? PARSE_HELP : PARSE_RUN;
}

int main(int argc, char **argv)
{
    struct allot_error err = {0}, print_err = {0};
    struct cli cli = {.prog = argv[0], .print_err = &print_err};
    char **words = xcalloc((size_t)argc + 1, sizeof(char *));
    int nwords = 0, rc = 0;
    const struct cli_command *cmd = NULL;

    /* The bash completion's question (completion/allot.bash): what may come next. */
    if (argc >= 2 && !strcmp(argv[1], "--complete")) {
        rc = cli_complete(&cli, commands, NCOMMANDS, find_command, argc - 2, argv + 2);
        goto out;
    }
    switch (parse_options(argc, argv, &cli, words, &nwords, &err)) {
    case PARSE_ERROR:
        goto fail;
    case PARSE_VERSION:
        printf("allot %s\n", allot_version());
        goto out;
    case PARSE_HELP:
        cmd = nwords ? find_command(words[0]) : NULL;
        if (cmd) {
            command_help(cmd);
        } else if (nwords && strcmp(words[0], "help") != 0) {
            /* `allot NOSUCH --help`: the noun is the mistake, not a request for help. */
            allot_errorf(&err, ALLOT_EINVAL, "unknown command '%s' (see allot --help)", words[0]);
            goto fail;
        } else {
            usage(stdout);
        }
        goto out;
    case PARSE_RUN:
        break;
    }
    if (nwords == 0) {
        usage(stderr);
        rc = 2;
        goto out;
    }
    if (!strcmp(words[0], "help")) {
        cmd = nwords > 1 ? find_command(words[1]) : NULL;
        if (cmd)
            command_help(cmd);
        else
            usage(stdout);
        goto out;
    }
    cmd = find_command(words[0]);
    if (!cmd) {
        allot_errorf(&err, ALLOT_EINVAL, "unknown command '%s' (see allot --help)", words[0]);
        goto fail;
    }
    if (nwords > 1 && !strcmp(words[1], "help") && cmd->needs_verb) {
        command_help(cmd);
        goto out;
    }
    if (cmd->needs_verb)
        rc = command_run(cmd, &cli, nwords > 1 ? words[1] : NULL, nwords > 2 ? nwords - 2 : 0,
                         words + (nwords > 2 ? 2 : nwords), &err);
    else
        rc = command_run(cmd, &cli, NULL, nwords - 1, words + 1, &err);
    if (rc == 0 && !print_err.code && cli.format && !cli.json && cli_tables_printed() == 0)
        allot_errorf(&print_err, ALLOT_EINVAL, "format: 'allot %s' prints no columns to pick from",
                     cmd->noun);
    if (rc == 0 && print_err.code) /* a format= naming no column of the listing */
        err = print_err;
    else if (rc == 0)
        goto out;
fail:
    fflush(stdout);
    fprintf(stderr, "allot: error: %s\n", err.msg[0] ? err.msg : allot_strerror(err.code));
    rc = allot_error_exit_status(err.code);
    if (rc == 0) /* a failure never exits 0 */
        rc = 5;
out:
    allot_client_destroy(cli.client);
    free(words);
    return rc;
}
