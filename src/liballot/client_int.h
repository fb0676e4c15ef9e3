/* SPDX-License-Identifier: GPL-3.0-or-later */
/* client_int.h - liballot internals shared by its files and its unit tests; not installed,
 * not exported (the version script keeps only allot_* symbols in liballot.so).
 *
 * These functions are pure (no I/O, no globals) so the unit tests can drive them with
 * tables of inputs.  Thread rule: reentrant.
 */
#ifndef ALLOT_LIBALLOT_CLIENT_INT_H
#define ALLOT_LIBALLOT_CLIENT_INT_H

#include <stddef.h>

#include "allot/error.h"

/* Parse a client URL (allot.h allot_client_create).  On success *base is the URL libcurl
 * requests are built on ("http://127.0.0.1:8760", or "http://localhost" for a Unix socket,
 * never ending in '/') and *socket_path the Unix socket path or NULL; both malloc'd, the
 * caller frees them.  Returns -1 with err EINVAL (naming "url") or ENOMEM, outputs untouched. */
int client_url_parse(const char *url, char **base, char **socket_path, struct allot_error *err);

/* Turn a non-2xx reply into an error: body `{"error":{"code","message","field"}}` gives the
 * code (allot_errnum_from_name) and the message, prefixed with "field: " unless the message
 * already starts with the field's name; otherwise the code follows the HTTP status and the
 * message quotes the start of the body.  Always returns -1. */
int client_reply_error(int http_status, const char *body, struct allot_error *err);

/* 1 when an error reply says the same request may be sent again to find out its outcome
 * (EINDOUBT with "retry_safe":true: an idempotent verb whose COMMIT answer was lost). */
int client_retry_safe(const char *body);

/* Why a connect to the Unix socket at path failed (socket_why.c): the errno of one
 * non-blocking connect of our own, 0 when it connected (or would). */
int client_socket_errno(const char *path);

/* "connect to unix socket PATH: no such file (is allotd running, ...?)": the socket, the
 * cause os_errno stands for and what to check, into buf (truncated to size). */
void client_socket_why(const char *path, int os_errno, char *buf, size_t size);

/* The allot_errnum an HTTP error status stands for when the body does not say. */
enum allot_errnum client_status_errnum(int http_status);

#endif
