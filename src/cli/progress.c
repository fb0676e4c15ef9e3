/* SPDX-License-Identifier: GPL-3.0-or-later */
/* progress.c - the progress line of long CLI commands (progress.h). */
#include "cli/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_start(struct progress *p, const char *what, const char *unit, int64_t total)
{
    *p = (struct progress){.what = what, .unit = unit, .tty = isatty(2), .total = total};
    p->t0 = p->last = now_s();
}

void progress_show(struct progress *p, int final)
{
    if (!p->tty || (final && !p->drawn && p->done == 0))
        return;
    double t = now_s();
    if (!final && t - p->last < 0.2)
        return;
    p->last = t;
    p->drawn = 1;
    double rate = t > p->t0 ? (double)p->done / (t - p->t0) : 0;
    if (p->total >= 0) {
        double eta = rate > 0 ? (double)(p->total - p->done) / rate : 0;
        fprintf(stderr, "\r%s: %lld / %lld %s (%3.0f%%), %.0f %s/s, ETA %.0f s   %s", p->what,
                (long long)p->done, (long long)p->total, p->unit,
                p->total ? 100.0 * (double)p->done / (double)p->total : 100.0, rate, p->unit, eta,
                final ? "\n" : "");
    } else {
        fprintf(stderr, "\r%s: %lld %s, %.0f %s/s   %s", p->what, (long long)p->done, p->unit, rate,
                p->unit, final ? "\n" : "");
    }
    fflush(stderr);
}
