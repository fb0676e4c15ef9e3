/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_command.c - `allot command list|show` (doc/design.md §5): the command outbox, i.e. what
 * allotd asked a cluster's agent to apply with sacctmgr, since when it waits, how many times it was
 * handed out and the agent's verified result.  'confirmed' is only ever the agent's
 * read-back; 'sent' means handed out without an answer yet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"

static const struct field filters[] = {
    {"cluster", "cluster", V_STR, "commands of this cluster"},
    {"policy", "policy", V_INT, "commands of this policy id"},
    {"period", "period", V_STR, "commands of this period (2026-07, 2026-Q3, 2026, total)"},
    {"state", "state", V_STR, "pending, sent, confirmed or failed"},
    {"limit", "limit", V_INT, "at most this many"},
    {0},
};

static const struct column cols[] = {
    {"ID", "id", C_INT},
    {"Cluster", "cluster", C_STR},
    {"Kind", "kind", C_STR},
    {"Target", "target", C_STR},
    {"Payload", "payload", C_STR},
    {"Policy", "policy", C_INT},
    {"Period", "period", C_STR},
    {"State", "state", C_STR},
    {"Attempts", "attempts", C_INT},
    {"Created", "created", C_TIME},
    {"Waiting", "waiting_s", C_DURATION},
    {"Done", "done", C_TIME},
    {"Result", "result", C_STR},
    {0},
};

/* Waiting = now - created for an unfinished command (how long it has been pending). */
static void add_waiting(json_t *row)
{
    const char *state = json_string_value(json_object_get(row, "state"));
    const char *created = json_string_value(json_object_get(row, "created"));
    if (!state || !created || (strcmp(state, "pending") && strcmp(state, "sent")))
        return;
    int64_t t;
    if (args_time("created", created, &t, NULL) < 0)
        return;
    int64_t w = (int64_t)time(NULL) - t;
    json_object_set_new(row, "waiting_s", json_integer(w > 0 ? w : 0));
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    const char *pos[1] = {NULL};
    int npos = 0;
    struct kvlist kvs;
    struct path p;
    int list = verb && (strcmp(verb, "list") == 0 || strcmp(verb, "show") == 0);
    if (!list)
        return cli_bad_verb("command", verb, cmd_command.verbs, err);
    if (args_split(argc, argv, pos, 1, &npos, &kvs, err) < 0)
        return -1;
    if (npos) {
        int64_t id;
        if (args_uint("ID", pos[0], &id, err) < 0 || args_check_used(&kvs, "command show", err) < 0)
            return -1;
        char path[64];
        snprintf(path, sizeof path, "/v1/commands/%lld", (long long)id);
        return cli_show(cli, path, cols, add_waiting, err);
    }
    struct cli_page pg = {"commands", 0, 0};
    path_init(&p, "/v1/commands");
    int rc = cli_fields_to_query(filters, &kvs, &p, err);
    if (rc == 0)
        rc = cli_page_limit(&kvs, &pg.limit, err);
    if (rc == 0)
        rc = args_check_used(&kvs, "command list", err);
    json_t *doc = rc == 0 ? cli_get_json(cli, p.s, err) : NULL;
    path_fini(&p);
    if (!doc)
        return -1;
    json_t *rows = json_object_get(doc, "commands");
    if (cli->json) {
        char *text = json_dumps(doc, JSON_COMPACT);
        cli_print_json_text(text ? text : "{}");
        free(text);
    } else {
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row) add_waiting(row);
        cli_print_table(cli, rows, cols);
    }
    cli_page_hint(&pg, doc, json_array_size(rows));
    json_decref(doc);
    return 0;
}

const struct cli_command cmd_command = {
    .noun = "command",
    .summary = "commands queued for the clusters' agents: list, show",
    .help = "usage: allot command list [cluster=C] [policy=ID] [period=P] [state=S] [limit=N]\n"
            "       allot command show ID\n"
            "\n"
            "Each change allotd wants on a cluster (RawUsage reset, limit, fairshare, QOS) is a\n"
            "command with an id.  States: pending (waiting for the agent since Created),\n"
            "sent (handed out Attempts times, no answer yet; handed out again after its\n"
            "300 s lease), confirmed (the agent read the value back), failed (Result holds\n"
            "sacctmgr's error text).\n"
            "\n"
            "examples:\n"
            "  allot command list state=pending\n"
            "  allot command list policy=1 period=2026-08\n"
            "  allot command show 42\n",
    .run = run,
    .needs_verb = 1,
    .verbs = "list, show",
};
