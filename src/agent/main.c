/* SPDX-License-Identifier: GPL-3.0-or-later */
/* main.c - allot-agent: one per cluster (doc/design.md §1.3, §5.6).
 *
 * Loop: long-poll allotd for this cluster's commands (POST /v1/agents/<cluster>/poll), apply
 * each in id order with sacctmgr (apply.c: diff, write, verify), post the result by command
 * id (POST /v1/commands/<id>/result).  Only a verified read-back is posted as "confirmed".
 * allotd unreachable: back off 1, 2, 4 ... 60 s and retry; a result that cannot be posted is
 * retried the same way (the command stays 'sent' and comes back after its lease if the agent
 * dies, so a crash never loses a command).  Applying twice is harmless for the diffed
 * kinds, not for a RawUsage reset: with --journal, a result is recorded on disk before it
 * is posted, and a command handed out again is answered from the journal, not reapplied.
 * SIGTERM/SIGINT: the command being applied is finished and its result posted (one try);
 * the rest of the batch is left unapplied, to come back after its lease.
 * Between polls, every --reconcile-every seconds (0 = never), it reconciles finished jobs
 * from sacct (collect.c); a failed pass is logged and retried at the next interval.
 * With --sync MODE (the agent's Sync setting: report, follow or push; off by default),
 * every --sync-every seconds it compares allot's copy of the cluster with Slurm, resolves
 * drift by the mode's rule and reports what is left to allotd (sync.c).
 * Usage: allot-agent --url URL --cluster NAME [--once] [--wait S] [--timeout S]
 *        [--reconcile-every S] [--reconcile-lag S] [--reconcile-window S]
 *        [--reconcile-lookback S] [--reconcile-from EPOCH] [--sitefactor-every S]
 *        [--journal FILE]  (journal.c: an applied command is never applied again)
 *        [--sync report|follow|push] [--sync-every S]
 * Environment: ALLOT_SACCTMGR, ALLOT_SSHARE, ALLOT_SACCT, ALLOT_SCONTROL (tool paths),
 * ALLOT_TEST_USER,
 * ALLOT_MUNGE_SOCKET.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/apply.h"
#include "agent/collect.h"
#include "agent/journal.h"
#include "agent/sitefactor.h"
#include "agent/sync.h"
#include "allot/allot.h"

/* Signal flag: set by the handler only. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void sleep_s(int s)
{
    for (int i = 0; i < s * 10 && !stop_flag; i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

__attribute__((format(printf, 1, 2))) static void logf_(const char *fmt, ...)
{
    time_t now = time(NULL);
    struct tm tm;
    char ts[32];
    va_list ap;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(stderr, "%s allot-agent: ", ts);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Post one result, retrying with backoff until it is accepted or we are stopping. */
/* allotd stores a result as one line of at most ALLOT_TEXT_MAX bytes and refuses control
 * characters: sacctmgr's multi-line errors become "line; line", cut to fit, so a failure is
 * never lost for want of a printable form. */
static void one_line(const char *in, char *out, size_t len)
{
    size_t n = 0;
    int sep = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && n + 3 < len; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            sep = n > 0;
            continue;
        }
        if (sep) {
            out[n++] = ';';
            out[n++] = ' ';
            sep = 0;
            if (n + 3 >= len)
                break;
        }
        /* ASCII only: a byte of invalid UTF-8 (a Latin-1 name in sacctmgr's text) would make
         * json_pack fail, the result would never be posted and the command would come back
         * after every lease, applied again each time */
        out[n++] = *p < 0x80 ? (char)*p : '?';
    }
    out[n] = 0;
}

