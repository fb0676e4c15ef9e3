/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_db.c - `allot db upgrade|check|version`: act on the bank database directly, for the
 * operator on the bank host (allotd may be stopped).  The storage settings come from
 * allot.conf (--config, default /etc/allot/allot.conf) read by the shared parser, so the CLI
 * opens exactly the database allotd would. */
#include "allot/cli.h"

#include <stdio.h>
#include <string.h>

#include "libconf/conf.h"
#include "libstore/store.h"

#define DEFAULT_CONF "/etc/allot/allot.conf"

static store_t *open_store(const struct cli *cli, struct allot_error *err)
{
    const char *path = cli->config ? cli->config : DEFAULT_CONF;
    struct allot_conf *conf = conf_load(path, err);
    store_t *st;

    if (!conf)
        return NULL;
    struct store_config sc = {
        .backend = conf->storage_type,
        .target = conf->storage_loc,
        .busy_timeout_ms = (int)conf->storage_timeout_ms,
        .durable = 1,
    };
    st = store_open(&sc, err);
    if (!st)
        allot_error_prefix(err, "%s: storage", path);
    conf_unref(conf);
    return st;
}

static int print_version(const struct cli *cli, store_t *st, struct allot_error *err)
{
    int current, latest;
    if (store_schema_version(st, &current, &latest, err) < 0)
        return -1;
    if (cli->json)
        printf("{\"backend\":\"%s\",\"schema\":%d,\"latest\":%d}\n", store_backend(st), current,
               latest);
    else if (cli->parsable)
        printf("%s%s|%d|%d\n", cli->noheader ? "" : "Backend|Schema|Latest\n", store_backend(st),
               current, latest);
    else
        printf("backend %s, schema version %d, latest %d%s\n", store_backend(st), current, latest,
               current < latest ? " (run 'allot db upgrade')" : "");
    return 0;
}

struct problems {
    int n;
    int json;
};

static void on_problem(const char *problem, void *arg)
{
    struct problems *p = arg;
    p->n++;
    if (!p->json)
        printf("problem: %s\n", problem);
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    store_t *st;
    int rc = -1;

    (void)argv;
    if (!verb || (strcmp(verb, "upgrade") && strcmp(verb, "check") && strcmp(verb, "version")))
        return cli_bad_verb("db", verb, "upgrade, check, version", err);
    if (argc > 0)
        return allot_errorf(err, ALLOT_EINVAL, "db %s: takes no arguments (use --config)", verb);
    st = open_store(cli, err);
    if (!st)
        return -1;
    if (!strcmp(verb, "version")) {
        rc = print_version(cli, st, err);
    } else if (!strcmp(verb, "upgrade")) {
        if (store_upgrade(st, err) == 0)
            rc = print_version(cli, st, err);
    } else {
        struct problems p = {0, cli->json};
        int n = store_check(st, on_problem, &p, err);
        if (n >= 0) {
            if (cli->json)
                printf("{\"problems\":%d}\n", n);
            else if (!cli->parsable)
                printf("%d problem%s found\n", n, n == 1 ? "" : "s");
            rc = n == 0
                     ? 0
                     : allot_errorf(err, ALLOT_EINTERNAL, "db check: %d problem%s in the database",
                                    n, n == 1 ? "" : "s");
        }
    }
    store_close(st);
    return rc;
}

const struct cli_command cmd_db = {
    .noun = "db",
    .summary = "database schema upgrade, integrity check and version (on the bank host)",
    .help = "usage: allot [--config FILE] db upgrade|check|version\n"
            "\n"
            "Opens the database named by allot.conf (StorageType, StorageLoc; default file\n"
            "/etc/allot/allot.conf) directly, without allotd.\n"
            "  upgrade  apply pending schema migrations (each in its own transaction)\n"
            "  check    verify the money invariants (balances equal ledger sums, one hold per\n"
            "           held job, ...); exits 5 when a problem is found\n"
            "  version  print the schema version and the latest this build knows\n"
            "\n"
            "examples:\n"
            "  allot db version\n"
            "  allot --config /etc/allot/allot.conf db upgrade\n"
            "  allot db check\n",
    .run = run,
    .needs_verb = 1,
};
