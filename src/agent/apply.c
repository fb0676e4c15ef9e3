/* SPDX-License-Identifier: GPL-3.0-or-later */
/* apply.c - sacctmgr application of outbox commands (apply.h): run, diff, write, verify.
 *
 * Commands and their Slurm field (payload "Key=value"):
 *   set_limit       GrpTRESMins=billing=N | MaxTRESMins=... | GrpTRES=...
 *   set_fairshare   fairshare=N          (read back as column Share)
 *   set_qos         qos=Q                (written as qos=Q defaultqos=Q)
 *   set_grpjobs     GrpJobs=N            (-1 clears; read back empty)
 *   reset_raw_usage RawUsage=0           (no diff: always written; read back with sshare)
 * Child processes: child.c (argv, bounded wait, whole output or refused).
 * Names and payloads are checked before anything runs: a command can only write the field
 * its kind names, on one account of one cluster.
 */
#include "agent/apply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/child.h"
#include "libcore/model.h"
#include "libslurmtext/sacctmgr.h"
#include "libutil/text.h"

/* sacctmgr/sshare output for one account is a few lines; more than this is refused rather
 * than read cut (a cut line could read as a wrong, or a falsely right, value). */
#define OUT_MAX (1024 * 1024)

/* Evidence text, cut to fit on purpose (one_line in main.c cuts it again for allotd). */
__attribute__((format(printf, 3, 4))) static void textf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Run argv; 0 with c->out holding the whole stdout, -1 with why in val. */
static int run(const struct agent_tools *t, char *const argv[], struct child_out *c, char *val,
               size_t len)
{
    int rc = child_run(argv, NULL, t->timeout_s, OUT_MAX, c);
    if (rc == 0 && !c->too_big)
        return 0;
    if (rc == 0)
        textf(val, len, "%s: output over %d bytes refused", argv[0], OUT_MAX);
    else if (rc < 0)
        textf(val, len, "%s", c->errtext);
    else /* sacctmgr's errors may come on either stream */
        textf(val, len, "%s exit %d: %s%s%s", argv[0], rc, c->errtext,
              c->errtext[0] && c->out ? "; " : "", c->out ? c->out : "");
    child_out_free(c);
    return -1;
}

/* Trim trailing whitespace in place. */
static void rtrim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
        s[--n] = 0;
}

/* Prefix run()'s why in val with what failed ("read failed: ..."). */
static void why_failed(char *val, size_t len, const char *what)
{
    char why[400];
    text_copy(why, sizeof why, val);
    rtrim(why);
    textf(val, len, "%s: %s", what, why);
}

/* A Slurm account or cluster name as allot allows it (model_check_name).  Anything else is
 * refused before it reaches sacctmgr: a ',' would make "name=a,b" modify two accounts, a
 * space or '=' would be read as another option. */
static int name_ok(const char *s)
{
    return model_check_name("name", s, 0, NULL) == 0;
}

/* digits, or "-1" when allowed */
static int count_ok(const char *v, int minus_one)
{
    if (minus_one && strcmp(v, "-1") == 0)
        return 1;
    return v[0] && strlen(v) <= 19 && strspn(v, "0123456789") == strlen(v);
}

/* A TRES list "billing=N[,cpu=N]" (N digits or -1); names [a-z0-9/:_-]. */
static int tres_ok(const char *v)
{
    char copy[512];
    if (!v[0] || text_copy(copy, sizeof copy, v))
        return 0;
    char *save = NULL;
    for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '=');
        if (!eq || eq == it)
            return 0;
        *eq = 0;
        if (strspn(it, "abcdefghijklmnopqrstuvwxyz0123456789/:_-") != strlen(it) ||
            !count_ok(eq + 1, 1))
            return 0;
    }
    return v[strlen(v) - 1] != ',' && !strstr(v, ",,");
}

/* The payload key a kind may set and whether its value is well-formed: anything else is
 * refused, so a command can only ever write the field its kind names and the read-back
 * checks that same field. */
