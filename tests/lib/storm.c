/* SPDX-License-Identifier: GPL-3.0-or-later */
/* storm.c - load generator for allotd's concurrency and crash tests (t1030, t1040) and a
 * rough hold+settle throughput figure.
 *
 * N client threads, each with its own keep-alive libcurl handle, run hold then settle for
 * consecutive job ids against one account.  Every acknowledged operation (HTTP 2xx or a
 * 402 refusal: both are committed outcomes) is appended to the ack log as one line
 * "hold <job> held|refused <hold_sumin>" or "settle <job> <charge_sumin>", written after
 * the reply arrived, so after a crash the log lists exactly what allotd promised.
 * A transport error (daemon gone) stops that client.  Prints totals and the rate; asserts
 * nothing about time.  Auth: AuthType=none (X-Allot-User), the tests that use it are not
 * about authentication.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct opts {
    const char *url, *cluster, *account, *partition, *user, *caller, *ack_path;
    long clients, ops, job_base, billing, time_limit_s, elapsed_s;
};

struct totals {
    pthread_mutex_t lock;
    FILE *ack;
    long held, refused, settled, errors;
};

struct client {
    const struct opts *o;
    struct totals *t;
    long index;
};

struct buf {
    char data[8192];
    size_t len;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;
    size_t len = size * n;
    size_t room = sizeof(b->data) - 1 - b->len;
    size_t take = len < room ? len : room;
    memcpy(b->data + b->len, p, take);
    b->len += take;
    b->data[b->len] = '\0';
    return len;
}

/* POST body to path; returns the HTTP status or -1 on a transport error. */
static long post(CURL *c, const struct opts *o, const char *path, const char *body, struct buf *b)
{
    char url[512];
    snprintf(url, sizeof(url), "%s%s", o->url, path);
    b->len = 0;
    b->data[0] = '\0';
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (curl_easy_perform(c) != CURLE_OK)
        return -1;
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static long json_int_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* One ack line: "<verb> <job> <what> <v>" ("settle" lines have no what). */
static void ack(struct totals *t, const char *verb, long job, const char *what, long v)
{
    pthread_mutex_lock(&t->lock);
    if (t->ack) {
        if (*what)
            fprintf(t->ack, "%s %ld %s %ld\n", verb, job, what, v);
        else
            fprintf(t->ack, "%s %ld %ld\n", verb, job, v);
        fflush(t->ack);
    }
    pthread_mutex_unlock(&t->lock);
}

static void *client_main(void *arg)
{
    struct client *cl = arg;
    const struct opts *o = cl->o;
    struct totals *t = cl->t;
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    struct curl_slist *h = NULL;
    char hdr[128];
    snprintf(hdr, sizeof(hdr), "X-Allot-User: %s", o->caller);
    h = curl_slist_append(h, hdr);
    h = curl_slist_append(h, "Content-Type: application/json");
    struct buf b;
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    long held = 0, refused = 0, settled = 0, errors = 0;
    for (long i = 0; i < o->ops; i++) {
        long job = o->job_base + cl->index * o->ops + i;
        char body[1024];
        snprintf(body, sizeof(body),
                 "{\"cluster\":\"%s\",\"job_id\":%ld,\"user\":\"%s\",\"account\":\"%s\","
                 "\"partition\":\"%s\",\"time_limit_s\":%ld,\"billing\":%ld}",
                 o->cluster, job, o->user, o->account, o->partition, o->time_limit_s, o->billing);
        long st = post(c, o, "/v1/jobs/hold", body, &b);
        if (st == 402) {
            refused++;
            ack(t, "hold", job, "refused", 0);
            continue;
        }
        if (st != 200) {
            errors++;
            if (st < 0)
                break;
            continue;
        }
        held++;
        ack(t, "hold", job, "held", json_int_after(b.data, "\"hold_sumin\":"));
        snprintf(body, sizeof(body),
                 "{\"cluster\":\"%s\",\"job_id\":%ld,\"elapsed_s\":%ld,\"state\":\"COMPLETED\","
                 "\"source\":\"epilog\"}",
                 o->cluster, job, o->elapsed_s);
        st = post(c, o, "/v1/jobs/settle", body, &b);
        if (st != 200) {
            errors++;
            if (st < 0)
                break;
            continue;
        }
        settled++;
        ack(t, "settle", job, "", json_int_after(b.data, "\"charge_sumin\":"));
    }
    pthread_mutex_lock(&t->lock);
    t->held += held;
    t->refused += refused;
    t->settled += settled;
    t->errors += errors;
    pthread_mutex_unlock(&t->lock);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return NULL;
}

static void usage(void)
{
    fputs("usage: allot_storm --url URL [--clients N] [--ops M per client] [--job-base K]\n"
          "       [--cluster C] [--account A] [--partition P] [--user U] [--caller OP]\n"
          "       [--billing B] [--time-limit S] [--elapsed S] [--ack-log FILE]\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    struct opts o = {.url = NULL,
                     .cluster = "c1",
                     .account = "chem",
                     .partition = "std",
                     .user = "alice",
                     .caller = "slurm",
                     .ack_path = NULL,
                     .clients = 64,
                     .ops = 50,
                     .job_base = 1,
                     .billing = 1,
                     .time_limit_s = 60,
                     .elapsed_s = 30};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--url"))
            o.url = v;
        else if (!strcmp(a, "--clients"))
            o.clients = atol(v);
        else if (!strcmp(a, "--ops"))
            o.ops = atol(v);
        else if (!strcmp(a, "--job-base"))
            o.job_base = atol(v);
        else if (!strcmp(a, "--cluster"))
            o.cluster = v;
        else if (!strcmp(a, "--account"))
            o.account = v;
        else if (!strcmp(a, "--partition"))
            o.partition = v;
        else if (!strcmp(a, "--user"))
            o.user = v;
        else if (!strcmp(a, "--caller"))
            o.caller = v;
        else if (!strcmp(a, "--billing"))
            o.billing = atol(v);
        else if (!strcmp(a, "--time-limit"))
            o.time_limit_s = atol(v);
        else if (!strcmp(a, "--elapsed"))
            o.elapsed_s = atol(v);
        else if (!strcmp(a, "--ack-log"))
            o.ack_path = v;
        else
            usage();
    }
    if (!o.url || o.clients < 1 || o.clients > 4096 || o.ops < 1)
        usage();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        return 1;
    struct totals t = {.ack = NULL};
    pthread_mutex_init(&t.lock, NULL);
    if (o.ack_path && !(t.ack = fopen(o.ack_path, "a"))) {
        perror(o.ack_path);
        return 1;
    }
    struct client *cl = calloc((size_t)o.clients, sizeof(*cl));
    pthread_t *th = calloc((size_t)o.clients, sizeof(*th));
    if (!cl || !th)
        return 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long started = 0;
    for (long i = 0; i < o.clients; i++) {
        cl[i] = (struct client){&o, &t, i};
        if (pthread_create(&th[i], NULL, client_main, &cl[i]) != 0)
            break;
        started++;
    }
    for (long i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("clients=%ld held=%ld refused=%ld settled=%ld errors=%ld seconds=%.3f "
           "pairs_per_s=%.0f\n",
           started, t.held, t.refused, t.settled, t.errors, secs,
           secs > 0 ? (double)t.settled / secs : 0.0);
    if (t.ack)
        fclose(t.ack);
    free(cl);
    free(th);
    curl_global_cleanup();
    return 0;
}
