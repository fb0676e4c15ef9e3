/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_watch.c - the partition change watch of store.h, on both backends.
 *
 * PostgreSQL notifies: the trigger of schema 0014 sends a notification with every committed
 * change, and this connection LISTENs for it.  SQLite has no notifications between
 * processes, so its watch looks: every STORE_PART_POLL_MS it reads the whole partitions
 * table (a few rows) and compares a digest of it with the previous look.  A change is then
 * reported at most one poll late, whoever committed it (this process, another allotd on
 * the same file, the sqlite3 shell); allotd's own changes need no poll, partcache_changed
 * drops its cache before the reply.  A change undone before the next look (A -> B -> A)
 * goes unreported, which is right for a cache: what it holds is current again.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "libstore/store_int.h"

#define STORE_PART_POLL_MS 250

/* FNV-1a, 64 bits, over a field and its terminating NUL, so that field boundaries count. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return fnv(h, s, strlen(s) + 1);
}

static int digest_one(const struct partition *p, void *arg)
{
    uint64_t *h = arg;
    int64_t n[3] = {p->max_tres, p->default_time_s, p->max_time_s};
    *h = fnv_str(*h, p->cluster);
    *h = fnv_str(*h, p->name);
    *h = fnv_str(*h, p->resource);
    *h = fnv_str(*h, p->billing_weights);
    *h = fnv_str(*h, p->qos);
    *h = fnv(*h, n, sizeof n);
    return 0;
}

static int partitions_digest(store_t *st, uint64_t *out, struct allot_error *err)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    if (store_partition_list(st, NULL, digest_one, &h, err) < 0) {
        err->code = ALLOT_EUNAVAIL; /* the caller starts over on a new store */
        return -1;
    }
    *out = h;
    return 0;
}

int store_watch_partitions(store_t *st, struct allot_error *err)
{
    if (st->in_tx)
        return allot_errorf(err, ALLOT_EINTERNAL, "store_watch_partitions: inside a transaction");
    if (strcmp(st->backend, "sqlite") == 0)
        return partitions_digest(st, &st->part_digest, err);
    return db_listen(st->db, "allot_partitions", err);
}

int store_wait_partitions(store_t *st, int wake_fd, int timeout_ms, struct allot_error *err)
{
    if (strcmp(st->backend, "sqlite") != 0)
        return db_wait_notify(st->db, wake_fd, timeout_ms, err);
    struct pollfd p = {.fd = wake_fd, .events = POLLIN};
    int ms = timeout_ms < STORE_PART_POLL_MS ? timeout_ms : STORE_PART_POLL_MS;
    int rc = poll(&p, wake_fd >= 0 ? 1 : 0, ms);
    if (rc < 0 && errno != EINTR)
        return allot_errorf(err, ALLOT_EINTERNAL, "partition watch: poll: %s", strerror(errno));
    if (rc != 0)
        return 0; /* woken (or interrupted): the caller decides whether to go on */
    uint64_t now;
    if (partitions_digest(st, &now, err) < 0)
        return -1;
    int changed = now != st->part_digest;
    st->part_digest = now;
    return changed;
}
