/* SPDX-License-Identifier: GPL-3.0-or-later */
/* hadm_baseline.c - drive the HADM-style baseline (bench/hadm_baseline.sql) with the load
 * bank_loadgen puts on allotd, and print the same numbers.
 *
 * N threads, each with its own libpq connection (HADM's API workers each hold one), loop:
 * SELECT hadm.predebit(alloc, job, uid, amount) then, if it passed,
 * SELECT hadm.debit(job, actual) - one hold+settle "pair", two requests, each its own
 * durable transaction (autocommit, synchronous_commit as the server is configured).  Jobs
 * are spread over --accounts allocations (ids 1..K).  Latency of every call is recorded
 * per thread and the percentiles computed afterwards, as bank_loadgen does.
 *
 *   hadm_baseline --conninfo STR [--clients N] [--pairs N] [--accounts K]
 */
#include <getopt.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hadm_session.h"

struct opts {
    const char *conninfo;
    int clients;
    long pairs;
    int accounts;
};

struct client {
    const struct opts *o;
    int id;
    long pairs;
    double *lat_us;
    long nlat;
    long errors;
    long refused;
};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Run a prepared call returning one boolean; 1 true, 0 false, -1 error. */
static int call(struct client *c, PGconn *conn, const char *name, int n, const char *const *v)
{
    double t0 = now_us();
    PGresult *r = PQexecPrepared(conn, name, n, v, NULL, NULL, 0);
    c->lat_us[c->nlat++] = now_us() - t0;
    int rc = -1;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        rc = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    else if (c->errors < 3)
        fprintf(stderr, "hadm_baseline: %s: %s", name, PQresultErrorMessage(r));
    PQclear(r);
    return rc;
}

static void *client_main(void *arg)
{
    struct client *c = arg;
    const struct opts *o = c->o;
    char err[512];
    PGconn *conn = hadm_session_open(o->conninfo, err, sizeof err);
    if (!conn) {
        fprintf(stderr, "hadm_baseline: %s\n", err);
        c->errors++;
        return NULL;
    }
    char alloc[16], job[24], uid[16], amount[24], actual[24];
    for (long i = 0; i < c->pairs; i++) {
        /* Same shape as bank_loadgen: 1 CPU, 600 s limit (10 SU-minutes), 55 s run (1). */
        snprintf(alloc, sizeof alloc, "%d", 1 + (int)((c->id + i) % o->accounts));
        snprintf(job, sizeof job, "%ld", 1 + (long)c->id * 100000000L + i);
        snprintf(uid, sizeof uid, "%d", 1000 + c->id);
        snprintf(amount, sizeof amount, "10");
        snprintf(actual, sizeof actual, "1");
        const char *pv[4] = {alloc, job, uid, amount};
        int rc = call(c, conn, HADM_PREDEBIT, 4, pv);
        if (rc < 0) {
            c->errors++;
            continue;
        }
        if (rc == 0) {
            c->refused++;
            continue;
        }
        const char *dv[2] = {job, actual};
        if (call(c, conn, HADM_DEBIT, 2, dv) != 1)
            c->errors++;
    }
    PQfinish(conn);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    struct opts o = {.clients = 16, .pairs = 4000, .accounts = 1};
    static const struct option lo[] = {{"conninfo", 1, 0, 'd'},
                                       {"clients", 1, 0, 'c'},
                                       {"pairs", 1, 0, 'n'},
                                       {"accounts", 1, 0, 'a'},
                                       {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'd':
            o.conninfo = optarg;
            break;
        case 'c':
            o.clients = atoi(optarg);
            break;
        case 'n':
            o.pairs = atol(optarg);
            break;
        case 'a':
            o.accounts = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: hadm_baseline --conninfo STR [--clients N] [--pairs N] "
                            "[--accounts K]\n");
            return 2;
        }
    }
    if (!o.conninfo || o.clients < 1 || o.clients > 1024 || o.pairs < o.clients || o.accounts < 1) {
        fprintf(stderr, "hadm_baseline: need --conninfo, 1..1024 clients, pairs >= clients\n");
        return 2;
    }
    struct client *cl = calloc((size_t)o.clients, sizeof *cl);
    pthread_t *tid = calloc((size_t)o.clients, sizeof *tid);
    if (!cl || !tid)
        return 1;
    for (int i = 0; i < o.clients; i++) {
        cl[i].o = &o;
        cl[i].id = i;
        cl[i].pairs = o.pairs / o.clients + (i < o.pairs % o.clients);
        cl[i].lat_us = calloc((size_t)cl[i].pairs * 2 + 1, sizeof(double));
        if (!cl[i].lat_us)
            return 1;
    }
    double t0 = now_us();
    for (int i = 0; i < o.clients; i++)
        if (pthread_create(&tid[i], NULL, client_main, &cl[i]) != 0) {
            fprintf(stderr, "hadm_baseline: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < o.clients; i++)
        pthread_join(tid[i], NULL);
    double secs = (now_us() - t0) / 1e6;
    long nlat = 0, errors = 0, refused = 0;
    for (int i = 0; i < o.clients; i++) {
        nlat += cl[i].nlat;
        errors += cl[i].errors;
        refused += cl[i].refused;
    }
    double *all = calloc((size_t)nlat + 1, sizeof(double));
    if (!all)
        return 1;
    long k = 0;
    for (int i = 0; i < o.clients; i++) {
        memcpy(all + k, cl[i].lat_us, (size_t)cl[i].nlat * sizeof(double));
        k += cl[i].nlat;
        free(cl[i].lat_us);
    }
    qsort(all, (size_t)nlat, sizeof(double), cmp_double);
#define PCT(p) (nlat ? all[(long)((double)(nlat - 1) * (p))] / 1e3 : 0.0)
    long pairs = (nlat - refused) / 2;
    printf("clients=%d accounts=%d pairs=%ld requests=%ld errors=%ld refused=%ld\n", o.clients,
           o.accounts, pairs, nlat, errors, refused);
    printf("elapsed_s=%.3f pairs_per_s=%.0f requests_per_s=%.0f\n", secs, pairs / secs,
           nlat / secs);
    printf("latency_ms p50=%.3f p99=%.3f p99.9=%.3f max=%.3f\n", PCT(0.50), PCT(0.99), PCT(0.999),
           PCT(1.0));
    free(all);
    free(cl);
    free(tid);
    return errors ? 1 : 0;
}
