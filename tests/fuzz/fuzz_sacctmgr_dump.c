/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_sacctmgr_dump.c - a `sacctmgr dump` file walked record by record: a failure leaves
 * the record untouched, every span lies inside the input, the line numbers only grow, and
 * an Account/User record always has a parent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/sacctmgr_dump.h"

static void inside(const uint8_t *data, size_t size, struct slt_span s)
{
    if (s.n && ((const uint8_t *)s.p < data || (const uint8_t *)s.p + s.n > data + size))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct slt_dump_cursor c;
    slt_dump_cursor_init(&c, (const char *)data, size);
    struct slt_dump_record r, sentinel;
    memset(&sentinel, 0x33, sizeof sentinel);
    long line, last = 0;
    struct slt_span parent;
    int rc;
    for (;;) {
        r = sentinel;
        rc = slt_dump_next(&c, &r, &line, &parent, NULL);
        if (rc != 1)
            break;
        if (line <= last)
            abort();
        last = line;
        inside(data, size, r.name);
        if (r.name.n == 0 || r.n > SLT_DUMP_OPTS_MAX)
            abort();
        for (size_t i = 0; i < r.n; i++) {
            inside(data, size, r.opt[i].key);
            inside(data, size, r.opt[i].value);
            if (r.opt[i].key.n == 0)
                abort();
        }
        if ((r.kind == SLT_DUMP_ACCOUNT || r.kind == SLT_DUMP_USER) && parent.n == 0)
            abort();
    }
    if (rc < 0 && memcmp(&r, &sentinel, sizeof r) != 0)
        abort();
    return 0;
}
