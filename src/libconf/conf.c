/* SPDX-License-Identifier: GPL-3.0-or-later */
/* conf.c - the allot.conf parser of conf.h, driven by one table (conf_rows[]).
 *
 * Design: every key is one row (name, type, bounds, default text, destination offset,
 * reloadable, doc).  Defaults are applied by parsing each row's default text with the same
 * code as file values, so a default can never be a value the parser would reject.  A `seen`
 * bitmap indexed by destination catches repeated keys, including aliases (ClusterName and
 * ClusterNames share one destination).  Parsing fills a private struct and returns it only
 * when the whole file and the cross-field checks passed: no half-applied configuration.
 */
#include "libconf/conf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libutil/text.h"

#define CONF_LINE_MAX 4096
#define CONF_FILE_MAX (1024 * 1024)

struct conf_row {
    struct conf_key_info info;
    size_t off;  /* destination inside struct allot_conf */
    size_t size; /* CONF_STRING/ENUM/LIST/HOSTPORT: char array size; else sizeof(int64_t) */
};

/* The refcount lives in a wrapper so struct allot_conf stays plain data. */
struct conf_box {
    atomic_int refs;
    struct allot_conf c;
};

#define S(field) offsetof(struct allot_conf, field), sizeof(((struct allot_conf *)0)->field)
#define I(field) offsetof(struct allot_conf, field), sizeof(int64_t)

