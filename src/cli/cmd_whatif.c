/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_whatif.c - `allot whatif`: replay a cluster's job history under a proposed change
 * (billing weights, MAX_TRES, allocation amounts, fair-share algorithm or half-life) and show,
 * per account, user and allocation, what the bank's settings give ("before") and what the
 * change gives ("after") (doc/whatif.md; the replay is libcore/whatif.c).
 *
 * Design: everything is read from the bank with GETs (accounts, associations, partitions,
 * balances, /v1/share's algorithm and half-life, and the settled jobs unless a `sacct -P`
 * file is given), so the bank is never written.  Reading the bank, the change words and the
 * JSON report are whatif_bank.c's, shared with allotd's POST /v1/whatif; the replay itself
 * is libcore's.  Memory: x* allocators; strings borrowed from the replies and the
 * listing, which live until the command ends.
 */
#include "cli/cli.h"
#include "cli/whatif_bank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/money.h"
#include "libslurmtext/sacct_job.h"
#include "libutil/xalloc.h"

/* ---- the history ------------------------------------------------------------------------ */

static int load_sacct(struct whatif_bank *h, const char *file, struct cli_listing *l,
                      struct allot_error *err)
{
    if (cli_listing_read(file, l, err) < 0)
        return -1;
    size_t pos = 0, nline = 0;
    struct slt_span line;
    struct slt_sacct_header hd;
    int have_header = 0;
    while (slt_next_line(l->p, l->len, &pos, &line)) {
        nline++;
        if (line.n == 0)
            continue;
        struct allot_error le = {0};
        if (!have_header) {
            if (slt_sacct_header_parse(line, &hd, &le) < 0)
                return allot_errorf(err, ALLOT_EINVAL, "%s:%zu: %s", file, nline, le.msg);
            have_header = 1;
            continue;
        }
        struct slt_sacct_job s;
        int k = slt_sacct_job_parse(&hd, line, &s, &le);
        if (k < 0)
            return allot_errorf(err, ALLOT_EINVAL, "%s:%zu: %s", file, nline, le.msg);
        if (k == 0)
            continue;
        if (s.cluster.n && (s.cluster.n != strlen(h->cluster) ||
                            strncmp(s.cluster.p, h->cluster, s.cluster.n) != 0)) {
            h->skipped++;
            continue;
        }
        struct whatif_job j = {
            .start_s = s.start_s,
            .end_s = s.end_s,
            .elapsed_s = s.elapsed_s,
            .time_limit_s = s.time_limit_s,
            .alloc_tres = whatif_bank_own(h, s.alloc_tres.p, s.alloc_tres.n),
            .node_fail = money_state_free(s.state),
        };
        char where[64];
        snprintf(where, sizeof where, "%s:%zu", file, nline);
        if (whatif_bank_job(h, where, s.job_id, s.account.p, s.account.n, s.user.p, s.user.n,
                            s.partition.p, s.partition.n, s.qos.p, s.qos.n, &j, err) < 0)
            return -1;
    }
    if (!have_header)
        return allot_errorf(err, ALLOT_EINVAL, "%s: no sacct header line", file);
    return 0;
}

static int apply_file(struct whatif_bank *h, const char *file, struct allot_error *err)
{
    struct cli_listing l = {0};
    if (cli_listing_read(file, &l, err) < 0)
        return -1;
    size_t pos = 0, nline = 0;
    struct slt_span line;
    int rc = 0;
    while (rc == 0 && slt_next_line(l.p, l.len, &pos, &line)) {
        nline++;
        char buf[4096], *words[ARGS_MAX_KV + 1];
        int n = 0;
        if (line.n >= sizeof buf) {
            rc = allot_errorf(err, ALLOT_EINVAL, "%s:%zu: line too long", file, nline);
            break;
        }
        memcpy(buf, line.p, line.n);
        buf[line.n] = '\0';
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0'; /* comments */
        for (char *save = NULL, *w = strtok_r(buf, " \t\r", &save); w && n <= ARGS_MAX_KV;
             w = strtok_r(NULL, " \t\r", &save))
            words[n++] = w;
        if (n == 0)
            continue;
        char what[64];
        snprintf(what, sizeof what, "%s:%zu", file, nline);
        struct kvlist kvs;
        int npos = 0;
        if (args_split(n, words, NULL, 0, &npos, &kvs, err) < 0 ||
            whatif_bank_change(h, &kvs, what, err) < 0 || args_check_used(&kvs, what, err) < 0) {
            if (strncmp(err->msg, what, strlen(what)) != 0)
                allot_error_prefix(err, "%s", what);
            rc = -1;
        }
    }
    cli_listing_free(&l);
    return rc;
}

