/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_sacct.c - a whole sacct/sstat output through the row parser with the column list
 * allot-step and the agent use.  Invariants: a failing line leaves the row untouched; every
 * parsed value is in range (durations, memory >= 0; spans inside the input). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/acct.h"

#define FORMAT                                                                                     \
    "JobID,JobName,State,ExitCode,Elapsed,Timelimit,TotalCPU,AveCPU,MaxRSS,MaxVMSize,ReqMem,"      \
    "AllocTRES,Start,End,NodeList,AllocCPUS,MaxDiskRead"

static int inside(struct slt_span s, const uint8_t *data, size_t size)
{
    return s.n == 0 || ((const uint8_t *)s.p >= data && (const uint8_t *)s.p + s.n <= data + size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct slt_acct_format fmt;
    static int ready;
    if (!ready) {
        if (slt_acct_format_parse(FORMAT, &fmt, NULL) < 0)
            abort();
        ready = 1;
    }
    size_t pos = 0;
    struct slt_span line;
    while (slt_next_line((const char *)data, size, &pos, &line)) {
        struct slt_acct_row r, sentinel;
        memset(&r, 0x6b, sizeof(r));
        sentinel = r;
        if (slt_acct_row_parse(&fmt, line, &r, NULL) < 0) {
            if (memcmp(&r, &sentinel, sizeof(r)) != 0)
                abort();
            continue;
        }
        if (r.elapsed.ms < 0 || r.total_cpu.ms < 0 || r.max_rss.bytes < 0 || r.req_mem.bytes < 0 ||
            !inside(r.name, data, size) || !inside(r.nodelist, data, size) ||
            !inside(r.alloc_tres, data, size))
            abort();
    }
    return 0;
}
