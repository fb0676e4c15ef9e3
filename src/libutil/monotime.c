/* SPDX-License-Identifier: GPL-3.0-or-later */
/* monotime.c - monotonic milliseconds (see monotime.h). */
#include "libutil/monotime.h"

#include <errno.h>
#include <time.h>

int64_t monotime_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void monotime_sleep_ms(int64_t ms, volatile int *stop)
{
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        if (stop && *stop)
            return;
}
