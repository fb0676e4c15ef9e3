/* SPDX-License-Identifier: GPL-3.0-or-later */
/* forecast_replay.c - score the exhaustion forecast (libcore/forecast.h) on a replayed job
 * history: a `sacct -P` listing (the columns `allot import sacct` reads) is charged as the
 * bank charges it (billing from AllocTRES x elapsed, debited at the job's end), per account;
 * on every day D with a full window behind it and 14 days ahead, the forecast made at D
 * (its rate, its band) is compared with the use that happened in (D, D+14 days].
 *
 *   forecast_replay FILE [WINDOW_DAYS] [HORIZON_DAYS]
 *
 * Prints, over every (account, D): the weighted absolute percentage error of the 14-day use
 * (sum |predicted - actual| / sum actual), the median absolute percentage error over the
 * cases that used anything, how often the actual use fell inside the band, and whether an
 * allocation holding 10 days of its flat mean burn would run out within the horizon
 * (precision and recall of "runs out by D+14").  The same for two baselines: the flat mean
 * of the window and the mean of its last 7 days. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/forecast.h"
#include "libcore/money.h"
#include "libslurmtext/sacct_job.h"
#include "libslurmtext/tres_field.h"

#define D FORECAST_DAY_S
#define MAX_ACCOUNTS 4096

struct acct {
    char name[ALLOT_NAME_MAX];
    int64_t *day; /* net use per day bucket */
};

static struct acct accounts[MAX_ACCOUNTS];
static int naccounts;
static int64_t t0, ndays; /* bucket b covers (t0 + b d, t0 + (b + 1) d] */

static int account_index(struct slt_span s)
{
    for (int i = 0; i < naccounts; i++)
        if (strlen(accounts[i].name) == s.n && !memcmp(accounts[i].name, s.p, s.n))
            return i;
    if (naccounts == MAX_ACCOUNTS || s.n >= ALLOT_NAME_MAX)
        return -1;
    memcpy(accounts[naccounts].name, s.p, s.n);
    accounts[naccounts].name[s.n] = '\0';
    return naccounts++;
}

struct charge {
    int account;
    int64_t end_s, charge_sumin;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct score {
    const char *name;
    double abs_err, actual;
    double *ape;
    size_t nape, inband, cases;
    size_t tp, fp, fn;
};

static void score_add(struct score *s, double pred, double actual, double budget, int band,
                      double lo, double hi)
{
    s->abs_err += fabs(pred - actual);
    s->actual += actual;
    s->cases++;
    if (actual > 0)
        s->ape[s->nape++] = fabs(pred - actual) / actual;
    if (band && actual >= lo && actual <= hi)
        s->inband++;
    int said = budget > 0 && pred >= budget, was = budget > 0 && actual >= budget;
    s->tp += said && was;
    s->fp += said && !was;
    s->fn += !said && was;
}

static void score_print(struct score *s, int band)
{
    qsort(s->ape, s->nape, sizeof(double), cmp_double);
    double med = s->nape ? s->ape[s->nape / 2] : 0;
    printf("%-22s WAPE %5.1f %%  median APE %5.1f %%", s->name, 100 * s->abs_err / s->actual,
           100 * med);
    if (band)
        printf("  in band %5.1f %%", 100.0 * (double)s->inband / (double)s->cases);
    printf("  runs-out precision %5.1f %% recall %5.1f %%\n",
           s->tp + s->fp ? 100.0 * (double)s->tp / (double)(s->tp + s->fp) : 0,
           s->tp + s->fn ? 100.0 * (double)s->tp / (double)(s->tp + s->fn) : 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: forecast_replay FILE [WINDOW_DAYS] [HORIZON_DAYS]\n");
        return 2;
    }
    int window = argc > 2 ? atoi(argv[2]) : FORECAST_WINDOW_DEFAULT;
    int horizon = argc > 3 ? atoi(argv[3]) : 14;
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct allot_error err;
    struct slt_sacct_header h;
    char *line = NULL;
    size_t cap = 0, njobs = 0, jcap = 0, skipped = 0;
    struct charge *jobs = NULL;
    ssize_t n = getline(&line, &cap, f);
    if (n <= 0) {
        fprintf(stderr, "%s: empty\n", argv[1]);
        return 1;
    }
    if (line[n - 1] == '\n')
        line[--n] = '\0';
    if (slt_sacct_header_parse((struct slt_span){line, (size_t)n}, &h, &err) < 0) {
        fprintf(stderr, "%s: %s\n", argv[1], err.msg);
        return 1;
    }
    int64_t tmin = INT64_MAX, tmax = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        struct slt_sacct_job j;
        int rc = slt_sacct_job_parse(&h, (struct slt_span){line, (size_t)n}, &j, &err);
        if (rc < 0) {
            fprintf(stderr, "%s: %s\n", argv[1], err.msg);
            return 1;
        }
        if (rc == 0)
            continue;
        bool has;
        struct tres_list tl;
        int64_t charge, billing;
        int a = account_index(j.account);
        if (a < 0 || slt_tres_field_parse(j.alloc_tres, "AllocTRES", &has, &tl, &err) < 0) {
            skipped++;
            continue;
        }
        billing = tres_get(&tl, "billing");
        if (billing < 0)
            billing = tres_get(&tl, "cpu");
        if (billing < 0 || money_charge_sumin(billing * 1000000, j.elapsed_s, &charge, &err) < 0) {
            skipped++;
            continue;
        }
        if (njobs == jcap) {
            jcap = jcap ? 2 * jcap : 1 << 16;
            jobs = realloc(jobs, jcap * sizeof(*jobs));
            if (!jobs)
                return 1;
        }
        jobs[njobs++] = (struct charge){a, j.end_s, charge};
        tmin = j.end_s < tmin ? j.end_s : tmin;
        tmax = j.end_s > tmax ? j.end_s : tmax;
    }
    free(line);
    fclose(f);
    if (!njobs) {
        fprintf(stderr, "%s: no finished job\n", argv[1]);
        return 1;
    }
    t0 = (tmin - 1) / D * D; /* the midnight before the first end */
    ndays = (tmax - t0 + D - 1) / D;
    for (int i = 0; i < naccounts; i++)
        accounts[i].day = calloc((size_t)ndays, sizeof(int64_t));
    for (size_t i = 0; i < njobs; i++)
        accounts[jobs[i].account].day[(jobs[i].end_s - t0 - 1) / D] += jobs[i].charge_sumin;
    free(jobs);

