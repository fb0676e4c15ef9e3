/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_policy.c - `allot policy add|show|status|dry-run|evaluate|force-reset` (doc/design.md §5):
 * periodic policies of allocations through /v1/policies.
 *
 * Ratios are typed as decimals (grace=0.2, carryover_factor=0.5, notify=0.8, downscale=1)
 * and sent as parts per million, the API's integer unit, so no float reaches allotd.  status
 * ID prints the policy, its periods, its waiting commands (since when) and its last
 * evaluations as separate tables; --json prints the API's reply unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char VERBS[] = "add, show, status, dry-run, evaluate, force-reset";

static const struct field add_keys[] = {
    {"alloc", "alloc", V_INT, "allocation id (required)"},
    {"cluster", "cluster", V_STR, "cluster whose agent applies the commands (required)"},
    {"period", "period", V_STR, "month, quarter, year or total (required)"},
    {"base", "base_sumin", V_AMOUNT, "SU credited each period (required), e.g. 1000h"},
    {"carryover", "carryover", V_BOOL, "carry unused SU into the next period (yes)"},
    {"slow_qos", "slow_qos", V_STR, "QOS set when usage reaches downscale (none)"},
    {"normal_qos", "normal_qos", V_STR, "QOS restored when usage drops below it"},
    {"reset_raw_usage", "reset_raw_usage", V_BOOL, "RawUsage=0 at each boundary (yes)"},
    {"limit_type", "limit_type", V_STR, "GrpTRESMins (default), MaxTRESMins or GrpTRES"},
    {"tres_weights", "tres_weights", V_STR, "TRES billing weights, informative"},
    {"fairshare", "fairshare", V_INT, "fairshare pushed at each boundary (not managed)"},
    {"initial", "initial", V_STR,
     "an allocation already granted SU: add (keep them beside the first base) or expire"},
    {"forecast_days", "forecast_days", V_INT,
     "notify when the exhaustion forecast runs out within this many days (0: off)"},
    {0},
};

/* Decimal ratio keys and their ppm members. */
static const struct {
    const char *key, *json;
} ratio_keys[] = {
    {"carryover_factor", "carryover_factor_ppm"},
    {"grace", "grace_ppm"},
    {"notify", "notify_ppm"},
    {"downscale", "downscale_ppm"},
};

static const struct column policy_cols[] = {
    {"ID", "id", C_INT},
    {"Alloc", "alloc", C_INT},
    {"Account", "account", C_STR},
    {"Cluster", "cluster", C_STR},
    {"Period", "period", C_STR},
    {"Base", "base_sumin", C_SUMIN},
    {"Carryover", "carryover", C_BOOL},
    /* Ratios as the decimals add= takes (ppm are micro-units), not the API's ppm. */
    {"CarryFactor", "carryover_factor_ppm", C_MICRO},
    {"Grace", "grace_ppm", C_MICRO},
    {"Notify", "notify_ppm", C_MICRO},
    {"Downscale", "downscale_ppm", C_MICRO},
    {"SlowQOS", "slow_qos", C_STR},
    {"Reset", "reset_raw_usage", C_BOOL},
    {"LimitType", "limit_type", C_STR},
    {"Fairshare", "fairshare", C_OPTINT}, /* -1: not managed */
    {"ForecastDays", "forecast_days", C_INT},
    {0},
};

static const struct column status_cols[] = {
    {"ID", "id", C_INT},
    {"Account", "account", C_STR},
    {"Cluster", "cluster", C_STR},
    {"CurrentPeriod", "current_period", C_STR},
    {"PeriodStart", "period_start", C_TIME},
    {"PeriodEnd", "period_end", C_TIME},
    {"Total", "period_total_sumin", C_SUMIN},
    {"Flags", "flags", C_INT},
    {0},
};

static const struct column agent_cols[] = {
    {"AgentLastSeen", "agent_last_seen", C_TIME},
    {"WaitingSince", "waiting_since", C_TIME},
    {0},
};

