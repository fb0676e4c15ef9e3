/* SPDX-License-Identifier: GPL-3.0-or-later */
/* complete.c - `allot --complete WORD...`: the words that may come next on an allot command
 * line, for the bash completion (completion/allot.bash).
 *
 * Everything comes from the command table, so a new command completes without an edit:
 * nouns from the table, verbs from each command's verbs (a crud noun's from its flags), key=
 * words from the crud tables and from the usage lines of the command's help, and the
 * positional names the usage lines call ACCOUNT or USER (NAME for the account and user nouns)
 * from the bank, asked with a short timeout so that a slow or absent allotd only means no
 * names.  Candidates are printed one per line, unfiltered: bash keeps those that start with
 * the word being typed, except the values of key= words, printed as "key=value".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "libutil/xalloc.h"

/* allotd answers a name list within this, or the completion goes on without names. */
#define COMPLETE_TIMEOUT_MS 1000

enum names { NAMES_NONE = 0, NAMES_ACCOUNTS, NAMES_USERS };

/* Printed candidates, to print each once. */
struct out {
    char **seen;
    size_t n, cap;
};

static void emit(struct out *o, const char *prefix, const char *word, size_t len)
{
    char *s = xasprintf("%s%.*s", prefix, (int)len, word);
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->seen[i], s)) {
            free(s);
            return;
        }
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 64;
        o->seen = xrealloc(o->seen, o->cap * sizeof(char *));
    }
    o->seen[o->n++] = s;
    puts(s);
}

/* The words of a ", "- or "|"-separated list. */
static void emit_list(struct out *o, const char *list)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ", |");
        if (n)
            emit(o, "", p, n);
        p += n;
        p += strspn(p, ", |");
    }
}

static int in_list(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ", |");
        if (n == wl && !strncmp(p, word, n))
            return 1;
        p += n;
        p += strspn(p, ", |");
    }
    return 0;
}

/* The verbs of c into buf: its own list, or a crud noun's from its flags; "" when none. */
static const char *verbs_of(const struct cli_command *c, char *buf, size_t len)
{
    if (c->verbs)
        return c->verbs;
    buf[0] = '\0';
    if (c->crud)
        snprintf(buf, len, "%sshow%s%s", (c->crud->flags & CRUD_NO_ADD) ? "" : "add, ",
                 (c->crud->flags & CRUD_NO_MODIFY) ? "" : ", modify",
                 (c->crud->flags & CRUD_NO_REMOVE) ? "" : ", remove");
    return buf;
}

static void emit_fields(struct out *o, const struct field *f)
{
    for (; f && f->key; f++)
        emit(o, f->key, "=", 1);
}

/* A positional word of a usage line ("[ACCOUNT]", "USER", "NAME...") as the names it takes. */
static enum names names_of(const char *noun, const char *tok, size_t len)
{
    while (len && (*tok == '[' || *tok == '('))
        tok++, len--;
    size_t n = 0;
    while (n < len && tok[n] >= 'A' && tok[n] <= 'Z')
        n++;
    if (n == 7 && !strncmp(tok, "ACCOUNT", 7))
        return NAMES_ACCOUNTS;
    if (n == 4 && !strncmp(tok, "USER", 4))
        return NAMES_USERS;
    if (n == 4 && !strncmp(tok, "NAME", 4))
        return !strcmp(noun, "account") ? NAMES_ACCOUNTS
               : !strcmp(noun, "user")  ? NAMES_USERS
                                        : NAMES_NONE;
    return NAMES_NONE;
}

/* Read the usage lines of c's help (up to the first blank line): print the key= words of
 * verb's lines (verb NULL: of the lines without a verb) and return the names its first
 * positional takes. */
static enum names scan_usage(struct out *o, const struct cli_command *c, const char *verbs,
                             const char *verb, int print_keys)
{
    char lead[64];
    enum names names = NAMES_NONE;
    int mine = 0;
    snprintf(lead, sizeof lead, "allot %s ", c->noun);
    for (const char *line = c->help; line && *line && *line != '\n';) {
        size_t len = strcspn(line, "\n");
        const char *a = strstr(line, lead);
        const char *rest = line;
        if (a && a < line + len) { /* a new usage line: whose verb? */
            rest = a + strlen(lead);
            size_t t = strcspn(rest, " \n");
            char word[64];
            snprintf(word, sizeof word, "%.*s", (int)(t < sizeof word ? t : 0), rest);
            int has_verb = word[0] && in_list(verbs, word);
            mine = verb ? has_verb && !strcmp(word, verb) : !has_verb;
            if (mine && has_verb)
                rest += t;
            if (mine) {
                rest += strspn(rest, " ");
                size_t p = strcspn(rest, " \n");
                if (names == NAMES_NONE)
                    names = names_of(c->noun, rest, p);
            }
        }
        for (const char *p = rest; mine && print_keys && p < line + len;) {
            /* a key= word: letters and '_' just before an '=' */
            const char *eq = memchr(p, '=', (size_t)(line + len - p));
            if (!eq)
                break;
            const char *k = eq;
            while (k > line && ((k[-1] >= 'a' && k[-1] <= 'z') || k[-1] == '_'))
                k--;
            /* "key=value..." stands for any key, not a key named key */
            int placeholder = !strncmp(k, "key=value", 9);
            if (k < eq && (k == line || k[-1] == ' ' || k[-1] == '[') && !placeholder)
                emit(o, "", k, (size_t)(eq - k + 1));
            p = eq + 1;
        }
        line += len;
        if (*line == '\n')
            line++;
    }
    return names;
}

