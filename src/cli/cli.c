/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli.c - requests, paths, typed values and output shared by the commands (cli.h). */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/table.h"
#include "libcore/money.h"
#include "libcore/numparse.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

static int cli_client(struct cli *cli, struct allot_error *err)
{
    if (cli->client)
        return 0;
    cli->client = allot_client_create(cli->url, err);
    if (!cli->client)
        return -1;
    if (cli->timeout_ms > 0 && allot_client_set_timeout_ms(cli->client, cli->timeout_ms, err) < 0)
        return -1;
    if (cli->as && allot_client_set_run_as(cli->client, cli->as, err) < 0)
        return -1;
    return 0;
}

int cli_request(struct cli *cli, const char *method, const char *path, json_t *body, char **reply,
                struct allot_error *err)
{
    char *text = NULL, *r = NULL;
    int rc;

    if (reply)
        *reply = NULL;
    if (cli_client(cli, err) < 0)
        return -1;
    if (body) {
        text = json_dumps(body, JSON_COMPACT);
        if (!text)
            return allot_errorf(err, ALLOT_ENOMEM, "cannot encode the request");
    }
    int status = 0;
    rc = allot_request(cli->client, method, path, text, &status, &r, err);
    free(text);
    /* allotd answers every failure with a JSON object (its error, or a refusal's numbers).
     * Anything else came from some other server (a web server's 404 page): its status says
     * nothing about the bank, so do not let a script read "not found" (exit 3) into it. */
    if (rc < 0 && status > 0 && r && err && err->code != ALLOT_EPROTO) {
        json_t *root = json_loads(r, 0, NULL);
        if (!json_is_object(root))
            allot_errorf(err, ALLOT_EPROTO,
                         "%s is not allotd: it answered %s %s with HTTP %d and no allotd reply",
                         cli->url ? cli->url : "the server", method, path, status);
        json_decref(root);
    }
    if (reply)
        *reply = r;
    else
        free(r);
    return rc;
}

json_t *cli_get_json(struct cli *cli, const char *path, struct allot_error *err)
{
    char *reply = NULL;
    json_t *root;
    json_error_t jerr;

    if (cli_request(cli, "GET", path, NULL, &reply, err) < 0) {
        free(reply);
        return NULL;
    }
    root = json_loads(reply ? reply : "", 0, &jerr);
    free(reply);
    if (!root)
        allot_errorf(err, ALLOT_EPROTO, "allotd's reply to %s is not JSON: %s", path, jerr.text);
    return root;
}

/* The bank's only cluster (job and limits verbs let cluster= be left out then). */
int cli_default_cluster(struct cli *cli, char *out, size_t len, struct allot_error *err)
{
    json_t *root = cli_get_json(cli, "/v1/clusters", err), *rows;
    int rc = -1;
    if (!root)
        return -1;
    rows = cli_rows(root);
    size_t n_clusters = rows ? json_array_size(rows) : 0;
    if (n_clusters == 1) {
        const char *n = json_string_value(json_object_get(json_array_get(rows, 0), "name"));
        if (n) {
            snprintf(out, len, "%s", n);
            rc = 0;
        }
    }
    json_decref(root);
    if (rc < 0)
        allot_errorf(err, ALLOT_EINVAL, "cluster: required (the bank has %zu clusters, not one)",
                     n_clusters);
    return rc;
}

void cli_error_keys(const struct field *fields, struct allot_error *err)
{
    for (const struct field *f = fields; err && f && f->key; f++) {
        size_t n = strlen(f->json);
        if (strcmp(f->key, f->json) != 0 && strncmp(err->msg, f->json, n) == 0 &&
            err->msg[n] == ':') {
            char rest[ALLOT_ERRMSG_MAX];
            text_copy(rest, sizeof rest, err->msg + n);
            snprintf(err->msg, sizeof err->msg, "%s%s", f->key, rest);
            return;
        }
    }
}

void path_init(struct path *p, const char *base)
{
    p->s = xstrdup(base);
    p->nq = 0;
}

static void path_append(struct path *p, const char *a, const char *b, const char *c)
{
    char *n = xasprintf("%s%s%s%s", p->s, a, b, c);
    free(p->s);
    p->s = n;
}

void path_segment(struct path *p, const char *segment)
{
    char *enc = allot_urlencode(segment, NULL);
    if (!enc)
        enc = xstrdup(""); /* unreachable unless out of memory; xalloc would abort anyway */
    path_append(p, "/", enc, "");
    free(enc);
}

void path_query(struct path *p, const char *key, const char *value)
{
    char *enc = allot_urlencode(value, NULL);
    char *kv = xasprintf("%s=%s", key, enc ? enc : "");
    path_append(p, p->nq++ ? "&" : "?", kv, "");
    free(kv);
    free(enc);
}

