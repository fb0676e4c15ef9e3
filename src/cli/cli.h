/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli.h - what the `allot` commands share: the global options, the lazily created client,
 * output in the three forms (table, -P, --json), and a declarative engine for the nouns
 * that are plain collections of the API (add / show / modify / remove).
 *
 * Design: each cmd_<noun>.c describes its noun with tables (which key= maps to which JSON
 * field and type, which columns a table shows) and hands them to crud_run(); nouns with
 * verbs of their own (job admit, credit, balance, ...) use the same helpers directly.
 * Every command returns 0 or -1 with err set; main() prints `allot: error: <msg>` and exits
 * with allot_error_exit_status(err.code).  Refusals that are outcomes (a job not admitted)
 * set err too, so the exit status says "refused" (1).
 * Memory: x* allocators (a program).  Threads: single-threaded.
 */
#ifndef ALLOT_CLI_CLI_H
#define ALLOT_CLI_CLI_H

#include <jansson.h>
#include <stdint.h>

#include "allot/allot.h"
#include "cli/args.h"
#include "allot/error.h"

struct cli {
    const char *url;    /* --url; NULL = $ALLOT_URL or the default socket */
    const char *as;     /* --as USER */
    const char *config; /* --config (allot db) */
    long timeout_ms;    /* --timeout, in ms */
    int json;           /* --json: print the API's JSON */
    int parsable;       /* -P; 2 for -p (every line ends with '|'); 3 for --csv */
    int noheader;       /* -n */
    const char *format; /* -o/--format/format=: the columns to show, "Name[%WIDTH],..." */
    struct allot_error *print_err; /* where cli_print_table reports a bad format (main's) */
    int dry_run;                   /* --dry-run: show what a change would do, change nothing */
    const char *prog;              /* argv[0], to find allot-step next to allot */
    allot_client_t *client;
};

/* ---- requests --------------------------------------------------------------------------- */

/* Send a request with the options of cli (creating the client on first use).  On success
 * *reply (caller frees, may be NULL if not wanted) holds the body.  On failure err holds the
 * daemon's error; *reply still holds the body if one came (a refused admit's numbers). */
int cli_request(struct cli *cli, const char *method, const char *path, json_t *body, char **reply,
                struct allot_error *err);

/* GET path and parse the reply; the caller json_decref()s the result.  NULL with err set. */
json_t *cli_get_json(struct cli *cli, const char *path, struct allot_error *err);

/* allotd names fields by their API names ("time_limit_s: required"); when err's message
 * starts with one of fields' json names, name the command-line key instead
 * ("timelimit: required"), the spelling the user typed. */
struct field;
void cli_error_keys(const struct field *fields, struct allot_error *err);

/* The bank's only cluster into out (len bytes), when it has exactly one; else -1 with
 * EINVAL asking for cluster= (or the request's error). */
int cli_default_cluster(struct cli *cli, char *out, size_t len, struct allot_error *err);

/* ---- paths ------------------------------------------------------------------------------ */

/* A growing "path?k=v&k=v" string with percent-encoded values. */
struct path {
    char *s;
    int nq; /* query parameters so far */
};
void path_init(struct path *p, const char *base);
void path_segment(struct path *p, const char *segment); /* appends "/<encoded segment>" */
void path_query(struct path *p, const char *key, const char *value);
void path_fini(struct path *p);

/* ---- typed values ----------------------------------------------------------------------- */

enum val_type {
    V_STR = 0,   /* JSON string, free text or a name */
    V_INT,       /* JSON integer, non-negative */
    V_OPTINT,    /* the same, or an empty value for "not set" -> -1 (a user's uid) */
    V_AMOUNT,    /* "100h" -> JSON integer SU-minutes */
    V_SAMOUNT,   /* signed amount (adjustments) */
    V_TIME,      /* date -> JSON integer epoch seconds */
    V_DURATION,  /* Slurm time limit -> JSON integer seconds */
    V_ELAPSED,   /* the same, 0 allowed (an elapsed time) */
    V_TIMELIMIT, /* a partition's time: duration, or UNLIMITED/INFINITE/NONE/"" -> -1 */
    V_BOOL,      /* yes/no -> JSON true/false */
    V_DECIMAL,   /* "1.5" -> JSON string (factors) */
};

