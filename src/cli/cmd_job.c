/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_job.c - `allot job ...`: everything about a job's money (show), job lists, and the
 * job verbs the Slurm plugins use (admit, hold, settle, release), for operators and tests.
 *
 * A refused admit or hold is printed like a granted one (its numbers), and the refusal
 * message goes to stderr as the error, so the exit status is 1 (refused) and scripts can
 * still parse the numbers from stdout.
 */
#include "cli/cli.h"
#include "libslurmtext/jobname.h"
#include "libutil/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct field common_fields[] = {
    {"cluster", "cluster", V_STR, "cluster name"},
    {"user", "user", V_STR, "user name"},
    {"account", "account", V_STR, "account charged"},
    {"partition", "partition", V_STR, "partition"},
    {"qos", "qos", V_STR, "QOS"},
    {"timelimit", "time_limit_s", V_DURATION, "time limit, Slurm syntax (minutes, HH:MM:SS, D-HH)"},
    {"tres", "tres", V_STR, "requested TRES, e.g. cpu=4,mem=8000M,node=1"},
    {"billing", "billing", V_INT, "Slurm's billing TRES"},
    {0},
};

static const struct field run_fields[] = {
    {"jobid", "job_id", V_INT, "Slurm job id"},
    {"run", "run", V_INT, "run number (0 first; a requeue is a new run)"},
    {"submit", "submit", V_TIME, "submit time"},
    {"start", "start", V_TIME, "start time"},
    {"alloctres", "alloc_tres", V_STR, "allocated TRES"},
    {0},
};

/* Settle takes no requested TRES or submit time (doc/api.md): its own list. */
static const struct field settle_fields[] = {
    {"cluster", "cluster", V_STR, "cluster name"},
    {"jobid", "job_id", V_INT, "Slurm job id"},
    {"run", "run", V_INT, "run number"},
    {"user", "user", V_STR, "user (a run never held)"},
    {"account", "account", V_STR, "account (a run never held)"},
    {"partition", "partition", V_STR, "partition (a run never held)"},
    {"qos", "qos", V_STR, "QOS (a run never held)"},
    {"timelimit", "time_limit_s", V_DURATION, "time limit (a run never held)"},
    {"billing", "billing", V_INT, "Slurm's billing TRES"},
    {"start", "start", V_TIME, "start time"},
    {"alloctres", "alloc_tres", V_STR, "allocated TRES"},
    {"end", "end", V_TIME, "end time"},
    {"elapsed", "elapsed_s", V_ELAPSED, "elapsed time, Slurm syntax or <N>s; 0 allowed"},
    {"state", "state", V_STR, "Slurm job state (COMPLETED, NODE_FAIL, ...)"},
    {"source", "source", V_STR, "epilog, sacct or api (default api)"},
    {0},
};

static const struct field release_fields[] = {
    {"cluster", "cluster", V_STR, "cluster name"},
    {"jobid", "job_id", V_INT, "Slurm job id"},
    {"run", "run", V_INT, "run number"},
    {"comment", "comment", V_STR, "why"},
    {0},
};

static const struct field list_filters[] = {
    {"cluster", "cluster", V_STR, "only this cluster"},
    {"account", "account", V_STR, "only this account"},
    {"user", "user", V_STR, "only this user"},
    {"status", "status", V_STR, "held, settled, released or refused"},
    {"since", "since", V_TIME, "updated at or after this time"},
    {"limit", "limit", V_INT, "at most this many"},
    {0},
};

static const struct column job_columns[] = {
    {"Cluster", "cluster", C_STR},
    {"JobID", "job_id", C_INT},
    {"Run", "run", C_INT},
    {"User", "user", C_STR},
    {"Account", "account", C_STR},
    {"Partition", "partition", C_STR},
    {"Status", "status", C_STR},
    {"State", "state", C_STR},
    {"Start", "start", C_TIME},
    {"End", "end", C_TIME},
    {"Elapsed", "elapsed_s", C_DURATION},
    {"Hold", "hold_sumin", C_SUMIN},
    {"Charge", "charge_sumin", C_SUMIN},
    {"Alloc", "alloc_id", C_INT},
    {"Payer", "payer_account", C_STR},
    {"Billing", "billing_micro", C_MICRO},
    /* Slurm's name of an array task or het component ("54_3", "60+1"), last so that the
     * columns before it keep their places. */
    {"SlurmJobID", "slurm_job_id", C_STR},
    {0},
};

