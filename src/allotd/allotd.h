/* SPDX-License-Identifier: GPL-3.0-or-later */
/* allotd.h - the daemon's context, passed to every module (no process-wide server struct).
 *
 * struct allotd is built by main.c in order (conf, log, store check, metrics, partition
 * cache, writer, tick, http) and torn down in reverse.  The configuration is swapped on SIGHUP:
 * readers take a reference with allotd_conf_get() and drop it with conf_unref(); conf_lock only
 * guards the pointer swap. Lock order: conf_lock is a leaf (never held while taking another lock).
 */
#ifndef ALLOT_ALLOTD_ALLOTD_H
#define ALLOT_ALLOTD_ALLOTD_H

#include <pthread.h>
#include <stdint.h>

#include "libconf/conf.h"
#include "libstore/store.h"

struct writer;
struct http;
struct metrics;
struct partcache;

struct allotd {
    const char *conf_path;
    pthread_mutex_t conf_lock;
    struct allot_conf *conf;       /* current configuration; swapped on SIGHUP */
    struct allot_conf *boot_conf;  /* a reference to the startup conf, which store_cfg's */
    struct store_config store_cfg; /* strings point into (storage keys need a restart) */
    int test_local;                /* TestMode=local in an ALLOT_TEST build */
    int auth_none;                 /* AuthType=none (only with test_local) */
    int schema_version;            /* schema at startup */
    struct writer *writer;
    struct http *http;
    struct metrics *metrics;
    struct partcache *partcache; /* partitions for pricing (partcache.h) */
    struct tokens *tokens;       /* the dashboard's bearer tokens (tokens.h) */
};

/* The current configuration with a reference the caller drops with conf_unref().
 * Thread-safe. */
struct allot_conf *allotd_conf_get(struct allotd *d);

/* The calling thread's read connection (opened on first use, closed when the thread exits).
 * Borrowed: valid until the thread ends.  NULL with err (EUNAVAIL/EIO) when it cannot open.
 * Threads: HTTP workers and other non-writer threads. */
store_t *allotd_reader(struct allotd *d, struct allot_error *err);

/* Once, single-threaded, before any thread calls allotd_reader().  -1 when it cannot. */
int allotd_readers_init(void);

#endif
