/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bank_loadgen.c - drive admit/hold/settle through allotd's HTTP API and print throughput
 * and latency percentiles (issue 2 "Measure").
 *
 * N client threads each keep one HTTP/1.1 keep-alive connection (TCP or Unix socket) and
 * loop: [admit] -> hold -> settle for the next job id, until the op budget or the duration
 * runs out.  Every request's latency is recorded in a per-thread array (no locks on the
 * measuring path); percentiles are computed after the run.  A "pair" is one hold plus one
 * settle, both acknowledged (durable) by allotd.  Raw sockets instead of libcurl keep the
 * client's own cost small next to the server's.
 *
 * --floor sends two GET /v1/whoami per pair instead: no storage at all, so it measures what
 * the HTTP path and this load generator allow on the machine (a ceiling for the bank).
 *
 * Authentication: the target must run with AuthType=none (test builds, loopback): the
 * client sends X-Allot-User.  Jobs are spread over --accounts accounts (acct0..acctK-1)
 * that the caller created with an active allocation each; --accounts 1 puts every client
 * on one allocation.
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libutil/xalloc.h"

struct opts {
    const char *host;   /* TCP host, or NULL with sock */
    int port;
    const char *sock;   /* Unix socket path */
    int clients;
    long pairs;         /* total hold+settle pairs over all clients */
    int accounts;
    int admit;          /* 1: also POST /v1/jobs/admit before each hold */
    int floor;          /* 1: GET /v1/whoami twice per "pair" instead (no storage) */
    const char *cluster;
    const char *partition;
    const char *user;
    long job_base;      /* first job id */
};

struct client {
    const struct opts *o;
    int id;
    long pairs;
    double *lat_us;     /* one entry per request */
    long nlat;
    long errors;
    long refused;
    long replays; /* answers marked "replay": the bank did nothing new (overlapping job ids) */
    int fd;
    char buf[16384];
};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int connect_target(const struct opts *o)
{
    int fd;
    if (o->sock) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(o->sock) >= sizeof(sa.sun_path))
            return -1;
        strcpy(sa.sun_path, o->sock);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
            goto fail;
    } else {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->port)};
        if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1)
            return -1;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
            goto fail;
        int one = 1;
        if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
            goto fail;
    }
    return fd;
fail:
    if (fd >= 0)
        close(fd);
    return -1;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Send one POST (a GET when body is NULL) and read the whole reply; returns the HTTP
 * status or -1. */