static const struct column period_cols[] = {
    {"Period", "period", C_STR},           {"Start", "start", C_TIME},
    {"Base", "base_sumin", C_SUMIN},       {"Carry", "carry_sumin", C_SUMIN},
    {"Total", "total_sumin", C_SUMIN},     {"Used", "used_sumin", C_SUMIN},
    {"Expired", "expired_sumin", C_SUMIN}, {"Opened", "opened", C_TIME},
    {"Closed", "closed", C_TIME},          {0},
};

static const struct column command_cols[] = {
    {"Command", "id", C_INT},       {"Kind", "kind", C_STR},   {"Payload", "payload", C_STR},
    {"Period", "period", C_STR},    {"State", "state", C_STR}, {"Attempts", "attempts", C_INT},
    {"Created", "created", C_TIME}, {"Sent", "sent", C_TIME},  {0},
};

static const struct column eval_cols[] = {
    {"Eval", "id", C_INT},
    {"Period", "period", C_STR},
    {"Time", "time", C_TIME},
    {"Used", "used_sumin", C_SUMIN},
    {"Total", "total_sumin", C_SUMIN},
    {"UsagePPM", "usage_ppm", C_INT},
    {"Flags", "new_flags", C_INT},
    {"Actions", "actions", C_STR},
    {"Commands", "command_ids", C_STR},
    {0},
};

static const struct column result_cols[] = {
    {"Policy", "policy", C_INT},
    {"Period", "period", C_STR},
    {"Used", "used_sumin", C_SUMIN},
    {"Total", "total_sumin", C_SUMIN},
    {"UsagePPM", "usage_ppm", C_INT},
    {"Actions", "actions", C_STR},
    {"Commands", "command_ids", C_STR},
    {"Boundary", "boundary.rolled", C_BOOL},
    {"NewPeriod", "boundary.new_period", C_STR},
    {"Carry", "boundary.carry_sumin", C_SUMIN},
    {"Expired", "boundary.expired_sumin", C_SUMIN},
    {"Credit", "boundary.credit_sumin", C_SUMIN},
    {0},
};

static const struct column reset_cols[] = {
    {"Command", "id", C_INT},    {"Kind", "kind", C_STR},   {"Target", "target", C_STR},
    {"Period", "period", C_STR}, {"State", "state", C_STR}, {0},
};

/* "0.2" -> 200000 ppm: digits with at most 6 decimals, exact (no float). */
static int ratio_ppm(const char *key, const char *s, int64_t *ppm, struct allot_error *err)
{
    int64_t whole = 0, frac = 0;
    int nfrac = 0;
    const char *p = s;
    if (!*p)
        return allot_errorf(err, ALLOT_EINVAL, "%s: empty", key);
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (*p - '0');
        if (whole > 1000000)
            return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is too large", key, s);
    }
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (++nfrac > 6)
                return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' has more than 6 decimals", key, s);
            frac = frac * 10 + (*p - '0');
        }
    if (*p || p == s)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%s' is not a decimal (e.g. 0.2)", key, s);
    for (; nfrac < 6; nfrac++)
        frac *= 10;
    *ppm = whole * 1000000 + frac;
    return 0;
}

/* Split argv into at most one positional word (*pos, NULL if none) and key=value pairs. */
static int split(const char *what, int argc, char **argv, const char **pos, struct kvlist *kvs,
                 struct allot_error *err)
{
    const char *p[1] = {NULL};
    int npos = 0;
    if (args_split(argc, argv, p, 1, &npos, kvs, err) < 0)
        return -1;
    (void)what;
    *pos = npos ? p[0] : NULL;
    return 0;
}

static int policy_id(const char *verb, const char *s, int64_t *id, struct allot_error *err)
{
    if (!s)
        return allot_errorf(err, ALLOT_EINVAL, "policy %s: missing policy ID", verb);
    return args_uint("ID", s, id, err);
}

