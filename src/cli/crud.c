/* SPDX-License-Identifier: GPL-3.0-or-later */
/* crud.c - the declarative add / show / modify / remove engine for plain API collections.
 *
 * A noun's tables (struct crud) say which key= words a verb accepts and how they become
 * JSON; this file turns a command line into one request and prints the reply.  Every value
 * is checked before anything is sent, and unknown keys are errors, so a typo never reaches
 * allotd as a silently ignored field.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/xalloc.h"

enum crud_verb { VERB_ADD, VERB_SHOW, VERB_MODIFY, VERB_REMOVE, VERB_BAD };

static enum crud_verb parse_verb(const char *v)
{
    if (!v)
        return VERB_BAD;
    if (!strcmp(v, "add") || !strcmp(v, "create"))
        return VERB_ADD;
    if (!strcmp(v, "show") || !strcmp(v, "list"))
        return VERB_SHOW;
    if (!strcmp(v, "modify") || !strcmp(v, "update"))
        return VERB_MODIFY;
    if (!strcmp(v, "remove") || !strcmp(v, "delete"))
        return VERB_REMOVE;
    return VERB_BAD;
}

/* The item URL: collection[/<prefix key value>]/<name>. */
static int item_path(const struct crud *c, struct kvlist *kvs, const char *name, struct path *p,
                     struct allot_error *err)
{
    path_init(p, c->collection);
    if (c->item_prefix_key) {
        const char *pre = args_get(kvs, c->item_prefix_key);
        if (!pre || !*pre) {
            path_fini(p);
            return allot_errorf(err, ALLOT_EINVAL, "%s: %s= is required to name a %s",
                                c->item_prefix_key, c->item_prefix_key, c->noun);
        }
        path_segment(p, pre);
    }
    path_segment(p, name);
    return 0;
}

/* Print a reply to add/modify: --json verbatim, else the object as a one-row table when it
 * is one (so `allot -P -n alloc add ...` prints the new id), else a line for people. */
static void print_change(const struct cli *cli, const struct crud *c, const char *verb,
                         const char *name, const char *reply)
{
    json_t *root;
    if (cli->json) {
        cli_print_json_text(reply);
        return;
    }
    root = reply ? json_loads(reply, 0, NULL) : NULL;
    if (json_is_object(root) && json_object_size(root) > 0 && !json_object_get(root, "removed")) {
        json_t *rows = json_array();
        json_array_append(rows, root);
        cli_print_table(cli, rows, c->columns);
        json_decref(rows);
    } else if (!cli->parsable) {
        printf("%s %s%s%s\n", verb, c->noun, name ? " " : "", name ? name : "");
    }
    json_decref(root);
}

static int do_show(struct cli *cli, const struct crud *c, const char *name, struct kvlist *kvs,
                   struct allot_error *err)
{
    struct path p;
    json_t *root = NULL, *rows, *filtered = NULL;
    int rc = -1;
    int one = name && !(c->flags & CRUD_NO_GET_ONE) && !(c->flags & CRUD_BODY_KEY);

    if (one) {
        if (item_path(c, kvs, name, &p, err) < 0)
            return -1;
    } else {
        path_init(&p, c->collection);
        if (cli_fields_to_query(c->filters, kvs, &p, err) < 0)
            goto out;
    }
    if (args_check_used(kvs, c->noun, err) < 0)
        goto out;
    if (cli->json) {
        char *reply = NULL;
        rc = cli_request(cli, "GET", p.s, NULL, &reply, err);
        if (rc == 0) {
            /* show NAME on a list-only collection: the JSON of the matching item. */
            if (name && !one) {
                json_t *r = json_loads(reply, 0, NULL), *rs = cli_rows(r), *it;
                size_t i;
                int found = 0;
                json_array_foreach(rs, i, it)
                {
                    const char *n = json_string_value(json_object_get(it, c->name_json));
                    if (n && !strcmp(n, name)) {
                        char *d = json_dumps(it, JSON_COMPACT);
                        cli_print_json_text(d);
                        free(d);
                        found = 1;
                    }
                }
                json_decref(r);
                if (!found)
                    rc = allot_errorf(err, ALLOT_ENOENT, "%s '%s' not found", c->noun, name);
            } else {
                cli_print_json_text(reply);
            }
        }
        free(reply);
        goto out;
    }
    root = cli_get_json(cli, p.s, err);
    if (!root)
        goto out;
    rows = cli_rows(root);
    if (!rows) {
        filtered = json_array();
        json_array_append(filtered, root);
        rows = filtered;
    } else if (name && !one) {
        size_t i;
        json_t *it;
        filtered = json_array();
        json_array_foreach(rows, i, it)
        {
            const char *n = json_string_value(json_object_get(it, c->name_json));
            if (n && !strcmp(n, name))
                json_array_append(filtered, it);
        }
        if (json_array_size(filtered) == 0) {
            rc = allot_errorf(err, ALLOT_ENOENT, "%s '%s' not found", c->noun, name);
            goto out;
        }
        rows = filtered;
    }
    cli_print_table(cli, rows, c->columns);
    rc = 0;
out:
    json_decref(filtered);
    json_decref(root);
    path_fini(&p);
    return rc;
}

