/* SPDX-License-Identifier: GPL-3.0-or-later */
/* host_cond.h - the host conditions every benchmark prints before its own numbers.
 *
 * A durable commit costs at least one fdatasync and a request through allotd at least one
 * loopback HTTP round trip, so the same code measures several times faster or slower from one
 * host to the next.  Printed first, these two floors let a figure be read against the host
 * it was taken on:
 * - fdatasync: 4 KiB appended and fdatasync'ed HOST_FSYNC_SAMPLES times in a directory
 *   (the one the bench's database lives in); p50, p99 and max in microseconds.
 * - HTTP floor: one keep-alive loopback TCP connection to a minimal HTTP/1.1 responder in a
 *   thread of the same process (no parsing, no storage), HOST_HTTP_SAMPLES GET round trips;
 *   p50, p99 and the rate.  No server can answer faster on this host.
 * Threads: call from one thread; it starts and joins its own.
 */
#ifndef ALLOT_BENCH_HOST_COND_H
#define ALLOT_BENCH_HOST_COND_H

#include <stdio.h>

#define HOST_FSYNC_SAMPLES 200
#define HOST_HTTP_SAMPLES 5000

/* Print "host: fdatasync ..." for a file in dir and "host: HTTP floor ..." to out, one line
 * each ("... unavailable: reason" when a step fails).  Returns 0, or -1 when a probe failed
 * (its line says why). */
int host_cond_print(FILE *out, const char *dir);

#endif
