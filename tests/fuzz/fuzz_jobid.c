/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_jobid.c - slt_jobid_parse: a parsed id formats back to exactly the input text
 * (Slurm ids have one spelling); outputs untouched on failure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/jobid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct slt_jobid id, sentinel;
    memset(&id, 0x77, sizeof(id));
    sentinel = id;
    if (slt_jobid_parse((const char *)data, size, "F", &id, NULL) < 0) {
        if (memcmp(&id, &sentinel, sizeof(id)) != 0)
            abort();
        return 0;
    }
    char buf[96];
    int n = slt_jobid_format(&id, buf, sizeof(buf), NULL);
    if (n < 0) {
        if (id.array_spec.n <= 64) /* only an over-long array spec may not format */
            abort();
        return 0;
    }
    /* Leading zeros ("007") are the one accepted non-canonical spelling. */
    struct slt_jobid again;
    if (slt_jobid_parse(buf, (size_t)n, "F", &again, NULL) < 0 || again.job != id.job ||
        again.step_kind != id.step_kind || again.step != id.step ||
        again.het_offset != id.het_offset || again.array_task != id.array_task ||
        again.has_step_het != id.has_step_het || again.step_het_comp != id.step_het_comp)
        abort();
    return 0;
}