static int print_reply(struct cli *cli, const char *text, const struct column *cols,
                       struct allot_error *err)
{
    if (cli->json) {
        cli_print_json_text(text);
        return 0;
    }
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    if (!doc)
        return allot_errorf(err, ALLOT_EPROTO, "allotd's reply is not JSON: %s", jerr.text);
    json_t *rows = cli_rows(doc);
    json_t *one = NULL;
    if (!rows) { /* an object: one row */
        one = json_array();
        json_array_append(one, doc);
        rows = one;
    }
    cli_print_table(cli, rows, cols);
    json_decref(one);
    json_decref(doc);
    return 0;
}

static int post(struct cli *cli, const char *path, json_t *body, const struct column *cols,
                struct allot_error *err)
{
    char *reply = NULL;
    int rc = cli_request(cli, "POST", path, body, &reply, err);
    if (rc == 0)
        rc = print_reply(cli, reply ? reply : "{}", cols, err);
    free(reply);
    return rc;
}

static int run_add(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    struct kvlist kvs;
    const char *pos;
    if (split("add", argc, argv, &pos, &kvs, err) < 0)
        return -1;
    if (pos)
        return allot_errorf(err, ALLOT_EINVAL, "policy add: takes key=value only, not '%s'", pos);
    json_t *body = json_object();
    int rc = cli_fields_to_json(add_keys, &kvs, body, err);
    for (size_t i = 0; rc == 0 && i < sizeof ratio_keys / sizeof ratio_keys[0]; i++) {
        const char *v = args_get(&kvs, ratio_keys[i].key);
        int64_t ppm = 0; /* set by ratio_ppm on success */
        if (!v)
            continue;
        rc = ratio_ppm(ratio_keys[i].key, v, &ppm, err);
        if (rc == 0)
            json_object_set_new(body, ratio_keys[i].json, json_integer(ppm));
    }
    if (rc == 0)
        rc = args_check_used(&kvs, "policy add", err);
    if (rc == 0)
        rc = post(cli, "/v1/policies", body, policy_cols, err);
    json_decref(body);
    return rc;
}

/* GET a policy list ("policies" member) or one policy, printed with cols. */
static int show(struct cli *cli, const char *verb, int argc, char **argv, const struct column *cols,
                struct allot_error *err)
{
    struct kvlist kvs;
    const char *pos;
    int64_t id = 0;
    if (split(verb, argc, argv, &pos, &kvs, err) < 0 || args_check_used(&kvs, verb, err) < 0)
        return -1;
    if (pos && policy_id(verb, pos, &id, err) < 0)
        return -1;
    char path[64];
    if (id)
        snprintf(path, sizeof path, "/v1/policies/%lld", (long long)id);
    else
        snprintf(path, sizeof path, "/v1/policies");
    char *reply = NULL;
    if (cli_request(cli, "GET", path, NULL, &reply, err) < 0) {
        free(reply);
        return -1;
    }
    if (cli->json) {
        cli_print_json_text(reply);
        free(reply);
        return 0;
    }
    json_t *doc = json_loads(reply ? reply : "", 0, NULL);
    free(reply);
    if (!doc)
        return allot_errorf(err, ALLOT_EPROTO, "allotd's reply is not JSON");
    json_t *list = json_object_get(doc, "policies");
    if (list) {
        cli_print_table(cli, list, cols);
        json_decref(doc);
        return 0;
    }
    json_t *one = json_array();
    json_array_append(one, doc);
    cli_print_table(cli, one, cols);
    if (cols == status_cols) {
        /* status ID: the layers of doc/policies.md's debugging playbook, one table each. */
        static const struct {
            const char *title, *member;
            const struct column *cols;
        } parts[] = {
            {"agent", NULL, agent_cols},
            {"periods", "periods", period_cols},
            {"waiting commands", "waiting_commands", command_cols},
            {"last evaluations", "evaluations", eval_cols},
        };
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            json_t *rows = parts[i].member ? json_object_get(doc, parts[i].member) : one;
            if (!cli->parsable)
                printf("\n%s:\n", parts[i].title);
            else
                putchar('\n');
            cli_print_table(cli, rows, parts[i].cols);
        }
    }
    json_decref(one);
    json_decref(doc);
    return 0;
}