static const struct conf_row conf_rows[] = {
    {{"StorageType", CONF_ENUM, "sqlite|pg", 0, 0, "sqlite", 0,
      "storage backend: sqlite (one file, embedded) or pg (PostgreSQL)"},
     S(storage_type)},
    {{"StorageLoc", CONF_STRING, NULL, 0, 0, "/var/lib/allot/allot.db", 0,
      "sqlite: database file path; pg: libpq connection string"},
     S(storage_loc)},
    {{"StorageTimeoutMs", CONF_INT, NULL, 1, 600000, "5000", 0,
      "how long a write waits for a database lock before failing (ms)"},
     I(storage_timeout_ms)},
    {{"ListenAddr", CONF_HOSTPORT, NULL, 0, 0, "127.0.0.1:8760", 0,
      "TCP listener host:port; empty = no TCP listener"},
     S(listen_addr)},
    {{"ListenSocket", CONF_STRING, NULL, 0, 0, "", 0,
      "Unix socket path for local clients; empty = none"},
     S(listen_socket)},
    {{"OperatorSocket", CONF_STRING, NULL, 0, 0, "", 0,
      "Unix socket for the Slurm plugins, agents and operators only (mode 0660, group "
      "OperatorSocketGroup): capacity no other local user can take; empty = none"},
     S(operator_socket)},
    {{"OperatorSocketGroup", CONF_STRING, NULL, 0, 0, "", 0,
      "group that owns OperatorSocket (its members may connect); empty = allotd's own group"},
     S(operator_socket_group)},
    {{"ConnectionsPerPeer", CONF_INT, NULL, 1, 4096, "256", 0,
      "open connections one uid (ListenSocket) or one address (ListenAddr) may hold; more "
      "are closed at once"},
     I(connections_per_peer)},
    {{"AuthType", CONF_ENUM, "munge|none", 0, 0, "munge", 0,
      "munge: a MUNGE credential per request; none: test builds with TestMode=local only"},
     S(auth_type)},
    {{"MungeSocket", CONF_STRING, NULL, 0, 0, "", 0,
      "munged socket used to decode credentials; empty = libmunge's default"},
     S(munge_socket)},
    {{"SocketPeerAuth", CONF_BOOL, NULL, 0, 0, "yes", 1,
      "ListenSocket: a request without a credential is the peer's uid (SO_PEERCRED)"},
     I(socket_peer_auth)},
    {{"SuperUsers", CONF_LIST, NULL, 0, 0, "", 1,
      "users with every right, who may act as another user (X-Allot-As)"},
     S(super_users)},
    {{"Admins", CONF_LIST, NULL, 0, 0, "", 1,
      "users who read everything and may act as another user"},
     S(admins)},
    {{"Operators", CONF_LIST, NULL, 0, 0, "", 1,
      "users running the Slurm plugins and agents: job verbs and reads"},
     S(operators)},
    {{"TimeZone", CONF_STRING, NULL, 0, 0, "UTC", 0,
      "time zone of period strings (2026-07, 2026-Q3); stored times are UTC"},
     S(time_zone)},
    {{"PolicyTickInterval", CONF_INT, NULL, 1, 86400, "60", 0,
      "seconds between two passes of the policy clock (period boundaries, thresholds)"},
     I(policy_tick_interval_s)},
    {{"ClusterNames", CONF_LIST, NULL, 0, 0, "", 1,
      "clusters this allotd serves; empty = any cluster; a job verb for another cluster is "
      "refused (403)"},
     S(cluster_names)},
    {{"ClusterName", CONF_LIST, NULL, 0, 0, "", 1, "alias of ClusterNames"}, S(cluster_names)},
    {{"HoldMode", CONF_ENUM, "start|submit", 0, 0, "start", 1,
      "when credit is held: at job start (prolog) or at submission (admit)"},
     S(hold_mode)},
    {{"SubmitHoldTTL", CONF_INT, NULL, 1, 30 * 86400, "86400", 1,
      "seconds after which a hold taken at submit and never bound to a started job is released"},
     I(submit_hold_ttl_s)},
    {{"WhatifMaxJobs", CONF_INT, NULL, 1, 99999, "50000", 1,
      "most settled jobs one POST /v1/whatif replays; more is 413 (narrow it with since)"},
     I(whatif_max_jobs)},
    {{"EnforceMode", CONF_ENUM, "enforce|observe", 0, 0, "enforce", 1,
      "enforce: refuse what the bank refuses; observe: admit and start every job, record what "
      "enforcement would have refused (allot report observe)"},
     S(enforce_mode)},
    {{"FailMode", CONF_ENUM, "closed|open", 0, 0, "closed", 1,
      "what the Slurm plugins do when allotd cannot be reached"},
     S(fail_mode)},
    {{"StartRefusal", CONF_ENUM, "wait|cancel", 0, 0, "wait", 1,
      "prep/allot, a job whose hold at start the allocation cannot cover yet: wait (requeued "
      "and held with the reason, retried) or cancel"},
     S(start_refusal)},
    {{"StartRetryDelay", CONF_INT, NULL, 2, 86400, "60", 1,
      "StartRefusal=wait: seconds a refused job waits before its start is tried again"},
     I(start_retry_delay_s)},
    {{"AllotdUrl", CONF_STRING, NULL, 0, 0, "", 1,
      "URL the Slurm plugins use for allotd; empty = unix:OperatorSocket, else "
      "unix:ListenSocket, else ListenAddr"},
     S(allotd_url)},
    {{"PluginTimeoutMs", CONF_INT, NULL, 10, 60000, "1000", 1,
      "bound of one Slurm plugin request to allotd (ms), then FailMode applies"},
     I(plugin_timeout_ms)},
    {{"PluginBreakerMs", CONF_INT, NULL, 0, 600000, "5000", 1,
      "after a plugin request to allotd timed out, FailMode applies without asking allotd "
      "for this long (ms), then one request probes it; 0 = never"},
     I(plugin_breaker_ms)},
    {{"PrEpMinThreads", CONF_INT, NULL, 1, 64, "1", 1,
      "prep/allot worker threads kept even when idle"},
     I(prep_min_threads)},
    {{"PrEpMaxThreads", CONF_INT, NULL, 1, 256, "8", 1,
      "prep/allot worker threads at most (grown while requests wait in the queue)"},
     I(prep_max_threads)},
    {{"PrEpSpoolDir", CONF_STRING, NULL, 0, 0, "/var/spool/allot", 1,
      "directory where prep/allot keeps pending settles across slurmctld restarts"},
     S(prep_spool_dir)},
    {{"SiteFactorRule", CONF_ENUM, "power|sigmoid", 0, 0, "power", 1,
      "site factor rule: power f_c^Nc x f_t^Nt, or sigmoid S(f_c) x S(f_t)"},
     S(sf_rule)},
    {{"SiteFactorMax", CONF_INT, NULL, 0, 1000000000, "0", 1,
      "Slurm site factor of an allocation whose factor is 1; 0 = site factor off"},
     I(sf_max)},
    {{"SiteFactorNc", CONF_STRING, NULL, 0, 0, "1", 1, "power rule: credit exponent (>= 0)"},
     S(sf_nc)},
    {{"SiteFactorNt", CONF_STRING, NULL, 0, 0, "1", 1, "power rule: temporal exponent (>= 0)"},
     S(sf_nt)},
    {{"SiteFactorLc", CONF_STRING, NULL, 0, 0, "1", 1, "sigmoid rule: credit rate l"}, S(sf_lc)},
    {{"SiteFactorLt", CONF_STRING, NULL, 0, 0, "1", 1, "sigmoid rule: temporal rate l"}, S(sf_lt)},
    {{"SiteFactorX0c", CONF_STRING, NULL, 0, 0, "0.5", 1,
      "sigmoid rule: credit midpoint x0 in [0, 1]"},
     S(sf_x0c)},
    {{"SiteFactorX0t", CONF_STRING, NULL, 0, 0, "0.5", 1,
      "sigmoid rule: temporal midpoint x0 in [0, 1]"},
     S(sf_x0t)},
    {{"FairShareAlgorithm", CONF_ENUM, "classic|fair_tree|flux", 0, 0, "fair_tree", 1,
      "fair-share: Slurm classic (NO_FAIR_TREE), Slurm Fair Tree, flux weighted tree"},
     S(fairshare_algo)},
    {{"PriorityDecayHalfLife", CONF_INT, NULL, 0, INT64_C(1) << 40, "604800", 0,
      "usage half-life in seconds (Slurm's 7-0 = 604800); 0 = no decay; a change rebuilds "
      "the usage accumulators at start"},
     I(decay_halflife_s)},
    {{"PriorityUsageResetPeriod", CONF_ENUM, "NONE|DAILY|WEEKLY|MONTHLY|QUARTERLY|YEARLY", 0, 0,
      "NONE", 0, "usage restarts from zero at the start of each such period (UTC)"},
     S(usage_reset)},
    {{"UsageSource", CONF_ENUM, "charge|billing", 0, 0, "charge", 0,
      "fair-share usage: charged SU-minutes, or billing x elapsed seconds (Slurm RawUsage)"},
     S(usage_source)},
    {{"FairShareDampeningFactor", CONF_INT, NULL, 1, 1000000, "1", 1,
      "classic fair-share dampening factor"},
     I(fs_dampening)},
    {{"PriorityFormula", CONF_ENUM, "slurm|flux", 0, 0, "slurm", 1,
      "job priority formula of `allot priority`: Slurm multifactor or flux-accounting"},
     S(priority_type)},
    {{"PriorityWeightAge", CONF_INT, NULL, 0, 4294967295, "0", 1, "Slurm PriorityWeightAge"},
     I(pw_age)},
    {{"PriorityWeightFairshare", CONF_INT, NULL, 0, 4294967295, "0", 1,
      "Slurm PriorityWeightFairshare"},
     I(pw_fairshare)},
    {{"PriorityWeightJobSize", CONF_INT, NULL, 0, 4294967295, "0", 1,
      "Slurm PriorityWeightJobSize"},
     I(pw_jobsize)},
    {{"PriorityWeightPartition", CONF_INT, NULL, 0, 4294967295, "0", 1,
      "Slurm PriorityWeightPartition"},
     I(pw_partition)},
    {{"PriorityWeightQOS", CONF_INT, NULL, 0, 4294967295, "0", 1, "Slurm PriorityWeightQOS"},
     I(pw_qos)},
    {{"PriorityMaxAge", CONF_INT, NULL, 1, INT64_C(1) << 32, "604800", 1,
      "age (seconds) at which the age factor reaches 1"},
     I(priority_max_age_s)},
    {{"FluxWeightFairshare", CONF_INT, NULL, 0, INT64_C(1) << 32, "100000", 1,
      "flux-accounting fairshare factor weight"},
     I(fw_fairshare)},
    {{"FluxWeightQueue", CONF_INT, NULL, 0, INT64_C(1) << 32, "10000", 1,
      "flux-accounting queue factor weight"},
     I(fw_queue)},
    {{"FluxWeightBank", CONF_INT, NULL, 0, INT64_C(1) << 32, "0", 1,
      "flux-accounting bank factor weight"},
     I(fw_bank)},
    {{"FluxWeightUrgency", CONF_INT, NULL, 0, INT64_C(1) << 32, "1000", 1,
      "flux-accounting urgency factor weight"},
     I(fw_urgency)},
    {{"Threads", CONF_INT, NULL, 0, 256, "0", 0,
      "HTTP worker threads per listener; 0 = CPUs (SQLite), 4 x CPUs (PostgreSQL)"},
     I(threads)},
    {{"MaxBatch", CONF_INT, NULL, 1, 65536, "512", 0,
      "most write operations made durable by one commit (group commit)"},
     I(max_batch)},
    {{"QueueMax", CONF_INT, NULL, 1, 1048576, "8192", 0,
      "bounded length of the writer queue; a full queue makes writers wait"},
     I(queue_max)},
    {{"LogLevel", CONF_ENUM, "error|warn|info|debug", 0, 0, "info", 1, "log threshold"},
     S(log_level)},
    {{"MetricsTokenFile", CONF_STRING, NULL, 0, 0, "", 1,
      "file holding the bearer token a Prometheus scrape sends to see per-account series; "
      "empty = only authenticated admins, operators and superusers see them"},
     S(metrics_token_file)},
    {{"LogFile", CONF_STRING, NULL, 0, 0, "", 0,
      "log file, reopened on SIGHUP; syslog = the system logger (facility daemon); empty = "
      "standard error"},
     S(log_file)},
    {{"PidFile", CONF_STRING, NULL, 0, 0, "", 0, "pid file written at startup; empty = none"},
     S(pid_file)},
    {{"TestMode", CONF_ENUM, "|local", 0, 0, "", 0,
      "local: enables test switches (AuthType=none, crash points); ALLOT_TEST builds only"},
     S(test_mode)},
};