void path_fini(struct path *p)
{
    free(p->s);
    p->s = NULL;
}

typedef int (*int_parse_f)(const char *key, const char *s, int64_t *out, struct allot_error *err);

/* The parser of an integer value type (key=value text to a number), NULL for another type. */
static int_parse_f int_parser(enum val_type t)
{
    switch (t) {
    case V_OPTINT:
    case V_INT:
        return args_uint;
    case V_TIME:
        return args_time;
    case V_DURATION:
        return args_duration;
    case V_ELAPSED:
        return args_elapsed;
    case V_TIMELIMIT:
        return args_timelimit;
    default:
        return NULL;
    }
}

json_t *cli_value(const struct field *f, const char *v, struct allot_error *err)
{
    int64_t n;
    int b;

    switch (f->type) {
    case V_STR:
        return json_string(v);
    case V_OPTINT:
        /* An empty value unsets, as `defaultaccount=` and `limits set ... value=` do; the
         * API's "not set" is -1 (shown as an empty cell, C_OPTINT). */
        if (!*v)
            return json_integer(-1);
        /* fall through */
    case V_INT:
    case V_TIME:
    case V_DURATION:
    case V_ELAPSED:
    case V_TIMELIMIT:
        if (int_parser(f->type)(f->key, v, &n, err) < 0)
            return NULL;
        return json_integer(n);
    case V_AMOUNT:
    case V_SAMOUNT:
        if (args_amount(f->key, v, f->type == V_SAMOUNT, &n, err) < 0)
            return NULL;
        return json_integer(n);
    case V_BOOL:
        if (args_bool(f->key, v, &b, err) < 0)
            return NULL;
        return json_boolean(b);
    case V_DECIMAL:
        if (args_decimal(f->key, v, err) < 0)
            return NULL;
        return json_string(v);
    }
    allot_errorf(err, ALLOT_EINTERNAL, "%s: unknown value type", f->key);
    return NULL;
}

int cli_fields_to_json(const struct field *fields, struct kvlist *kvs, json_t *body,
                       struct allot_error *err)
{
    for (const struct field *f = fields; f && f->key; f++) {
        const char *v = args_get(kvs, f->key);
        if (!v)
            continue;
        json_t *j = cli_value(f, v, err);
        if (!j)
            return -1;
        json_object_set_new(body, f->json, j);
    }
    return 0;
}

int cli_fields_to_query(const struct field *fields, struct kvlist *kvs, struct path *p,
                        struct allot_error *err)
{
    for (const struct field *f = fields; f && f->key; f++) {
        const char *v = args_get(kvs, f->key);
        if (!v)
            continue;
        json_t *j = cli_value(f, v, err);
        if (!j)
            return -1;
        char num[32];
        const char *text = v;
        if (json_is_integer(j)) {
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(j));
            text = num;
        } else if (json_is_boolean(j)) {
            text = json_is_true(j) ? "true" : "false";
        }
        path_query(p, f->json, text);
        json_decref(j);
    }
    return 0;
}

json_t *cli_rows(json_t *reply)
{
    json_t *items;
    if (json_is_array(reply))
        return reply;
    items = json_object_get(reply, "items");
    if (json_is_array(items))
        return items;
    return NULL;
}

/* Member at a dotted path, falling back to the last component at top level. */
static json_t *lookup(json_t *row, const char *path)
{
    const char *dot = strchr(path, '.');
    if (!dot)
        return json_object_get(row, path);
    char head[64];
    size_t n = (size_t)(dot - path);
    if (n < sizeof(head)) {
        memcpy(head, path, n);
        head[n] = '\0';
        json_t *sub = json_object_get(row, head);
        if (json_is_object(sub)) {
            json_t *v = lookup(sub, dot + 1);
            if (v)
                return v;
        }
    }
    return lookup(row, dot + 1);
}

/* Seconds as Slurm's [D-]HH:MM:SS; a negative value (the API's -1, not set) as unset. */
static void format_duration(long long s, const char *unset, char *buf, size_t len)
{
    if (s < 0)
        snprintf(buf, len, "%s", unset);
    else if (s >= 86400)
        snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", s / 86400, s % 86400 / 3600, s % 3600 / 60,
                 s % 60);
    else
        snprintf(buf, len, "%02lld:%02lld:%02lld", s / 3600, s % 3600 / 60, s % 60);
}