/* key=value accepted by a verb: key on the command line, member name in the JSON body. */
struct field {
    const char *key;
    const char *json;
    enum val_type type;
    const char *help;
};

/* Convert one value typed on the command line to JSON (new reference) by its type.
 * NULL with err (EINVAL naming key) when the value is malformed. */
json_t *cli_value(const struct field *f, const char *value, struct allot_error *err);

/* For each field in fields (terminated by key == NULL) given in kvs, set body[json]. */
int cli_fields_to_json(const struct field *fields, struct kvlist *kvs, json_t *body,
                       struct allot_error *err);
/* Same, as query parameters of p (integers written in decimal). */
int cli_fields_to_query(const struct field *fields, struct kvlist *kvs, struct path *p,
                        struct allot_error *err);

/* ---- output ----------------------------------------------------------------------------- */

enum col_type {
    C_STR = 0,
    C_INT,
    C_OPTINT,   /* integer where a negative value means "not set" (uid -1): shown empty */
    C_SUMIN,    /* integer SU-minutes shown as hours with suffixes (money_format_sumin) */
    C_TIME,     /* ISO string shown as is; integer epoch formatted as ISO */
    C_BOOL,     /* true/false shown as yes/no */
    C_DURATION, /* integer seconds shown as Slurm's [D-]HH:MM:SS; negative: UNLIMITED */
    C_DEFTIME,  /* the same, but negative (a DefaultTime not set) is NONE, as Slurm shows it */
    C_JSON,     /* any JSON value shown compactly (lists, objects) */
    C_MICRO,    /* integer micro-units (billing_micro) shown as an exact decimal ("4.5") */
};

/* One column: header text and the member it shows.  json may be a dotted path
 * ("balance.available_sumin"); when absent the last component is tried at top level, so
 * flat and nested replies print alike. */
struct column {
    const char *header;
    const char *json;
    enum col_type type;
};

/* The rows a reply holds: its "items" array, the reply itself if an array, else the reply
 * object as one row.  Borrowed from reply; the array form is returned in *rows. */
json_t *cli_rows(json_t *reply);

/* Text of one cell (buf of size len, returned). */
const char *cli_cell(json_t *row, const struct column *col, char *buf, size_t len);

/* How many tables cli_print_table printed: a format= on a command that printed none is an
 * error (main), not silently ignored. */
int cli_tables_printed(void);

/* Print rows as a table with cols (terminated by header == NULL) in the mode of cli: only
 * the columns cli->format names (headers, case-insensitive), in its order and widths.  A
 * name that is none of cols' headers prints nothing and sets *cli->print_err (EINVAL listing
 * the columns), which main() reports once the command returns. */
void cli_print_table(const struct cli *cli, json_t *rows, const struct column *cols);

/* GET path and print it: --json verbatim, else its rows (cli_rows, or the object as one
 * row) through fix (may be NULL; adds derived members to a row) as a table of cols. */
typedef void (*row_fix_f)(json_t *row);
int cli_show(struct cli *cli, const char *path, const struct column *cols, row_fix_f fix,
             struct allot_error *err);

/* A listing with limit=: what it lists ("entries", "jobs") and the limit it sent (0 = none),
 * so that a list the limit may have cut short says so. */
struct cli_page {
    const char *what;
    int64_t limit;
    int by_id; /* the API pages by next_after (the ledger): without it the list is whole */
};

/* The limit= of kvs as a number (0 when absent), for a cli_page.  Call it after
 * cli_fields_to_query has checked the value; -1 with err if it is not a number. */
int cli_page_limit(struct kvlist *kvs, int64_t *limit, struct allot_error *err);