#undef S
#undef I

#define CONF_NROWS ((int)(sizeof(conf_rows) / sizeof(conf_rows[0])))

int conf_key_count(void)
{
    return CONF_NROWS;
}

const struct conf_key_info *conf_key_at(int i)
{
    return (i >= 0 && i < CONF_NROWS) ? &conf_rows[i].info : NULL;
}

const char *conf_type_name(enum conf_type t)
{
    static const char *const names[CONF_TYPE_MAX] = {"string", "enum", "int",
                                                     "bool",   "list", "host:port"};
    return ((int)t >= 0 && t < CONF_TYPE_MAX) ? names[t] : "?";
}

static int name_char(int ch)
{
    return isalnum(ch) || ch == '_' || ch == '.' || ch == '-';
}

/* Canonicalise a comma list of names into dst ("a, b" -> "a,b"). */
static int parse_list(const char *v, char *dst, size_t size, char *why, size_t whysz)
{
    char out[CONF_STR_MAX];
    size_t o = 0;
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *s = p;
        while (*p && *p != ',')
            p++;
        const char *e = p;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (e == s) {
            snprintf(why, whysz, "empty entry in the list");
            return -1;
        }
        for (const char *q = s; q < e; q++) {
            if (!name_char((unsigned char)*q)) {
                snprintf(why, whysz, "'%.*s' is not a name ([A-Za-z0-9_.-])", (int)(e - s), s);
                return -1;
            }
        }
        size_t n = (size_t)(e - s);
        if (o + n + 2 > sizeof(out) || o + n + 1 > size) {
            snprintf(why, whysz, "list longer than %zu characters", size - 1);
            return -1;
        }
        if (o)
            out[o++] = ',';
        memcpy(out + o, s, n);
        o += n;
        if (*p == ',') {
            p++;
            if (!*p) {
                snprintf(why, whysz, "empty entry in the list");
                return -1;
            }
        }
    }
    out[o] = '\0';
    memcpy(dst, out, o + 1);
    return 0;
}

