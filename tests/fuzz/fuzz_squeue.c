/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_squeue.c - slt_squeue_find_step over arbitrary output: returns -1/0/1 only, sets the
 * step only when it returns 1, and the step it returns is one of a line "12.<step>|name",
 * its step spelt with or without leading zeros (slt_jobid_parse takes "12.03" for step 3:
 * fuzz_jobid.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/squeue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t step = 0xdeadbeef;
    const struct slt_job_ref job = {.job = 12};
    int rc = slt_squeue_find_step((const char *)data, size, &job, "a", &step, NULL);
    if (rc < -1 || rc > 1 || (rc != 1 && step != 0xdeadbeef))
        abort();
    if (rc == 1) {
        char needle[64];
        int seen = 0;
        for (int zeros = 0; zeros <= 20 && !seen; zeros++) {
            int n = snprintf(needle, sizeof(needle), "12.%.*s%u|a", zeros, "00000000000000000000",
                             step);
            seen = memmem(data, size, needle, (size_t)n) != NULL;
        }
        if (!seen)
            abort();
    }
    return 0;
}