int crud_run(struct cli *cli, const struct crud *c, const char *verb_text, int argc, char **argv,
             struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    enum crud_verb verb = parse_verb(verb_text);
    const char *name;
    json_t *body = NULL;
    char *reply = NULL;
    struct path p = {0};
    char what[96];

    if (verb == VERB_BAD || (verb == VERB_ADD && (c->flags & CRUD_NO_ADD)) ||
        (verb == VERB_MODIFY && (c->flags & CRUD_NO_MODIFY)) ||
        (verb == VERB_REMOVE && (c->flags & CRUD_NO_REMOVE))) {
        char verbs[64];
        snprintf(verbs, sizeof(verbs), "%s%sshow%s%s", (c->flags & CRUD_NO_ADD) ? "" : "add",
                 (c->flags & CRUD_NO_ADD) ? "" : ", ",
                 (c->flags & CRUD_NO_MODIFY) ? "" : ", modify",
                 (c->flags & CRUD_NO_REMOVE) ? "" : ", remove");
        return cli_bad_verb(c->noun, verb_text, verbs, err);
    }
    snprintf(what, sizeof(what), "%s %s", c->noun, verb_text);
    if (args_split(argc, argv, pos, (c->flags & CRUD_BODY_KEY) ? 0 : 1, &npos, &kvs, err) < 0)
        return -1;
    name = npos ? pos[0] : NULL;

    if (verb == VERB_SHOW)
        return do_show(cli, c, name, &kvs, err);

    if (!name && !(c->flags & CRUD_BODY_KEY))
        return allot_errorf(err, ALLOT_EINVAL, "%s: missing the %s to %s", what,
                            verb == VERB_ADD && c->name_json ? c->name_json : "name", verb_text);

    body = json_object();
    if (verb == VERB_ADD) {
        if (name && c->name_json)
            json_object_set_new(body, c->name_json, json_string(name));
        if (cli_fields_to_json(c->add, &kvs, body, err) < 0)
            goto out;
        path_init(&p, c->collection);
    } else if (c->flags & CRUD_BODY_KEY) {
        if (cli_fields_to_json(c->keys, &kvs, body, err) < 0)
            goto out;
        if (verb == VERB_MODIFY &&
            cli_fields_to_json(c->modify ? c->modify : c->add, &kvs, body, err) < 0)
            goto out;
        path_init(&p, c->collection);
    } else {
        if (item_path(c, &kvs, name, &p, err) < 0)
            goto out;
        if (verb == VERB_MODIFY &&
            cli_fields_to_json(c->modify ? c->modify : c->add, &kvs, body, err) < 0)
            goto out;
    }
    if (args_check_used(&kvs, what, err) < 0)
        goto out;
    if (verb == VERB_MODIFY && json_object_size(body) == 0) {
        allot_errorf(err, ALLOT_EINVAL, "%s: nothing to change (give key=value)", what);
        goto out;
    }
    rc = cli_request(cli,
                     verb == VERB_ADD      ? "POST"
                     : verb == VERB_MODIFY ? "PATCH"
                                           : "DELETE",
                     p.s, (verb == VERB_REMOVE && !(c->flags & CRUD_BODY_KEY)) ? NULL : body,
                     &reply, err);
    if (rc < 0) {
        cli_error_keys(c->keys, err);
        cli_error_keys(c->add, err);
        cli_error_keys(c->modify, err);
    }
    if (rc == 0) {
        const char *done = verb == VERB_ADD      ? "added"
                           : verb == VERB_MODIFY ? "modified"
                                                 : "removed";
        if (verb == VERB_REMOVE) {
            if (cli->json)
                cli_print_json_text(reply);
            else if (!cli->parsable)
                printf("%s %s%s%s\n", done, c->noun, name ? " " : "", name ? name : "");
        } else {
            print_change(cli, c, done, name, reply);
        }
    }
out:
    free(reply);
    json_decref(body);
    path_fini(&p);
    return rc;
}