static int parse_int(const char *v, int64_t min, int64_t max, int64_t *out, char *why, size_t whysz)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno) {
        snprintf(why, whysz, "'%s' is not an integer", v);
        return -1;
    }
    if (x < min || x > max) {
        snprintf(why, whysz, "%lld is out of range [%lld, %lld]", x, (long long)min,
                 (long long)max);
        return -1;
    }
    *out = x;
    return 0;
}

int conf_hostport_split(const char *s, char *host, size_t hostsz, int *port,
                        struct allot_error *err)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return allot_errorf(err, ALLOT_EINVAL, "'%s' is not host:port", s);
    size_t hl = (size_t)(colon - s);
    if (hl >= hostsz)
        return allot_errorf(err, ALLOT_EINVAL, "host of '%s' too long", s);
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || p < 1 || p > 65535)
        return allot_errorf(err, ALLOT_EINVAL, "port of '%s' must be 1..65535", s);
    memcpy(host, s, hl);
    host[hl] = '\0';
    *port = (int)p;
    return 0;
}

/* Store one value into c for row r; on failure why says the reason (c untouched). */
static int apply_value(struct allot_conf *c, const struct conf_row *r, const char *v, char *why,
                       size_t whysz)
{
    char *dst = (char *)c + r->off;
    size_t len = strlen(v);
    switch (r->info.type) {
    case CONF_STRING:
        if (len >= r->size) {
            snprintf(why, whysz, "value longer than %zu characters", r->size - 1);
            return -1;
        }
        for (size_t i = 0; i < len; i++) {
            if (iscntrl((unsigned char)v[i])) {
                snprintf(why, whysz, "control character in value");
                return -1;
            }
        }
        memcpy(dst, v, len + 1);
        return 0;
    case CONF_ENUM: {
        const char *p = r->info.choices;
        while (1) {
            const char *bar = strchr(p, '|');
            size_t n = bar ? (size_t)(bar - p) : strlen(p);
            if (n == len && strncasecmp(p, v, n) == 0 && n < r->size) {
                memcpy(dst, p, n); /* canonical spelling from the table */
                dst[n] = '\0';
                return 0;
            }
            if (!bar)
                break;
            p = bar + 1;
        }
        snprintf(why, whysz, "'%s' is not one of %s", v, r->info.choices);
        return -1;
    }
    case CONF_INT: {
        int64_t x;
        if (parse_int(v, r->info.min, r->info.max, &x, why, whysz) < 0)
            return -1;
        memcpy(dst, &x, sizeof(x));
        return 0;
    }
    case CONF_BOOL: {
        int64_t x;
        if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1"))
            x = 1;
        else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"))
            x = 0;
        else {
            snprintf(why, whysz, "'%s' is not yes or no", v);
            return -1;
        }
        memcpy(dst, &x, sizeof(x));
        return 0;
    }
    case CONF_LIST:
        return parse_list(v, dst, r->size, why, whysz);
    case CONF_HOSTPORT: {
        if (len == 0) {
            dst[0] = '\0';
            return 0;
        }
        char host[256];
        int port;
        struct allot_error e;
        if (len >= r->size || conf_hostport_split(v, host, sizeof(host), &port, &e) < 0) {
            snprintf(why, whysz, "%s", len >= r->size ? "value too long" : e.msg);
            return -1;
        }
        memcpy(dst, v, len + 1);
        return 0;
    }
    default:
        snprintf(why, whysz, "internal: bad row type");
        return -1;
    }
}

