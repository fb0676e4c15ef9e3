/* SPDX-License-Identifier: GPL-3.0-or-later */
/* slurmtext_bench.c - throughput of libslurmtext's sacct row parser, and the overhead
 * allot-step adds to a trivial command.
 *
 *   slurmtext_bench [--lines N] [--file PATH] [--step PATH-TO-allot-step] [--runs N]
 *
 * 1. Generates an N-line (default 1,000,000) `sacct -P -n` file with the 21 columns of
 *    src/libslurmtext/test/data/sacct-22.05.8.format (job, batch, extern and numbered step
 *    rows in the shapes Slurm 22.05.8 prints), reads it back into memory, and times
 *    line splitting + full typed parsing of every row on one thread: MB/s and records/s
 *    (best of 3 passes; the file is parsed from memory, so disk speed is not measured).
 * 2. With --step, runs `allot-step run --direct -- true` and `true` --runs times (default 50)
 *    and prints the mean wall time of each and their difference.
 * Prints numbers only; asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libslurmtext/acct.h"
#include "host_cond.h"

#define FORMAT                                                                                     \
    "JobID,JobName,State,ExitCode,Elapsed,Timelimit,TotalCPU,AveCPU,MaxRSS,MaxVMSize,ReqMem,"      \
    "AllocTRES,ReqTRES,Start,End,Submit,NodeList,AllocCPUS,CPUTime,MaxDiskRead,MaxDiskWrite"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int generate(const char *path, long lines)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    static const char *const states[] = {"COMPLETED",      "FAILED",        "TIMEOUT",
                                         "CANCELLED by 0", "OUT_OF_MEMORY", "NODE_FAIL"};
    long job = 1000000;
    for (long i = 0; i < lines; i++) {
        int kind = (int)(i % 4);
        const char *st = states[(i / 4) % 6];
        int sec = (int)(i % 60), min = (int)(i / 60 % 60);
        if (kind == 0)
            fprintf(f,
                    "%ld|job_%ld|%s|0:0|01:%02d:%02d|02:00:00|%02d:%02d.%03d||||4000M|"
                    "billing=4,cpu=4,mem=4000M,node=1|billing=4,cpu=4,mem=4000M,node=1|"
                    "2026-11-21T20:%02d:%02d|2026-11-21T21:%02d:%02d|2026-11-21T19:00:00|"
                    "node[001-004]|4|04:%02d:%02d||\n",
                    job, job, st, min, sec, min, sec, (int)(i % 1000), min, sec, min, sec, min,
                    sec);
        else if (kind == 1)
            fprintf(f,
                    "%ld.batch|batch|%s|0:0|01:%02d:%02d||00:%02d.%03d|00:00:%02d|%ldK|"
                    "219444K||cpu=4,mem=4000M,node=1||2026-11-21T20:%02d:%02d|"
                    "2026-11-21T21:%02d:%02d|2026-11-21T20:%02d:%02d|node001|4|04:%02d:%02d|"
                    "0.07M|0.00M\n",
                    job, st, min, sec, sec, (int)(i % 1000), sec, 10000 + i % 50000, min, sec, min,
                    sec, min, sec, min, sec);
        else if (kind == 2)
            fprintf(f,
                    "%ld.extern|extern|COMPLETED|0:0|01:%02d:%02d||00:00.001|00:00:00|0|"
                    "4264K||billing=4,cpu=4,mem=4000M,node=1||2026-11-21T20:%02d:%02d|"
                    "2026-11-21T21:%02d:%02d|2026-11-21T20:%02d:%02d|node[001-004]|4|"
                    "04:%02d:%02d|0|0\n",
                    job, min, sec, min, sec, min, sec, min, sec, min, sec);
        else
            fprintf(f,
                    "%ld.0|wf42_j%ld_r1_a1|%s|0:%d|01:%02d:%02d||1-02:%02d:%02d|"
                    "1-00:%02d:%02d|2.50M|417496K||cpu=4,mem=4000M,node=1||"
                    "2026-11-21T20:%02d:%02d|2026-11-21T21:%02d:%02d|2026-11-21T20:%02d:%02d|"
                    "node[001-004]|4|04:%02d:%02d|14937|1.25G\n",
                    job++, i, st, (int)(i % 16), min, sec, min, sec, min, sec, min, sec, min, sec,
                    min, sec, min, sec);
    }
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

static double run_many(char *const argv[], int runs)
{
    fflush(stdout); /* a child must not flush our buffered lines again */
    double t0 = now_s();
    for (int i = 0; i < runs; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stdout))
                _exit(126);
            execvp(argv[0], argv);
            _exit(127);
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) < 0)
            return -1;
    }
    return (now_s() - t0) / runs;
}

int main(int argc, char **argv)
{
    long lines = 1000000;
    int runs = 50;
    const char *path = "/tmp/slurmtext_bench.sacct";
    const char *step = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--lines"))
            lines = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--file"))
            path = argv[i + 1];
        else if (!strcmp(argv[i], "--step"))
            step = argv[i + 1];
        else if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
    }
    (void)host_cond_print(stdout, "/tmp"); /* the floors this host gives, first */
    if (generate(path, lines) < 0)
        return 1;
    size_t len;
    char *buf = slurp(path, &len);
    if (!buf) {
        perror(path);
        return 1;
    }
    struct slt_acct_format fmt;
    struct allot_error err = {0};
    if (slt_acct_format_parse(FORMAT, &fmt, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double best = 1e9;
    long rows = 0, bad = 0;
    int64_t checksum = 0;
    for (int pass = 0; pass < 3; pass++) {
        rows = bad = 0;
        double t0 = now_s();
        size_t pos = 0;
        struct slt_span line;
        while (slt_next_line(buf, len, &pos, &line)) {
            struct slt_acct_row r;
            if (slt_acct_row_parse(&fmt, line, &r, &err) < 0) {
                bad++;
                continue;
            }
            checksum += r.max_rss.bytes + r.elapsed.ms;
            rows++;
        }
        double dt = now_s() - t0;
        if (dt < best)
            best = dt;
    }
    printf("sacct parse: %ld lines, %.1f MB, %.3f s (best of 3), %.1f MB/s, %.0f records/s, "
           "%ld rejected, checksum %lld\n",
           rows + bad, (double)len / 1e6, best, (double)len / 1e6 / best, (double)rows / best, bad,
           (long long)checksum);
    free(buf);
    unlink(path);
    if (step) {
        char *plain[] = {"true", NULL};
        char *wrapped[] = {(char *)step, "run", "--direct", "--", "true", NULL};
        double a = run_many(plain, runs), b = run_many(wrapped, runs);
        printf("trivial command, %d runs: true %.2f ms, allot-step run --direct -- true %.2f ms, "
               "overhead %.2f ms\n",
               runs, a * 1e3, b * 1e3, (b - a) * 1e3);
    }
    return 0;
}