const char *cli_cell(json_t *row, const struct column *col, char *buf, size_t len)
{
    json_t *v = lookup(row, col->json);

    buf[0] = '\0';
    if (!v || json_is_null(v))
        return buf;
    switch (col->type) {
    case C_SUMIN:
        if (json_is_integer(v) && money_format_sumin(json_integer_value(v), buf, len) == 0)
            return buf;
        break;
    case C_TIME:
        if (json_is_integer(v)) {
            if (json_integer_value(v) == 0)
                return buf;
            args_format_time(json_integer_value(v), buf, len);
            return buf;
        }
        break;
    case C_OPTINT:
        if (json_is_integer(v) && json_integer_value(v) < 0)
            return buf;
        break;
    case C_MICRO:
        if (json_is_integer(v) && json_integer_value(v) >= 0 &&
            numparse_format_fixed(json_integer_value(v), 6, buf, len) >= 0)
            return buf;
        break;
    case C_BOOL:
        if (json_is_boolean(v)) {
            snprintf(buf, len, "%s", json_is_true(v) ? "yes" : "no");
            return buf;
        }
        break;
    case C_DURATION:
    case C_DEFTIME:
        if (json_is_integer(v)) {
            /* Slurm's words for an unset time: a MaxTime without limit is UNLIMITED, a
             * DefaultTime not set is NONE (scontrol show partition, sinfo). */
            format_duration(json_integer_value(v), col->type == C_DEFTIME ? "NONE" : "UNLIMITED",
                            buf, len);
            return buf;
        }
        break;
    default:
        break;
    }
    if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
    } else if (json_is_integer(v)) {
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(buf, len, "%g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        snprintf(buf, len, "%s", json_is_true(v) ? "yes" : "no");
    } else if (json_is_array(v) && col->type != C_JSON) {
        /* A list of names: "a,b,c". */
        size_t used = 0, i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            const char *s = json_string_value(e);
            int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", s ? s : "?");
            if (n < 0 || (size_t)n >= len - used)
                break;
            used += (size_t)n;
        }
    } else {
        char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(buf, len, "%s", d ? d : "");
        free(d);
    }
    return buf;
}

/* The columns of cols that format ("Name[%W],...") names, into pick/width (at most max);
 * their number, or -1 with err naming the unknown one. */
static int pick_columns(const char *format, const struct column *cols, int ncols, int *pick,
                        size_t *width, int max, struct allot_error *err)
{
    int n = 0;
    char *copy = xstrdup(format), *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *pct = strchr(item, '%');
        int64_t w = 0;
        if (pct) {
            *pct = '\0';
            if (args_uint("format", pct + 1, &w, err) < 0 || w < 1 || w > 1000) {
                allot_errorf(err, ALLOT_EINVAL, "format: %s%%%s: the width must be 1..1000", item,
                             pct + 1);
                goto fail;
            }
        }
        int c = 0;
        while (c < ncols && strcasecmp(cols[c].header, item) != 0)
            c++;
        if (c == ncols || n == max) {
            char names[1024];
            size_t used = 0;
            names[0] = '\0';
            for (int k = 0; k < ncols && used < sizeof names; k++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", k ? "," : "",
                                         cols[k].header);
            allot_errorf(err, ALLOT_EINVAL, "format: no column '%s' here (columns: %s)", item,
                         names);
            goto fail;
        }
        pick[n] = c;
        width[n++] = (size_t)w;
    }
    free(copy);
    if (n == 0)
        return allot_errorf(err, ALLOT_EINVAL, "format: name at least one column");
    return n;
fail:
    free(copy);
    return -1;
}

static int tables_printed; /* a program-wide count: the CLI is single-threaded */

int cli_tables_printed(void)
{
    return tables_printed;
}

void cli_print_table(const struct cli *cli, json_t *rows, const struct column *cols)
{
    int ncols = 0, nshow;
    int pick[64];
    size_t width[64] = {0};
    const char *headers[64] = {0};
    const char *cells[64] = {0};
    char bufs[64][1024];
    table_t *t;
    size_t i;
    json_t *row;

    while (cols[ncols].header && ncols < 64)
        ncols++;
    if (cli->format) {
        struct allot_error ferr = {0};
        nshow = pick_columns(cli->format, cols, ncols, pick, width, 64, &ferr);
        if (nshow < 0) {
            if (cli->print_err && !cli->print_err->code)
                *cli->print_err = ferr;
            return;
        }
    } else {
        for (nshow = 0; nshow < ncols; nshow++)
            pick[nshow] = nshow;
    }
    for (int c = 0; c < nshow; c++)
        headers[c] = cols[pick[c]].header;
    t = table_create(nshow, headers);
    for (int c = 0; c < nshow; c++) {
        enum col_type ty = cols[pick[c]].type;
        if (ty == C_SUMIN || ty == C_INT || ty == C_OPTINT || ty == C_MICRO)
            table_set_align(t, c, TABLE_RIGHT);
        table_set_width(t, c, width[c]);
    }
    json_array_foreach(rows, i, row)
    {
        for (int c = 0; c < nshow; c++)
            cells[c] = cli_cell(row, &cols[pick[c]], bufs[c], sizeof(bufs[c]));
        table_add_row(t, cells);
    }
    table_print(t, stdout,
                cli->parsable == 3   ? TABLE_CSV
                : cli->parsable == 2 ? TABLE_PARSABLE_END
                : cli->parsable      ? TABLE_PARSABLE
                                     : TABLE_ALIGNED,
                !cli->noheader);
    table_destroy(t);
    tables_printed++;
}

