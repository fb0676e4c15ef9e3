/* SPDX-License-Identifier: GPL-3.0-or-later */
/* whatif_bench.c - the what-if replay (libcore/whatif.h) of 1,000,000 synthetic jobs in
 * memory under the bank's prices and under a billing change (bench/results/whatif.md).
 *
 *   whatif_bench [JOBS]          (default 1000000)
 *
 * The history: 100 accounts under root, 10 users each, partitions batch (cpu), bigmem (cpu)
 * and gpu (gpu), an allocation per account and resource for the year, jobs spread over the
 * year with one of 64 TRES shapes, 1 minute to 1 day long, seeded so every run replays the
 * same jobs.  The change: gpu's GRES/gpu weight 4 -> 8 and bigmem to MAX_TRES.  Prints the
 * time of each replay (pricing, two sorts, the walk, fair-share) and what they found. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "host_cond.h"
#include "libcore/whatif.h"

#define ACCOUNTS 100
#define USERS_PER 10
#define SHAPES 64
#define YEAR_S (365 * 86400LL)
#define T0 1767225600LL /* 2026-01-01 */

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int replay(const char *what, const struct whatif_input *in, const struct whatif_scenario *s,
                  struct whatif_result *r)
{
    struct allot_error err = {0};
    double t = clock_s(CLOCK_MONOTONIC), c = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (whatif_run(in, s, r, &err) < 0) {
        fprintf(stderr, "whatif_bench: %s\n", err.msg);
        return -1;
    }
    double dt = clock_s(CLOCK_MONOTONIC) - t, dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c;
    printf("%-7s %zu jobs in %.3f s wall, %.3f s CPU (%.0f jobs/s): charged %lld SU-minutes, "
           "%lld refused, fair-share of user 0 %.6f\n",
           what, in->njobs, dt, dc, (double)in->njobs / dt, (long long)r->total.charged_sumin,
           (long long)r->total.refused, r->users[0].fairshare);
    return 0;
}

int main(int argc, char **argv)
{
    size_t njobs = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    (void)host_cond_print(stdout, "/tmp"); /* the floors this host gives, first */

    static struct whatif_account accounts[ACCOUNTS + 1];
    static struct whatif_user users[ACCOUNTS * USERS_PER];
    static char names[ACCOUNTS + ACCOUNTS * USERS_PER][16];
    static struct whatif_alloc allocs[ACCOUNTS * 2];
    static const struct whatif_partition parts[] = {
        {"c1", "batch", "cpu"}, {"c1", "bigmem", "cpu"}, {"c1", "gpu", "gpu"}};
    static char shapes[SHAPES][96];
    accounts[0] = (struct whatif_account){"root", WHATIF_NONE, 1};
    for (int a = 0; a < ACCOUNTS; a++) {
        snprintf(names[a], sizeof names[a], "a%d", a);
        accounts[a + 1] = (struct whatif_account){names[a], 0, 1 + (uint32_t)(a % 7)};
        for (int r = 0; r < 2; r++)
            allocs[2 * a + r] = (struct whatif_alloc){2 * a + r + 1, (uint32_t)a + 1,
                                                      r ? "gpu" : "cpu", "", T0, T0 + YEAR_S,
                                                      /* enough for most, not all */
                                                      (int64_t)(20000000 + 5000000 * (a % 10))};
        for (int u = 0; u < USERS_PER; u++) {
            char *n = names[ACCOUNTS + a * USERS_PER + u];
            snprintf(n, 16, "u%d", a * USERS_PER + u);
            users[a * USERS_PER + u] = (struct whatif_user){n, (uint32_t)a + 1, 1};
        }
    }
    for (int k = 0; k < SHAPES; k++)
        snprintf(shapes[k], sizeof shapes[k], "cpu=%d,mem=%dG,node=%d,gres/gpu=%d", 1 << (k % 7),
                 2 << (k % 6), 1 + k % 3, k % 5);

    struct whatif_job *jobs = malloc(njobs * sizeof *jobs);
    if (!jobs)
        return 1;
    for (size_t i = 0; i < njobs; i++) {
        int64_t limit = 60 * (int64_t)(1 + next() % 1440);
        int64_t elapsed = 1 + (int64_t)(next() % (uint64_t)limit);
        int64_t start = T0 + (int64_t)(next() % (uint64_t)(YEAR_S - 86400));
        jobs[i] = (struct whatif_job){
            .job_id = (int64_t)i + 1,
            .user = (uint32_t)(next() % (ACCOUNTS * USERS_PER)),
            .partition = (uint32_t)(next() % 3),
            .start_s = start,
            .end_s = start + elapsed,
            .elapsed_s = elapsed,
            .time_limit_s = limit,
            .alloc_tres = shapes[next() % SHAPES],
            .usage_factor = 1.0,
        };
    }
    struct whatif_input in = {
        .accounts = accounts,
        .naccounts = ACCOUNTS + 1,
        .users = users,
        .nusers = ACCOUNTS * USERS_PER,
        .partitions = parts,
        .npartitions = 3,
        .allocs = allocs,
        .nallocs = ACCOUNTS * 2,
        .jobs = jobs,
        .njobs = njobs,
    };
    struct billing_weights before[3], after[3];
    struct allot_error err = {0};
    if (billing_weights_parse("CPU=1.0,Mem=0.25G", 0, &before[0], &err) < 0 ||
        billing_weights_parse("CPU=1.0,Mem=0.25G", 0, &before[1], &err) < 0 ||
        billing_weights_parse("CPU=1.0,Mem=0.25G,GRES/gpu=4.0", 0, &before[2], &err) < 0 ||
        billing_weights_parse("CPU=1.0,Mem=0.25G", 0, &after[0], &err) < 0 ||
        billing_weights_parse("CPU=1.0,Mem=0.25G", 1, &after[1], &err) < 0 ||
        billing_weights_parse("CPU=1.0,Mem=0.25G,GRES/gpu=8.0", 0, &after[2], &err) < 0) {
        fprintf(stderr, "whatif_bench: %s\n", err.msg);
        return 1;
    }
    struct whatif_scenario sb = {.weights = before,
                                 .decay = {.halflife_s = 7 * 86400},
                                 .fairshare = {.algo = FAIRSHARE_FAIR_TREE}},
                           sa = sb;
    sa.weights = after;
    struct whatif_result rb, ra;
    double t = clock_s(CLOCK_MONOTONIC);
    int rc = replay("before", &in, &sb, &rb) < 0 || replay("after", &in, &sa, &ra) < 0;
    if (!rc)
        printf("both    %.3f s wall\n", clock_s(CLOCK_MONOTONIC) - t);
    if (!rc)
        printf("change  %+lld SU-minutes, refusals %lld -> %lld\n",
               (long long)(ra.total.charged_sumin - rb.total.charged_sumin),
               (long long)rb.total.refused, (long long)ra.total.refused);
    whatif_result_free(&rb);
    whatif_result_free(&ra);
    free(jobs);
    return rc;
}