static int post(struct client *c, const char *path, const char *body)
{
    char req[2048];
    int n = body ? snprintf(req, sizeof(req),
                            "POST %s HTTP/1.1\r\nHost: bench\r\nX-Allot-User: %s\r\n"
                            "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                            path, c->o->user, strlen(body), body)
                 : snprintf(req, sizeof(req),
                            "GET %s HTTP/1.1\r\nHost: bench\r\nX-Allot-User: %s\r\n\r\n",
                            path, c->o->user);
    if (n < 0 || (size_t)n >= sizeof(req) || write_all(c->fd, req, (size_t)n) < 0)
        return -1;
    size_t have = 0;
    char *hdr_end = NULL;
    while (!hdr_end) {
        if (have >= sizeof(c->buf) - 1)
            return -1;
        ssize_t r = read(c->fd, c->buf + have, sizeof(c->buf) - 1 - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        have += (size_t)r;
        c->buf[have] = '\0';
        hdr_end = strstr(c->buf, "\r\n\r\n");
    }
    int status = 0;
    if (sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    const char *cl = strcasestr(c->buf, "\r\nContent-Length:");
    if (!cl || cl > hdr_end)
        return -1;
    long len = strtol(cl + 17, NULL, 10);
    size_t need = (size_t)(hdr_end + 4 - c->buf) + (size_t)len;
    if (len < 0 || need >= sizeof(c->buf))
        return -1;
    while (have < need) {
        ssize_t r = read(c->fd, c->buf + have, need - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        have += (size_t)r;
    }
    c->buf[have] = '\0'; /* need < sizeof(c->buf): the body is a string for is_replay */
    return status;
}

/* The last reply (in c->buf) says the request was a replay of one already applied. */
static int is_replay(const struct client *c)
{
    const char *body = strstr(c->buf, "\r\n\r\n");
    return body && (strstr(body, "\"replay\":true") || strstr(body, "\"replay\": true"));
}

static int timed_post(struct client *c, const char *path, const char *body)
{
    double t0 = now_us();
    int st = post(c, path, body);
    c->lat_us[c->nlat++] = now_us() - t0;
    if (st < 0) {
        close(c->fd);
        c->fd = connect_target(c->o); /* reconnect and go on; counted as an error */
    }
    return st;
}

/* Job ids come from one sequence shared by all clients, as slurmctld numbers jobs
 * (FirstJobId, then +1 per job), so every job-keyed index grows at one end as it does on a
 * cluster.  Before session 10 each client had its own stripe (base + client x 10^8): 32
 * separate insertion points in each of those indexes, a pattern no cluster produces, that
 * cost ~20% (bench/results/bank.md, session 10). */
static atomic_long next_job;

static void *client_main(void *arg)
{
    struct client *c = arg;
    const struct opts *o = c->o;
    char body[1024];
    c->fd = connect_target(o);
    if (c->fd < 0) {
        c->errors++;
        return NULL;
    }
    for (long i = 0; i < c->pairs && o->floor; i++) {
        /* Two requests that touch no storage: the cost of the HTTP path alone. */
        for (int k = 0; k < 2; k++) {
            if (timed_post(c, "/v1/whoami", NULL) != 200)
                c->errors++;
        }
    }
    for (long i = 0; i < c->pairs && !o->floor; i++) {
        long job = o->job_base + atomic_fetch_add(&next_job, 1);
        int acct = (int)((c->id + i) % o->accounts);
        if (o->admit) {
            snprintf(body, sizeof(body),
                     "{\"cluster\":\"%s\",\"user\":\"%s\",\"account\":\"acct%d\","
                     "\"partition\":\"%s\",\"time_limit_s\":600,\"tres\":\"cpu=1,node=1\"}",
                     o->cluster, o->user, acct, o->partition);
            int st = timed_post(c, "/v1/jobs/admit", body);
            if (st != 200)
                c->errors++;
        }
        snprintf(body, sizeof(body),
                 "{\"cluster\":\"%s\",\"job_id\":%ld,\"run\":0,\"user\":\"%s\","
                 "\"account\":\"acct%d\",\"partition\":\"%s\",\"start\":%ld,"
                 "\"time_limit_s\":600,\"alloc_tres\":\"cpu=1,node=1\",\"billing\":1}",
                 o->cluster, job, o->user, acct, o->partition, (long)time(NULL));
        int st = timed_post(c, "/v1/jobs/hold", body);
        if (st == 402) {
            c->refused++;
            continue;
        }
        if (st != 200) {
            c->errors++;
            continue;
        }
        if (is_replay(c))
            c->replays++;
        snprintf(body, sizeof(body),
                 "{\"cluster\":\"%s\",\"job_id\":%ld,\"run\":0,\"elapsed_s\":55,"
                 "\"state\":\"COMPLETED\"}",
                 o->cluster, job);
        st = timed_post(c, "/v1/jobs/settle", body);
        if (st != 200)
            c->errors++;
        else if (is_replay(c))
            c->replays++;
    }
    close(c->fd);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: bank_loadgen (--tcp HOST:PORT | --unix PATH) [--clients N] [--pairs N]\n"
            "                    [--accounts K] [--admit] [--cluster C] [--partition P]\n"
            "                    [--user U] [--job-base N] [--floor]\n"
            "  --floor: two GET /v1/whoami per pair instead of hold+settle (the HTTP path\n"
            "           alone, no storage: what the machine allows before the bank's work)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct opts o = {.clients = 32, .pairs = 100000, .accounts = 32, .cluster = "bench",
                     .partition = "cpu", .user = "root", .job_base = 1};
    static const struct option lo[] = {
        {"tcp", 1, 0, 't'},      {"unix", 1, 0, 'u'},     {"clients", 1, 0, 'c'},
        {"pairs", 1, 0, 'n'},    {"accounts", 1, 0, 'a'}, {"admit", 0, 0, 'A'},
        {"cluster", 1, 0, 'C'},  {"partition", 1, 0, 'p'}, {"user", 1, 0, 'U'},
        {"job-base", 1, 0, 'j'}, {"floor", 0, 0, 'F'},     {0, 0, 0, 0}};
    static char host[256];
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 't': {
            const char *colon = strrchr(optarg, ':');
            if (!colon || (size_t)(colon - optarg) >= sizeof(host))
                usage();
            memcpy(host, optarg, (size_t)(colon - optarg));
            o.host = host;
            o.port = atoi(colon + 1);
            break;
        }
        case 'u': o.sock = optarg; break;
        case 'c': o.clients = atoi(optarg); break;
        case 'n': o.pairs = atol(optarg); break;
        case 'a': o.accounts = atoi(optarg); break;
        case 'A': o.admit = 1; break;
        case 'C': o.cluster = optarg; break;
        case 'p': o.partition = optarg; break;
        case 'U': o.user = optarg; break;
        case 'j': o.job_base = atol(optarg); break;
        case 'F': o.floor = 1; break;
        default: usage();
        }
    }
    if ((!o.host && !o.sock) || o.clients < 1 || o.clients > 4096 || o.pairs < 1 ||
        o.accounts < 1)
        usage();

    struct client *cl = xcalloc((size_t)o.clients, sizeof(*cl));
    pthread_t *th = xcalloc((size_t)o.clients, sizeof(*th));
    int per_pair = o.admit ? 3 : 2;
    for (int i = 0; i < o.clients; i++) {
        cl[i].o = &o;
        cl[i].id = i;
        cl[i].pairs = o.pairs / o.clients + (i < o.pairs % o.clients);
        cl[i].lat_us = xcalloc((size_t)(cl[i].pairs * per_pair + 1), sizeof(double));
    }
    double t0 = now_us();
    for (int i = 0; i < o.clients; i++)
        if (pthread_create(&th[i], NULL, client_main, &cl[i]) != 0) {
            fprintf(stderr, "bank_loadgen: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < o.clients; i++)
        pthread_join(th[i], NULL);
    double secs = (now_us() - t0) / 1e6;

    long total = 0, errors = 0, refused = 0, replays = 0;
    for (int i = 0; i < o.clients; i++) {
        total += cl[i].nlat;
        errors += cl[i].errors;
        refused += cl[i].refused;
        replays += cl[i].replays;
    }
    if (replays)
        fprintf(stderr, "bank_loadgen: WARNING: %ld answers were replays (job ids used before): "
                        "those requests wrote nothing, so the numbers are not a fresh load\n",
                replays);
    double *all = xcalloc((size_t)total + 1, sizeof(double));
    long k = 0;
    for (int i = 0; i < o.clients; i++) {
        memcpy(all + k, cl[i].lat_us, (size_t)cl[i].nlat * sizeof(double));
        k += cl[i].nlat;
        free(cl[i].lat_us);
    }
    qsort(all, (size_t)total, sizeof(double), cmp_double);
#define PCT(p) (total ? all[(long)((double)(total - 1) * (p))] / 1000.0 : 0.0)
    long pairs_done = o.pairs - refused;
    printf("clients=%d accounts=%d admit=%d pairs=%ld requests=%ld errors=%ld refused=%ld "
           "replays=%ld\n",
           o.clients, o.accounts, o.admit, pairs_done, total, errors, refused, replays);
    printf("elapsed_s=%.3f pairs_per_s=%.0f requests_per_s=%.0f\n", secs,
           (double)pairs_done / secs, (double)total / secs);
    printf("latency_ms p50=%.3f p99=%.3f p99.9=%.3f max=%.3f\n", PCT(0.50), PCT(0.99),
           PCT(0.999), total ? all[total - 1] / 1000.0 : 0.0);
    free(all);
    free(cl);
    free(th);
    return errors ? 1 : 0;
}
