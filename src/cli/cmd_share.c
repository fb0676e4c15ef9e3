/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_share.c - `allot share`, `allot tree`, `allot usage`, `allot priority` (doc/design.md §6).
 *
 * share and tree print the lines allotd formatted with libcore (so `allot share -P` is
 * byte-for-byte what `sshare -a -l -P` prints for the same tree, and `allot tree` what
 * `flux account view-bank -t` prints); without -P, share prints the same rows as a table.
 * --json prints the API's reply.  usage lists settled usage per association; `usage clear`
 * is Slurm's `sacctmgr modify account set RawUsage=0`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "libutil/xalloc.h"

static const struct field share_keys[] = {
    {"cluster", "cluster", V_STR, "cluster (default: the only one)"},
    {"algo", "algo", V_STR, "classic, fair_tree or flux (default: FairShareAlgorithm)"},
    {0},
};

/* tree is always flux's weighted tree (allotd ignores ?algo= there), so it takes no algo=:
 * a key the server would ignore must be refused here. */
static const struct field tree_keys[] = {
    {"cluster", "cluster", V_STR, "cluster (default: the only one)"},
    {0},
};

static const struct column share_cols[] = {
    {"Account", "account", C_STR},
    {"User", "user", C_STR},
    {"RawShares", "raw_shares", C_INT},
    {"NormShares", "norm_shares", C_JSON},
    {"RawUsage", "raw_usage", C_JSON},
    {"EffectvUsage", "effectv_usage", C_JSON},
    {"FairShare", "fairshare", C_JSON},
    {"LevelFS", "level_fs", C_JSON},
    {0},
};

/* key=value words only. */
static int kv_split(int argc, char **argv, struct kvlist *kvs, struct allot_error *err)
{
    int npos = 0;
    return args_split(argc, argv, NULL, 0, &npos, kvs, err);
}

static int print_lines(struct cli *cli, const char *base, const char *member, int argc, char **argv,
                       const struct field *keys, const struct column *cols, struct allot_error *err)
{
    struct kvlist kvs;
    struct path p;
    if (kv_split(argc, argv, &kvs, err) < 0)
        return -1;
    path_init(&p, base);
    int rc = cli_fields_to_query(keys, &kvs, &p, err);
    if (rc == 0)
        rc = args_check_used(&kvs, base + 4, err);
    if (rc < 0) {
        path_fini(&p);
        return -1;
    }
    if (cli->json || (cols && (!cli->parsable || cli->format))) {
        rc = cli_show(cli, p.s, cols, NULL, err);
        path_fini(&p);
        return rc;
    }
    json_t *reply = cli_get_json(cli, p.s, err);
    path_fini(&p);
    if (!reply)
        return -1;
    json_t *lines = json_object_get(reply, member);
    size_t i;
    json_t *l;
    json_array_foreach(lines, i, l)
    {
        if (i == 0 && cli->noheader)
            continue;
        puts(json_string_value(l) ? json_string_value(l) : "");
    }
    json_decref(reply);
    return 0;
}

static int run_share(struct cli *cli, const char *verb, int argc, char **argv,
                     struct allot_error *err)
{
    if (verb)
        return allot_errorf(err, ALLOT_EINVAL, "share: takes no verb");
    return print_lines(cli, "/v1/share", "sshare", argc, argv, share_keys, share_cols, err);
}

static int run_tree(struct cli *cli, const char *verb, int argc, char **argv,
                    struct allot_error *err)
{
    if (verb)
        return allot_errorf(err, ALLOT_EINVAL, "tree: takes no verb");
    return print_lines(cli, "/v1/tree", "tree", argc, argv, tree_keys, NULL, err);
}

static const struct field usage_keys[] = {
    {"cluster", "cluster", V_STR, "cluster"},
    {"account", "account", V_STR, "account"},
    {"user", "user", V_STR, "user"},
    {"since", "since", V_TIME, "jobs that ended at or after this date"},
    {"until", "until", V_TIME, "jobs that ended before this date"},
    {0},
};

static const struct column usage_cols[] = {
    {"Cluster", "cluster", C_STR},
    {"Account", "account", C_STR},
    {"User", "user", C_STR},
    {"Jobs", "jobs", C_INT},
    {"Charged", "charge_sumin", C_SUMIN},
    {"Elapsed", "elapsed_s", C_DURATION},
    {"BillingSec", "billing_s", C_INT},
    {0},
};