/* An array's or het job's sum (GET /v1/jobs/{cluster}/{job} "total"). */
static const struct column total_columns[] = {
    {"Jobs", "jobs", C_INT},
    {"Hold", "hold_sumin", C_SUMIN},
    {"Charge", "charge_sumin", C_SUMIN},
    {0},
};

static const struct column ledger_columns[] = {
    {"ID", "id", C_INT},
    {"Alloc", "alloc_id", C_INT},
    {"Time", "time", C_TIME},
    {"Kind", "kind", C_STR},
    {"Amount", "amount_sumin", C_SUMIN},
    {"Actor", "actor", C_STR},
    {"Comment", "comment", C_STR},
    {0},
};

static const struct column failure_columns[] = {
    {"Time", "time", C_TIME},
    {"Stage", "stage", C_STR},
    {"Needed", "needed_sumin", C_SUMIN},
    {"Available", "available_sumin", C_SUMIN},
    {"Held", "held_sumin", C_SUMIN},
    {"Message", "message", C_STR},
    {0},
};

static const struct column decision_columns[] = {
    {"Decision", "decision", C_STR},         {"Alloc", "job.alloc_id", C_INT},
    {"Payer", "job.payer_account", C_STR},   {"Billing", "job.billing_micro", C_MICRO},
    {"Cost", "cost_sumin", C_SUMIN},         {"Hold", "job.hold_sumin", C_SUMIN},
    {"Charge", "job.charge_sumin", C_SUMIN}, {"Available", "balance.available_sumin", C_SUMIN},
    {"Held", "balance.held_sumin", C_SUMIN}, {0},
};

/* A refused hold carries its numbers under "failure" (needed, available, held), not where a
 * granted one has them (cost_sumin, balance): copy them there so the row shows them. */
static void failure_numbers(json_t *root)
{
    json_t *f = json_object_get(root, "failure"), *bal = json_object_get(root, "balance");
    if (!json_is_object(f))
        return;
    if (!json_is_object(bal)) {
        bal = json_object();
        json_object_set_new(root, "balance", bal);
    }
    json_t *v;
    if (!json_object_get(root, "cost_sumin") && (v = json_object_get(f, "needed_sumin")))
        json_object_set(root, "cost_sumin", v);
    if (!json_object_get(bal, "available_sumin") && (v = json_object_get(f, "available_sumin")))
        json_object_set(bal, "available_sumin", v);
    if (!json_object_get(bal, "held_sumin") && (v = json_object_get(f, "held_sumin")))
        json_object_set(bal, "held_sumin", v);
    if (!json_object_get(root, "message") && (v = json_object_get(f, "message")))
        json_object_set(root, "message", v);
}

static void print_section(const struct cli *cli, const char *title, json_t *rows,
                          const struct column *cols, int first)
{
    if (!json_is_array(rows) || (json_array_size(rows) == 0 && !first))
        return;
    if (!cli->parsable)
        printf("%s%s:\n", first ? "" : "\n", title);
    cli_print_table(cli, rows, cols);
}