static int payload_ok(const char *kind, const char *key, const char *want)
{
    if (strcmp(kind, "reset_raw_usage") == 0)
        return strcasecmp(key, "RawUsage") == 0 && strcmp(want, "0") == 0;
    if (strcmp(kind, "set_limit") == 0)
        return (strcasecmp(key, "GrpTRESMins") == 0 || strcasecmp(key, "MaxTRESMins") == 0 ||
                strcasecmp(key, "GrpTRES") == 0) &&
               tres_ok(want);
    if (strcmp(kind, "set_grpjobs") == 0)
        return strcasecmp(key, "GrpJobs") == 0 && count_ok(want, 1);
    if (strcmp(kind, "set_fairshare") == 0)
        return strcasecmp(key, "fairshare") == 0 &&
               (count_ok(want, 0) || strcasecmp(want, "parent") == 0);
    if (strcmp(kind, "set_qos") == 0)
        return strcasecmp(key, "qos") == 0 && name_ok(want);
    return 0;
}

/* The live value of column `field` of the account association (user empty) of target on
 * cluster: 0 ok, -1 with why in val.  Rows must be exactly "user|value" (sacctmgr -P) and
 * there must be one account row: extra columns or two account rows are refused. */
static int read_assoc(const struct agent_tools *t, const char *cluster, const char *target,
                      const char *field, char *val, size_t len)
{
    char w1[160], w2[160], fmt[160], cols[160];
    snprintf(w1, sizeof w1, "account=%s", target);
    snprintf(w2, sizeof w2, "cluster=%s", cluster);
    snprintf(fmt, sizeof fmt, "format=user,%s", field);
    snprintf(cols, sizeof cols, "user,%s", field);
    char *argv[] = {(char *)t->sacctmgr, "-P", "-n", "show", "assoc", "where", w1, w2, fmt, NULL};
    struct child_out c;
    if (run(t, argv, &c, val, len) < 0) {
        why_failed(val, len, "read failed");
        return -1;
    }
    struct slt_mgr_format mf;
    struct allot_error e = {0};
    if (slt_mgr_format_parse(cols, &mf, &e) < 0) {
        child_out_free(&c);
        textf(val, len, "read failed: %s", e.msg);
        return -1;
    }
    size_t pos = 0, found = 0;
    struct slt_span line, v = {"", 0};
    while (c.out && slt_next_line(c.out, c.n, &pos, &line)) {
        struct slt_mgr_row row;
        struct slt_span u, x;
        if (line.n == 0)
            continue;
        if (slt_mgr_row_parse(&mf, line, &row, &e) < 0) {
            child_out_free(&c);
            textf(val, len, "sacctmgr output not understood: %s", e.msg);
            return -1;
        }
        if (slt_mgr_get(&row, "user", &u) && u.n == 0 && slt_mgr_get(&row, field, &x)) {
            found++;
            v = x;
        }
    }
    int rc = -1;
    if (found == 1 && v.n < len) {
        memcpy(val, v.p, v.n);
        val[v.n] = 0;
        rtrim(val);
        rc = 0;
    } else if (found > 1) {
        textf(val, len, "%zu associations for account %s on cluster %s", found, target, cluster);
    } else if (found == 1) {
        textf(val, len, "%s of account %s: value of %zu bytes refused", field, target, v.n);
    } else {
        textf(val, len, "no association for account %s on cluster %s", target, cluster);
    }
    child_out_free(&c);
    return rc;
}

/* RawUsage of target's account row (Account|User|RawUsage with User empty); -1 with why.
 * The value must be a whole number: anything else is refused, not compared as text. */
