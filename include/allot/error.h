/* SPDX-License-Identifier: GPL-3.0-or-later */
/* error.h - allot's one error type, shared by every library, the daemon and the tools.
 *
 * A fallible function returns 0 / -1 (or a pointer / NULL) and fills an optional
 * `struct allot_error *err` with a code and a message a person can act on, naming the
 * field or object at fault.  allot_errorf() returns -1 so callers write
 * `return allot_errorf(err, ALLOT_EINVAL, "su: must be positive");`.
 * One table (error.c) maps each code to its text, HTTP status and CLI exit status.
 * Thread rule: a struct allot_error belongs to one thread.
 */
#ifndef ALLOT_ALLOT_ERROR_H
#define ALLOT_ALLOT_ERROR_H

#include <stdarg.h>

enum allot_errnum {
    ALLOT_OK = 0,
    ALLOT_EINVAL,    /* malformed or out-of-range input; message names the field */
    ALLOT_ENOENT,    /* the named object does not exist */
    ALLOT_EEXIST,    /* an object with that key already exists */
    ALLOT_ECONFLICT, /* valid input that contradicts stored state (overlap, cycle, in use) */
    ALLOT_EFUNDS,    /* the allocation cannot cover the amount (admit / hold) */
    ALLOT_ELIMIT,    /* a submit-time limit refuses the job */
    ALLOT_EAUTH,     /* no, forged, expired or replayed credential */
    ALLOT_EPERM,     /* authenticated but not allowed */
    ALLOT_ENOMEM,    /* out of memory (libraries only; programs abort) */
    ALLOT_EIO,       /* storage or system I/O failed; nothing was changed */
    ALLOT_EUNAVAIL,  /* a dependency (database, daemon) is unreachable; retry later */
    ALLOT_ETOOBIG,   /* request or value larger than allowed */
    ALLOT_EPROTO,    /* the peer answered something that is not the protocol */
    ALLOT_EINTERNAL, /* a bug: an invariant failed */
    ALLOT_EINDOUBT,  /* the change may or may not have been committed (the answer to its
                      * COMMIT was lost); an idempotent request, sent again, answers what
                      * stands (doc/api.md "Outcome unknown") */
    ALLOT_ERRNUM_MAX
};

#define ALLOT_ERRMSG_MAX 512

struct allot_error {
    enum allot_errnum code;
    char msg[ALLOT_ERRMSG_MAX];
};

/* Fill err (if non-NULL) with code and a printf-style message.  Always returns -1.
 * errno is preserved. */
int allot_errorf(struct allot_error *err, enum allot_errnum code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int allot_verrorf(struct allot_error *err, enum allot_errnum code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Prefix err->msg with "prefix: " (context added while an error travels up).  Returns -1. */
int allot_error_prefix(struct allot_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reset to ALLOT_OK with an empty message. */
void allot_error_clear(struct allot_error *err);

/* Static text for a code ("invalid argument", ...); never NULL. */
const char *allot_strerror(enum allot_errnum code);
/* Machine name for a code ("EINVAL", ...), used in JSON error bodies; never NULL. */
const char *allot_errname(enum allot_errnum code);
/* Inverse of allot_errname(); ALLOT_EPROTO for an unknown name. */
enum allot_errnum allot_errnum_from_name(const char *name);
/* HTTP status for a code (400, 404, 409, 402, 403, 401, 500, 503, 413, 502); EINDOUBT is 503
 * as EUNAVAIL, told apart by its name in the body. */
int allot_error_http_status(enum allot_errnum code);
/* CLI exit status for a code: 0 ok, 1 refused (funds/limits), 2 usage/invalid,
 * 3 not found / conflict, 4 auth / permission, 5 unavailable / I/O / internal / in doubt. */
int allot_error_exit_status(enum allot_errnum code);

#endif