static int post_result(allot_client_t *c, long long id, int ok, const char *raw)
{
    char text[240];
    one_line(raw, text, sizeof text);
    json_t *b = json_pack("{s:s, s:s}", "state", ok ? "confirmed" : "failed", "result", text);
    char *body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    if (!body)
        return -1;
    char path[64];
    snprintf(path, sizeof path, "/v1/commands/%lld/result", id);
    int backoff = 1, rc = -1, tries = 0;
    /* Stopping (SIGTERM) after the command was applied: still try once, so an applied
     * command is not handed out and applied again after its lease (a second RawUsage
     * reset would erase the usage accrued in between). */
    while (!stop_flag || tries == 0) {
        struct allot_error err = {0};
        tries++;
        int status = 0;
        if (allot_request(c, "POST", path, body, &status, NULL, &err) == 0) {
            rc = 0;
            break;
        }
        logf_("result %s for command %lld not posted: %s", ok ? "confirmed" : "failed", id,
              err.msg);
        if (status >= 400 && status < 500) {
            rc = -2; /* refused: retrying cannot help */
            break;
        }
        if (stop_flag)
            break;
        sleep_s(backoff);
        backoff = backoff < 60 ? backoff * 2 : 60;
    }
    free(body);
    return rc;
}

static int str_field(json_t *o, const char *k, const char **out)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_string(v))
        return -1;
    *out = json_string_value(v);
    return 0;
}

/* One reconciliation pass; failures are logged (the marker stays, the next pass retries). */
static int reconcile(allot_client_t *c, const struct collect_opts *o)
{
    struct collect_stats s = {0};
    struct allot_error err = {0};
    int rc = collect_run(c, o, (int64_t)time(NULL), &s, &err);
    logf_("reconcile: windows=%lld rows=%lld settled=%lld already=%lld unknown=%lld "
          "skipped=%lld%s%s",
          (long long)s.windows, (long long)s.rows, (long long)s.settled, (long long)s.already,
          (long long)s.unknown, (long long)s.skipped, rc < 0 ? " error: " : "",
          rc < 0 ? err.msg : "");
    return rc;
}

static int64_t arg_s(const char *v)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    return (*v && !*end && x >= 0) ? (int64_t)x : -1;
}

/* A whole number 0..max, else -1 (atoi would read "abc" as 0 and "1e9" as 1). */
static int64_t arg_bounded(const char *v, int64_t max)
{
    int64_t x = arg_s(v);
    return x <= max ? x : -1;
}

/* Apply one command of a poll reply and post its result.  A command that cannot be read,
 * or names another cluster, is posted failed (when it has an id) instead of being skipped
 * silently: skipped, it would come back after every lease, forever. */
static int one_command(allot_client_t *c, const struct agent_tools *tools, const char *cluster,
                       struct journal *jn, json_t *cmd)
{
    char result[1024];
    const char *kind = "?", *target, *payload, *ccl;
    json_t *idv = json_object_get(cmd, "id");
    if (!json_is_integer(idv)) {
        logf_("command without an id ignored");
        return -1;
    }
    long long id = (long long)json_integer_value(idv);
    int ok = 0;
    if (str_field(cmd, "kind", &kind) < 0 || str_field(cmd, "target", &target) < 0 ||
        str_field(cmd, "payload", &payload) < 0 || str_field(cmd, "cluster", &ccl) < 0)
        snprintf(result, sizeof result,
                 "command not understood (kind, target, payload or "
                 "cluster missing)");
    else if (strcmp(ccl, cluster) != 0)
        snprintf(result, sizeof result,
                 "command for cluster %.64s refused by the agent of "
                 "cluster %.64s",
                 ccl, cluster);
    else if (jn && journal_find(jn, id, &ok, result, sizeof result)) {
        logf_("command %s: %lld was applied before; posting its result again", kind, id);
    } else {
        ok = agent_apply(tools, ccl, kind, target, payload, result, sizeof result);
        if (!ok && stop_flag) {
            /* Stopped meanwhile: the failure may be the signal itself (systemd signals the
             * tool too).  'failed' is final, so post nothing: the command stays 'sent'
             * and is applied again after its lease. */
            logf_("command %s: %lld interrupted (%s); left to be applied again", kind, id, result);
            return 0;
        }
        char line[JOURNAL_TEXT_MAX];
        one_line(result, line, sizeof line);
        if (jn && journal_applied(jn, id, ok, line) < 0)
            logf_("journal: cannot record command %lld: %s", id, strerror(errno));
    }
    logf_("command %s: %lld %s", kind, id, result);
    int rc = post_result(c, id, ok, result);
    if (rc != -1 && jn && journal_acked(jn, id) < 0) /* posted, or refused for good */
        logf_("journal: cannot record the answer for command %lld", id);
    return rc == 0 ? 0 : -1;
}

