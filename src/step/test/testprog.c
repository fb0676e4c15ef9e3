/* SPDX-License-Identifier: GPL-3.0-or-later */
/* testprog.c - a command with a known footprint for allot-step's tests:
 *   allot-step-testprog [--mem MIB] [--busy SECONDS] [--sleep SECONDS] [--exit N]
 * touches MIB MiB (every page written, so RSS really grows), then spins on one CPU for
 * --busy seconds, then sleeps --sleep seconds, then exits with N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long mem_mib = 0, exit_code = 0;
    double busy_s = 0, sleep_s = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--mem") == 0)
            mem_mib = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--busy") == 0)
            busy_s = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--sleep") == 0)
            sleep_s = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--exit") == 0)
            exit_code = strtol(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "testprog: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    volatile char *mem = NULL;
    if (mem_mib > 0) {
        size_t n = (size_t)mem_mib << 20;
        mem = malloc(n);
        if (!mem) {
            fprintf(stderr, "testprog: cannot allocate %ld MiB\n", mem_mib);
            return 3;
        }
        for (size_t i = 0; i < n; i += 4096)
            mem[i] = (char)i;
    }
    volatile unsigned long spin = 0;
    double end = now_s() + busy_s;
    while (now_s() < end)
        for (int k = 0; k < 100000; k++)
            spin++;
    if (sleep_s > 0) {
        struct timespec ts = {(time_t)sleep_s, (long)((sleep_s - (double)(time_t)sleep_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    free((void *)mem);
    return (int)exit_code;
}
