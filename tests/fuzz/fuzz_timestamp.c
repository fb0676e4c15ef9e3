/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_timestamp.c - slt_time_parse: format gives back the input exactly (19 fixed-width
 * bytes or a word); fixed-offset conversion never fails for a VALUE. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/timestamp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct slt_time t, sentinel;
    memset(&t, 0x3c, sizeof(t));
    sentinel = t;
    if (slt_time_parse((const char *)data, size, "F", &t, NULL) < 0) {
        if (memcmp(&t, &sentinel, sizeof(t)) != 0)
            abort();
        return 0;
    }
    char buf[32];
    int n = slt_time_format(&t, buf, sizeof(buf), NULL);
    if (n < 0 || (size_t)n != size || memcmp(buf, data, size) != 0)
        abort();
    if (t.kind == SLT_TIME_VALUE) {
        struct slt_tz utc = {SLT_TZ_OFFSET, 0};
        int64_t e;
        if (slt_time_to_epoch(&t, &utc, &e, NULL) < 0 || e < 0)
            abort();
    }
    return 0;
}
