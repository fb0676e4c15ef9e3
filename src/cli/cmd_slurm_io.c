/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_slurm_io.c - `allot import slurm` and `allot export slurm`: the bank's accounts,
 * users, associations, QOS and limits from and to the file `sacctmgr dump` writes.
 *
 * Import reads the files (or, with live=yes on the cluster, runs `sacctmgr dump` and
 * `sacctmgr show qos -P` itself) and sends them whole to POST /v1/import/slurm: allotd
 * checks every line and applies the lot in one transaction, so there is no half import.
 * The reply lists every change, one per line (the diff), computed and applied in that one
 * transaction; with --dry-run allotd computes the same list and writes nothing.  A second
 * import of the same dump prints "no changes".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "libcore/model.h"
#include "libslurmtext/sacctmgr_dump.h"
#include "libutil/xalloc.h"

#define INPUT_MAX (16 * 1024 * 1024) /* allotd's body limit for the import */
#define IMPORT_TIMEOUT_MS 300000     /* one transaction of a whole site */

static char *read_all(FILE *f, const char *what, size_t *len, struct allot_error *err)
{
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n > INPUT_MAX) {
            free(buf);
            return allot_errorf(err, ALLOT_ETOOBIG, "%s: larger than %d bytes", what, INPUT_MAX),
                   NULL;
        }
        if (cap - n - 1 == 0)
            buf = xrealloc(buf, cap *= 2);
    }
    if (ferror(f)) {
        free(buf);
        return allot_errorf(err, ALLOT_EIO, "%s: %s", what, strerror(errno)), NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static char *read_path(const char *path, size_t *len, struct allot_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return allot_errorf(err, ALLOT_EINVAL, "%s: %s", path, strerror(errno)), NULL;
    char *s = read_all(f, path, len, err);
    fclose(f);
    return s;
}

/* Output of a sacctmgr command line (its words are checked names, never shell text). */
static char *run_sacctmgr(const char *cmd, size_t *len, struct allot_error *err)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return allot_errorf(err, ALLOT_EIO, "%s: %s", cmd, strerror(errno)), NULL;
    char *s = read_all(p, cmd, len, err);
    int st = pclose(p);
    if (s && st != 0) {
        free(s);
        return allot_errorf(err, ALLOT_EIO, "'%s' failed (status %d)", cmd, st), NULL;
    }
    return s;
}

/* slurm.conf's PriorityFlags from `scontrol show config` ("PriorityFlags = MAX_TRES,..."). */
static char *live_priority_flags(struct allot_error *err)
{
    size_t n;
    char *text = run_sacctmgr("scontrol show config", &n, err);
    if (!text)
        return NULL;
    char *flags = NULL, *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (strncmp(l, "PriorityFlags", 13) != 0)
            continue;
        char *eq = strchr(l, '=');
        if (eq) {
            eq++;
            while (*eq == ' ')
                eq++;
            flags = xstrdup(eq);
        }
        break;
    }
    free(text);
    return flags ? flags : xstrdup("");
}

static int live_inputs(const char *cluster, char **dump, size_t *dlen, char **qos, size_t *qlen,
                       struct allot_error *err)
{
    char tmp[] = "/tmp/allot-import-XXXXXX", cmd[512];
    int fd = mkstemp(tmp);
    if (fd < 0)
        return allot_errorf(err, ALLOT_EIO, "mkstemp: %s", strerror(errno));
    close(fd);
    unlink(tmp); /* sacctmgr dump writes it anew */
    snprintf(cmd, sizeof cmd, "sacctmgr -i dump %s file=%s >/dev/null", cluster, tmp);
    size_t n;
    char *out = run_sacctmgr(cmd, &n, err);
    if (!out)
        return -1;
    free(out);
    *dump = read_path(tmp, dlen, err);
    unlink(tmp);
    if (!*dump)
        return -1;
    *qos = run_sacctmgr("sacctmgr -P show qos", qlen, err);
    return *qos ? 0 : -1;
}

