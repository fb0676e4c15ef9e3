/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_db.c - `allot db upgrade|check|version|export|import|scrub-old-jobs`: act on the bank
 * database directly, for the operator on the bank host (allotd may be stopped).  The storage
 * settings come from allot.conf (--config, default /etc/allot/allot.conf) read by the shared
 * parser, so the CLI opens exactly the database allotd would. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"
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

/* A dump's progress on a terminal (cli/progress.h), fed by libstore after each row. */
static void on_dump_row(void *arg, int64_t done, int64_t total)
{
    struct progress *p = arg;
    p->done = done;
    if (total >= 0)
        p->total = total;
    progress_show(p, 0);
}

/* The rows of the dump in, when it is a regular file and stderr shows progress: its lines
 * but the header and the trailer; -1 otherwise.  in is left where it was. */
static int64_t dump_rows_in(FILE *in, const struct progress *p)
{
    struct stat sb;
    char buf[65536];
    int64_t lines = 0;
    size_t n;
    long at = ftell(in);
    if (!p->tty || at < 0 || fstat(fileno(in), &sb) < 0 || !S_ISREG(sb.st_mode))
        return -1;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        for (char *c = buf; (c = memchr(c, '\n', (size_t)(buf + n - c))); c++)
            lines++;
    clearerr(in);
    if (fseek(in, at, SEEK_SET) < 0)
        return -1;
    return lines > 2 ? lines - 2 : 0;
}

/* export [FILE]: the dump to FILE (written then renamed, so a failed export leaves no
 * partial file under the name) or stdout; import FILE|-: from FILE or stdin. */
static int dump_export(const struct cli *cli, store_t *st, const char *path,
                       struct allot_error *err)
{
    char tmp[4096];
    FILE *out = stdout;
    int64_t rows = 0;
    int rc;

    if (path && strcmp(path, "-") != 0) {
        if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
            return allot_errorf(err, ALLOT_EINVAL, "db export: file name too long");
        out = fopen(tmp, "w");
        if (!out)
            return allot_errorf(err, ALLOT_EIO, "db export: %s: %s", tmp, strerror(errno));
    }
    struct progress pg;
    progress_start(&pg, "db export", "rows", -1);
    struct store_dump_progress cb = {on_dump_row, &pg};
    rc = store_dump_export(st, out, (int64_t)time(NULL), &rows, pg.tty ? &cb : NULL, err);
    progress_show(&pg, 1);
    if (out != stdout) {
        if (fclose(out) != 0 && rc == 0)
            rc = allot_errorf(err, ALLOT_EIO, "db export: %s: %s", tmp, strerror(errno));
        if (rc == 0 && rename(tmp, path) != 0)
            rc = allot_errorf(err, ALLOT_EIO, "db export: %s: %s", path, strerror(errno));
        if (rc < 0)
            (void)unlink(tmp);
        else if (cli->json)
            printf("{\"rows\":%lld}\n", (long long)rows);
        else if (!cli->parsable)
            printf("exported %lld rows to %s\n", (long long)rows, path);
    }
    return rc;
}

static int dump_import(const struct cli *cli, store_t *st, const char *path,
                       struct allot_error *err)
{
    FILE *in = stdin;
    int64_t rows = 0;
    int rc;

    if (strcmp(path, "-") != 0) {
        in = fopen(path, "r");
        if (!in)
            return allot_errorf(err, ALLOT_ENOENT, "db import: %s: %s", path, strerror(errno));
    }
    struct progress pg;
    progress_start(&pg, "db import", "rows", -1);
    pg.total = dump_rows_in(in, &pg);
    struct store_dump_progress cb = {on_dump_row, &pg};
    rc = store_dump_import(st, in, &rows, pg.tty ? &cb : NULL, err);
    progress_show(&pg, 1);
    if (in != stdin)
        fclose(in);
    if (rc == 0) {
        if (cli->json)
            printf("{\"rows\":%lld}\n", (long long)rows);
        else if (!cli->parsable)
            printf("imported %lld rows\n", (long long)rows);
    }
    return rc;
}

/* scrub-old-jobs [WEEKS]: flux-accounting's scrub: delete the records of
 * jobs that ended (are not held) and were last updated more than WEEKS weeks ago, default
 * 26 (six months).  Their ledger entries stay, so balances do not change; their usage no
 * longer counts for fair-share. */
#define SCRUB_DEFAULT_WEEKS 26
#define SCRUB_MAX_WEEKS (52 * 1000)

