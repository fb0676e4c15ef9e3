/* SPDX-License-Identifier: GPL-3.0-or-later */
/* oom.c - allocation-failure loops over libcore and liballot (STYLE §4, after SQLite's
 * test_malloc.c: fail the Nth allocation, N = 1, 2, ... until a run allocates fewer than N).
 *
 * The program is linked with -Wl,--wrap for malloc, calloc, realloc, strdup and free, so
 * every allocation made by code linked statically into it (libcore, liballot, libutil: the
 * libraries under test) passes through the counters here; libc, libcurl and jansson
 * allocate on their own and are not failed.  Workloads:
 *   core    usage_tree_create + fairshare_compute for the three algorithms + destroy
 *   client  allot_urlencode, allot_client_create + options, allot_request GET /v1/whoami and
 *           a 404, and allot_job_admit against a real allotd started by this program
 *           (argv[1] = allotd binary; AuthType=none, TestMode=local, loopback)
 * Each failing run must end in -1/NULL with ALLOT_ENOMEM (or, for the client, a clean error
 * of the call), never a crash; each successful run gives exactly the fault-free result; the
 * libcore loop also checks that every block allocated was freed (ASan's leak check covers
 * the client in sanitizer builds).  Prints one TAP line per workload.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "allot/allot.h"
#include "libcore/fairshare.h"
#include "libcore/usage.h"

#define MAX_RUNS 10000

/* ---- the allocator shim (test-only globals, STYLE §2) ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void __real_free(void *p);

static long fail_at; /* fail the allocation with this number; 0 = never */
static long allocs;  /* allocations counted since arming */
static long hits;    /* failures injected */
static long live;    /* blocks from wrapped calls not yet freed (libcore loop) */
static int counting; /* 1 while a workload runs */