static int live_partitions(char **parts, size_t *plen, char **flags, struct allot_error *err)
{
    if (!(*parts = run_sacctmgr("scontrol show partition -o", plen, err)))
        return -1;
    return (*flags = live_priority_flags(err)) ? 0 : -1;
}

static void print_lines(json_t *reply, const char *key, FILE *f)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(reply, key), i, v) fprintf(f, "%s\n", json_string_value(v));
}

/* The records of a dump (Cluster, Parent, Account and User lines), for the progress line;
 * allotd reads the dump itself and says where a bad line is, so a bad one here only stops
 * the count. */
static int64_t dump_records(const char *dump, size_t len)
{
    struct slt_dump_cursor c;
    struct slt_dump_record r;
    struct slt_span parent;
    struct allot_error e = {0};
    long line;
    int64_t n = 0;
    slt_dump_cursor_init(&c, dump, len);
    while (slt_dump_next(&c, &r, &line, &parent, &e) == 1)
        n++;
    return n;
}

/* POST the import; prints the changes (or "no changes") and the notes.  allotd applies a
 * dump in one transaction, so the progress line has two states: none of the dump's records
 * done while the request runs, all of them (with the rate) when it is answered. */
static int post(struct cli *cli, json_t *body, int64_t records, int dry_run,
                struct allot_error *err)
{
    char *reply = NULL;
    struct progress pg;
    json_object_set_new(body, "dry_run", json_boolean(dry_run));
    progress_start(&pg, "import slurm", "records", records);
    pg.last -= 1; /* draw "0 / N" now: the request may take seconds */
    progress_show(&pg, 0);
    int rc = cli_request(cli, "POST", "/v1/import/slurm", body, &reply, err);
    if (rc < 0) {
        progress_show(&pg, 1);
        free(reply);
        return -1;
    }
    pg.done = records;
    progress_show(&pg, 1);
    json_t *doc = json_loads(reply ? reply : "{}", 0, NULL);
    if (cli->json) {
        cli_print_json_text(reply);
    } else {
        const char *c = json_string_value(json_object_get(doc, "cluster"));
        json_int_t n = json_integer_value(json_object_get(doc, "changed"));
        json_t *rd = json_object_get(doc, "read");
        print_lines(doc, "changes", stdout);
        print_lines(doc, "notes", stdout);
        printf("import slurm cluster %s: read %lld accounts, %lld users, %lld associations, "
               "%lld QOS, %lld partitions; %s",
               c ? c : "?", (long long)json_integer_value(json_object_get(rd, "accounts")),
               (long long)json_integer_value(json_object_get(rd, "users")),
               (long long)json_integer_value(json_object_get(rd, "assocs")),
               (long long)json_integer_value(json_object_get(rd, "qos")),
               (long long)json_integer_value(json_object_get(rd, "partitions")),
               n == 0 ? "no changes\n" : "");
        if (n)
            printf("%lld changes%s\n", (long long)n,
                   dry_run ? " (dry run: nothing written)" : " written");
    }
    json_decref(doc);
    free(reply);
    return 0;
}