static void trim(char **s, char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* Split one line into key and value (both NUL-terminated inside line).  Returns 1 for a
 * key=value line, 0 for blank/comment, -1 with why. */
static int split_line(char *line, char **key, char **val, char *why, size_t whysz)
{
    char *s = line, *e = line + strlen(line);
    trim(&s, &e);
    if (s == e || *s == '#')
        return 0;
    char *eq = memchr(s, '=', (size_t)(e - s));
    if (!eq) {
        snprintf(why, whysz, "expected Key=Value");
        return -1;
    }
    char *ks = s, *ke = eq;
    trim(&ks, &ke);
    if (ks == ke) {
        snprintf(why, whysz, "missing key before '='");
        return -1;
    }
    *ke = '\0';
    char *vs = eq + 1, *ve = e;
    trim(&vs, &ve);
    if (vs < ve && *vs == '"') {
        char *close = memchr(vs + 1, '"', (size_t)(ve - vs - 1));
        if (!close) {
            snprintf(why, whysz, "unterminated quote");
            return -1;
        }
        char *rest = close + 1;
        while (rest < ve && isspace((unsigned char)*rest))
            rest++;
        if (rest < ve && *rest != '#') {
            snprintf(why, whysz, "text after the closing quote");
            return -1;
        }
        *close = '\0';
        vs++;
    } else {
        char *hash = memchr(vs, '#', (size_t)(ve - vs));
        if (hash) {
            ve = hash;
            trim(&vs, &ve);
        }
        *ve = '\0';
    }
    *key = ks;
    *val = vs;
    return 1;
}

static const struct conf_row *find_row(const char *key)
{
    for (int i = 0; i < CONF_NROWS; i++)
        if (strcasecmp(conf_rows[i].info.key, key) == 0)
            return &conf_rows[i];
    return NULL;
}

/* The site factor's real parameters: finite decimals; exponents >= 0, midpoints in [0, 1],
 * rates within +-700 so that e^l stays finite. */
static int check_sf_reals(const struct allot_conf *c, const char *name, struct allot_error *err)
{
    static const struct {
        const char *key;
        size_t off;
        double lo, hi;
    } reals[] = {
        {"SiteFactorNc", offsetof(struct allot_conf, sf_nc), 0, 1e6},
        {"SiteFactorNt", offsetof(struct allot_conf, sf_nt), 0, 1e6},
        {"SiteFactorLc", offsetof(struct allot_conf, sf_lc), -700, 700},
        {"SiteFactorLt", offsetof(struct allot_conf, sf_lt), -700, 700},
        {"SiteFactorX0c", offsetof(struct allot_conf, sf_x0c), 0, 1},
        {"SiteFactorX0t", offsetof(struct allot_conf, sf_x0t), 0, 1},
    };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        const char *v = (const char *)c + reals[i].off;
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        if (!*v || *end || errno || !(x >= reals[i].lo && x <= reals[i].hi))
            return allot_errorf(err, ALLOT_EINVAL, "%s: %s: '%s' is not a number in [%g, %g]", name,
                                reals[i].key, v, reals[i].lo, reals[i].hi);
    }
    return 0;
}

