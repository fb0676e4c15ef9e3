/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exitcode.c - parse and format "exit:signal" (see exitcode.h). */
#include "libslurmtext/exitcode.h"

#include <stdio.h>
#include <string.h>

#include "libslurmtext/field.h"

int slt_exitcode_parse(const char *text, size_t n, const char *field, struct slt_exitcode *out,
                       struct allot_error *err)
{
    struct slt_span s = {text, n};
    if (n == 0) {
        out->has = false;
        out->status = 0;
        out->signal = 0;
        return 0;
    }
    const char *colon = memchr(text, ':', n);
    uint64_t st, sig;
    if (!colon || slt_uint(text, (size_t)(colon - text), 255, &st) < 0 ||
        slt_uint(colon + 1, n - (size_t)(colon - text) - 1, 255, &sig) < 0)
        return slt_field_error(err, field, "invalid exit code", s);
    out->has = true;
    out->status = (int)st;
    out->signal = (int)sig;
    return 0;
}

int slt_exitcode_format(const struct slt_exitcode *e, char *buf, size_t len,
                        struct allot_error *err)
{
    char tmp[16];
    int n = 0;
    tmp[0] = '\0';
    if (e->has) {
        if (e->status < 0 || e->status > 255 || e->signal < 0 || e->signal > 255)
            return allot_errorf(err, ALLOT_EINVAL, "exit code: %d:%d out of range", e->status,
                                e->signal);
        n = snprintf(tmp, sizeof(tmp), "%d:%d", e->status, e->signal);
    }
    if ((size_t)n >= len)
        return allot_errorf(err, ALLOT_ETOOBIG, "exit code: buffer of %zu bytes too small", len);
    memcpy(buf, tmp, (size_t)n + 1);
    return n;
}