static int read_raw_usage(const struct agent_tools *t, const char *target, char *val, size_t len)
{
    char *argv[] = {(char *)t->sshare,       "-n", "-P", "-A", (char *)target, "-o",
                    "Account,User,RawUsage", NULL};
    struct child_out c;
    if (run(t, argv, &c, val, len) < 0) {
        why_failed(val, len, "sshare failed");
        return -1;
    }
    size_t pos = 0, found = 0;
    struct slt_span line, v = {"", 0};
    while (c.out && slt_next_line(c.out, c.n, &pos, &line)) {
        struct slt_span f[4];
        size_t n = 0;
        while (line.n && line.p[0] == ' ') { /* sshare keeps its tree indent even with -P */
            line.p++;
            line.n--;
        }
        if (line.n == 0)
            continue;
        if (slt_split(line, '|', f, 4, &n, NULL) < 0 || n != 3) {
            child_out_free(&c);
            textf(val, len, "sshare output not understood: a row without 3 columns");
            return -1;
        }
        if (f[1].n == 0 && slt_eq(f[0], target)) {
            found++;
            v = f[2];
        }
    }
    uint64_t x = 0;
    int rc = -1;
    if (found == 1 && slt_uint(v.p, v.n, UINT64_MAX, &x) == 0) {
        textf(val, len, "%llu", (unsigned long long)x);
        rc = 0;
    } else if (found == 1) {
        textf(val, len, "sshare RawUsage of %s not a whole number", target);
    } else if (found > 1) {
        textf(val, len, "sshare shows account %s %zu times", target, found);
    } else {
        textf(val, len, "sshare shows no account %s", target);
    }
    child_out_free(&c);
    return rc;
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
        textf(result, len, "bad payload '%s'", payload);
        return 0;
    }
    memcpy(key, payload, (size_t)(eq - payload));
    if (text_copy(want, sizeof want, eq + 1)) {
        textf(result, len, "payload of %zu bytes refused", strlen(payload));
        return 0;
    }
    if (!name_ok(cluster) || !name_ok(target)) {
        textf(result, len,
              "invalid cluster or account name (allowed: 1..63 of "
              "[A-Za-z0-9_.-], not starting with '-')");
        return 0;
    }
    int is_reset = strcmp(kind, "reset_raw_usage") == 0;
    if (strcmp(kind, "set_limit") == 0 || strcmp(kind, "set_grpjobs") == 0)
        text_copy(field, sizeof field, key);
    else if (strcmp(kind, "set_fairshare") == 0)
        snprintf(field, sizeof field, "fairshare");
    else if (strcmp(kind, "set_qos") == 0)
        snprintf(field, sizeof field, "qos");
    else if (!is_reset) {
        textf(result, len, "unknown command kind '%s'", kind);
        return 0;
    }
    if (!payload_ok(kind, key, want)) {
        textf(result, len, "payload '%.200s' refused for %s", payload, kind);
        return 0;
    }
    /* Diff first: an equal live value is not written again. */
    if (!is_reset) {
        if (read_assoc(t, cluster, target, field, live, sizeof live) < 0) {
            textf(result, len, "%s", live);
            return 0;
        }
        if (same(want, live)) {
            textf(result, len, "already %s=%s (verified, not written)", field, live);
            return 1;
        }
    }
    char w1[160], w2[160], s1[600], s2[600];
    snprintf(w1, sizeof w1, "name=%s", target);
    snprintf(w2, sizeof w2, "cluster=%s", cluster);
    text_copy(s1, sizeof s1, payload);
    char *argv[12] = {(char *)t->sacctmgr, "-i", "modify", "account", "where", w1, w2, "set", s1};
    int argc = 9;
    if (strcmp(kind, "set_qos") == 0) {
        snprintf(s2, sizeof s2, "defaultqos=%s", want);
        argv[argc++] = s2;
    }
    argv[argc] = NULL;
    struct child_out c;
    if (run(t, argv, &c, live, sizeof live) < 0) {
        rtrim(live);
        textf(result, len, "%s", live);
        return 0;
    }
    child_out_free(&c);
    /* "Nothing modified" exits 0 too: the read-back decides. */
    if (is_reset) {
        if (read_raw_usage(t, target, live, sizeof live) < 0) {
            textf(result, len, "%s", live);
            return 0;
        }
        if (strcmp(live, "0") != 0) {
            textf(result, len, "RawUsage reads %s after the reset", live);
            return 0;
        }
        textf(result, len, "verified RawUsage=0");
        return 1;
    }
    if (read_assoc(t, cluster, target, field, live, sizeof live) < 0) {
        textf(result, len, "%s", live);
        return 0;
    }
    if (!same(want, live)) {
        textf(result, len, "read back %s=%s, wanted %s", field, live, want);
        return 0;
    }
    textf(result, len, "verified %s=%s", field, live);
    return 1;
}
