/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_memory.c - slt_memory_parse (bare unit from the first byte): parse(format(x)) == x;
 * outputs untouched on failure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/memory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int64_t unit = (data[0] & 1) ? 1 : 1 << 20;
    struct slt_memory m, sentinel;
    memset(&m, 0x5a, sizeof(m));
    sentinel = m;
    struct allot_error err = {0};
    if (slt_memory_parse((const char *)data + 1, size - 1, "F", unit, &m, &err) < 0) {
        if (memcmp(&m, &sentinel, sizeof(m)) != 0)
            abort();
        return 0;
    }
    char buf[40];
    int n = slt_memory_format(&m, buf, sizeof(buf), &err);
    if (n < 0 || m.bytes < 0)
        abort();
    struct slt_memory again;
    if (slt_memory_parse(buf, (size_t)n, "F", 1, &again, &err) < 0 || again.has != m.has ||
        again.bytes != m.bytes || again.scope != m.scope)
        abort();
    return 0;
}