static int do_import(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    const char *pos[2];
    int npos = 0;
    struct kvlist kvs;
    int rc = args_split(argc, argv, pos, 2, &npos, &kvs, err);
    if (rc < 0)
        return -1;
    if (npos != 1 || strcmp(pos[0], "slurm") != 0)
        return allot_errorf(err, ALLOT_EINVAL, "import: expected 'allot import slurm ...'");
    const char *file = args_get(&kvs, "file"), *qosf = args_get(&kvs, "qos");
    const char *cluster = args_get(&kvs, "cluster"), *live = args_get(&kvs, "live");
    const char *partf = args_get(&kvs, "partitions"), *pflags = args_get(&kvs, "priorityflags");
    if (args_check_used(&kvs, "import slurm", err) < 0)
        return -1;
    int is_live = live && strcmp(live, "yes") == 0;
    if (live && !is_live && strcmp(live, "no") != 0)
        return allot_errorf(err, ALLOT_EINVAL, "live: yes or no");
    if (!file == !is_live)
        return allot_errorf(err, ALLOT_EINVAL,
                            "import slurm: give file=DUMP (from `sacctmgr dump CLUSTER "
                            "file=DUMP`) or live=yes cluster=NAME");
    if (cluster && model_check_name("cluster", cluster, 0, err) < 0)
        return -1;
    char *dump = NULL, *qos = NULL, *parts = NULL, *flags = NULL;
    size_t dlen = 0, qlen = 0, plen = 0;
    rc = -1;
    if (is_live) {
        if (!cluster) {
            allot_errorf(err, ALLOT_EINVAL, "import slurm live=yes: cluster=NAME is required");
            goto out;
        }
        if (qosf || partf || pflags) {
            allot_errorf(err, ALLOT_EINVAL,
                         "import slurm live=yes reads the QOS, partitions "
                         "and PriorityFlags itself: no qos=, partitions=, "
                         "priorityflags=");
            goto out;
        }
        if (live_inputs(cluster, &dump, &dlen, &qos, &qlen, err) < 0 ||
            live_partitions(&parts, &plen, &flags, err) < 0)
            goto out;
    } else {
        if (!(dump = read_path(file, &dlen, err)))
            goto out;
        if (qosf && !(qos = read_path(qosf, &qlen, err)))
            goto out;
        if (partf && !(parts = read_path(partf, &plen, err)))
            goto out;
        if (pflags)
            flags = xstrdup(pflags);
    }
    json_t *body = json_object();
    json_object_set_new(body, "dump", json_stringn(dump, dlen));
    if (qos)
        json_object_set_new(body, "qos", json_stringn(qos, qlen));
    if (parts)
        json_object_set_new(body, "partitions", json_stringn(parts, plen));
    if (flags)
        json_object_set_new(body, "priority_flags", json_string(flags));
    if (cluster)
        json_object_set_new(body, "cluster", json_string(cluster));
    if (!json_object_get(body, "dump")) {
        json_decref(body);
        allot_errorf(err, ALLOT_EINVAL, "%s: not UTF-8 text", file ? file : "sacctmgr dump");
        goto out;
    }
    if (cli->timeout_ms < IMPORT_TIMEOUT_MS)
        cli->timeout_ms = IMPORT_TIMEOUT_MS;
    rc = post(cli, body, dump_records(dump, dlen), cli->dry_run, err);
    json_decref(body);
out:
    free(dump);
    free(qos);
    free(parts);
    free(flags);
    return rc;
}

static int do_export(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    const char *pos[2];
    int npos = 0;
    struct kvlist kvs;
    if (args_split(argc, argv, pos, 2, &npos, &kvs, err) < 0)
        return -1;
    if (npos != 1 || strcmp(pos[0], "slurm") != 0)
        return allot_errorf(err, ALLOT_EINVAL, "export: expected 'allot export slurm ...'");
    const char *file = args_get(&kvs, "file"), *cl = args_get(&kvs, "cluster");
    if (args_check_used(&kvs, "export slurm", err) < 0)
        return -1;
    char cluster[128];
    if (cl)
        snprintf(cluster, sizeof cluster, "%s", cl);
    else if (cli_default_cluster(cli, cluster, sizeof cluster, err) < 0)
        return -1;
    struct path p;
    path_init(&p, "/v1/export/slurm");
    path_query(&p, "cluster", cluster);
    json_t *doc = cli_get_json(cli, p.s, err);
    path_fini(&p);
    if (!doc)
        return -1;
    const char *text = json_string_value(json_object_get(doc, "dump"));
    int rc = 0;
    FILE *f = file ? fopen(file, "w") : stdout;
    if (!f)
        rc = allot_errorf(err, ALLOT_EIO, "%s: %s", file, strerror(errno));
    else if (fputs(text ? text : "", f) < 0 || (file && fclose(f) != 0))
        rc = allot_errorf(err, ALLOT_EIO, "%s: write failed", file ? file : "stdout");
    json_decref(doc);
    return rc;
}

