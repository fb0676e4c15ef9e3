/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_sacctmgr.c - sacctmgr -P rows: a row that parses has every column of the format, and
 * a duration column that fails to parse leaves its output untouched. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/duration.h"
#include "libslurmtext/sacctmgr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct slt_mgr_format fmt;
    static int ready;
    if (!ready) {
        if (slt_mgr_format_parse("Cluster,Account,User,Share,GrpTRES,MaxJobs,MaxWall,Flags", &fmt,
                                 NULL) < 0)
            abort();
        ready = 1;
    }
    size_t pos = 0;
    struct slt_span line;
    while (slt_next_line((const char *)data, size, &pos, &line)) {
        struct slt_mgr_row r;
        if (slt_mgr_row_parse(&fmt, line, &r, NULL) < 0)
            continue;
        struct slt_span v;
        if (!slt_mgr_get(&r, "MaxJobs", &v) || !slt_mgr_get(&r, "flags", &v))
            abort(); /* a parsed row has every column, by any case of its name */
        if (!slt_mgr_get(&r, "MaxWall", &v))
            abort();
        struct slt_duration d, sentinel;
        memset(&d, 0x44, sizeof(d));
        sentinel = d;
        if (slt_duration_parse(v.p, v.n, "MaxWall", &d, NULL) < 0 &&
            memcmp(&d, &sentinel, sizeof(d)) != 0)
            abort();
    }
    return 0;
}
