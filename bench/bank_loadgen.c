/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bank_loadgen.c - drive admit/hold/settle through allotd's HTTP API and print throughput
 * and latency percentiles (bench/results/bank.md).
 *
 * N clients, each one HTTP/1.1 keep-alive connection (TCP or Unix socket) with one request
 * in flight, loop: [admit] -> hold -> settle for the next job id, until the op budget runs
 * out.  A "pair" is one hold plus one settle, both acknowledged (durable) by allotd.
 *
 * The clients are connections, not threads: one thread drives all of them with epoll, as a
 * server's many callers would look from one busy host.  The load generator shares this
 * machine's two cores with allotd, so its own cost comes out of what the bank can use; a
 * thread per client (until 2026-11-24, 1c9ec85) cost ~10 us of CPU per request and woke a thread
 * for every reply (bench/results/bank.md, 2026-11-24, 03ea179).  Every request's latency (write of
 * the request to the last byte of its reply) goes into one array; percentiles come after the run.
 * Raw sockets instead of libcurl keep the client's own cost small.
 *
 * --floor sends two GET /v1/whoami per pair instead: no storage at all, so it measures what
 * the HTTP path and this load generator allow on the machine (a ceiling for the bank).
 * --idle N opens N more connections first and sends nothing on them: what a server pays
 * per wake-up for connections that are open but quiet (poll() looks at every one).
 *
 * Job ids come from one sequence shared by all clients, as slurmctld numbers jobs
 * (FirstJobId, then +1 per job), so every job-keyed index grows at one end as it does on a
 * cluster.  Before 2026-11-24 (03ea179) each client had its own stripe (base + client x 10^8): 32
 * separate insertion points in each of those indexes, a pattern no cluster produces.
 *
 * Authentication: the target must run with AuthType=none (test builds, loopback): the
 * client sends X-Allot-User.  Jobs are spread over --accounts accounts (acct0..acctK-1)
 * that the caller created with an active allocation each; --accounts 1 puts every client
 * on one allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libutil/xalloc.h"

struct opts {
    const char *host; /* TCP host, or NULL with sock */
    int port;
    const char *sock; /* Unix socket path */
    int clients;
    long pairs; /* total hold+settle pairs over all clients */
    int accounts;
    int admit; /* 1: also POST /v1/jobs/admit before each hold */
    int floor; /* 1: GET /v1/whoami twice per "pair" instead (no storage) */
    const char *cluster;
    const char *partition;
    const char *user;
    long job_base; /* first job id */
    int idle;      /* connections opened first and left idle for the whole run */
};

enum step { STEP_ADMIT, STEP_HOLD, STEP_SETTLE, STEP_FLOOR1, STEP_FLOOR2 };

struct client {
    int id;
    int fd;
    long pairs; /* pairs (or floor pairs) still to start */
    long job;   /* the current pair's job id */
    int acct;
    enum step step;
    double t0_us; /* when the request in flight was written */
    char out[2048];
    size_t out_len, out_off;
    char in[16384];
    size_t in_len;
};

struct run {
    const struct opts *o;
    int ep;
    long next_job;
    long live;      /* clients with work left */
    double *lat_us; /* one entry per request */
    long nlat, cap;
    long errors, refused, replays; /* replays: the bank did nothing new (job ids used before) */
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
    /* Connected while blocking (loopback: at once); nonblocking from here on. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        goto fail;
    return fd;
fail:
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Write what is left of c->out; 0 when all is written or the socket is full (EPOLLOUT
 * finishes it), -1 on error. */
static int flush_out(struct run *r, struct client *c)
{
    while (c->out_off < c->out_len) {
        ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
            return epoll_ctl(r->ep, EPOLL_CTL_MOD, c->fd, &ev);
        }
        if (w <= 0)
            return -1;
        c->out_off += (size_t)w;
    }
    return 0;
}

