/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_duration.c - slt_duration_parse: on success parse(format(x)) == x; on failure the
 * output is untouched and the error names the field. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/duration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct slt_duration d, sentinel;
    memset(&d, 0xa5, sizeof(d));
    sentinel = d;
    struct allot_error err = {0};
    if (slt_duration_parse((const char *)data, size, "F", &d, &err) < 0) {
        if (memcmp(&d, &sentinel, sizeof(d)) != 0 || strncmp(err.msg, "F:", 2) != 0)
            abort();
        return 0;
    }
    char buf[48];
    int n = slt_duration_format(&d, buf, sizeof(buf), &err);
    if (n < 0)
        abort();
    struct slt_duration again;
    if (slt_duration_parse(buf, (size_t)n, "F", &again, &err) < 0 || again.kind != d.kind ||
        (d.kind == SLT_DUR_VALUE && again.ms != d.ms) || d.ms < 0)
        abort();
    return 0;
}
