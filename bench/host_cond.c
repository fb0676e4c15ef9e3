/* SPDX-License-Identifier: GPL-3.0-or-later */
/* host_cond.c - fdatasync latency and the loopback HTTP floor (host_cond.h). */
#include "host_cond.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* p-th percentile (0..100) of n sorted samples, nearest rank. */
static int64_t pct(const int64_t *v, size_t n, int p)
{
    size_t k = (n * (size_t)p + 99) / 100;
    return v[k ? k - 1 : 0];
}

static int fsync_probe(FILE *out, const char *dir)
{
    char path[4096];
    int len = snprintf(path, sizeof path, "%s/host_cond.%ld.tmp", dir, (long)getpid());
    if (len < 0 || (size_t)len >= sizeof path) {
        fprintf(out, "host: fdatasync unavailable: directory name too long\n");
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(out, "host: fdatasync unavailable: %s: %s\n", path, strerror(errno));
        return -1;
    }
    static char block[4096];
    memset(block, 'x', sizeof block);
    int64_t v[HOST_FSYNC_SAMPLES];
    int i, rc = 0;
    for (i = 0; i < HOST_FSYNC_SAMPLES; i++) {
        int64_t t0 = mono_ns();
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block || fdatasync(fd) < 0) {
            fprintf(out, "host: fdatasync unavailable: %s: %s\n", path, strerror(errno));
            rc = -1;
            break;
        }
        v[i] = mono_ns() - t0;
    }
    close(fd);
    unlink(path);
    if (rc < 0)
        return -1;
    qsort(v, HOST_FSYNC_SAMPLES, sizeof v[0], cmp_i64);
    fprintf(out,
            "host: fdatasync of 4 KiB appends in %s: p50 %.0f us, p99 %.0f us, max %.0f us "
            "(%d samples)\n",
            dir, (double)pct(v, HOST_FSYNC_SAMPLES, 50) / 1e3,
            (double)pct(v, HOST_FSYNC_SAMPLES, 99) / 1e3, (double)v[HOST_FSYNC_SAMPLES - 1] / 1e3,
            HOST_FSYNC_SAMPLES);
    return 0;
}

static const char REQUEST[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
static const char REPLY[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                            "Content-Length: 11\r\n\r\n{\"ok\":true}";

/* Read exactly n bytes (requests and replies have fixed lengths here). */
static int read_full(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* The responder: one connection, a fixed reply per fixed-length request, until EOF. */
static void *responder(void *arg)
{
    int lfd = *(int *)arg;
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char buf[sizeof REQUEST - 1];
    while (read_full(fd, buf, sizeof buf) == 0)
        if (write(fd, REPLY, sizeof REPLY - 1) != (ssize_t)(sizeof REPLY - 1))
            break;
    close(fd);
    return NULL;
}

static int http_probe(FILE *out)
{
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 1) < 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &alen) < 0) {
        fprintf(out, "host: HTTP floor unavailable: listen: %s\n", strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, responder, &lfd) != 0) {
        fprintf(out, "host: HTTP floor unavailable: no thread\n");
        close(lfd);
        return -1;
    }
    int rc = -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    static int64_t v[HOST_HTTP_SAMPLES];
    char buf[sizeof REPLY - 1];
    int64_t start = 0, end = 0;
    int connected = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (connected) {
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int i;
        start = mono_ns();
        for (i = 0; i < HOST_HTTP_SAMPLES; i++) {
            int64_t t0 = mono_ns();
            if (write(fd, REQUEST, sizeof REQUEST - 1) != (ssize_t)(sizeof REQUEST - 1) ||
                read_full(fd, buf, sizeof buf) < 0)
                break;
            v[i] = mono_ns() - t0;
        }
        end = mono_ns();
        rc = i == HOST_HTTP_SAMPLES ? 0 : -1;
    }
    int e = errno;
    if (!connected)
        shutdown(lfd, SHUT_RDWR); /* wakes the responder's accept() */
    if (fd >= 0)
        close(fd); /* EOF ends the responder */
    pthread_join(t, NULL);
    close(lfd);
    if (rc < 0) {
        fprintf(out, "host: HTTP floor unavailable: loopback: %s\n", strerror(e));
        return -1;
    }
    qsort(v, HOST_HTTP_SAMPLES, sizeof v[0], cmp_i64);
    fprintf(out,
            "host: HTTP floor, one keep-alive loopback TCP connection, minimal responder: "
            "p50 %.1f us, p99 %.1f us, %.0f requests/s (%d round trips)\n",
            (double)pct(v, HOST_HTTP_SAMPLES, 50) / 1e3,
            (double)pct(v, HOST_HTTP_SAMPLES, 99) / 1e3,
            HOST_HTTP_SAMPLES * 1e9 / (double)(end - start), HOST_HTTP_SAMPLES);
    return 0;
}

int host_cond_print(FILE *out, const char *dir)
{
    int a = fsync_probe(out, dir && dir[0] ? dir : ".");
    int b = http_probe(out);
    fflush(out);
    return a < 0 || b < 0 ? -1 : 0;
}