/* The names of the bank's accounts or users, each after prefix; nothing when allotd does not
 * answer within the timeout. */
static void emit_names(struct out *o, struct cli *cli, enum names which, const char *prefix)
{
    struct allot_error err = {0};
    if (which == NAMES_NONE)
        return;
    if (cli->timeout_ms <= 0 || cli->timeout_ms > COMPLETE_TIMEOUT_MS)
        cli->timeout_ms = COMPLETE_TIMEOUT_MS;
    json_t *root = cli_get_json(cli, which == NAMES_ACCOUNTS ? "/v1/accounts" : "/v1/users", &err);
    json_t *rows = root ? cli_rows(root) : NULL, *row;
    size_t i;
    json_array_foreach(rows, i, row)
    {
        const char *n = json_string_value(json_object_get(row, "name"));
        if (n)
            emit(o, prefix, n, strlen(n));
    }
    json_decref(root);
}

/* Options that take the next word as their value. */
static int takes_value(const char *w)
{
    static const char *const opts[] = {"--url", "--as", "--config", "--timeout", "--format", "-o"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (!strcmp(w, opts[i]))
            return 1;
    return 0;
}

static const char GLOBAL_OPTIONS[] = "--url --as --json --parsable -P -p --noheader -n --format -o "
                                     "--timeout --dry-run --config --help --version";

int cli_complete(struct cli *cli, const struct cli_command *const *cmds, size_t ncmds,
                 const struct cli_command *(*find)(const char *noun), int argc, char **argv)
{
    struct out o = {0};
    const char **w = xcalloc((size_t)argc + 1, sizeof(char *));
    int nw = 0, npos_after = 0;
    const char *cur = argc > 0 ? argv[argc - 1] : "";

    for (int i = 0; i < argc - 1; i++) {
        if (takes_value(argv[i])) {
            if (i + 1 == argc - 1)
                goto out; /* an option's value: bash's own completion (files) */
            if (!strcmp(argv[i], "--url"))
                cli->url = argv[i + 1];
            else if (!strcmp(argv[i], "--as"))
                cli->as = argv[i + 1];
            i++;
        } else if (!strncmp(argv[i], "--url=", 6)) {
            cli->url = argv[i] + 6;
        } else if (argv[i][0] != '-' && strncmp(argv[i], "format=", 7) != 0) {
            w[nw++] = argv[i];
        }
    }
    if (cur[0] == '-') {
        emit_list(&o, GLOBAL_OPTIONS);
        goto out;
    }
    if (nw == 0 || (nw == 1 && !strcmp(w[0], "help"))) {
        for (size_t i = 0; i < ncmds; i++)
            emit(&o, "", cmds[i]->noun, strlen(cmds[i]->noun));
        goto out;
    }
    const struct cli_command *c = find(w[0]);
    if (!c)
        goto out;
    char vbuf[128];
    const char *verbs = verbs_of(c, vbuf, sizeof vbuf);
    const char *verb = nw >= 2 && in_list(verbs, w[1]) ? w[1] : NULL;
    for (int i = verb ? 2 : 1; i < nw; i++)
        if (!strchr(w[i], '='))
            npos_after++;

    const char *eq = strchr(cur, '=');
    if (eq) { /* the value of a key= word */
        size_t k = (size_t)(eq - cur);
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(k < sizeof key ? k : 0), cur);
        enum names which = NAMES_NONE;
        if (!strcmp(key, "account") || !strcmp(key, "parent") || !strcmp(key, "defaultaccount") ||
            !strcmp(key, "default_account"))
            which = NAMES_ACCOUNTS;
        else if (!strcmp(key, "user"))
            which = NAMES_USERS;
        char prefix[80];
        snprintf(prefix, sizeof prefix, "%s=", key);
        emit_names(&o, cli, which, prefix);
        goto out;
    }
    if (nw == 1 && verbs[0]) {
        emit_list(&o, verbs);
        if (c->needs_verb)
            goto out;
    }
    if (c->crud && verb) {
        const struct crud *cr = c->crud;
        if (!strcmp(verb, "add"))
            emit_fields(&o, cr->add);
        else if (!strcmp(verb, "modify"))
            emit_fields(&o, cr->modify ? cr->modify : cr->add);
        else if (!strcmp(verb, "show"))
            emit_fields(&o, cr->filters);
        if ((cr->flags & CRUD_BODY_KEY) && strcmp(verb, "add") != 0)
            emit_fields(&o, cr->keys);
        if (cr->item_prefix_key)
            emit(&o, cr->item_prefix_key, "=", 1);
    }
    enum names names = scan_usage(&o, c, verbs, verb, 1);
    if (npos_after == 0)
        emit_names(&o, cli, names, "");
out:
    for (size_t i = 0; i < o.n; i++)
        free(o.seen[i]);
    free(o.seen);
    free(w);
    return 0;
}