static const struct field clear_keys[] = {
    {"cluster", "cluster", V_STR, "cluster (required)"},
    {"account", "account", V_STR, "account (required); its sub-tree is cleared too"},
    {"user", "user", V_STR, "only this user's association"},
    {0},
};

static int run_usage(struct cli *cli, const char *verb, int argc, char **argv,
                     struct allot_error *err)
{
    (void)verb; /* needs_verb = 0: argv[0] may be the verb */
    verb = argc > 0 && !strchr(argv[0], '=') ? argv[0] : NULL;
    if (verb)
        argc--, argv++;
    if (verb && !strcmp(verb, "clear")) {
        struct kvlist kvs;
        if (kv_split(argc, argv, &kvs, err) < 0)
            return -1;
        json_t *body = json_object();
        int rc = cli_fields_to_json(clear_keys, &kvs, body, err);
        if (rc == 0)
            rc = args_check_used(&kvs, "usage clear", err);
        char *reply = NULL;
        if (rc == 0)
            rc = cli_request(cli, "POST", "/v1/usage/clear", body, &reply, err);
        json_decref(body);
        if (rc == 0 && cli->json) {
            cli_print_json_text(reply);
        } else if (rc == 0 && !cli->parsable) {
            /* Say what was done, as the other changing verbs do: silence reads as "nothing". */
            json_t *r = json_loads(reply ? reply : "", 0, NULL);
            const char *c = json_string_value(json_object_get(r, "cluster"));
            const char *a = json_string_value(json_object_get(r, "account"));
            const char *u = json_string_value(json_object_get(r, "user"));
            const char *when = json_string_value(json_object_get(r, "cleared"));
            if (u && *u)
                printf("cleared usage of cluster %s account %s user %s as of %s\n", c ? c : "?",
                       a ? a : "?", u, when ? when : "now");
            else
                printf("cleared usage of cluster %s account %s and its sub-tree as of %s\n",
                       c ? c : "?", a ? a : "?", when ? when : "now");
            json_decref(r);
        }
        free(reply);
        return rc;
    }
    if (verb && !strcmp(verb, "rebuild")) {
        if (argc > 0)
            return allot_errorf(err, ALLOT_EINVAL, "usage rebuild: takes no arguments");
        char *reply = NULL;
        int rc = cli_request(cli, "POST", "/v1/usage/rebuild", NULL, &reply, err);
        if (rc == 0 && cli->json) {
            cli_print_json_text(reply);
        } else if (rc == 0 && !cli->parsable) {
            json_t *r = json_loads(reply ? reply : "", 0, NULL);
            printf("rebuilt %lld usage accumulators from the settled jobs\n",
                   (long long)json_integer_value(json_object_get(r, "accumulators")));
            json_decref(r);
        }
        free(reply);
        return rc;
    }
    if (verb && strcmp(verb, "show") && strcmp(verb, "list"))
        return cli_bad_verb("usage", verb, cmd_usage.verbs, err);
    struct kvlist kvs;
    struct path p;
    if (kv_split(argc, argv, &kvs, err) < 0)
        return -1;
    path_init(&p, "/v1/usage");
    int rc = cli_fields_to_query(usage_keys, &kvs, &p, err);
    if (rc == 0)
        rc = args_check_used(&kvs, "usage", err);
    if (rc == 0)
        rc = cli_show(cli, p.s, usage_cols, NULL, err);
    path_fini(&p);
    return rc;
}