static int job_show(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    struct path p = {0};
    char cluster[128] = "";
    json_t *root = NULL;

    if (args_split(argc, argv, pos, 1, &npos, &kvs, err) < 0)
        return -1;
    if (!npos) { /* a list */
        struct cli_page pg = {"jobs", 0, 0};
        path_init(&p, "/v1/jobs");
        if (cli_fields_to_query(list_filters, &kvs, &p, err) < 0 ||
            cli_page_limit(&kvs, &pg.limit, err) < 0 || args_check_used(&kvs, "job show", err) < 0)
            goto out;
        rc = cli_show_page(cli, p.s, job_columns, NULL, &pg, err);
        goto out;
    }
    /* "1234", or "darwin:1234" naming the cluster too; the id as Slurm prints it (a task
     * "1234_5", tasks "1234_[1-3]", a het component "1234+1"). */
    const char *idtext = pos[0], *colon = strchr(pos[0], ':');
    const char *c = args_get(&kvs, "cluster");
    if (colon) {
        snprintf(cluster, sizeof(cluster), "%.*s", (int)(colon - pos[0]), pos[0]);
        idtext = colon + 1;
        /* Two names for the cluster must agree: neither may be dropped silently. */
        if (c && strcmp(c, cluster) != 0) {
            allot_errorf(err, ALLOT_EINVAL, "cluster: '%s' contradicts '%s' in %s", c, cluster,
                         pos[0]);
            goto out;
        }
    } else if (c) {
        text_copy(cluster, sizeof(cluster), c);
    } else if (args_check_used(&kvs, "job show", err) < 0 ||
               cli_default_cluster(cli, cluster, sizeof(cluster), err) < 0) {
        goto out;
    }
    if (!cluster[0]) {
        allot_errorf(err, ALLOT_EINVAL, "job show: '%s': empty cluster name before ':'", pos[0]);
        goto out;
    }
    struct slt_job_name name;
    if (slt_job_name_parse(idtext, "job id", &name, err) < 0 ||
        args_check_used(&kvs, "job show", err) < 0)
        goto out;
    path_init(&p, "/v1/jobs");
    path_segment(&p, cluster);
    path_segment(&p, idtext);
    if (cli->json) {
        rc = cli_show(cli, p.s, job_columns, NULL, err);
        goto out;
    }
    root = cli_get_json(cli, p.s, err);
    if (!root)
        goto out;
    print_section(cli, "Runs", json_object_get(root, "runs"), job_columns, 1);
    json_t *total = json_object_get(root, "total");
    if (json_is_object(total)) {
        json_t *rows = json_array();
        json_array_append(rows, total);
        print_section(cli, "Total", rows, total_columns, 0);
        json_decref(rows);
    }
    print_section(cli, "Ledger", json_object_get(root, "ledger"), ledger_columns, 0);
    print_section(cli, "Failures", json_object_get(root, "failures"), failure_columns, 0);
    rc = 0;
out:
    json_decref(root);
    path_fini(&p);
    return rc;
}

/* admit / hold / settle / release: POST the fields, print the decision. */
static int job_verb(struct cli *cli, const char *verb, int argc, char **argv,
                    struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, rc = -1;
    struct kvlist kvs;
    json_t *body = json_object(), *root = NULL, *rows = NULL;
    char *reply = NULL, path[64], what[32];
    struct allot_error rerr = {0};
    int release = !strcmp(verb, "release");
    int settle = !strcmp(verb, "settle");
    const char *decision_key = !strcmp(verb, "admit")  ? "admitted"
                               : !strcmp(verb, "hold") ? "held"
                               : settle                ? "settled"
                                                       : "released";

    snprintf(what, sizeof(what), "job %s", verb);
    snprintf(path, sizeof(path), "/v1/jobs/%s", verb);
    if (args_split(argc, argv, pos, 0, &npos, &kvs, err) < 0)
        goto out;
    if (release) {
        if (cli_fields_to_json(release_fields, &kvs, body, err) < 0)
            goto out;
    } else if (settle) {
        if (cli_fields_to_json(settle_fields, &kvs, body, err) < 0)
            goto out;
    } else {
        if (cli_fields_to_json(common_fields, &kvs, body, err) < 0)
            goto out;
        if (strcmp(verb, "admit") != 0 && cli_fields_to_json(run_fields, &kvs, body, err) < 0)
            goto out;
    }
    if (args_check_used(&kvs, what, err) < 0)
        goto out;
    /* release too: the help promises cluster= may be left out with one cluster, every verb. */
    if (!json_object_get(body, "cluster")) {
        char cluster[128];
        if (cli_default_cluster(cli, cluster, sizeof(cluster), err) < 0)
            goto out;
        json_object_set_new(body, "cluster", json_string(cluster));
    }
    if (!release && strcmp(verb, "admit") != 0 && !json_object_get(body, "run"))
        json_object_set_new(body, "run", json_integer(0));
    if (settle && !json_object_get(body, "source"))
        json_object_set_new(body, "source", json_string("api"));

    rc = cli_request(cli, "POST", path, body, &reply, &rerr);
    if (rc < 0 && !reply) {
        *err = rerr;
        goto out;
    }
    root = reply ? json_loads(reply, 0, NULL) : NULL;
    json_t *d = json_object_get(root, decision_key);
    /* An error reply without a decision (bad request, unknown account) is just an error. */
    if (rc < 0 && !json_is_boolean(d)) {
        *err = rerr;
        goto out;
    }
    if (cli->json) {
        cli_print_json_text(reply);
    } else if (json_is_object(root)) {
        failure_numbers(root);
        json_object_set_new(root, "decision",
                            json_string(rc == 0 && !json_is_false(d) ? decision_key : "refused"));
        rows = json_array();
        json_array_append(rows, root);
        cli_print_table(cli, rows, decision_columns);
    }
    if (rc < 0 || json_is_false(d)) {
        const char *msg = json_string_value(json_object_get(root, "message"));
        enum allot_errnum code = rc < 0 ? rerr.code : ALLOT_EFUNDS;
        allot_errorf(err, code, "%s", msg && *msg ? msg : rerr.msg);
        rc = -1;
    }
out:
    if (rc < 0) {
        cli_error_keys(release ? release_fields : settle ? settle_fields : common_fields, err);
        if (!release && !settle)
            cli_error_keys(run_fields, err);
    }
    json_decref(rows);
    json_decref(root);
    json_decref(body);
    free(reply);
    return rc;
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    if (verb && (!strcmp(verb, "show") || !strcmp(verb, "list")))
        return job_show(cli, argc, argv, err);
    if (verb && (!strcmp(verb, "admit") || !strcmp(verb, "hold") || !strcmp(verb, "settle") ||
                 !strcmp(verb, "release")))
        return job_verb(cli, verb, argc, argv, err);
    if (verb && !strcmp(verb, "efficiency"))
        return cmd_job_efficiency(cli, argc, argv, err);
    return cli_bad_verb("job", verb, cmd_job.verbs, err);
}

