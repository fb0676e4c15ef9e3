/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plugin_conf.h - what allot's Slurm plugins read from allot.conf, and their allotd client.
 *
 * Design: the plugins read the same allot.conf as allotd (libconf, one parser), found at
 * $ALLOT_CONF or /etc/allot/allot.conf.  They keep only the few values they use in a plain
 * struct, copied once: slurmctld's threads then read it without locks.  The URL is
 * AllotdUrl, else unix:OperatorSocket, else unix:ListenSocket, else http://ListenAddr, so a
 * controller that also runs allotd needs no extra key.
 * No Slurm headers here: both plugins and the unit tests use it.
 * Threads: reentrant; the struct is plain data.
 */
#ifndef ALLOT_PLUGINS_COMMON_PLUGIN_CONF_H
#define ALLOT_PLUGINS_COMMON_PLUGIN_CONF_H

#include <stdint.h>

#include "allot/allot.h"
#include "allot/error.h"

#define PLUGIN_CONF_DEFAULT_PATH "/etc/allot/allot.conf"
#define PLUGIN_PATH_MAX 1024

typedef struct plugin_conf {
    char path[PLUGIN_PATH_MAX];         /* the file it came from */
    char url[PLUGIN_PATH_MAX];          /* allotd, as liballot takes it */
    char munge_socket[PLUGIN_PATH_MAX]; /* "" = libmunge's default */
    int fail_open;                      /* FailMode=open */
    int hold_at_submit;                 /* HoldMode=submit */
    int peer_auth;                      /* SocketPeerAuth=yes and url is unix: (no MUNGE) */
    long timeout_ms;                    /* PluginTimeoutMs */
    long breaker_ms;                    /* PluginBreakerMs (breaker.h); 0 = off */
    int min_threads, max_threads;       /* PrEpMinThreads, PrEpMaxThreads */
    char spool_dir[PLUGIN_PATH_MAX];    /* PrEpSpoolDir */
    int start_cancel;                   /* StartRefusal=cancel (else wait) */
    int start_retry_s;                  /* StartRetryDelay */
} plugin_conf_t;

/*
 * plugin_conf_load - read allot.conf at PATH (NULL: $ALLOT_CONF, else the default path)
 * into *OUT.  0 on success; -1 with ERR (EIO: no such file, EINVAL: a bad line, named by
 * file:line:key) and *OUT untouched.
 */
int plugin_conf_load(const char *path, plugin_conf_t *out, struct allot_error *err);

/*
 * plugin_client_create - a liballot client for CONF: its URL, timeout, munged socket and
 * authentication (ALLOT_AUTH_PEER when conf->peer_auth, else a MUNGE credential per request).
 * Returns a handle the caller destroys with allot_client_destroy(), or NULL with ERR.
 */
allot_client_t *plugin_client_create(const plugin_conf_t *conf, struct allot_error *err);

#endif
