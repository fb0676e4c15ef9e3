/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_squeue.c - st_squeue_find_step over arbitrary output: returns -1/0/1 only, sets the
 * step only when it returns 1, and the step it returns is one of a line "12.<step>|name". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/squeue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t step = 0xdeadbeef;
    int rc = st_squeue_find_step((const char *)data, size, 12, "a", &step, NULL);
    if (rc < -1 || rc > 1 || (rc != 1 && step != 0xdeadbeef))
        abort();
    if (rc == 1) {
        char needle[32];
        int n = snprintf(needle, sizeof(needle), "12.%u|a", step);
        if (!memmem(data, size, needle, (size_t)n))
            abort();
    }
    return 0;
}