    size_t maxcases = (size_t)naccounts * (size_t)ndays;
    struct score model = {"forecast (weighted)", .ape = malloc(maxcases * sizeof(double))};
    struct score flat = {"flat window mean", .ape = malloc(maxcases * sizeof(double))};
    struct score last7 = {"last 7 days mean", .ape = malloc(maxcases * sizeof(double))};
    for (int a = 0; a < naccounts; a++) {
        const int64_t *u = accounts[a].day;
        for (int64_t m = window; m + horizon <= ndays; m++) {
            int64_t now = t0 + m * D;
            struct forecast_burn b;
            struct forecast fc;
            if (forecast_burn_init(&b, t0, now, window, &err) < 0)
                return 1;
            double sum = 0, sum7 = 0;
            for (int i = 0; i < window; i++) {
                int64_t v = u[m - 1 - i];
                struct ledger_entry e = {
                    .kind = LEDGER_DEBIT, .amount_sumin = v, .time_s = now - (int64_t)i * D};
                if (v && forecast_burn_add(&b, &e, &err) < 0)
                    return 1;
                sum += (double)v;
                if (i < 7)
                    sum7 += (double)v;
            }
            if (forecast_compute(&b, 0, now + (int64_t)horizon * D, &fc, &err) < 0)
                return 1;
            double actual = 0;
            for (int k = 0; k < horizon; k++)
                actual += (double)u[m + k];
            double mean = sum / window;
            double budget = 10 * mean; /* an allocation with 10 days of its flat burn left */
            double pred = (double)fc.rate_num / (double)fc.rate_den * horizon;
            score_add(&model, pred, actual, budget, 1, (double)fc.rate_low_sumin * horizon,
                      (double)(fc.rate_high_sumin + 1) * horizon);
            score_add(&flat, mean * horizon, actual, budget, 0, 0, 0);
            score_add(&last7, sum7 / 7 * horizon, actual, budget, 0, 0, 0);
        }
    }
    printf("history: %zu jobs (%zu skipped), %d accounts, %lld days; window %d days, "
           "horizon %d days, %zu forecasts\n",
           njobs, skipped, naccounts, (long long)ndays, window, horizon, model.cases);
    score_print(&model, 1);
    score_print(&flat, 0);
    score_print(&last7, 0);
    for (int i = 0; i < naccounts; i++)
        free(accounts[i].day);
    free(model.ape);
    free(flat.ape);
    free(last7.ape);
    return 0;
}
