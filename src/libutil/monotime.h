/* SPDX-License-Identifier: GPL-3.0-or-later */
/* monotime.h - CLOCK_MONOTONIC in milliseconds, and a sleep measured in it: the clock for
 * deadlines and intervals, which a change of the wall clock never moves. */
#ifndef ALLOT_LIBUTIL_MONOTIME_H
#define ALLOT_LIBUTIL_MONOTIME_H

#include <stdint.h>

/* Milliseconds of CLOCK_MONOTONIC (an arbitrary origin: compare, never print). */
int64_t monotime_ms(void);

/* Sleep ms milliseconds; a signal's EINTR resumes the sleep, unless stop is given and
 * *stop has become nonzero, which ends it early.  ms <= 0 returns at once. */
void monotime_sleep_ms(int64_t ms, volatile int *stop);

#endif
