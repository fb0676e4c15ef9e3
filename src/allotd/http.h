/* SPDX-License-Identifier: GPL-3.0-or-later */
/* http.h - allotd's HTTP server: libmicrohttpd with an internal pool of Threads workers per
 * listener, a TCP listener (ListenAddr) and a Unix-socket listener (ListenSocket, our own
 * bound AF_UNIX socket handed to MHD), 64 KiB body limit (413), keep-alive.
 * Writes suspend their connection while the group commit runs (writer.h), so workers are
 * never blocked on an fsync.
 * Threads: http_start/http_quiesce/http_stop from the main thread only.
 */
#ifndef ALLOTD_HTTP_H
#define ALLOTD_HTTP_H

#include "allot/error.h"
#include "allotd/allotd.h"

/* Bind the listeners and start serving.  NULL with err (EIO naming the address). */
struct http *http_start(struct allotd *d, const struct allot_conf *c, struct allot_error *err);
/* Stop accepting new connections (in-flight requests go on). */
void http_quiesce(struct http *h);
/* Stop the workers and close every connection and listener; remove the Unix socket.
 * NULL is a no-op. */
void http_stop(struct http *h);

#endif
