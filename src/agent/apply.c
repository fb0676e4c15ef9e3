/* SPDX-License-Identifier: GPL-3.0-or-later */
/* apply.c - sacctmgr application of outbox commands (apply.h): run, diff, write, verify.
 *
 * Commands and their Slurm field (payload "Key=value"):
 *   set_limit       GrpTRESMins=billing=N | MaxTRESMins=... | GrpTRES=...
 *   set_fairshare   fairshare=N          (read back as column Share)
 *   set_qos         qos=Q                (written as qos=Q defaultqos=Q)
 *   set_grpjobs     GrpJobs=N            (-1 clears; read back empty)
 *   reset_raw_usage RawUsage=0           (no diff: always written; read back with sshare)
 * Child processes: fork/execvp with stdout+stderr captured into a bounded buffer and a
 * bounded wait (SIGKILL after timeout_s).
 */
#include "agent/apply.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX 65536

/* Run argv; capture output (stdout and stderr) into out[len].  Returns the exit status
 * (0..255), or -1 when it could not run or timed out (out says why). */
static int run(const struct agent_tools *t, char *const argv[], char *out, size_t len)
{
    int fd[2];
    out[0] = 0;
    if (pipe(fd) < 0) {
        snprintf(out, len, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(out, len, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    time_t deadline = time(NULL) + t->timeout_s;
    int timed_out = 0;
    for (;;) {
        int left_ms = (int)(deadline - time(NULL)) * 1000;
        if (left_ms <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = {.fd = fd[0], .events = POLLIN};
        int r = poll(&p, 1, left_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            timed_out = r == 0;
            break;
        }
        char buf[4096];
        ssize_t k = read(fd[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        size_t c = (size_t)k < len - 1 - n ? (size_t)k : len - 1 - n;
        memcpy(out + n, buf, c);
        n += c;
        out[n] = 0;
    }
    close(fd[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        snprintf(out, len, "%s timed out after %d s", argv[0], t->timeout_s);
        return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Trim trailing whitespace in place. */
static void rtrim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
        s[--n] = 0;
}

/* The live value of column `field` of the account association (user empty) of target on
 * cluster: 0 ok, -1 with why in val. */
static int read_assoc(const struct agent_tools *t, const char *cluster, const char *target,
                      const char *field, char *val, size_t len)
{
    char w1[160], w2[160], fmt[160];
    char *out = malloc(OUT_MAX);
    if (!out) {
        snprintf(val, len, "out of memory");
        return -1;
    }
    snprintf(w1, sizeof w1, "account=%s", target);
    snprintf(w2, sizeof w2, "cluster=%s", cluster);
    snprintf(fmt, sizeof fmt, "format=user,%s", field);
    char *argv[] = {(char *)t->sacctmgr, "-P", "-n", "show", "assoc", "where", w1, w2, fmt, NULL};
    int rc = run(t, argv, out, OUT_MAX);
    if (rc != 0) {
        rtrim(out);
        snprintf(val, len, "read failed: %s", out);
        free(out);
        return -1;
    }
    /* Rows "user|value"; the account's own association has an empty user. */
    char *save = NULL;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '|') {
            snprintf(val, len, "%s", line + 1);
            rtrim(val);
            free(out);
            return 0;
        }
    }
    snprintf(val, len, "no association for account %s on cluster %s", target, cluster);
    free(out);
    return -1;
}

static int read_raw_usage(const struct agent_tools *t, const char *target, char *val, size_t len)
{
    char *out = malloc(OUT_MAX);
    if (!out) {
        snprintf(val, len, "out of memory");
        return -1;
    }
    char *argv[] = {(char *)t->sshare, "-n", "-P", "-A", (char *)target, "-o", "Account,User,RawUsage", NULL};
    int rc = run(t, argv, out, OUT_MAX);
    if (rc != 0) {
        rtrim(out);
        snprintf(val, len, "sshare failed: %s", out);
        free(out);
        return -1;
    }
    char *save = NULL;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *a = line;
        while (*a == ' ')
            a++; /* sshare keeps its tree indent even with -P */
        char *p1 = strchr(a, '|');
        if (!p1)
            continue;
        char *p2 = strchr(p1 + 1, '|');
        if (!p2 || p2 != p1 + 1)
            continue; /* a user row */
        *p1 = 0;
        if (strcmp(a, target) == 0) {
            snprintf(val, len, "%s", p2 + 1);
            rtrim(val);
            free(out);
            return 0;
        }
    }
    snprintf(val, len, "sshare shows no account %s", target);
    free(out);
    return -1;
}

/* Slurm prints GrpJobs=-1 as empty, fairshare as its number. */
static int same(const char *want, const char *live)
{
    if (strcmp(want, "-1") == 0)
        return live[0] == 0;
    return strcasecmp(want, live) == 0;
}

int agent_apply(const struct agent_tools *t, const char *cluster, const char *kind,
                const char *target, const char *payload, char *result, size_t len)
{
    char key[64] = "", want[512] = "", field[64] = "", live[512] = "";
    const char *eq = strchr(payload, '=');
    if (!eq || (size_t)(eq - payload) >= sizeof key) {
        snprintf(result, len, "bad payload '%s'", payload);
        return 0;
    }
    memcpy(key, payload, (size_t)(eq - payload));
    snprintf(want, sizeof want, "%s", eq + 1);
    int is_reset = strcmp(kind, "reset_raw_usage") == 0;
    if (strcmp(kind, "set_limit") == 0 || strcmp(kind, "set_grpjobs") == 0)
        snprintf(field, sizeof field, "%s", key);
    else if (strcmp(kind, "set_fairshare") == 0)
        snprintf(field, sizeof field, "fairshare");
    else if (strcmp(kind, "set_qos") == 0)
        snprintf(field, sizeof field, "qos");
    else if (!is_reset) {
        snprintf(result, len, "unknown command kind '%s'", kind);
        return 0;
    }
    /* Diff first: an equal live value is not written again. */
    if (!is_reset) {
        if (read_assoc(t, cluster, target, field, live, sizeof live) < 0) {
            snprintf(result, len, "%s", live);
            return 0;
        }
        if (same(want, live)) {
            snprintf(result, len, "already %s=%s (verified, not written)", field, live);
            return 1;
        }
    }
    char w1[160], w2[160], s1[600], s2[600];
    snprintf(w1, sizeof w1, "name=%s", target);
    snprintf(w2, sizeof w2, "cluster=%s", cluster);
    snprintf(s1, sizeof s1, "%s", payload);
    char *argv[12] = {(char *)t->sacctmgr, "-i", "modify", "account", "where", w1, w2, "set", s1};
    int argc = 9;
    if (strcmp(kind, "set_qos") == 0) {
        snprintf(s2, sizeof s2, "defaultqos=%s", want);
        argv[argc++] = s2;
    }
    argv[argc] = NULL;
    char *out = malloc(OUT_MAX);
    if (!out) {
        snprintf(result, len, "out of memory");
        return 0;
    }
    int rc = run(t, argv, out, OUT_MAX);
    rtrim(out);
    if (rc != 0) {
        snprintf(result, len, "sacctmgr exit %d: %s", rc, out);
        free(out);
        return 0;
    }
    free(out);
    /* "Nothing modified" exits 0 too: the read-back decides. */
    if (is_reset) {
        if (read_raw_usage(t, target, live, sizeof live) < 0) {
            snprintf(result, len, "%s", live);
            return 0;
        }
        if (strcmp(live, "0") != 0) {
            snprintf(result, len, "RawUsage reads %s after the reset", live);
            return 0;
        }
        snprintf(result, len, "verified RawUsage=0");
        return 1;
    }
    if (read_assoc(t, cluster, target, field, live, sizeof live) < 0) {
        snprintf(result, len, "%s", live);
        return 0;
    }
    if (!same(want, live)) {
        snprintf(result, len, "read back %s=%s, wanted %s", field, live, want);
        return 0;
    }
    snprintf(result, len, "verified %s=%s", field, live);
    return 1;
}