/* evaluate / dry-run / force-reset ID [now=TIME] */
static int act(struct cli *cli, const char *verb, int argc, char **argv, const struct column *cols,
               struct allot_error *err)
{
    static const struct field now_key[] = {
        {"now", "now", V_TIME, "evaluate as if at this time (tests, what-if)"},
        {0},
    };
    struct kvlist kvs;
    const char *pos;
    int64_t id;
    if (split(verb, argc, argv, &pos, &kvs, err) < 0 || policy_id(verb, pos, &id, err) < 0)
        return -1;
    json_t *body = json_object();
    int rc = cli_fields_to_json(now_key, &kvs, body, err);
    if (rc == 0)
        rc = args_check_used(&kvs, verb, err);
    char path[96];
    snprintf(path, sizeof path, "/v1/policies/%lld/%s", (long long)id, verb);
    if (rc == 0)
        rc = post(cli, path, body, cols, err);
    json_decref(body);
    return rc;
}

static int run(struct cli *cli, const char *verb, int argc, char **argv, struct allot_error *err)
{
    if (!verb)
        return cli_bad_verb("policy", verb, VERBS, err);
    if (strcmp(verb, "add") == 0)
        return run_add(cli, argc, argv, err);
    if (strcmp(verb, "show") == 0 || strcmp(verb, "list") == 0)
        return show(cli, verb, argc, argv, policy_cols, err);
    if (strcmp(verb, "status") == 0)
        return show(cli, verb, argc, argv, status_cols, err);
    if (strcmp(verb, "dry-run") == 0 || strcmp(verb, "evaluate") == 0)
        return act(cli, verb, argc, argv, result_cols, err);
    if (strcmp(verb, "force-reset") == 0)
        return act(cli, verb, argc, argv, reset_cols, err);
    return cli_bad_verb("policy", verb, VERBS, err);
}

const struct cli_command cmd_policy = {
    .noun = "policy",
    .summary = "periodic policies: add, show, status, dry-run, evaluate, force-reset",
    .help = "usage: allot policy add alloc=ID cluster=NAME period=month|quarter|year|total "
            "base=SU [key=value ...]\n"
            "       allot policy show [ID]\n"
            "       allot policy status [ID]\n"
            "       allot policy dry-run|evaluate ID [now=TIME]\n"
            "       allot policy force-reset ID [now=TIME]\n"
            "\n"
            "A policy credits base SU to its allocation at each period start (in allotd's\n"
            "TimeZone), carries unused SU over (at most carryover_factor x base), resets\n"
            "Slurm's RawUsage and pushes the limit through the cluster's allot-agent, exactly\n"
            "once per period.  Thresholds (of base + carry + what 'allot credit' added in the\n"
            "period): notify, downscale to slow_qos, pause at (1 + grace).  Ratios are\n"
            "decimals: grace=0.2 carryover_factor=0.5 notify=0.8 downscale=1.\n"
            "forecast_days=N notifies (forecast-notify in the log) while the exhaustion\n"
            "forecast ('allot forecast') runs out within N days, before the allocation ends.\n"
            "status ID shows the periods, the commands waiting for the agent (since when)\n"
            "and the last evaluations.  dry-run shows what the next tick would do and\n"
            "changes nothing.  force-reset queues one more RawUsage reset (superusers).\n"
            "On an allocation already granted SU, add needs initial=add (keep them beside\n"
            "the first period's base) or initial=expire (its free balance expires now).\n"
            "\n"
            "examples:\n"
            "  allot policy add alloc=3 cluster=hpc period=month base=1000h slow_qos=slow\n"
            "  allot policy status 1\n"
            "  allot policy dry-run 1 now=2026-08-01\n",
    .run = run,
    .needs_verb = 1,
    .verbs = VERBS,
};