static int run_import(struct cli *cli, const char *verb, int argc, char **argv,
                      struct allot_error *err)
{
    (void)verb;
    if (argc > 0 && !strcmp(argv[0], "sacct")) /* job history: cmd_import_sacct.c */
        return cli_import_sacct(cli, argc - 1, argv + 1, err);
    return do_import(cli, argc, argv, err);
}

static int run_export(struct cli *cli, const char *verb, int argc, char **argv,
                      struct allot_error *err)
{
    (void)verb;
    return do_export(cli, argc, argv, err);
}

const struct cli_command cmd_import = {
    .noun = "import",
    .summary = "import a Slurm cluster's accounts, users, associations, QOS and limits",
    .help = "usage: allot import slurm file=DUMP [qos=QOSFILE] [partitions=PARTFILE]\n"
            "                          [priorityflags=FLAGS] [cluster=NAME] [--dry-run]\n"
            "       allot import slurm live=yes cluster=NAME [--dry-run]\n"
            "\n"
            "DUMP is what `sacctmgr dump CLUSTER file=DUMP` writes; QOSFILE what\n"
            "`sacctmgr show qos -P` prints (a dump holds no QOS definitions); PARTFILE\n"
            "what `scontrol show partition -o` prints (TRESBillingWeights, MaxTime,\n"
            "DefaultTime, QoS), FLAGS slurm.conf's PriorityFlags (MAX_TRES).  live=yes\n"
            "runs them all on this host.  Every line is checked first; the changes are applied\n"
            "in one transaction (all or nothing) and printed one per line: '+' added,\n"
            "'~' changed (old -> new), '-' limit cleared.  --dry-run prints them and\n"
            "writes nothing.  A second import of the same dump says 'no changes'.\n"
            "What the bank cannot keep (AdminLevel, Coordinator, WCKeys, association\n"
            "Priority) is listed as 'line N: ... is not kept'.  cluster=NAME imports\n"
            "under another cluster name.\n"
            "\n"
            "examples:\n"
            "  sacctmgr dump hpc file=hpc.dump; sacctmgr -P show qos > qos.txt\n"
            "  scontrol show partition -o > parts.txt\n"
            "  allot import slurm file=hpc.dump qos=qos.txt --dry-run\n"
            "  allot import slurm file=hpc.dump qos=qos.txt partitions=parts.txt \\\n"
            "      priorityflags=MAX_TRES\n"
            "  allot import slurm file=hpc.dump qos=qos.txt\n"
            "  allot import slurm live=yes cluster=hpc\n"
            "\n" IMPORT_SACCT_HELP,
    .run = run_import,
    .needs_verb = 0,
    .verbs = "slurm, sacct",
};

const struct cli_command cmd_export = {
    .noun = "export",
    .summary = "write the bank's cluster as a `sacctmgr dump` file (for sacctmgr load)",
    .help = "usage: allot export slurm [cluster=NAME] [file=DUMP]\n"
            "\n"
            "Writes the Cluster line (root's shares, QOS and limits), every account with\n"
            "its description, organization, shares, QOS and limits, and every association\n"
            "of the cluster with its user's DefaultAccount, shares, QOS and limits, in the\n"
            "format `sacctmgr load file=DUMP` reads.  Without file=, to standard output.\n"
            "\n"
            "examples:\n"
            "  allot export slurm cluster=hpc file=hpc.dump\n"
            "  sacctmgr -i load file=hpc.dump cluster=hpc2\n",
    .run = run_export,
    .needs_verb = 0,
    .verbs = "slurm",
};
