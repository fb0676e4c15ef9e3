/* SPDX-License-Identifier: GPL-3.0-or-later */
/* crash.h - crash points at durability boundaries (STYLE §4 "Crash points").
 *
 * ALLOT_CRASHPOINT("writer.after_commit") does nothing unless the build is ALLOT_TEST, the
 * configuration says TestMode=local and the environment has ALLOT_CRASH=<name>:<N>; then the
 * Nth pass through the named point calls _exit(99) at once (no flush, no cleanup: like a
 * power cut as far as the process is concerned).  Armed once at startup by crash_init().
 * Threads: crash_point() is safe from any thread (atomic counter).
 */
#ifndef ALLOT_ALLOTD_CRASH_H
#define ALLOT_ALLOTD_CRASH_H

#ifdef ALLOT_TEST
/* Read ALLOT_CRASH when enabled; log what was armed.  Returns -1 on a malformed value. */
int crash_init(int enabled);
void crash_point(const char *name);
#define ALLOT_CRASHPOINT(name) crash_point(name)
#else
static inline int crash_init(int enabled)
{
    (void)enabled;
    return 0;
}
#define ALLOT_CRASHPOINT(name) ((void)0)
#endif

#endif
