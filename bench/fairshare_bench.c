/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fairshare_bench.c - times fair-share recomputes and usage ingest; prints, never asserts.
 *
 * Trees: 100 accounts x 100 users (10,101 associations), and 1,000 accounts x 999 users
 * (1,000,001 associations).  Each recompute = usage_tree_evaluate (decay every accumulator to
 * now) + fairshare_compute; reported per algorithm as the best of a few runs.  Ingest charges
 * N settled jobs (pseudo-random association, end time, charge) into the accumulators.
 * Usage: fairshare_bench [repeats]   (default 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libcore/fairshare.h"
#include "host_cond.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static usage_tree_t *make_tree(size_t accounts, size_t users_per, char (**names)[32])
{
    size_t n = 1 + accounts * (1 + users_per);
    struct usage_assoc_spec *s = calloc(n, sizeof(*s));
    *names = calloc(n, sizeof(**names));
    if (!s || !*names) {
        fprintf(stderr, "fairshare_bench: out of memory\n");
        exit(1);
    }
    uint64_t seed = 7;
    s[0] = (struct usage_assoc_spec){.parent = -1, .shares = 1, .account = "root"};
    size_t k = 1;
    for (size_t a = 0; a < accounts; a++) {
        size_t ai = k++;
        snprintf((*names)[ai], 32, "acct%zu", a);
        s[ai] = (struct usage_assoc_spec){
            .parent = 0, .shares = 1 + (uint32_t)(rng(&seed) % 100), .account = (*names)[ai]};
        for (size_t u = 0; u < users_per; u++) {
            size_t ui = k++;
            snprintf((*names)[ui], 32, "u%zu", ui);
            s[ui] = (struct usage_assoc_spec){.parent = (int64_t)ai,
                                              .shares = 1 + (uint32_t)(rng(&seed) % 10),
                                              .account = (*names)[ai],
                                              .user = (*names)[ui]};
        }
    }
    struct allot_error err = {0};
    usage_tree_t *t = usage_tree_create(s, n, &err);
    free(s);
    if (!t) {
        fprintf(stderr, "fairshare_bench: %s\n", err.msg);
        exit(1);
    }
    return t;
}

static void ingest(usage_tree_t *t, const struct decay_params *p, size_t jobs, int64_t t0)
{
    size_t n = usage_tree_count(t);
    uint64_t seed = 99;
    double start = now_s();
    for (size_t j = 0; j < jobs; j++) {
        size_t i = 1 + rng(&seed) % (n - 1);
        int64_t end = t0 + (int64_t)(rng(&seed) % (30 * 86400));
        double charge = (double)(1 + rng(&seed) % 10000);
        if (usage_tree_charge(t, i, p, end, charge, 1.0, false, NULL) < 0) {
            fprintf(stderr, "fairshare_bench: charge failed\n");
            exit(1);
        }
    }
    double el = now_s() - start;
    printf("ingest %9zu jobs into %8zu associations: %8.3f ms  (%.0f jobs/s)\n", jobs, n, el * 1e3,
           (double)jobs / el);
}

static void recompute(usage_tree_t *t, const struct decay_params *p, int64_t now, int repeats)
{
    static const char *names[] = {"classic", "fair_tree", "flux"};
    size_t n = usage_tree_count(t);
    struct fairshare_row *rows = malloc(n * sizeof(*rows));
    if (!rows)
        exit(1);
    for (int a = FAIRSHARE_CLASSIC; a <= FAIRSHARE_FLUX; a++) {
        struct fairshare_opts o = {.algo = (enum fairshare_algo)a, .dampening = 1};
        double best = 1e30, best_eval = 1e30;
        for (int r = 0; r < repeats; r++) {
            double s0 = now_s();
            usage_tree_evaluate(t, p, now);
            double s1 = now_s();
            if (fairshare_compute(t, &o, rows, NULL) < 0) {
                fprintf(stderr, "fairshare_bench: compute failed\n");
                exit(1);
            }
            double s2 = now_s();
            if (s2 - s0 < best)
                best = s2 - s0;
            if (s1 - s0 < best_eval)
                best_eval = s1 - s0;
        }
        printf("recompute %-9s %8zu associations (%zu users): %8.3f ms  (decay %.3f ms)\n",
               names[a], n, usage_tree_user_count(t), best * 1e3, best_eval * 1e3);
    }
    free(rows);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 3;
    if (repeats < 1)
        repeats = 1;
    (void)host_cond_print(stdout, "/tmp"); /* the floors this host gives, first */
    struct decay_params p = {.halflife_s = 7 * 86400, .reset = DECAY_RESET_NONE};
    int64_t t0 = 1767225600; /* 2026-01-01 */
    char(*names)[32];

    usage_tree_t *small = make_tree(100, 100, &names);
    ingest(small, &p, 100000, t0);
    recompute(small, &p, t0 + 31 * 86400, repeats);
    usage_tree_destroy(small);
    free(names);

    usage_tree_t *big = make_tree(1000, 999, &names);
    ingest(big, &p, 100000, t0);
    ingest(big, &p, 1000000, t0);
    recompute(big, &p, t0 + 31 * 86400, repeats);
    usage_tree_destroy(big);
    free(names);
    return 0;
}
