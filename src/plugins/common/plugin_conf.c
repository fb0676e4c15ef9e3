/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plugin_conf.c - allot.conf for the Slurm plugins (plugin_conf.h): libconf parses, this
 * file copies the plugin's keys out and derives the URL.
 */
#include "plugins/common/plugin_conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libconf/conf.h"

static int fits(char *dst, size_t size, const char *src)
{
    int n = snprintf(dst, size, "%s", src);
    return n >= 0 && (size_t)n < size;
}

int plugin_conf_load(const char *path, plugin_conf_t *out, struct allot_error *err)
{
    plugin_conf_t pc;
    struct allot_conf *c;
    int rc = -1;

    if (!path || !path[0])
        path = getenv("ALLOT_CONF");
    if (!path || !path[0])
        path = PLUGIN_CONF_DEFAULT_PATH;
    c = conf_load(path, err);
    if (!c)
        return -1;
    memset(&pc, 0, sizeof(pc));
    if (!fits(pc.path, sizeof(pc.path), path)) {
        allot_errorf(err, ALLOT_EINVAL, "%s: path too long", path);
        goto out;
    }
    if (c->allotd_url[0]) {
        if (!fits(pc.url, sizeof(pc.url), c->allotd_url))
            goto toolong;
    } else if (c->operator_socket[0] || c->listen_socket[0]) {
        /* OperatorSocket first: no other local user can fill its connections. */
        const char *sock = c->operator_socket[0] ? c->operator_socket : c->listen_socket;
        if (snprintf(pc.url, sizeof(pc.url), "unix:%s", sock) >= (int)sizeof(pc.url))
            goto toolong;
    } else if (snprintf(pc.url, sizeof(pc.url), "http://%s", c->listen_addr) >=
               (int)sizeof(pc.url)) {
        goto toolong;
    }
    if (!fits(pc.munge_socket, sizeof(pc.munge_socket), c->munge_socket) ||
        !fits(pc.spool_dir, sizeof(pc.spool_dir), c->prep_spool_dir))
        goto toolong;
    pc.fail_open = strcmp(c->fail_mode, "open") == 0;
    pc.hold_at_submit = strcmp(c->hold_mode, "submit") == 0;
    /* Same key as allotd's: on its Unix socket the kernel tells allotd that we are
     * slurmctld's uid, so the two munged round trips per request are not needed. */
    pc.peer_auth = c->socket_peer_auth && strncmp(pc.url, "unix:", 5) == 0;
    pc.timeout_ms = (long)c->plugin_timeout_ms;
    pc.breaker_ms = (long)c->plugin_breaker_ms;
    pc.min_threads = (int)c->prep_min_threads;
    pc.max_threads = (int)c->prep_max_threads;
    pc.start_cancel = strcmp(c->start_refusal, "cancel") == 0;
    pc.start_retry_s = (int)c->start_retry_delay_s;
    *out = pc;
    rc = 0;
    goto out;
toolong:
    allot_errorf(err, ALLOT_EINVAL, "%s: AllotdUrl, MungeSocket or PrEpSpoolDir: too long", path);
out:
    conf_unref(c);
    return rc;
}

allot_client_t *plugin_client_create(const plugin_conf_t *conf, struct allot_error *err)
{
    allot_client_t *c = allot_client_create(conf->url, err);

    if (!c)
        return NULL;
    if (allot_client_set_timeout_ms(c, conf->timeout_ms, err) < 0 ||
        allot_client_set_auth(c, conf->peer_auth ? ALLOT_AUTH_PEER : ALLOT_AUTH_MUNGE, err) < 0 ||
        (conf->munge_socket[0] && allot_client_set_munge_socket(c, conf->munge_socket, err) < 0)) {
        allot_client_destroy(c);
        return NULL;
    }
    return c;
}
