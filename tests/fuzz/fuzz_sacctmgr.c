/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_sacctmgr.c - sacctmgr -P rows with typed getters: failures leave outputs untouched;
 * parsed integers are >= 0. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
        bool has = false;
        int64_t v = -5;
        if (slt_mgr_get_int(&r, "MaxJobs", &has, &v, NULL) < 0) {
            if (has || v != -5)
                abort();
        } else if (has && v < 0) {
            abort();
        }
        struct slt_duration d, sentinel;
        memset(&d, 0x44, sizeof(d));
        sentinel = d;
        if (slt_mgr_get_duration(&r, "MaxWall", &d, NULL) < 0 &&
            memcmp(&d, &sentinel, sizeof(d)) != 0)
            abort();
        (void)slt_mgr_has_flag(&r, "Flags", "DenyOnLimit");
    }
    return 0;
}
