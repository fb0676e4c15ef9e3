/* SPDX-License-Identifier: GPL-3.0-or-later */
/* error.c - the code table and the formatting helpers of include/allot/error.h. */
#include "allot/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    const char *text;
    int http;
    int exit;
} codes[ALLOT_ERRNUM_MAX] = {
    [ALLOT_OK] = {"OK", "success", 200, 0},
    [ALLOT_EINVAL] = {"EINVAL", "invalid argument", 400, 2},
    [ALLOT_ENOENT] = {"ENOENT", "not found", 404, 3},
    [ALLOT_EEXIST] = {"EEXIST", "already exists", 409, 3},
    [ALLOT_ECONFLICT] = {"ECONFLICT", "conflicts with stored state", 409, 3},
    [ALLOT_EFUNDS] = {"EFUNDS", "insufficient allocation balance", 402, 1},
    [ALLOT_ELIMIT] = {"ELIMIT", "job exceeds a limit", 403, 1},
    [ALLOT_EAUTH] = {"EAUTH", "authentication failed", 401, 4},
    [ALLOT_EPERM] = {"EPERM", "permission denied", 403, 4},
    [ALLOT_ENOMEM] = {"ENOMEM", "out of memory", 500, 5},
    [ALLOT_EIO] = {"EIO", "I/O error", 500, 5},
    [ALLOT_EUNAVAIL] = {"EUNAVAIL", "service unavailable", 503, 5},
    [ALLOT_ETOOBIG] = {"ETOOBIG", "too large", 413, 2},
    [ALLOT_EPROTO] = {"EPROTO", "protocol error", 502, 5},
    [ALLOT_EINTERNAL] = {"EINTERNAL", "internal error", 500, 5},
    [ALLOT_EINDOUBT] = {"EINDOUBT", "outcome unknown", 503, 5},
};

static int valid(enum allot_errnum code)
{
    return (int)code >= 0 && code < ALLOT_ERRNUM_MAX;
}

int allot_verrorf(struct allot_error *err, enum allot_errnum code, const char *fmt, va_list ap)
{
    int saved = errno;
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    }
    errno = saved;
    return -1;
}

int allot_errorf(struct allot_error *err, enum allot_errnum code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    allot_verrorf(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

int allot_error_prefix(struct allot_error *err, const char *fmt, ...)
{
    int saved = errno;
    if (err) {
        char pre[ALLOT_ERRMSG_MAX];
        char old[ALLOT_ERRMSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(pre, sizeof(pre), fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof(old));
        /* Truncation is acceptable: the message stays a valid, bounded string. */
        size_t n = strnlen(pre, sizeof(pre) - 1);
        if (n > sizeof(err->msg) - 3)
            n = sizeof(err->msg) - 3;
        memcpy(err->msg, pre, n);
        memcpy(err->msg + n, ": ", 2);
        size_t rest = sizeof(err->msg) - n - 3;
        size_t m = strnlen(old, rest);
        memcpy(err->msg + n + 2, old, m);
        err->msg[n + 2 + m] = '\0';
    }
    errno = saved;
    return -1;
}

void allot_error_clear(struct allot_error *err)
{
    if (err) {
        err->code = ALLOT_OK;
        err->msg[0] = '\0';
    }
}

const char *allot_strerror(enum allot_errnum code)
{
    return valid(code) ? codes[code].text : "unknown error";
}

const char *allot_errname(enum allot_errnum code)
{
    return valid(code) ? codes[code].name : "EINTERNAL";
}

enum allot_errnum allot_errnum_from_name(const char *name)
{
    for (int i = 0; name && i < ALLOT_ERRNUM_MAX; i++)
        if (strcmp(codes[i].name, name) == 0)
            return (enum allot_errnum)i;
    return ALLOT_EPROTO;
}

int allot_error_http_status(enum allot_errnum code)
{
    return valid(code) ? codes[code].http : 500;
}

int allot_error_exit_status(enum allot_errnum code)
{
    return valid(code) ? codes[code].exit : 5;
}