/* Start c's next request: the next step of its pair, or the first of a new pair. */
static int send_next(struct run *r, struct client *c)
{
    const struct opts *o = r->o;
    const char *path = NULL;
    char body[1024];
    body[0] = '\0';
    switch (c->step) {
    case STEP_FLOOR1:
    case STEP_FLOOR2:
        path = "/v1/whoami";
        break;
    case STEP_ADMIT:
        path = "/v1/jobs/admit";
        snprintf(body, sizeof(body),
                 "{\"cluster\":\"%s\",\"user\":\"%s\",\"account\":\"acct%d\","
                 "\"partition\":\"%s\",\"time_limit_s\":600,\"tres\":\"cpu=1,node=1\"}",
                 o->cluster, o->user, c->acct, o->partition);
        break;
    case STEP_HOLD:
        path = "/v1/jobs/hold";
        snprintf(body, sizeof(body),
                 "{\"cluster\":\"%s\",\"job_id\":%ld,\"run\":0,\"user\":\"%s\","
                 "\"account\":\"acct%d\",\"partition\":\"%s\",\"start\":%ld,"
                 "\"time_limit_s\":600,\"alloc_tres\":\"cpu=1,node=1\",\"billing\":1}",
                 o->cluster, c->job, o->user, c->acct, o->partition, (long)time(NULL));
        break;
    case STEP_SETTLE:
        path = "/v1/jobs/settle";
        snprintf(body, sizeof(body),
                 "{\"cluster\":\"%s\",\"job_id\":%ld,\"run\":0,\"elapsed_s\":55,"
                 "\"state\":\"COMPLETED\"}",
                 o->cluster, c->job);
        break;
    }
    int n =
        c->step == STEP_FLOOR1 || c->step == STEP_FLOOR2
            ? snprintf(c->out, sizeof(c->out),
                       "GET %s HTTP/1.1\r\nHost: bench\r\nX-Allot-User: %s\r\n\r\n", path, o->user)
            : snprintf(c->out, sizeof(c->out),
                       "POST %s HTTP/1.1\r\nHost: bench\r\nX-Allot-User: %s\r\n"
                       "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                       path, o->user, strlen(body), body);
    if (n < 0 || (size_t)n >= sizeof(c->out))
        return -1;
    c->out_len = (size_t)n;
    c->out_off = 0;
    c->in_len = 0;
    c->t0_us = now_us();
    return flush_out(r, c);
}

/* Begin c's next pair, or retire c when its budget is spent (-1 only on a write error). */
static int next_pair(struct run *r, struct client *c)
{
    if (c->pairs == 0) {
        r->live--;
        epoll_ctl(r->ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
        return 0;
    }
    long i = c->pairs--;
    if (r->o->floor) {
        c->step = STEP_FLOOR1;
    } else {
        c->job = r->o->job_base + r->next_job++;
        c->acct = (int)((c->id + i) % r->o->accounts);
        c->step = r->o->admit ? STEP_ADMIT : STEP_HOLD;
    }
    return send_next(r, c);
}

/* A reply is complete in c->in: its status, or 0 while more is to come, -1 if malformed. */
static int reply_status(struct client *c)
{
    c->in[c->in_len] = '\0';
    const char *hdr_end = strstr(c->in, "\r\n\r\n");
    if (!hdr_end)
        return c->in_len >= sizeof(c->in) - 1 ? -1 : 0;
    const char *cl = strcasestr(c->in, "\r\nContent-Length:");
    if (!cl || cl > hdr_end)
        return -1;
    long len = strtol(cl + 17, NULL, 10);
    size_t need = (size_t)(hdr_end + 4 - c->in) + (size_t)len;
    if (len < 0 || need >= sizeof(c->in))
        return -1;
    if (c->in_len < need)
        return 0;
    int status = 0;
    if (sscanf(c->in, "HTTP/1.%*d %d", &status) != 1 || status <= 0)
        return -1;
    return status;
}

/* The reply (in c->in) says the request was a replay of one already applied. */
static int is_replay(const struct client *c)
{
    const char *body = strstr(c->in, "\r\n\r\n");
    return body && (strstr(body, "\"replay\":true") || strstr(body, "\"replay\": true"));
}

/* The connection failed mid-request: count an error, reconnect and go on with a new pair. */
static int reconnect(struct run *r, struct client *c)
{
    r->errors++;
    epoll_ctl(r->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = connect_target(r->o);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (c->fd < 0 || epoll_ctl(r->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
        fprintf(stderr, "bank_loadgen: cannot reconnect: %s\n", strerror(errno));
        return -1;
    }
    return next_pair(r, c);
}

/* A whole reply arrived: record it and send what follows. */
static int on_reply(struct run *r, struct client *c, int status)
{
    if (r->nlat < r->cap)
        r->lat_us[r->nlat++] = now_us() - c->t0_us;
    switch (c->step) {
    case STEP_FLOOR1:
        if (status != 200)
            r->errors++;
        c->step = STEP_FLOOR2;
        return send_next(r, c);
    case STEP_FLOOR2:
        if (status != 200)
            r->errors++;
        return next_pair(r, c);
    case STEP_ADMIT:
        if (status != 200)
            r->errors++;
        c->step = STEP_HOLD;
        return send_next(r, c);
    case STEP_HOLD:
        if (status == 402) {
            r->refused++;
            return next_pair(r, c);
        }
        if (status != 200) {
            r->errors++;
            return next_pair(r, c);
        }
        if (is_replay(c))
            r->replays++;
        c->step = STEP_SETTLE;
        return send_next(r, c);
    case STEP_SETTLE:
        if (status != 200)
            r->errors++;
        else if (is_replay(c))
            r->replays++;
        return next_pair(r, c);
    }
    return -1;
}

static int on_event(struct run *r, struct client *c, uint32_t events)
{
    if (events & EPOLLOUT) {
        if (flush_out(r, c) < 0)
            return reconnect(r, c);
        if (c->out_off == c->out_len) {
            struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
            if (epoll_ctl(r->ep, EPOLL_CTL_MOD, c->fd, &ev) < 0)
                return -1;
        }
    }
    if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
        return 0;
    for (;;) {
        ssize_t n = read(c->fd, c->in + c->in_len, sizeof(c->in) - 1 - c->in_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0)
            return reconnect(r, c);
        c->in_len += (size_t)n;
        int status = reply_status(c);
        if (status < 0)
            return reconnect(r, c);
        if (status > 0)
            return on_reply(r, c, status);
    }
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
            "                    [--user U] [--job-base N] [--floor] [--idle N]\n"
            "  Each client is one keep-alive connection with one request in flight; one\n"
            "  thread drives them all (epoll).  Job ids: --job-base, --job-base + 1, ...\n"
            "  --floor: two GET /v1/whoami per pair instead of hold+settle (the HTTP path\n"
            "           alone, no storage: what the machine allows before the bank's work)\n"
            "  --idle N: N more connections, opened first and left quiet until the end\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct opts o = {.clients = 32,
                     .pairs = 100000,
                     .accounts = 32,
                     .cluster = "bench",
                     .partition = "cpu",
                     .user = "root",
                     .job_base = 1};
    static const struct option lo[] = {{"tcp", 1, 0, 't'},
                                       {"unix", 1, 0, 'u'},
                                       {"clients", 1, 0, 'c'},
                                       {"pairs", 1, 0, 'n'},
                                       {"accounts", 1, 0, 'a'},
                                       {"admit", 0, 0, 'A'},
                                       {"cluster", 1, 0, 'C'},
                                       {"partition", 1, 0, 'p'},
                                       {"user", 1, 0, 'U'},
                                       {"job-base", 1, 0, 'j'},
                                       {"floor", 0, 0, 'F'},
                                       {"idle", 1, 0, 'I'},
                                       {0, 0, 0, 0}};
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
        case 'u':
            o.sock = optarg;
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
        case 'A':
            o.admit = 1;
            break;
        case 'C':
            o.cluster = optarg;
            break;
        case 'p':
            o.partition = optarg;
            break;
        case 'U':
            o.user = optarg;
            break;
        case 'j':
            o.job_base = atol(optarg);
            break;
        case 'F':
            o.floor = 1;
            break;
        case 'I':
            o.idle = atoi(optarg);
            break;
        default:
            usage();
        }
    }
    if ((!o.host && !o.sock) || o.clients < 1 || o.clients > 4096 || o.pairs < 1 ||
        o.accounts < 1 || o.idle < 0 || o.idle > 4000)
        usage();

    int per_pair = o.admit ? 3 : 2;
    struct run r = {.o = &o, .cap = o.pairs * per_pair};
    r.lat_us = xcalloc((size_t)r.cap + 1, sizeof(double));
    r.ep = epoll_create1(EPOLL_CLOEXEC);
    if (r.ep < 0) {
        perror("bank_loadgen: epoll_create1");
        return 1;
    }
    int *idle = xcalloc((size_t)o.idle + 1, sizeof(int));
    for (int i = 0; i < o.idle; i++) {
        idle[i] = connect_target(&o);
        if (idle[i] < 0) {
            fprintf(stderr, "bank_loadgen: cannot open idle connection %d: %s\n", i + 1,
                    strerror(errno));
            return 1;
        }
    }
    struct client *cl = xcalloc((size_t)o.clients, sizeof(*cl));
    for (int i = 0; i < o.clients; i++) {
        struct client *c = &cl[i];
        c->id = i;
        c->pairs = o.pairs / o.clients + (i < o.pairs % o.clients);
        c->fd = connect_target(&o);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (c->fd < 0 || epoll_ctl(r.ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
            fprintf(stderr, "bank_loadgen: cannot connect: %s\n", strerror(errno));
            return 1;
        }
        r.live++;
    }
    double t0 = now_us();
    for (int i = 0; i < o.clients; i++)
        if (next_pair(&r, &cl[i]) < 0) {
            fprintf(stderr, "bank_loadgen: cannot send: %s\n", strerror(errno));
            return 1;
        }
    struct epoll_event evs[64];
    while (r.live > 0) {
        /* Bounded: a server that stops answering ends the run with errors, not a hang. */
        int n = epoll_wait(r.ep, evs, 64, 30000);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "bank_loadgen: %s\n",
                    n == 0 ? "no reply for 30 s; giving up" : strerror(errno));
            r.errors += r.live;
            break;
        }
        for (int i = 0; i < n; i++)
            if (on_event(&r, evs[i].data.ptr, evs[i].events) < 0) {
                fprintf(stderr, "bank_loadgen: %s\n", strerror(errno));
                return 1;
            }
    }
    double secs = (now_us() - t0) / 1e6;
    for (int i = 0; i < o.clients; i++)
        if (cl[i].fd >= 0)
            close(cl[i].fd);
    close(r.ep);
    for (int i = 0; i < o.idle; i++)
        close(idle[i]);
    free(idle);

    if (r.replays)
        fprintf(stderr,
                "bank_loadgen: WARNING: %ld answers were replays (job ids used before): "
                "those requests wrote nothing, so the numbers are not a fresh load\n",
                r.replays);
    long total = r.nlat;
    qsort(r.lat_us, (size_t)total, sizeof(double), cmp_double);
#define PCT(p) (total ? r.lat_us[(long)((double)(total - 1) * (p))] / 1000.0 : 0.0)
    long pairs_done = o.pairs - r.refused;
    printf("clients=%d accounts=%d admit=%d pairs=%ld requests=%ld errors=%ld refused=%ld "
           "replays=%ld\n",
           o.clients, o.accounts, o.admit, pairs_done, total, r.errors, r.refused, r.replays);
    printf("elapsed_s=%.3f pairs_per_s=%.0f requests_per_s=%.0f\n", secs, (double)pairs_done / secs,
           (double)total / secs);
    printf("latency_ms p50=%.3f p99=%.3f p99.9=%.3f max=%.3f\n", PCT(0.50), PCT(0.99), PCT(0.999),
           total ? r.lat_us[total - 1] / 1000.0 : 0.0);
    free(r.lat_us);
    free(cl);
    return r.errors ? 1 : 0;
}