static const struct column account_cols[] = {
    {"Account", "account", C_STR},
    {"Jobs", "jobs_before", C_INT},
    {"JobsAfter", "jobs_after", C_INT},
    {"Charged", "charged_before_sumin", C_SUMIN},
    {"ChargedAfter", "charged_after_sumin", C_SUMIN},
    {"Change", "change_sumin", C_SUMIN},
    {"Refused", "refused_before", C_INT},
    {"RefusedAfter", "refused_after", C_INT},
    {0},
};

static const struct column user_cols[] = {
    {"Account", "account", C_STR},
    {"User", "user", C_STR},
    {"Charged", "charged_before_sumin", C_SUMIN},
    {"ChargedAfter", "charged_after_sumin", C_SUMIN},
    {"Change", "change_sumin", C_SUMIN},
    {"RefusedAfter", "refused_after", C_INT},
    {"FairShare", "fs_before", C_STR},
    {"FairShareAfter", "fs_after", C_STR},
    {"Rank", "rank_before", C_INT},
    {"RankAfter", "rank_after", C_INT},
    {0},
};

static const struct column alloc_cols[] = {
    {"Allocation", "id", C_INT},
    {"Account", "account", C_STR},
    {"Resource", "resource", C_STR},
    {"Granted", "granted_before_sumin", C_SUMIN},
    {"GrantedAfter", "granted_after_sumin", C_SUMIN},
    {"Used", "used_before_sumin", C_SUMIN},
    {"UsedAfter", "used_after_sumin", C_SUMIN},
    {"RunsOut", "exhausted_before", C_TIME},
    {"RunsOutAfter", "exhausted_after", C_TIME},
    {"NotifyAfter", "notify_after", C_TIME},
    {"PauseAfter", "pause_after", C_TIME},
    {0},
};

static const struct column refusal_cols[] = {
    {"Scenario", "scenario", C_STR},
    {"JobID", "job_id", C_INT},
    {"Account", "account", C_STR},
    {"User", "user", C_STR},
    {"Partition", "partition", C_STR},
    {"Time", "time", C_TIME},
    {"Allocation", "alloc_id", C_INT},
    {"Needed", "needed_sumin", C_SUMIN},
    {"Available", "available_sumin", C_SUMIN},
    {0},
};

/* Fair-share factors with 6 decimals for the table ("-": none, an account's in Fair Tree). */
static void fix_users(json_t *rows)
{
    static const char *const k[][2] = {{"fairshare_before", "fs_before"},
                                       {"fairshare_after", "fs_after"}};
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *r = json_array_get(rows, i);
        for (int j = 0; j < 2; j++) {
            json_t *v = json_object_get(r, k[j][0]);
            char buf[32];
            snprintf(buf, sizeof buf, "%.6f", json_number_value(v));
            json_object_set_new(r, k[j][1], json_string(json_is_number(v) ? buf : "-"));
        }
    }
}

static void print_tables(struct cli *cli, json_t *rep)
{
    const struct {
        const char *key;
        const struct column *cols;
    } t[] = {{"accounts", account_cols},
             {"users", user_cols},
             {"allocations", alloc_cols},
             {"refusals", refusal_cols}};
    fix_users(json_object_get(rep, "users"));
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        json_t *rows = json_object_get(rep, t[i].key);
        if (i == 3 && json_array_size(rows) == 0)
            continue; /* no refusals: no table */
        if (i > 0 && !cli->parsable)
            printf("\n");
        cli_print_table(cli, rows, t[i].cols);
    }
}

