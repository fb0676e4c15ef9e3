/* SPDX-License-Identifier: GPL-3.0-or-later */
/* crash.c - the crash points of crash.h (test builds only; the file is empty otherwise). */
#include "allotd/crash.h"

#ifdef ALLOT_TEST
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libutil/log.h"

/* Test-build fault state (STYLE §2 allows these globals): the armed name and countdown. */
static char crash_name[64];
static atomic_long crash_left;

int crash_init(int enabled)
{
    const char *spec = getenv("ALLOT_CRASH");
    if (!enabled || !spec || !*spec)
        return 0;
    const char *colon = strrchr(spec, ':');
    char *end;
    long n = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(crash_name) || !colon[1] ||
        *end || n < 1) {
        log_error("msg=\"ALLOT_CRASH must be name:N with N >= 1\" value=\"%s\"", spec);
        return -1;
    }
    memcpy(crash_name, spec, (size_t)(colon - spec));
    crash_name[colon - spec] = '\0';
    atomic_store(&crash_left, n);
    log_warn("msg=\"crash point armed\" point=%s pass=%ld", crash_name, n);
    return 0;
}

void crash_point(const char *name)
{
    if (crash_name[0] && strcmp(name, crash_name) == 0 && atomic_fetch_sub(&crash_left, 1) == 1)
        _exit(99);
}
#endif
