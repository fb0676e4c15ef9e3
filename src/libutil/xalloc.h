/* SPDX-License-Identifier: GPL-3.0-or-later */
/* xalloc.h - allocation for programs (allotd, allot, allot-agent, allot step): on failure
 * print a message and abort, so callers never carry an out-of-memory path they cannot test.
 * Libraries that run inside other processes (libcore, liballot, libslurmtext, plugins) must
 * not use these; they return ALLOT_ENOMEM instead.  Every function is thread-safe. */
#ifndef ALLOT_LIBUTIL_XALLOC_H
#define ALLOT_LIBUTIL_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* asprintf that aborts on failure; result is the caller's. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
