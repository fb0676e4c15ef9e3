/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_limits.c - `allot limits ...`: stored Slurm limits and the effective limit of a
 * (user, account, partition, QOS) with the level each one comes from (doc/design.md §4.2), which
 * Slurm itself cannot tell. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct field effective_filters[] = {
    {"cluster", "cluster", V_STR, "cluster (default: the only one)"},
    {"account", "account", V_STR, "account (default: the user's default account)"},
    {"partition", "partition", V_STR, "partition"},
    {"qos", "qos", V_STR, "job QOS"},
    {0},
};

static const struct column effective_columns[] = {
    {"Limit", "name", C_STR},
    {"Value", "value", C_STR},
    {"Source", "source", C_STR},
    {0},
};

static const struct field list_filters[] = {
    {"scope", "scope", V_STR, "assoc, account, qos or partition"},
    {"owner", "owner", V_STR, "owner key, e.g. chem or darwin:chem:alice:"},
    {0},
};

static const struct column list_columns[] = {
    {"Scope", "scope", C_STR},
    {"Owner", "owner", C_STR},
    {"Limit", "name", C_STR},
    {"Value", "value", C_STR},
    {0},
};

/* Provenance column: "assoc darwin:chem:alice:" from source_scope and source_owner. */
static void add_source(json_t *row)
{
    const char *s = json_string_value(json_object_get(row, "source_scope"));
    const char *o = json_string_value(json_object_get(row, "source_owner"));
    char buf[512];
    if (json_object_get(row, "source") || !s)
        return;
    snprintf(buf, sizeof(buf), "%s%s%s", s, o && *o ? " " : "", o ? o : "");
    json_object_set_new(row, "source", json_string(buf));
}

static int show(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    struct path p;

    if (args_split(argc, argv, pos, 1, &npos, &kvs, err) < 0)
        return -1;
    if (!npos)
        return allot_errorf(err, ALLOT_EINVAL, "limits show: name the user");
    path_init(&p, "/v1/limits/effective");
    path_query(&p, "user", pos[0]);
    if (cli_fields_to_query(effective_filters, &kvs, &p, err) < 0 ||
        args_check_used(&kvs, "limits show", err) < 0)
        goto out;
    if (!args_get(&kvs, "cluster")) { /* as job show: the only cluster */
        char cluster[128];
        if (cli_default_cluster(cli, cluster, sizeof(cluster), err) < 0)
            goto out;
        path_query(&p, "cluster", cluster);
    }
    rc = cli_show(cli, p.s, effective_columns, add_source, err);
out:
    path_fini(&p);
    return rc;
}

static int list(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    struct path p;

    if (args_split(argc, argv, pos, 0, &npos, &kvs, err) < 0)
        return -1;
    path_init(&p, "/v1/limits");
    if (cli_fields_to_query(list_filters, &kvs, &p, err) < 0 ||
        args_check_used(&kvs, "limits list", err) < 0)
        goto out;
    rc = cli_show(cli, p.s, list_columns, NULL, err);
out:
    path_fini(&p);
    return rc;
}

static int set(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc;
    struct kvlist kvs;
    const char *scope, *owner, *name, *value;
    json_t *body;
    char *reply = NULL;

    if (args_split(argc, argv, pos, 0, &npos, &kvs, err) < 0)
        return -1;
    scope = args_get(&kvs, "scope");
    owner = args_get(&kvs, "owner");
    name = args_get(&kvs, "name");
    value = args_get(&kvs, "value");
    /* Name the key that is missing (value= may be empty: it clears the limit). */
    if (!scope || !owner || !name || !value)
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: required (limits set needs scope=, owner=, "
                            "name= and value=; an empty value= clears)",
                            !scope   ? "scope"
                            : !owner ? "owner"
                            : !name  ? "name"
                                     : "value");
    if (args_check_used(&kvs, "limits set", err) < 0)
        return -1;
    body = json_pack("{s:s, s:s, s:s, s:s}", "scope", scope, "owner", owner, "name", name, "value",
                     value);
    rc = cli_request(cli, "PUT", "/v1/limits", body, &reply, err);
    json_decref(body);
    if (rc == 0) {
        if (cli->json)
            cli_print_json_text(reply);
        else if (!cli->parsable)
            printf("%s %s %s: %s = %s\n", *value ? "set" : "cleared", scope, owner, name,
                   *value ? value : "(none)");
    }
    free(reply);
    return rc;
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    if (verb && !strcmp(verb, "show"))
        return show(cli, argc, argv, err);
    if (verb && !strcmp(verb, "list"))
        return list(cli, argc, argv, err);
    if (verb && !strcmp(verb, "set"))
        return set(cli, argc, argv, err);
    return cli_bad_verb("limits", verb, cmd_limits.verbs, err);
}

const struct cli_command cmd_limits = {
    .noun = "limits",
    .summary = "Slurm limits: stored values and the effective limit with its source",
    .help = "usage: allot limits show USER [account=A] [partition=P] [qos=Q] [cluster=C]\n"
            "       allot limits list [scope=assoc|account|qos|partition] [owner=KEY]\n"
            "       allot limits set scope=S owner=KEY name=LIMIT value=VALUE\n"
            "\n"
            "show resolves every limit in Slurm's order (partition QOS, job QOS, association,\n"
            "parent accounts, root, partition) and says which level it came from.\n"
            "Owner keys: assoc CLUSTER:ACCOUNT:USER:PARTITION, account NAME, qos NAME,\n"
            "partition CLUSTER:NAME.  value= (empty) removes a limit.\n"
            "\n"
            "examples:\n"
            "  allot limits show alice account=chem partition=standard\n"
            "  allot limits set scope=account owner=chem name=GrpTRES value=cpu=256\n"
            "  allot limits set scope=assoc owner=darwin:chem:alice: name=MaxSubmitJobs value=50\n"
            "  allot limits list scope=account\n",
    .run = run,
    .needs_verb = 1,
    .verbs = "show, list, set",
};
