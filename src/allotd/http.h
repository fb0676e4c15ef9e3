/* SPDX-License-Identifier: GPL-3.0-or-later */
/* http.h - allotd's HTTP server: libmicrohttpd with an internal pool of Threads workers per
 * listener, a TCP listener (ListenAddr) and a Unix-socket listener (ListenSocket, our own
 * bound AF_UNIX socket handed to MHD), 64 KiB body limit (413), keep-alive.
 * Writes suspend their connection while the group commit runs (writer.h), so workers are
 * never blocked on an fsync.
 * Threads: http_start/http_quiesce/http_stop from the main thread only.
 */
#ifndef ALLOT_ALLOTD_HTTP_H
#define ALLOT_ALLOTD_HTTP_H

#include "allot/error.h"
#include "allotd/allotd.h"

/* HTTP worker threads per listener: Threads, or when it is 0 (auto) the number of CPUs on
 * SQLite, whose handlers never wait for the database (reads run in-process, writes are
 * queued to the writer and the connection suspended), and 4 x that on PostgreSQL, whose
 * reads wait for round trips.  More threads than a handler needs cost more wake-ups per
 * request: with 8 per listener on 2 cores, 32 connections sometimes spread over all of them
 * and the HTTP work per request rose by half (bench/results/bank.md,
 * 2026-11-24, 03ea179..b368fca). */
unsigned http_threads(const struct allot_conf *c);
/* Bind the listeners and start serving.  NULL with err (EIO naming the address). */
struct http *http_start(struct allotd *d, const struct allot_conf *c, struct allot_error *err);
/* Stop accepting new connections (in-flight requests go on). */
void http_quiesce(struct http *h);
/* Stop the workers and close every connection and listener; remove the Unix socket.
 * NULL is a no-op. */
void http_stop(struct http *h);

#endif
