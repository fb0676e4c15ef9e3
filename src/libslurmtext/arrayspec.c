/* SPDX-License-Identifier: GPL-3.0-or-later */
/* arrayspec.c - a job array's --array spec (arrayspec.h). */
#include "libslurmtext/arrayspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read decimal digits at *p (at least one) into *v, at most SLT_ARRAY_SPEC_MAX_INDEX. */
static int read_num(const char **p, uint32_t *v)
{
    uint64_t n = 0;
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9') {
        n = n * 10 + (uint64_t)(*s - '0');
        if (n > SLT_ARRAY_SPEC_MAX_INDEX)
            return -1;
        s++;
    }
    *p = s;
    *v = (uint32_t)n;
    return 0;
}

static int fail(char *msg, size_t size, const char *spec, const char *why)
{
    if (msg && size)
        snprintf(msg, size, "--array=%s: %s", spec, why);
    return -1;
}

int slt_array_spec_count(const char *spec, uint32_t *tasks, char *msg, size_t msg_size)
{
    if (!spec || !spec[0])
        return fail(msg, msg_size, "", "empty");
    unsigned char *seen = calloc(SLT_ARRAY_SPEC_MAX_INDEX / 8 + 1, 1);
    if (!seen)
        return fail(msg, msg_size, spec, "out of memory");
    uint32_t count = 0;
    const char *p = spec;
    int rc = -1;
    for (;;) {
        uint32_t a, b, step = 1;
        if (read_num(&p, &a) < 0) {
            fail(msg, msg_size, spec, "expected an index (0 to 4000000)");
            goto out;
        }
        b = a;
        if (*p == '-') {
            p++;
            if (read_num(&p, &b) < 0) {
                fail(msg, msg_size, spec, "expected a range's end (0 to 4000000)");
                goto out;
            }
            if (b < a) {
                fail(msg, msg_size, spec, "a range ends below its start");
                goto out;
            }
            if (*p == ':') {
                p++;
                if (read_num(&p, &step) < 0 || step == 0) {
                    fail(msg, msg_size, spec, "expected a positive step after ':'");
                    goto out;
                }
            }
        }
        for (uint64_t i = a; i <= b; i += step) {
            unsigned char bit = (unsigned char)(1u << (i % 8));
            if (!(seen[i / 8] & bit)) {
                seen[i / 8] |= bit;
                count++;
            }
        }
        if (*p == ',') {
            p++;
            continue;
        }
        break;
    }
    if (*p == '%') {
        uint32_t throttle;
        p++;
        if (read_num(&p, &throttle) < 0) {
            fail(msg, msg_size, spec, "expected a number after '%'");
            goto out;
        }
    }
    if (*p) {
        fail(msg, msg_size, spec, "unexpected text");
        goto out;
    }
    *tasks = count;
    rc = 0;
out:
    free(seen);
    return rc;
}

bool slt_array_spec_has(const char *spec, uint32_t task)
{
    uint32_t n;
    if (!spec || slt_array_spec_count(spec, &n, NULL, 0) < 0)
        return false;
    for (const char *p = spec;;) {
        uint32_t a = 0, b, step = 1;
        (void)read_num(&p, &a); /* well-formed: checked above */
        b = a;
        if (*p == '-') {
            p++;
            (void)read_num(&p, &b);
            if (*p == ':') {
                p++;
                (void)read_num(&p, &step);
            }
        }
        if (task >= a && task <= b && (task - a) % step == 0)
            return true;
        if (*p != ',')
            return false;
        p++;
    }
}