static int scrub_old_jobs(const struct cli *cli, store_t *st, const char *arg,
                          struct allot_error *err)
{
    long long weeks = SCRUB_DEFAULT_WEEKS;
    if (arg) {
        char *end;
        errno = 0;
        weeks = strtoll(arg, &end, 10);
        if (errno || end == arg || *end || weeks < 0 || weeks > SCRUB_MAX_WEEKS)
            return allot_errorf(err, ALLOT_EINVAL,
                                "db scrub-old-jobs: WEEKS: '%s' is not a whole number of weeks "
                                "from 0 to %d",
                                arg, SCRUB_MAX_WEEKS);
    }
    int64_t now_s = (int64_t)time(NULL);
    int64_t before_s = now_s - (int64_t)weeks * 7 * 86400;
    int64_t deleted = 0;
    if (store_begin(st, err) < 0)
        return -1;
    if (store_job_scrub(st, before_s, now_s, &deleted, err) < 0) {
        store_rollback(st);
        return -1;
    }
    if (store_commit(st, err) < 0)
        return -1;
    if (cli->json)
        printf("{\"deleted\":%lld,\"before\":%lld}\n", (long long)deleted, (long long)before_s);
    else if (cli->parsable)
        printf("%s%lld|%lld\n", cli->noheader ? "" : "Deleted|Before\n", (long long)deleted,
               (long long)before_s);
    else
        printf("scrubbed %lld job record%s last updated more than %lld week%s ago\n",
               (long long)deleted, deleted == 1 ? "" : "s", weeks, weeks == 1 ? "" : "s");
    return 0;
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    store_t *st;
    int rc = -1;

    if (!verb ||
        (strcmp(verb, "upgrade") && strcmp(verb, "check") && strcmp(verb, "version") &&
         strcmp(verb, "export") && strcmp(verb, "import") && strcmp(verb, "scrub-old-jobs")))
        return cli_bad_verb("db", verb, cmd_db.verbs, err);
    if (!strcmp(verb, "import") && argc != 1)
        return allot_errorf(err, ALLOT_EINVAL, "db import: takes one FILE (- for stdin)");
    if (!strcmp(verb, "export") && argc > 1)
        return allot_errorf(err, ALLOT_EINVAL, "db export: takes at most one FILE");
    if (!strcmp(verb, "scrub-old-jobs") && argc > 1)
        return allot_errorf(err, ALLOT_EINVAL, "db scrub-old-jobs: takes at most one WEEKS");
    if (strcmp(verb, "import") && strcmp(verb, "export") && strcmp(verb, "scrub-old-jobs") &&
        argc > 0)
        return allot_errorf(err, ALLOT_EINVAL, "db %s: takes no arguments (use --config)", verb);
    st = open_store(cli, err);
    if (!st)
        return -1;
    if (!strcmp(verb, "version")) {
        rc = print_version(cli, st, err);
    } else if (!strcmp(verb, "export")) {
        rc = dump_export(cli, st, argc ? argv[0] : NULL, err);
    } else if (!strcmp(verb, "import")) {
        rc = dump_import(cli, st, argv[0], err);
    } else if (!strcmp(verb, "scrub-old-jobs")) {
        rc = scrub_old_jobs(cli, st, argc ? argv[0] : NULL, err);
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
    .summary = "database schema upgrade, integrity check, version, export/import, job scrub "
               "(bank host)",
    .help = "usage: allot [--config FILE] db upgrade|check|version|export [FILE]|import FILE|\n"
            "                                scrub-old-jobs [WEEKS]\n"
            "\n"
            "Opens the database named by allot.conf (StorageType, StorageLoc; default file\n"
            "/etc/allot/allot.conf) directly, without allotd.\n"
            "  upgrade  apply pending schema migrations (each in its own transaction)\n"
            "  check    verify the money invariants (balances equal ledger sums, one hold per\n"
            "           held job, ...); exits 5 when a problem is found\n"
            "  version  print the schema version and the latest this build knows\n"
            "  export   write every table as a versioned JSON-lines dump to FILE (or stdout);\n"
            "           ids are kept; writers wait while it runs\n"
            "  import   load a dump (FILE, - for stdin) into an EMPTY database upgraded to the\n"
            "           dump's schema, in one transaction; refused (nothing written) when the\n"
            "           file is truncated or its balances disagree with its ledger\n"
            "  scrub-old-jobs  delete the records of jobs not held and last updated more than\n"
            "           WEEKS weeks ago (default 26); their ledger entries and so every balance\n"
            "           stay; their usage stops counting for fair-share\n"
            "On a terminal, export and import show rows done / total and the rate on stderr.\n"
            "\n"
            "examples:\n"
            "  allot db version\n"
            "  allot --config /etc/allot/allot.conf db upgrade\n"
            "  allot db check\n"
            "  allot db scrub-old-jobs 4\n"
            "  allot --config sqlite.conf db export bank.jsonl\n"
            "  allot --config pg.conf db upgrade && allot --config pg.conf db import bank.jsonl\n",
    .run = run,
    .needs_verb = 1,
    .verbs = "upgrade, check, version, export, import, scrub-old-jobs",
};