/* When reply (nrows rows) may not be the whole list, print on stderr how to see more: the
 * next page (after=<next_after>) when the API pages the list, else a larger limit=.  Nothing
 * when the list came back shorter than its limit.  stdout is untouched, so -P and --json
 * stay what scripts parse.  pg NULL: not a limited listing. */
void cli_page_hint(const struct cli_page *pg, json_t *reply, size_t nrows);

/* cli_show for a listing that takes limit= (cli_page_hint after the output). */
int cli_show_page(struct cli *cli, const char *path, const struct column *cols, row_fix_f fix,
                  const struct cli_page *pg, struct allot_error *err);

/* Print the raw reply text for --json (adds the final newline). */
void cli_print_json_text(const char *text);

/* ---- the declarative engine ------------------------------------------------------------- */

enum crud_flags {
    CRUD_NO_MODIFY = 1 << 0,  /* no PATCH */
    CRUD_NO_GET_ONE = 1 << 1, /* show NAME filters the list on name_json */
    CRUD_BODY_KEY = 1 << 2,   /* no positional name: PATCH/DELETE the collection, key in body */
    CRUD_NO_ADD = 1 << 3,
    CRUD_NO_REMOVE = 1 << 4,
};

struct crud {
    const char *noun;            /* "account": for messages */
    const char *collection;      /* "/v1/accounts" */
    const char *name_json;       /* member the positional NAME fills on add ("name", "account") */
    const char *item_prefix_key; /* key= whose value is a path segment before NAME
                                    ("cluster" for partitions) or NULL */
    const struct field *add;     /* accepted by add (key == NULL ends) */
    const struct field *modify;  /* accepted by modify; NULL = same as add */
    const struct field *filters; /* show: query parameters; NULL: none */
    const struct field *keys;    /* CRUD_BODY_KEY: key fields for modify/remove */
    const struct column *columns;
    unsigned flags;
};

/* Run verb (add, show/list, modify, remove) with argv (positional NAME and key=value). */
int crud_run(struct cli *cli, const struct crud *c, const char *verb, int argc, char **argv,
             struct allot_error *err);

/* ---- commands --------------------------------------------------------------------------- */

typedef int (*cmd_f)(struct cli *cli, const char *verb, int argc, char **argv,
                     struct allot_error *err);

struct cli_command {
    const char *noun;
    const char *summary;     /* one line for `allot --help` */
    const char *help;        /* full text for `allot NOUN --help` */
    cmd_f run;               /* NULL: a plain crud noun, run by crud_run */
    int needs_verb;          /* 1: the first word after the noun is a verb */
    const char *verbs;       /* the words that may follow the noun as its verb, ", "-separated
                                (errors, completion); NULL: none, or a crud noun's (flags) */
    const struct crud *crud; /* for the key lists printed by --help; may be NULL */
};

extern const struct cli_command cmd_cluster, cmd_account, cmd_user, cmd_assoc, cmd_qos,
    cmd_partition, cmd_alloc, cmd_credit, cmd_balance, cmd_ledger, cmd_job, cmd_failures,
    cmd_limits, cmd_db, cmd_whoami, cmd_step, cmd_dashboard;
/* cmd_import_sacct.c: `allot import sacct` (doc/adopt.md "Bring the history"): the verb's
 * run function (argv after "sacct") and its help text, for the `import` noun
 * (cmd_slurm_io.c). */