static int run_priority(struct cli *cli, const char *verb, int argc, char **argv,
                        struct allot_error *err)
{
    (void)argv;
    /* allot priority [CLUSTER:]JOB: verb is the job.  CLUSTER:JOB is how `job show` and
     * `step list` name a job; CLUSTER/JOB (allotd's path) is kept; a bare JOB means the
     * bank's only cluster, as in `job show`. */
    if (!verb || argc > 0)
        return allot_errorf(err, ALLOT_EINVAL, "priority: usage: allot priority [CLUSTER:]JOBID");
    const char *sep = strpbrk(verb, ":/"), *job = sep ? sep + 1 : verb;
    char cluster[128];
    int64_t id;
    if (sep && sep == verb)
        return allot_errorf(err, ALLOT_EINVAL, "priority: '%s': empty cluster name", verb);
    if (args_uint("priority: job id", job, &id, err) < 0)
        return -1;
    if (sep)
        snprintf(cluster, sizeof cluster, "%.*s", (int)(sep - verb), verb);
    else if (cli_default_cluster(cli, cluster, sizeof cluster, err) < 0)
        return -1;
    struct path p;
    path_init(&p, "/v1/priority");
    path_segment(&p, cluster);
    path_segment(&p, job);
    json_t *reply = cli_get_json(cli, p.s, err);
    path_fini(&p);
    if (!reply)
        return -1;
    if (cli->json) {
        char *s = json_dumps(reply, JSON_COMPACT);
        cli_print_json_text(s);
        free(s);
    } else {
        json_t *lines = json_object_get(reply, "sprio");
        if (lines) {
            size_t i;
            json_t *l;
            json_array_foreach(lines, i, l)
            {
                if (!(i == 0 && cli->noheader))
                    puts(json_string_value(l));
            }
        } else {
            printf("PRIORITY %lld FAIRSHARE %.0f QUEUE %.0f BANK %.0f URGENCY %.0f\n",
                   (long long)json_integer_value(json_object_get(reply, "priority")),
                   json_real_value(json_object_get(reply, "fairshare")),
                   json_real_value(json_object_get(reply, "queue")),
                   json_real_value(json_object_get(reply, "bank")),
                   json_real_value(json_object_get(reply, "urgency")));
        }
    }
    json_decref(reply);
    return 0;
}

const struct cli_command cmd_share = {
    .noun = "share",
    .summary = "fair-share of every association, like sshare -a -l",
    .help = "usage: allot share [-P|--json] [cluster=NAME] [algo=classic|fair_tree|flux]\n"
            "\n"
            "With -P the lines are exactly sshare -a -l -P's for the same tree.\n"
            "\n"
            "examples:\n"
            "  allot share\n"
            "  allot share -P algo=classic\n"
            "  allot --json share cluster=darwin\n",
    .run = run_share,
};

const struct cli_command cmd_tree = {
    .noun = "tree",
    .summary = "the bank tree with shares, usage and fair-share, like flux account view-bank -t",
    .help = "usage: allot tree [--json] [cluster=NAME]\n"
            "\n"
            "The account tree with shares, raw usage and fair-share, as flux account\n"
            "view-bank -t prints it (always flux's algorithm, whatever FairShareAlgorithm).\n"
            "\n"
            "examples:\n"
            "  allot tree\n"
            "  allot tree cluster=darwin\n",
    .run = run_tree,
};

const struct cli_command cmd_usage = {
    .noun = "usage",
    .summary = "settled usage per association; usage clear resets fair-share usage",
    .help = "usage: allot usage [show] [cluster=C] [account=A] [user=U] [since=DATE] "
            "[until=DATE]\n"
            "       allot usage clear cluster=C account=A [user=U]\n"
            "       allot usage rebuild\n"
            "\n"
            "show sums the settled jobs of each association (charge, elapsed time, billing\n"
            "seconds).  clear is sacctmgr's RawUsage=0: earlier jobs stop counting for\n"
            "fair-share; without user= the account and every association under it are\n"
            "cleared.  The ledger and balances do not change.  rebuild (superuser)\n"
            "recomputes every fair-share usage accumulator from the settled jobs; settles\n"
            "keep them as they happen, so it is needed only to check them.\n"
            "\n"
            "examples:\n"
            "  allot usage account=chem since=2026-01-01\n"
            "  allot usage clear cluster=darwin account=chem user=alice\n",
    .run = run_usage,
    .needs_verb = 0,
    .verbs = "show, clear, rebuild",
};

const struct cli_command cmd_priority = {
    .noun = "priority",
    .summary = "a job's priority term by term, like sprio -l",
    .help = "usage: allot priority [CLUSTER:]JOBID [--json]\n"
            "\n"
            "The job's multi-factor priority term by term, as sprio -l prints it.  The\n"
            "cluster may be left out when the bank has one cluster.\n"
            "\n"
            "examples:\n"
            "  allot priority darwin:1234\n"
            "  allot --json priority 1234\n",
    .run = run_priority,
    .needs_verb = 1,
};