static void usage(FILE *f)
{
    fputs("usage: allot-agent --url URL --cluster NAME [options]\n"
          "       allot-agent --version | --help\n"
          "\n"
          "allot-agent carries the allot bank's decisions to one Slurm cluster: it long-polls\n"
          "allotd for the cluster's commands (limits, QOS, usage resets), applies each with\n"
          "sacctmgr and posts the read-back result; it reconciles finished jobs from sacct,\n"
          "and with --sync keeps allot's copy of the cluster in step with Slurm.  Run one per\n"
          "cluster, on a host where sacctmgr, sshare and sacct work (doc/agent.md).\n"
          "\n"
          "options:\n"
          "  --url URL                allotd address: http://HOST:PORT or unix:/PATH\n"
          "  --cluster NAME           the Slurm cluster this agent serves\n"
          "  --wait S                 long-poll length (0..25, default 20)\n"
          "  --timeout S              bound of each Slurm tool's run (1..3600, default 60)\n"
          "  --once                   one poll and one reconciliation pass, then exit\n"
          "  --reconcile-every S      seconds between reconciliation passes (300; 0 = off)\n"
          "  --reconcile-lag S        windows end at now - S at the latest (60)\n"
          "  --reconcile-window S     longest sacct window (3600, >= 60)\n"
          "  --reconcile-lookback S   first run ever: start at now - S (86400)\n"
          "  --reconcile-from EPOCH   replay from EPOCH once (the marker never moves back)\n"
          "  --sitefactor-every S     push the site factor every S seconds (0 = off)\n"
          "  --journal FILE           record applied results until allotd acknowledges them\n"
          "  --sync MODE              report, follow or push (default off)\n"
          "  --sync-every S           seconds between sync passes (60, >= 1)\n"
          "  --version                print the version\n"
          "  -h, --help               this text\n"
          "\n"
          "signals: SIGTERM or SIGINT finish the command being applied, post its result and\n"
          "stop; the rest of the batch comes back after its lease.\n"
          "\n"
          "environment:\n"
          "  ALLOT_SACCTMGR, ALLOT_SSHARE, ALLOT_SACCT, ALLOT_SCONTROL  the Slurm tools to run\n"
          "  ALLOT_MUNGE_SOCKET       munged socket for the credential sent with each request\n"
          "\n"
          "exit status: 0 after --once or a stop by signal, 1 when something failed (setup,\n"
          "a command not applied, with --once a failed poll or pass), 2 for a usage error.\n",
          f);
}

/* After a failed poll: wait backoff seconds, and return the next wait (doubling to 60 s). */
static int poll_backoff(int backoff)
{
    sleep_s(backoff);
    return backoff < 60 ? backoff * 2 : 60;
}

