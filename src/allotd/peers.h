/* SPDX-License-Identifier: GPL-3.0-or-later */
/* peers.h - open connections per peer on a public listener, so that one local user cannot
 * hold every connection allotd accepts (doc/allotd.md "Connections").
 *
 * A peer is a uid on the Unix socket (SO_PEERCRED) or an address on TCP; the caller turns
 * it into a 64-bit key.  The table is fixed (PEERS_SLOTS keys with connections at once,
 * open addressing); a key that finds no free slot is refused like one over its cap, which
 * only a host with thousands of distinct peers connected at once would see.
 * Threads: every function takes the table's mutex; MHD's threads call it per connection,
 * never per request. */
#ifndef ALLOT_ALLOTD_PEERS_H
#define ALLOT_ALLOTD_PEERS_H

#include <stdint.h>

#define PEERS_SLOTS 8192

struct peers;

struct peers *peers_new(int per_peer_max);
void peers_free(struct peers *p); /* NULL is a no-op */
/* Count one more connection of key: 1 when it is within the cap (the caller must call
 * peers_leave when it closes), 0 when refused (nothing counted). */
int peers_enter(struct peers *p, uint64_t key);
void peers_leave(struct peers *p, uint64_t key);
/* Connections of key now (tests). */
int peers_count(struct peers *p, uint64_t key);

#endif
