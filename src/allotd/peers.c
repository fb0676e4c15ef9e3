/* SPDX-License-Identifier: GPL-3.0-or-later */
/* peers.c - per-peer connection counts (peers.h).
 *
 * Open addressing with linear probing over PEERS_SLOTS slots; a slot whose count drops to
 * zero keeps its key as a tombstone until a new key reuses it, so probe chains stay
 * intact without rehashing.  Connections come and go at most a few thousand times a
 * second, so one mutex is enough. */
#include "allotd/peers.h"

#include <pthread.h>
#include <stdlib.h>

#include "libutil/xalloc.h"

struct slot {
    uint64_t key;
    int used;  /* a key was ever stored here (the probe chain passes through) */
    int count; /* its open connections; 0: free for another key */
};

struct peers {
    pthread_mutex_t lock;
    int max;
    struct slot slot[PEERS_SLOTS];
};

struct peers *peers_new(int per_peer_max)
{
    struct peers *p = xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    p->max = per_peer_max;
    return p;
}

void peers_free(struct peers *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

/* The slot holding key with connections, or NULL; *free_slot: the first reusable slot
 * met on the way (count 0), for an insert. */
static struct slot *find(struct peers *p, uint64_t key, struct slot **free_slot)
{
    *free_slot = NULL;
    size_t i = (size_t)(mix(key) % PEERS_SLOTS);
    for (size_t n = 0; n < PEERS_SLOTS; n++, i = (i + 1) % PEERS_SLOTS) {
        struct slot *s = &p->slot[i];
        if (s->count > 0 && s->key == key)
            return s;
        if (s->count == 0 && !*free_slot)
            *free_slot = s;
        if (!s->used)
            break; /* the end of the chain: key is not further on */
    }
    return NULL;
}

int peers_enter(struct peers *p, uint64_t key)
{
    int ok = 0;
    pthread_mutex_lock(&p->lock);
    struct slot *fs, *s = find(p, key, &fs);
    if (s) {
        if (s->count < p->max) {
            s->count++;
            ok = 1;
        }
    } else if (fs && p->max > 0) {
        fs->key = key;
        fs->used = 1;
        fs->count = 1;
        ok = 1;
    }
    pthread_mutex_unlock(&p->lock);
    return ok;
}

void peers_leave(struct peers *p, uint64_t key)
{
    pthread_mutex_lock(&p->lock);
    struct slot *fs, *s = find(p, key, &fs);
    if (s)
        s->count--;
    pthread_mutex_unlock(&p->lock);
}

int peers_count(struct peers *p, uint64_t key)
{
    pthread_mutex_lock(&p->lock);
    struct slot *fs, *s = find(p, key, &fs);
    int n = s ? s->count : 0;
    pthread_mutex_unlock(&p->lock);
    return n;
}