int main(int argc, char **argv)
{
    const char *url = NULL, *cluster = NULL, *journal_path = NULL;
    int once = 0, wait_s = 20;
    struct agent_tools tools = {
        .sacctmgr = getenv("ALLOT_SACCTMGR"), .sshare = getenv("ALLOT_SSHARE"), .timeout_s = 60};
    if (!tools.sacctmgr || !tools.sacctmgr[0])
        tools.sacctmgr = "sacctmgr";
    if (!tools.sshare || !tools.sshare[0])
        tools.sshare = "sshare";
    tools.scontrol = getenv("ALLOT_SCONTROL");
    if (!tools.scontrol || !tools.scontrol[0])
        tools.scontrol = "scontrol";
    enum sync_mode sync_mode = SYNC_OFF;
    int64_t sync_every_s = 60;
    int sync_bad = 0;
    struct collect_opts rec = {.sacct = getenv("ALLOT_SACCT"),
                               .window_s = 3600,
                               .lag_s = 60,
                               .lookback_s = 86400,
                               .timeout_s = 60,
                               .attempts = 3};
    if (!rec.sacct || !rec.sacct[0])
        rec.sacct = "sacct";
    int64_t every_s = 300;
    int64_t sf_every_s = 0; /* --sitefactor-every: site factor push period (sitefactor.c) */
    static const struct option opts[] = {
        {"url", required_argument, NULL, 'u'},
        {"cluster", required_argument, NULL, 'c'},
        {"once", no_argument, NULL, '1'},
        {"wait", required_argument, NULL, 'w'},
        {"timeout", required_argument, NULL, 't'},
        {"reconcile-every", required_argument, NULL, 'E'},
        {"reconcile-lag", required_argument, NULL, 'L'},
        {"reconcile-window", required_argument, NULL, 'W'},
        {"reconcile-lookback", required_argument, NULL, 'B'},
        {"reconcile-from", required_argument, NULL, 'F'},
        {"sitefactor-every", required_argument, NULL, 'S'},
        {"journal", required_argument, NULL, 'J'},
        {"sync", required_argument, NULL, 'Y'},
        {"sync-every", required_argument, NULL, 'Z'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "u:c:1w:t:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'u':
            url = optarg;
            break;
        case 'c':
            cluster = optarg;
            break;
        case '1':
            once = 1;
            break;
        case 'w':
            wait_s = (int)arg_bounded(optarg, 25);
            break;
        case 't':
            tools.timeout_s = (int)arg_bounded(optarg, 3600);
            break;
        case 'E':
            every_s = arg_s(optarg);
            break;
        case 'L':
            rec.lag_s = arg_s(optarg);
            break;
        case 'W':
            rec.window_s = arg_s(optarg);
            break;
        case 'B':
            rec.lookback_s = arg_s(optarg);
            break;
        case 'F':
            rec.from_s = arg_s(optarg);
            break;
        case 'S':
            sf_every_s = arg_s(optarg);
            break;
        case 'J':
            journal_path = optarg;
            break;
        case 'Y':
            sync_bad |= sync_mode_parse(optarg, &sync_mode) < 0;
            break;
        case 'Z':
            sync_every_s = arg_s(optarg);
            break;
        case 'V':
            printf("allot-agent %s\n", ALLOT_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!url || !cluster || wait_s < 0 || wait_s > 25 || tools.timeout_s < 1) {
        fprintf(stderr, "allot-agent: error: --url and --cluster are required; --wait 0..25; "
                        "--timeout 1..3600\n");
        return 2;
    }
    if (every_s < 0 || sf_every_s < 0 || rec.lag_s < 0 || rec.window_s < 60 || rec.lookback_s < 0 ||
        rec.from_s < 0) {
        fprintf(stderr, "allot-agent: error: --reconcile-* take seconds >= 0 (window >= 60)\n");
        return 2;
    }
    if (sync_bad || sync_every_s < 1) {
        fprintf(stderr, "allot-agent: error: --sync takes report, follow or push; --sync-every "
                        "seconds >= 1\n");
        return 2;
    }
    rec.cluster = cluster;
    rec.stop = &stop_flag;
    rec.timeout_s = tools.timeout_s;
    int64_t next_reconcile_s = 0, next_sf_s = 0, next_sync_s = 0;
    struct allot_error err = {0};
    allot_client_t *c = allot_client_create(url, &err);
    rec.timeout_ms = (wait_s + 10) * 1000L;
    if (!c || allot_client_set_timeout_ms(c, rec.timeout_ms, &err) < 0) {
        fprintf(stderr, "allot-agent: error: %s\n", err.msg);
        allot_client_destroy(c);
        return 1;
    }
    struct journal *jn = NULL;
    char why[512];
    if (journal_path && !(jn = journal_open(journal_path, why, sizeof why))) {
        fprintf(stderr, "allot-agent: error: --journal: %s\n", why);
        allot_client_destroy(c);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0) {
        fprintf(stderr, "allot-agent: error: sigaction: %s\n", strerror(errno));
        journal_close(jn);
        allot_client_destroy(c);
        return 1;
    }
    char path[160], body[96];
    snprintf(path, sizeof path, "/v1/agents/%s/poll", cluster);
    int backoff = 1, status = 0;
    while (!stop_flag) {
        char *reply = NULL;
        time_t poll_start_s = time(NULL);
        snprintf(body, sizeof body, "{\"wait_s\":%d,\"lease_s\":300,\"max\":20}",
                 once ? 0 : wait_s);
        allot_error_clear(&err);
        if (allot_request(c, "POST", path, body, NULL, &reply, &err) < 0) {
            free(reply);
            logf_("poll failed: %s (retry in %d s)", err.msg, backoff);
            if (once) {
                status = 1;
                break;
            }
            backoff = poll_backoff(backoff);
            continue;
        }
        json_error_t jerr;
        json_t *doc = json_loads(reply, 0, &jerr);
        free(reply);
        json_t *cmds = json_object_get(doc, "commands");
        if (!json_is_array(cmds)) {
            json_decref(doc);
            logf_("poll answer not understood (no commands array; retry in %d s)", backoff);
            if (once) {
                status = 1;
                break;
            }
            backoff = poll_backoff(backoff);
            continue;
        }
        backoff = 1;
        size_t i;
        json_t *cmd;
        json_array_foreach(cmds, i, cmd)
        {
            if (stop_flag)
                break; /* the rest stay 'sent', unapplied, and come back after the lease */
            if (one_command(c, &tools, cluster, jn, cmd) < 0)
                status = 1;
        }
        size_t ncmds = json_array_size(cmds);
        json_decref(doc);
        if (stop_flag)
            break; /* no reconciliation pass or site factor push starts after the signal */
        if (every_s > 0 && (int64_t)time(NULL) >= next_reconcile_s) {
            if (reconcile(c, &rec) < 0 && once)
                status = 1;
            rec.from_s = 0; /* a replay (--reconcile-from) runs once */
            next_reconcile_s = (int64_t)time(NULL) + every_s;
        }
        if (sf_every_s > 0 && (int64_t)time(NULL) >= next_sf_s) {
            struct sitefactor_stats sfs;
            allot_error_clear(&err);
            if (sitefactor_push(c, cluster, &sfs, &err) < 0) {
                logf_("site factor push failed: %s", err.msg);
                status = once ? 1 : status;
            } else if (sfs.updated || sfs.failed) {
                logf_("site factor: %d pending, %d updated, %d unchanged, %d unmapped, %d refused",
                      sfs.pending, sfs.updated, sfs.unchanged, sfs.unmapped, sfs.failed);
            }
            next_sf_s = (int64_t)time(NULL) + sf_every_s;
        }
        if (sync_mode != SYNC_OFF && (int64_t)time(NULL) >= next_sync_s) {
            struct sync_stats ss;
            allot_error_clear(&err);
            if (sync_pass(c, &tools, cluster, sync_mode, logf_, &ss, &err) < 0) {
                logf_("sync: %s pass failed: %s", sync_mode_name(sync_mode), err.msg);
                status = once ? 1 : status;
            } else {
                logf_("sync: %s pass: %d drift(s) found, %d resolved, %d left (%d failed)",
                      sync_mode_name(sync_mode), ss.found, ss.resolved, ss.left, ss.failed);
            }
            next_sync_s = (int64_t)time(NULL) + sync_every_s;
        }
        if (once)
            break;
        /* An empty answer faster than a second (--wait 0, or a daemon that does not hold
         * the poll) must not become a busy loop against allotd. */
        if (ncmds == 0 && time(NULL) - poll_start_s < 1)
            sleep_s(1);
    }
    journal_close(jn);
    allot_client_destroy(c);
    return status;
}