/* whatif_get_f over the API. */
static json_t *get_json(void *ctx, const char *path, struct allot_error *err)
{
    return cli_get_json(ctx, path, err);
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    struct kvlist kvs;
    int npos = 0, rc = -1;
    struct whatif_bank h = {0};
    struct cli_listing l = {0};
    (void)verb;
    if (args_split(argc, argv, NULL, 0, &npos, &kvs, err) < 0)
        goto out;
    const char *cluster = args_get(&kvs, "cluster"), *sacct = args_get(&kvs, "sacct");
    const char *since = args_get(&kvs, "since"), *at = args_get(&kvs, "at");
    const char *changes = args_get(&kvs, "changes");
    int64_t at_s = 0, since_s = 0;
    if ((at && args_time("at", at, &at_s, err) < 0) ||
        (since && args_time("since", since, &since_s, err) < 0))
        goto out;
    if (cluster)
        snprintf(h.cluster, sizeof h.cluster, "%s", cluster);
    else if (cli_default_cluster(cli, h.cluster, sizeof h.cluster, err) < 0)
        goto out;
    if (whatif_bank_load(&h, get_json, cli, err) < 0)
        goto out;
    if (whatif_bank_change(&h, &kvs, "whatif", err) < 0 ||
        args_check_used(&kvs, "whatif", err) < 0 || (changes && apply_file(&h, changes, err) < 0))
        goto out;
    if (sacct ? load_sacct(&h, sacct, &l, err) < 0 : whatif_bank_jobs(&h, since, 0, err) < 0)
        goto out;
    if (sacct && since) { /* whatif_bank_jobs filters the bank's jobs by end; a listing here */
        size_t k = 0;
        for (size_t i = 0; i < h.njobs; i++)
            if (h.jobs[i].end_s >= since_s)
                h.jobs[k++] = h.jobs[i];
        h.njobs = k;
    }
    json_t *rep = whatif_bank_report(&h, at_s, sacct ? sacct : "bank", err);
    if (!rep)
        goto out;
    if (cli->json) {
        char *text = json_dumps(rep, JSON_COMPACT);
        cli_print_json_text(text);
        free(text);
    } else {
        print_tables(cli, rep);
    }
    json_decref(rep);
    rc = 0;
out:
    if (l.p)
        cli_listing_free(&l);
    whatif_bank_free(&h);
    return rc;
}

const struct cli_command cmd_whatif = {
    .noun = "whatif",
    .summary = "replay the job history under a proposed price, amount or fair-share change",
    .help = "usage: allot whatif [cluster=C] [sacct=FILE] [since=DATE] [at=DATE]\n"
            "                    [partition=P weights=TRESBillingWeights] [partition=P "
            "max_tres=yes|no]\n"
            "                    [alloc=ID amount=AMOUNT] [algo=classic|fair_tree|flux]\n"
            "                    [alloc=ID policy=month|quarter|year|total|none base=AMOUNT\n"
            "                     carryover=F notify=F downscale=F grace=F]\n"
            "                    [halflife=DURATION|0] [changes=FILE]\n"
            "\n"
            "Replays the cluster's settled jobs (or the finished jobs of FILE, what `sacct -P`\n"
            "printed) twice in memory: under the bank's settings and under the change.  Each job\n"
            "is priced as the bank prices it (billing from its AllocTRES and its partition's\n"
            "weights; a hold of billing x time limit at its start; a charge of billing x elapsed\n"
            "at its end) against the allocations' amounts as the balance evolves; a job whose\n"
            "hold the balance cannot cover is refused.  Shows per account and user the SU\n"
            "charged before and after, the refusals, the fair-share factor at the end (at=,\n"
            "default the last job's end), and when each allocation runs out.  Nothing in the\n"
            "bank changes.  A policy= on an allocation replaces its amount by a base each period\n"
            "(UTC) with carryover, and shows when its use first reaches notify and pause; the\n"
            "bank's policies are the before.  changes=FILE holds more changes, one set of words a "
            "line (# starts a\n"
            "comment).  Jobs start when they started: the queue is not simulated (doc/whatif.md).\n"
            "\n"
            "examples:\n"
            "  allot whatif partition=gpu weights=CPU=1.0,GRES/gpu=8.0\n"
            "  allot whatif sacct=jobs.txt partition=batch max_tres=yes\n"
            "  allot --json whatif alloc=3 amount=5000h halflife=7-0\n",
    .run = run,
    .needs_verb = 0,
};
