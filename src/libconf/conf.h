/* SPDX-License-Identifier: GPL-3.0-or-later */
/* conf.h - allot.conf: Slurm-style `Key=Value` lines, parsed by one table (conf.c).
 *
 * Syntax: one `Key=Value` per line; `#` starts a comment; blank lines are ignored; keys are
 * case-insensitive; whitespace around key and value is dropped; a value may be quoted with
 * "..." to keep `#` or leading blanks.  An unknown key, a repeated key or a bad value is an
 * error naming file:line:key and the reason; nothing is half-applied.
 * Order of construction: defaults (the table), the file, then cross-field checks.
 *
 * The result is immutable and reference-counted: readers take a reference (conf_ref) and
 * keep a consistent view while a SIGHUP builds a new one and swaps the pointer.  Keys marked
 * reloadable take effect on reload; conf_diff() names the others so the daemon can say they
 * need a restart.
 *
 * Memory: no allocation besides the struct itself; a library (no x* wrappers): out of
 * memory is ALLOT_ENOMEM.  Threads: a struct allot_conf is read-only after construction and
 * may be shared; conf_ref/conf_unref are atomic.
 */
#ifndef ALLOT_LIBCONF_CONF_H
#define ALLOT_LIBCONF_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

#define CONF_STR_MAX 1024 /* paths, conninfo strings and comma lists */

enum conf_type {
    CONF_STRING = 0, /* free text up to CONF_STR_MAX-1 */
    CONF_ENUM,       /* one of the '|'-separated choices in `choices` */
    CONF_INT,        /* integer in [min, max] */
    CONF_BOOL,       /* yes|no|true|false|1|0 */
    CONF_LIST,       /* comma-separated user or cluster names (stored canonical: "a,b") */
    CONF_HOSTPORT,   /* "host:port" or "" (off) */
    CONF_TYPE_MAX
};

struct allot_conf {
    /* Storage (doc/design.md §9) */
    char storage_type[16];          /* "sqlite" | "pg" */
    char storage_loc[CONF_STR_MAX]; /* sqlite file path or libpq conninfo */
    int64_t storage_timeout_ms;     /* lock wait before a write fails with EUNAVAIL */
    /* Listeners */
    char listen_addr[CONF_STR_MAX];           /* "host:port"; "" = no TCP listener */
    char listen_socket[CONF_STR_MAX];         /* Unix socket path; "" = none */
    char operator_socket[CONF_STR_MAX];       /* the trusted callers' socket; "" = none */
    char operator_socket_group[CONF_STR_MAX]; /* its group; "" = allotd's own */
    int64_t connections_per_peer;             /* open connections per uid / address (http.c) */
    /* Authentication and roles (doc/design.md §8.3) */
    char auth_type[16];              /* "munge" | "none" (test builds with TestMode=local) */
    char munge_socket[CONF_STR_MAX]; /* munged's socket; "" = libmunge's default */
    int64_t socket_peer_auth;        /* 1: ListenSocket peers without a credential are their
                                      * SO_PEERCRED uid (auth.c) */
    char super_users[CONF_STR_MAX];  /* canonical comma lists of user names */
    char admins[CONF_STR_MAX];
    char operators[CONF_STR_MAX];
    char metrics_token_file[CONF_STR_MAX]; /* scrape token for per-account /metrics; "" = none */
    /* Bank behaviour */
    char time_zone[64];               /* IANA name used for period strings */
    int64_t policy_tick_interval_s;   /* policy clock period (tick.c) */
    char cluster_names[CONF_STR_MAX]; /* clusters this allotd serves; "" = any */
    char hold_mode[16];               /* "start" | "submit" */
    int64_t submit_hold_ttl_s;        /* unbound submit holds are released after it */
    int64_t whatif_max_jobs;          /* POST /v1/whatif: jobs a replay (api_whatif.c) */
    char fail_mode[16];               /* "closed" | "open" (read by the plugins) */
    char enforce_mode[16];            /* "enforce" | "observe" (allotd decides, doc/adopt.md) */
    char start_refusal[16];           /* "wait" | "cancel" (prep/allot) */
    int64_t start_retry_delay_s;      /* StartRefusal=wait: retry after this */
    /* Slurm plugins (doc/slurm.md) */
    char allotd_url[CONF_STR_MAX];     /* plugins' allotd URL; "" = ListenSocket, else ListenAddr */
    int64_t plugin_timeout_ms;         /* bound of one plugin request to allotd */
    int64_t plugin_breaker_ms;         /* FailMode without asking allotd after a timeout */
    int64_t prep_min_threads;          /* prep/allot worker pool, at least */
    int64_t prep_max_threads;          /* and at most */
    char prep_spool_dir[CONF_STR_MAX]; /* prep/allot's pending settles survive restarts here */
    /* Site factor (doc/design.md §6.4, doc/slurm.md); the reals are decimal text checked at load */
    char sf_rule[16];            /* "power" | "sigmoid" */
    int64_t sf_max;              /* Slurm site factor of a factor 1.0; 0 = no push */
    char sf_nc[32], sf_nt[32];   /* power rule exponents, >= 0 */
    char sf_lc[32], sf_lt[32];   /* sigmoid rates */
    char sf_x0c[32], sf_x0t[32]; /* sigmoid midpoints in [0, 1] */
    /* Usage, fair-share, priority (doc/design.md §6; doc/fairshare.md) */
    char fairshare_algo[16];  /* "classic" | "fair_tree" | "flux" */
    int64_t decay_halflife_s; /* PriorityDecayHalfLife; 0 = no decay */
    char usage_reset[16];     /* PriorityUsageResetPeriod: NONE..YEARLY */
    char usage_source[16];    /* "charge" (SU-minutes) | "billing" (billing-seconds) */
    int64_t fs_dampening;     /* FairShareDampeningFactor (classic) */
    char priority_type[16];   /* "slurm" | "flux" formula for `allot priority` */
    int64_t pw_age, pw_fairshare, pw_jobsize, pw_partition, pw_qos; /* PriorityWeight* */
    int64_t priority_max_age_s;                                     /* PriorityMaxAge */
    int64_t fw_fairshare, fw_queue, fw_bank, fw_urgency;            /* flux factor weights */
    /* Daemon */
    int64_t threads;             /* HTTP worker threads per listener; 0: auto (http_threads) */
    int64_t max_batch;           /* write operations per group commit */
    int64_t queue_max;           /* bounded writer queue length */
    char log_level[16];          /* error|warn|info|debug */
    char log_file[CONF_STR_MAX]; /* "" = stderr */
    char pid_file[CONF_STR_MAX]; /* "" = none */
    char test_mode[16];          /* "" | "local"; honoured only in ALLOT_TEST builds */
    /* Where it came from, for messages. */
    char path[CONF_STR_MAX];
};