static int due(void)
{
    if (!counting)
        return 0;
    if (++allocs == fail_at) {
        hits++;
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    if (due())
        return NULL;
    void *p = __real_malloc(n);
    if (p && counting)
        live++;
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (due())
        return NULL;
    void *p = __real_calloc(n, size);
    if (p && counting)
        live++;
    return p;
}

void *__wrap_realloc(void *old, size_t n)
{
    if (due())
        return NULL;
    void *p = __real_realloc(old, n);
    if (p && !old && counting)
        live++;
    return p;
}

char *__wrap_strdup(const char *s)
{
    if (due())
        return NULL;
    char *p = __real_strdup(s);
    if (p && counting)
        live++;
    return p;
}

void __wrap_free(void *p)
{
    if (p && counting)
        live--;
    __real_free(p);
}

static void arm(long n)
{
    fail_at = n;
    allocs = hits = live = 0;
    counting = 1;
}

static void disarm(void)
{
    counting = 0;
}

static int failures;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("# FAIL: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    failures++;
}

/* ---- libcore ---- */

#define NODES 7
static const struct usage_assoc_spec specs[NODES] = {
    {-1, 1, 0, "root", NULL},         {0, 60, 0, "science", NULL},    {0, 40, 0, "arts", NULL},
    {1, 10, 500, "science", "alice"}, {1, 30, 100, "science", "bob"}, {2, 1, 0, "arts", "carol"},
    {2, 5, 900, "arts", "dave"},
};

/* One run: 0 and rows filled, or -1 with err. */
static int core_run(struct fairshare_row rows[3][NODES], struct allot_error *err)
{
    usage_tree_t *t = usage_tree_create(specs, NODES, err);
    if (!t)
        return -1;
    int rc = 0;
    for (int a = 0; a < 3 && rc == 0; a++) {
        struct fairshare_opts o = {.algo = (enum fairshare_algo)a, .dampening = 1};
        rc = fairshare_compute(t, &o, rows[a], err);
    }
    usage_tree_destroy(t);
    return rc;
}

static void loop_core(void)
{
    static struct fairshare_row want[3][NODES], got[3][NODES];
    struct allot_error err = {0};
    if (core_run(want, &err) < 0) {
        problem("core: fault-free run: %s", err.msg);
        return;
    }
    long n, faults = 0;
    for (n = 1; n <= MAX_RUNS; n++) {
        memset(got, 0, sizeof got);
        allot_error_clear(&err);
        arm(n);
        int rc = core_run(got, &err);
        disarm();
        if (live != 0)
            problem("core N=%ld: %ld blocks leaked", n, live);
        if (hits == 0) {
            if (rc < 0 || memcmp(got, want, sizeof got) != 0)
                problem("core N=%ld: no fault, different result", n);
            break;
        }
        faults += hits;
        if (rc == 0 && memcmp(got, want, sizeof got) != 0)
            problem("core N=%ld: the fault was absorbed but the result differs", n);
        if (rc < 0 && (err.code != ALLOT_ENOMEM || !err.msg[0]))
            problem("core N=%ld: error %s (%s), want ENOMEM", n, allot_errname(err.code), err.msg);
    }
    printf("%s 1 - core: %ld runs, %ld allocation failures injected\n", failures ? "not ok" : "ok",
           n, faults);
}

/* ---- liballot against a real allotd ---- */

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

static pid_t allotd_pid;
static char dir[64], url[64];

static int allotd_start(const char *bin)
{
    char conf[128], line[512];
    int port = free_port();
    snprintf(dir, sizeof dir, "/tmp/allot-oom-XXXXXX");
    if (port < 0 || !mkdtemp(dir))
        return -1;
    snprintf(conf, sizeof conf, "%s/allot.conf", dir);
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    FILE *f = fopen(conf, "w");
    if (!f)
        return -1;
    snprintf(line, sizeof line,
             "StorageLoc=%s/allot.db\nListenAddr=127.0.0.1:%d\nLogFile=%s/allotd.log\n"
             "AuthType=none\nTestMode=local\nSuperUsers=root\nOperators=slurm\n",
             dir, port, dir);
    fputs(line, f);
    fclose(f);
    allotd_pid = fork();
    if (allotd_pid < 0)
        return -1;
    if (allotd_pid == 0) {
        execl(bin, bin, "--config", conf, "--foreground", (char *)NULL);
        _exit(127);
    }
    /* Bounded wait for /healthz: 20 s. */
    /* AuthType=none: name the user, or the client asks the system munged for a credential. */
    allot_client_t *c = allot_client_create(url, NULL);
    if (!c)
        return -1;
    if (allot_client_set_test_user(c, "root", NULL) < 0 ||
        allot_client_set_timeout_ms(c, 1000, NULL) < 0) {
        allot_client_destroy(c);
        return -1;
    }
    int ok = 0;
    for (int i = 0; i < 200 && !ok; i++) {
        ok = allot_request(c, "GET", "/healthz", NULL, NULL, NULL, NULL) == 0;
        if (!ok)
            usleep(100000);
    }
    allot_client_destroy(c);
    return ok ? 0 : -1;
}

static void allotd_stop(void)
{
    char p[160];
    if (allotd_pid > 0) {
        kill(allotd_pid, SIGTERM);
        waitpid(allotd_pid, NULL, 0);
    }
    const char *files[] = {"allot.conf", "allot.db", "allot.db-wal", "allot.db-shm", "allotd.log"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* One client run; out gets a summary of the answers for comparison. */
static int client_run(char *out, size_t len, struct allot_error *err)
{
    int rc = -1, status = 0;
    char *reply = NULL, *enc = allot_urlencode("a b/c&d", err);
    allot_client_t *c = NULL;
    if (!enc)
        goto out;
    c = allot_client_create(url, err);
    if (!c || allot_client_set_test_user(c, "slurm", err) < 0 ||
        allot_client_set_timeout_ms(c, 5000, err) < 0)
        goto out;
    if (allot_request(c, "GET", "/v1/whoami", NULL, &status, &reply, err) < 0)
        goto out;
    size_t k = (size_t)snprintf(out, len, "%s|%d|%s|", enc, status, reply);
    free(reply);
    reply = NULL;
    /* An error reply is an outcome here: its code and message must come through. */
    struct allot_error e404 = {0};
    if (allot_request(c, "GET", "/v1/accounts/nosuch", NULL, &status, &reply, &e404) == 0 ||
        e404.code != ALLOT_ENOENT) {
        if (e404.code == ALLOT_ENOMEM) {
            *err = e404;
            goto out;
        }
        allot_errorf(err, ALLOT_EINTERNAL, "404 call: %s %s", allot_errname(e404.code), e404.msg);
        goto out;
    }
    k += (size_t)snprintf(out + k, len > k ? len - k : 0, "%d|%s|", status, e404.msg);
    struct allot_job_desc job = {.cluster = "c1",
                                 .user = "alice",
                                 .account = "chem",
                                 .partition = "std",
                                 .time_limit_s = 600,
                                 .tres = "cpu=1"};
    struct allot_job_result res;
    if (allot_job_admit(c, &job, &res, err) < 0)
        goto out;
    snprintf(out + k, len > k ? len - k : 0, "%d|%lld|%s", res.ok, (long long)res.cost_sumin,
             res.message);
    rc = 0;
out:
    free(reply);
    free(enc);
    allot_client_destroy(c);
    return rc;
}

static void loop_client(const char *bin, int t)
{
    static char want[8192], got[8192];
    struct allot_error err = {0};
    if (allotd_start(bin) < 0) {
        problem("client: cannot start allotd %s", bin);
        allotd_stop();
        printf("not ok %d - client\n", t);
        return;
    }
    /* Bank data for the admit: cluster, account, partition, allocation (root, unwrapped). */
    allot_client_t *c = allot_client_create(url, &err);
    if (c && allot_client_set_test_user(c, "root", &err) < 0) {
        allot_client_destroy(c);
        c = NULL;
    }
    if (!c)
        problem("client: setup: %s", err.msg);
    const char *setup[][2] = {
        {"/v1/clusters", "{\"name\":\"c1\"}"},
        {"/v1/accounts", "{\"name\":\"chem\"}"},
        {"/v1/partitions", "{\"cluster\":\"c1\",\"name\":\"std\"}"},
        {"/v1/users", "{\"name\":\"alice\"}"},
        {"/v1/assocs", "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}"},
        {"/v1/allocations", "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":"
                            "\"2100-01-01\",\"su\":\"100h\"}"},
    };
    for (size_t i = 0; c && i < sizeof setup / sizeof setup[0]; i++)
        if (allot_request(c, "POST", setup[i][0], setup[i][1], NULL, NULL, &err) < 0)
            problem("client: setup %s: %s", setup[i][0], err.msg);
    allot_client_destroy(c);
    int before = failures;
    if (client_run(want, sizeof want, &err) < 0) {
        problem("client: fault-free run: %s", err.msg);
        allotd_stop();
        printf("not ok %d - client\n", t);
        return;
    }
    long n, faults = 0;
    for (n = 1; n <= MAX_RUNS && failures < before + 5; n++) {
        got[0] = '\0';
        allot_error_clear(&err);
        arm(n);
        int rc = client_run(got, sizeof got, &err);
        disarm();
        if (hits == 0) {
            if (rc < 0 || strcmp(got, want) != 0)
                problem("client N=%ld: no fault, different result: %s", n, rc < 0 ? err.msg : got);
            break;
        }
        faults += hits;
        if (rc == 0 && strcmp(got, want) != 0)
            problem("client N=%ld: the fault was absorbed but the result differs:\n%s\n%s", n, want,
                    got);
        if (rc < 0 && (err.code != ALLOT_ENOMEM || !err.msg[0]))
            problem("client N=%ld: error %s (%s), want ENOMEM", n, allot_errname(err.code),
                    err.msg);
    }
    allotd_stop();
    printf("%s %d - client: %ld runs, %ld allocation failures injected\n",
           failures > before ? "not ok" : "ok", t, n, faults);
}

int main(int argc, char **argv)
{
    int t = 1;
    loop_core();
    if (argc > 1) {
        loop_client(argv[1], ++t);
    }
    printf("1..%d\n", t);
    return failures ? 1 : 0;
}