const struct cli_command cmd_job = {
    .noun = "job",
    .summary = "a job's money (show) and the plugins' job verbs (admit, hold, settle, release)",
    .help =
        "usage: allot job show [CLUSTER:]JOB [cluster=C]\n"
        "       allot job show [cluster=C] [account=A] [user=U] [status=S] [since=DATE] [limit=N]\n"
        "       allot job admit user=U account=A partition=P timelimit=T tres=TRES [billing=N]\n"
        "                       [cluster=C] [qos=Q]\n"
        "       allot job hold jobid=N [run=N] user=U account=A partition=P timelimit=T\n"
        "                      tres=TRES [alloctres=TRES] [billing=N] [start=TIME] [cluster=C]\n"
        "       allot job settle jobid=N [run=N] elapsed=T [state=STATE] [end=TIME] [cluster=C]\n"
        "                        [start=TIME] [billing=N] [alloctres=TRES]\n"
        "                        [source=epilog|sacct|api] [user=U] [account=A]\n"
        "                        [partition=P] [qos=Q] [timelimit=T]\n"
        "       allot job release jobid=N [run=N] [comment=TEXT] [cluster=C]\n"
        "       allot job efficiency [CLUSTER:]JOB... [cluster=C]\n"
        "       allot job efficiency account=A [since=DATE] [until=DATE] [user=U] [cluster=C]\n"
        "\n"
        "The Slurm plugins call admit (job_submit), hold (job start) and settle (job end)\n"
        "themselves; these verbs are for operators and tests.  A refused admit or hold\n"
        "prints its numbers and exits 1 with the reason on stderr.  cluster= may be left\n"
        "out when the bank has one cluster.  Time limits use Slurm's syntax: 60 (minutes),\n"
        "1:30:00, 2-00:00:00; elapsed also accepts seconds as 90s, and 0 (00:00:00) for a\n"
        "job cancelled as it started.  settle's user=, account=, partition=, qos= and\n"
        "timelimit= describe a run that was never held.\n"
        "JOB is a job id or a name as Slurm prints it: 1234_5 (task 5 of job array 1234),\n"
        "1234_[1-3] (those tasks), 1234+1 (component 1 of het job 1234); 1234 alone shows\n"
        "a job array's or het job's every task or component, and their total.\n"
        "efficiency runs sacct (seff's rules: CPU = TotalCPU / (Elapsed x CPUs), memory =\n"
        "MaxRSS / requested) and shows each job's charge from the bank beside it.\n"
        "\n"
        "examples:\n"
        "  allot job admit user=alice account=chem partition=standard timelimit=60 tres=cpu=4\n"
        "  allot job hold jobid=1234 user=alice account=chem partition=standard timelimit=60 "
        "tres=cpu=4\n"
        "  allot job settle jobid=1234 elapsed=1800s state=COMPLETED\n"
        "  allot job show darwin:1234\n"
        "  allot job show 1234_[1-3]\n",
    .run = run,
    .needs_verb = 1,
    .verbs = "show, efficiency, admit, hold, settle, release",
};