/* One row of the table, exported for `allotd --help-config` and doc/allotd.md. */
struct conf_key_info {
    const char *key; /* as written in allot.conf, e.g. "StorageType" */
    enum conf_type type;
    const char *choices; /* CONF_ENUM: "sqlite|pg"; else NULL */
    int64_t min, max;    /* CONF_INT bounds */
    const char *def;     /* default, as text */
    int reloadable;      /* 1: SIGHUP applies it */
    const char *doc;     /* one line */
};

/* Parse the file at path (defaults for keys it does not set).  Returns a new conf with one
 * reference (the caller's), or NULL with err: EINVAL "FILE:LINE: Key: reason" for syntax,
 * unknown/repeated keys and bad values; EIO when the file cannot be read; ENOMEM. */
struct allot_conf *conf_load(const char *path, struct allot_error *err);
/* Same from text already in memory; name is used in messages in place of the file name. */
struct allot_conf *conf_parse_text(const char *text, const char *name, struct allot_error *err);

/* Take / drop a reference; conf_unref(NULL) is a no-op; the last unref frees. Thread-safe. */
struct allot_conf *conf_ref(struct allot_conf *c);
void conf_unref(struct allot_conf *c);

/* Compare two confs: call cb for each key whose value differs, with its reloadable flag.
 * Returns the number of differing keys that are NOT reloadable. */
typedef void (*conf_diff_f)(const char *key, int reloadable, void *arg);
int conf_diff(const struct allot_conf *a, const struct allot_conf *b, conf_diff_f cb, void *arg);

/* Copy every key that is not reloadable from running into next, so that a conf swapped in
 * on SIGHUP says what actually runs (and the next reload is compared against that). */
void conf_keep_fixed(struct allot_conf *next, const struct allot_conf *running);

/* 1 if name is one of the entries of a canonical comma list (CONF_LIST value). */
int conf_list_contains(const char *list, const char *name);

/* Split "host:port" (port 1..65535); host copied into host[hostsz].  -1 with err on bad
 * input. */
int conf_hostport_split(const char *s, char *host, size_t hostsz, int *port,
                        struct allot_error *err);

/* The table: number of keys and row i (0 <= i < conf_key_count()); NULL out of range. */
int conf_key_count(void);
const struct conf_key_info *conf_key_at(int i);
/* Name of a conf_type ("string", "int", ...). */
const char *conf_type_name(enum conf_type t);

#endif