int cli_import_sacct(struct cli *cli, int argc, char **argv, struct allot_error *err);
/* A `sacct -P` listing read whole (cmd_import_sacct.c), for import sacct and whatif. */
struct cli_listing {
    const char *p; /* the text */
    size_t len;
    void *map; /* mmap'd file, or NULL (p malloc'd) */
    size_t map_len;
};
/* Read the regular file path into *l (mapped); EIO naming path.  Free with cli_listing_free. */
int cli_listing_read(const char *path, struct cli_listing *l, struct allot_error *err);
void cli_listing_free(struct cli_listing *l);
#define IMPORT_SACCT_HELP                                                                          \
    "usage: allot import sacct FILE [cluster=C] [backfill=yes]\n"                                  \
    "       allot import sacct start=DATE end=DATE [cluster=C] [backfill=yes]\n"                   \
    "\n"                                                                                           \
    "Finished jobs of a cluster into the bank, from FILE (what `sacct -P` printed, with its\n"     \
    "header line) or from sacct run here for jobs that ended between start and end.  The\n"        \
    "listing needs the columns JobIDRaw, State, User, Account, Partition, Start, End, Elapsed\n"   \
    "and AllocTRES; QOS and Timelimit are read when present; times are UTC (TZ=UTC0).  Each\n"     \
    "job counts as usage for fair-share, priced as its settle would be (AllocTRES with the\n"      \
    "partition's weights, times Elapsed); with backfill=yes it is also charged to the\n"           \
    "allocation paying its account at its start, one debit per job marked 'import sacct' in\n"     \
    "the ledger.  Steps, jobs not ended and jobs never started are passed over.  Every line\n"     \
    "is checked first: a bad one is refused with its line number and nothing is imported.\n"       \
    "Importing again imports nothing twice.  On a terminal, stderr shows jobs done / total,\n"     \
    "the rate and the time left.\n"                                                                \
    "\n"                                                                                           \
    "examples:\n"                                                                                  \
    "  TZ=UTC0 sacct -P -a -X --duplicates -S 2025-11-01 -E 2026-11-01 \\\n"                       \
    "        "                                                                                     \
    "--format=JobIDRaw,State,User,Account,Partition,Start,End,Elapsed,AllocTRES,QOS,Timelimit "    \
    "\\\n"                                                                                         \
    "        > year.txt\n"                                                                         \
    "  allot import sacct year.txt\n"                                                              \
    "  allot import sacct start=2026-11-01 end=2026-11-28 backfill=yes\n"
/* cmd_report.c: `allot report observe` (EnforceMode=observe, doc/adopt.md) */
extern const struct cli_command cmd_report;
/* cmd_forecast.c: `allot forecast` (doc/forecast.md) */
extern const struct cli_command cmd_forecast;
/* cmd_whatif.c: `allot whatif` (doc/whatif.md) */
extern const struct cli_command cmd_whatif;
/* cmd_share.c (doc/design.md §6) */
extern const struct cli_command cmd_share, cmd_tree, cmd_usage, cmd_priority;
/* cmd_policy.c, cmd_command.c, cmd_agent.c (doc/design.md §5) */
extern const struct cli_command cmd_policy, cmd_command, cmd_agent;
/* cmd_sync.c: drift between allot's copy and Slurm (doc/agent.md "Sync") */
extern const struct cli_command cmd_sync;
/* cmd_slurm_io.c: `allot import slurm`, `allot export slurm` (doc/adopt.md) */
extern const struct cli_command cmd_import, cmd_export;
/* cmd_efficiency.c: `allot job efficiency` (cmd_job.c dispatches the verb to it), and the
 * byte formatter it shares with `allot step list` ("1.5G", "200.0M", "512K", "10B"). */
int cmd_job_efficiency(struct cli *cli, int argc, char **argv, struct allot_error *err);
void cli_format_bytes(int64_t bytes, char *buf, size_t len);
/* Run sacct's argv (no shell, stdin /dev/null), collect stdout (up to 256 MiB) and the start
 * of stderr, kill it after 60 s.  *out is the caller's (free).  -1 with err (EUNAVAIL: could
 * not run, failed or timed out, with sacct's message; ETOOBIG). */
int cli_run_capture(char *const argv[], char **out, size_t *len, struct allot_error *err);

/* complete.c: `allot --complete WORD...` prints the words that may come next (bash
 * completion), from cmds (find looks a noun or alias up); always 0. */
int cli_complete(struct cli *cli, const struct cli_command *const *cmds, size_t ncmds,
                 const struct cli_command *(*find)(const char *noun), int argc, char **argv);

/* Error for an unknown verb of noun. */
int cli_bad_verb(const char *noun, const char *verb, const char *verbs, struct allot_error *err);

#endif