/* Cross-field checks, after the whole file (STYLE: defaults, file, cross-field checks). */
static int conf_check(const struct allot_conf *c, const char *name, struct allot_error *err)
{
    if (!c->storage_loc[0])
        return allot_errorf(err, ALLOT_EINVAL, "%s: StorageLoc: must not be empty", name);
    if (!c->listen_addr[0] && !c->listen_socket[0])
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: ListenAddr, ListenSocket: at least one listener is required",
                            name);
    if (c->prep_min_threads > c->prep_max_threads)
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: PrEpMinThreads: must not exceed PrEpMaxThreads (%lld)", name,
                            (long long)c->prep_max_threads);
    if (check_sf_reals(c, name, err) < 0)
        return -1;
#ifdef ALLOT_TEST
    if (!strcmp(c->auth_type, "none") && strcmp(c->test_mode, "local") != 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: AuthType: 'none' requires TestMode=local",
                            name);
#else
    if (c->test_mode[0])
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: TestMode: only available in test builds (ALLOT_TEST)", name);
    if (!strcmp(c->auth_type, "none"))
        return allot_errorf(err, ALLOT_EINVAL,
                            "%s: AuthType: 'none' is only available in test builds", name);
#endif
    return 0;
}

struct allot_conf *conf_parse_text(const char *text, const char *name, struct allot_error *err)
{
    struct conf_box *box = calloc(1, sizeof(*box));
    if (!box) {
        allot_errorf(err, ALLOT_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    atomic_init(&box->refs, 1);
    struct allot_conf *c = &box->c;
    char why[ALLOT_ERRMSG_MAX];
    for (int i = 0; i < CONF_NROWS; i++) {
        if (apply_value(c, &conf_rows[i], conf_rows[i].info.def, why, sizeof(why)) < 0) {
            allot_errorf(err, ALLOT_EINTERNAL, "default of %s: %s", conf_rows[i].info.key, why);
            goto fail;
        }
    }
    text_copy(c->path, sizeof(c->path), name);

    int seen_line[CONF_NROWS] = {0}; /* by the first row of a destination (aliases share) */
    const char *p = text;
    int lineno = 0;
    while (*p) {
        lineno++;
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= CONF_LINE_MAX) {
            allot_errorf(err, ALLOT_EINVAL, "%s:%d: line longer than %d characters", name, lineno,
                         CONF_LINE_MAX - 1);
            goto fail;
        }
        char line[CONF_LINE_MAX];
        memcpy(line, p, n);
        line[n] = '\0';
        p = nl ? nl + 1 : p + n;
        char *key, *val;
        int k = split_line(line, &key, &val, why, sizeof(why));
        if (k < 0) {
            allot_errorf(err, ALLOT_EINVAL, "%s:%d: %s", name, lineno, why);
            goto fail;
        }
        if (k == 0)
            continue;
        const struct conf_row *r = find_row(key);
        if (!r) {
            allot_errorf(err, ALLOT_EINVAL, "%s:%d: %s: unknown key", name, lineno, key);
            goto fail;
        }
        int slot = (int)(r - conf_rows);
        while (slot > 0 && conf_rows[slot - 1].off == r->off)
            slot--;
        if (seen_line[slot]) {
            allot_errorf(err, ALLOT_EINVAL, "%s:%d: %s: repeated key (first set on line %d)", name,
                         lineno, r->info.key, seen_line[slot]);
            goto fail;
        }
        seen_line[slot] = lineno;
        if (apply_value(c, r, val, why, sizeof(why)) < 0) {
            allot_errorf(err, ALLOT_EINVAL, "%s:%d: %s: %s", name, lineno, r->info.key, why);
            goto fail;
        }
    }
    if (conf_check(c, name, err) < 0)
        goto fail;
    return c;
fail:
    free(box);
    return NULL;
}

struct allot_conf *conf_load(const char *path, struct allot_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        allot_errorf(err, ALLOT_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct allot_conf *c = NULL;
    char *buf = malloc(CONF_FILE_MAX + 1);
    if (!buf) {
        allot_errorf(err, ALLOT_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    size_t n = fread(buf, 1, CONF_FILE_MAX + 1, f);
    if (ferror(f)) {
        allot_errorf(err, ALLOT_EIO, "%s: read error: %s", path, strerror(errno));
        goto out;
    }
    if (n > CONF_FILE_MAX) {
        allot_errorf(err, ALLOT_EINVAL, "%s: larger than %d bytes", path, CONF_FILE_MAX);
        goto out;
    }
    if (memchr(buf, '\0', n)) {
        allot_errorf(err, ALLOT_EINVAL, "%s: contains a NUL byte", path);
        goto out;
    }
    buf[n] = '\0';
    c = conf_parse_text(buf, path, err);
out:
    free(buf);
    fclose(f);
    return c;
}

struct allot_conf *conf_ref(struct allot_conf *c)
{
    if (c) {
        struct conf_box *box = (struct conf_box *)((char *)c - offsetof(struct conf_box, c));
        atomic_fetch_add(&box->refs, 1);
    }
    return c;
}

void conf_unref(struct allot_conf *c)
{
    if (!c)
        return;
    struct conf_box *box = (struct conf_box *)((char *)c - offsetof(struct conf_box, c));
    if (atomic_fetch_sub(&box->refs, 1) == 1)
        free(box);
}

int conf_diff(const struct allot_conf *a, const struct allot_conf *b, conf_diff_f cb, void *arg)
{
    int fixed = 0;
    for (int i = 0; i < CONF_NROWS; i++) {
        const struct conf_row *r = &conf_rows[i];
        if (i > 0 && conf_rows[i - 1].off == r->off)
            continue; /* an alias: reported under its main key */
        if (memcmp((const char *)a + r->off, (const char *)b + r->off, r->size) == 0)
            continue;
        if (r->info.type != CONF_INT && r->info.type != CONF_BOOL &&
            strcmp((const char *)a + r->off, (const char *)b + r->off) == 0)
            continue;
        if (cb)
            cb(r->info.key, r->info.reloadable, arg);
        if (!r->info.reloadable)
            fixed++;
    }
    return fixed;
}

void conf_keep_fixed(struct allot_conf *next, const struct allot_conf *running)
{
    for (int i = 0; i < CONF_NROWS; i++) {
        const struct conf_row *r = &conf_rows[i];
        if (!r->info.reloadable)
            memcpy((char *)next + r->off, (const char *)running + r->off, r->size);
    }
}

int conf_list_contains(const char *list, const char *name)
{
    size_t n = strlen(name);
    if (!n)
        return 0;
    const char *p = list;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0)
            return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}
