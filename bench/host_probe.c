/* SPDX-License-Identifier: GPL-3.0-or-later */
/* host_probe.c - what this (virtual) machine gives a benchmark, printed beside its numbers.
 *
 * The bank's throughput on the 2-core VMs this project runs on has varied seven-fold from
 * one session to the next with the code unchanged (bench/results/bank.md, 2026-11-26, 1ca89d2), and
 * the guest kernel does not see why: no steal time is reported.  Two measures show it:
 *
 * - CPU available: one spinning thread per core reads the monotonic clock in a loop for
 *   --seconds; any gap over 1 ms between two reads is time the vCPU was not running (the
 *   hypervisor had it; nothing else runs here at that priority for that long).  Printed as
 *   the share of wall time each spinner actually ran, and the longest gap.
 * - Wake-up round trip: two threads pinned to different cores hand a token back and forth
 *   through a pair of pipes, as allotd's writer, completers and HTTP threads hand off a
 *   request; each hand-off is a wake-up of a sleeping vCPU.
 *
 * Before those it prints the two floors of host_cond.h (fdatasync latency in --dir, default
 * the current directory, and the loopback HTTP floor), which every bench prints first.
 * It measures and prints; it asserts nothing.  Run it on an otherwise idle machine.
 *   host_probe [--seconds S] [--dir DIR]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_cond.h"

#define GAP_NS 1000000 /* a gap longer than this between two clock reads is lost time */
#define MAX_SPINNERS 64
#define ROUND_TRIPS 20000

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

struct spin {
    int64_t run_ns;  /* how long the spinner ran */
    int64_t lost_ns; /* sum of gaps over GAP_NS */
    int64_t max_gap_ns;
    int gaps;
};

static int64_t spin_for_ns;

static void *spinner(void *arg)
{
    struct spin *s = arg;
    int64_t start = now_ns(), last = start, t;
    while ((t = now_ns()) - start < spin_for_ns) {
        int64_t g = t - last;
        if (g > GAP_NS) {
            s->lost_ns += g;
            s->gaps++;
            if (g > s->max_gap_ns)
                s->max_gap_ns = g;
        }
        last = t;
    }
    s->run_ns = t - start;
    return NULL;
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

struct pong {
    int in, out, cpu;
};

static void *ponger(void *arg)
{
    struct pong *p = arg;
    char c;
    if (p->cpu >= 0)
        (void)pin(p->cpu);
    for (;;) {
        ssize_t n = read(p->in, &c, 1);
        if (n <= 0)
            return NULL;
        if (write(p->out, &c, 1) != 1)
            return NULL;
    }
}

/* Mean round trip in microseconds between this thread on cpu A and a thread on cpu B
 * (B < 0: no pinning), or -1 on a failed pipe or thread. */
static double round_trip_us(int a, int b)
{
    int to[2], from[2];
    if (pipe(to) < 0)
        return -1;
    if (pipe(from) < 0) {
        close(to[0]);
        close(to[1]);
        return -1;
    }
    struct pong p = {to[0], from[1], b};
    pthread_t t;
    double us = -1;
    if (pthread_create(&t, NULL, ponger, &p) == 0) {
        if (a >= 0)
            (void)pin(a);
        char c = 'x';
        int64_t t0 = now_ns();
        int i;
        for (i = 0; i < ROUND_TRIPS; i++)
            if (write(to[1], &c, 1) != 1 || read(from[0], &c, 1) != 1)
                break;
        int64_t t1 = now_ns();
        if (i == ROUND_TRIPS)
            us = (double)(t1 - t0) / ROUND_TRIPS / 1000.0;
        close(to[1]); /* EOF ends the ponger */
        to[1] = -1;
        pthread_join(t, NULL);
        cpu_set_t all;
        CPU_ZERO(&all);
        for (int c2 = 0; c2 < CPU_SETSIZE; c2++)
            CPU_SET(c2, &all);
        (void)pthread_setaffinity_np(pthread_self(), sizeof all, &all);
    }
    close(to[0]);
    if (to[1] >= 0)
        close(to[1]);
    close(from[0]);
    close(from[1]);
    return us;
}

static void spin_report(int n)
{
    struct spin s[MAX_SPINNERS];
    pthread_t t[MAX_SPINNERS];
    memset(s, 0, sizeof s);
    int started = 0;
    for (int i = 0; i < n; i++, started++)
        if (pthread_create(&t[i], NULL, spinner, &s[i]) != 0)
            break;
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    printf("host: cpu available with %d spinning thread%s:", started, started == 1 ? "" : "s");
    for (int i = 0; i < started; i++)
        printf(" %.0f%%", s[i].run_ns
                              ? 100.0 * (double)(s[i].run_ns - s[i].lost_ns) / (double)s[i].run_ns
                              : 0.0);
    int64_t maxg = 0;
    int gaps = 0;
    for (int i = 0; i < started; i++) {
        gaps += s[i].gaps;
        if (s[i].max_gap_ns > maxg)
            maxg = s[i].max_gap_ns;
    }
    printf(" (%d gaps over 1 ms, longest %.1f ms)\n", gaps, (double)maxg / 1e6);
}

int main(int argc, char **argv)
{
    double seconds = 2.0;
    const char *dir = ".";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            seconds = strtod(argv[++i], &end);
            if (errno || *end || seconds <= 0 || seconds > 600) {
                fprintf(stderr, "host_probe: --seconds takes a number in (0, 600]\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else {
            fprintf(stderr, "usage: host_probe [--seconds S] [--dir DIR]\n");
            return 2;
        }
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    if (ncpu > MAX_SPINNERS)
        ncpu = MAX_SPINNERS;
    spin_for_ns = (int64_t)(seconds * 1e9);
    (void)host_cond_print(stdout, dir); /* a failed probe says so on its line */
    spin_report(1);
    if (ncpu > 1)
        spin_report((int)ncpu);
    double same = round_trip_us(0, 0);
    double cross = ncpu > 1 ? round_trip_us(0, 1) : -1;
    printf("host: wake-up round trip through pipes: same cpu %.1f us", same);
    if (cross >= 0)
        printf(", cpu 0 <-> cpu 1 %.1f us", cross);
    printf(" (%d round trips)\n", ROUND_TRIPS);
    return 0;
}