int cli_page_limit(struct kvlist *kvs, int64_t *limit, struct allot_error *err)
{
    const char *v = args_get(kvs, "limit");
    int64_t n = 0;
    if (v && args_uint("limit", v, &n, err) < 0)
        return -1;
    *limit = n;
    return 0;
}

/* The API pages the ledger by entry id: a reply carries next_after, the id to pass as
 * after= (doc/api.md "Lists"), exactly when entries beyond its limit exist, also where
 * allotd capped the limit.  The other lists (jobs, failures, commands) come newest first with
 * limit= only, so a list as long as its limit may have been cut, and only a larger limit shows
 * more. */
void cli_page_hint(const struct cli_page *pg, json_t *reply, size_t nrows)
{
    json_t *next = json_object_get(reply, "next_after");

    if (!pg || pg->limit <= 0)
        return;
    /* The note comes after the rows also when both streams go to one file (2>&1); a write
     * error on stdout is not this note's to report. */
    (void)fflush(stdout);
    if (json_is_integer(next)) {
        fprintf(stderr,
                "allot: note: stopped at limit=%lld; there are more %s: add after=%lld for the "
                "next page\n",
                (long long)pg->limit, pg->what, (long long)json_integer_value(next));
    } else if (!pg->by_id && nrows >= (size_t)pg->limit) {
        fprintf(stderr,
                "allot: note: stopped at limit=%lld; there may be more %s: give a larger "
                "limit= to see them\n",
                (long long)pg->limit, pg->what);
    }
}

/* --json: the reply as it came; with a page, parsed too, for the hint. */
static int show_json(struct cli *cli, const char *path, const struct cli_page *pg,
                     struct allot_error *err)
{
    char *reply = NULL;
    int rc = cli_request(cli, "GET", path, NULL, &reply, err);
    if (rc == 0) {
        cli_print_json_text(reply);
        if (pg) {
            json_t *root = json_loads(reply ? reply : "", 0, NULL);
            json_t *rows = cli_rows(root);
            cli_page_hint(pg, root, rows ? json_array_size(rows) : 0);
            json_decref(root);
        }
    }
    free(reply);
    return rc;
}

int cli_show_page(struct cli *cli, const char *path, const struct column *cols, row_fix_f fix,
                  const struct cli_page *pg, struct allot_error *err)
{
    json_t *root, *rows, *row, *one = NULL;
    size_t i;

    if (cli->json)
        return show_json(cli, path, pg, err);
    root = cli_get_json(cli, path, err);
    if (!root)
        return -1;
    rows = cli_rows(root);
    if (!rows) {
        one = json_array();
        json_array_append(one, root);
        rows = one;
    }
    if (fix)
        json_array_foreach(rows, i, row) fix(row);
    cli_print_table(cli, rows, cols);
    cli_page_hint(pg, root, json_array_size(rows));
    json_decref(one);
    json_decref(root);
    return 0;
}

int cli_show(struct cli *cli, const char *path, const struct column *cols, row_fix_f fix,
             struct allot_error *err)
{
    return cli_show_page(cli, path, cols, fix, NULL, err);
}

void cli_print_json_text(const char *text)
{
    size_t n = text ? strlen(text) : 0;
    if (n == 0) {
        fputs("{}\n", stdout);
        return;
    }
    fputs(text, stdout);
    if (text[n - 1] != '\n')
        fputc('\n', stdout);
}

int cli_bad_verb(const char *noun, const char *verb, const char *verbs, struct allot_error *err)
{
    if (!verb)
        return allot_errorf(err, ALLOT_EINVAL, "%s: missing verb (%s); see 'allot %s --help'", noun,
                            verbs, noun);
    return allot_errorf(err, ALLOT_EINVAL, "%s: unknown verb '%s' (%s); see 'allot %s --help'",
                        noun, verb, verbs, noun);
}
