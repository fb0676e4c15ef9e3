/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cmd_import_sacct.c - `allot import sacct`: a cluster's finished jobs from a `sacct -P`
 * listing into the bank, as usage for fair-share and, with backfill=yes, as charges
 * (doc/adopt.md "Bring the history").
 *
 *   allot import sacct FILE [cluster=C] [backfill=yes]
 *   allot import sacct start=DATE end=DATE [cluster=C] [backfill=yes]   (runs sacct here)
 *
 * Design: the whole listing is read and every row checked first (libslurmtext/sacct_job.c,
 * the parser allotd runs too), so a bad line is refused with its line number before
 * anything is sent.  Then the rows go to POST /v1/jobs/import in batches that fit allotd's
 * request body, each batch one transaction; a job's rows (its runs, sacct --duplicates)
 * never straddle two batches.  Two batches are in flight at a time, on two connections
 * (struct sender), so building one here overlaps allotd's reading and writing of the
 * others.  A rerun imports nothing twice (idempotent per cluster, job,
 * run), so an import cut short is finished by running it again.  On a terminal, stderr
 * shows jobs done / total, the rate and the time left.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"
#include "libslurmtext/argv.h"
#include "libslurmtext/sacct_job.h"
#include "libutil/xalloc.h"

#define BATCH_BODY_MAX                                                                             \
    (4 * 1024 * 1024) /* half allotd's 8 MiB for this route: the                                   \
                          estimate counts 2 bytes a character */
/* A batch waits for the one beside it in allotd's writer: on a loaded host that is seconds,
 * longer than the usual 5 s (cmd_slurm_io.c's import slurm waits as long). */
#define BATCH_TIMEOUT_MS 300000
#define SACCT_FINAL_STATES "CA,CD,DL,F,NF,OOM,PR,TO,BF"

void cli_listing_free(struct cli_listing *l)
{
    if (l->map)
        munmap(l->map, l->map_len);
    else
        free((void *)l->p);
}

int cli_listing_read(const char *path, struct cli_listing *l, struct allot_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return allot_errorf(err, ALLOT_EIO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return allot_errorf(err, ALLOT_EIO, "%s: not a regular file", path);
    }
    l->len = (size_t)sb.st_size;
    l->map = NULL;
    if (l->len == 0) {
        close(fd);
        l->p = xcalloc(1, 1);
        return 0;
    }
    void *m = mmap(NULL, l->len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return allot_errorf(err, ALLOT_EIO, "%s: %s", path, strerror(errno));
    l->map = m;
    l->map_len = l->len;
    l->p = m;
    return 0;
}

/* sacct on this host for jobs that ended in [start, end) (UTC), header included. */
static int run_sacct(const char *cluster, int64_t start, int64_t end, struct cli_listing *l,
                     struct allot_error *err)
{
    const char *sacct = getenv("ALLOT_SACCT");
    char t1[32], t2[32];
    time_t a = (time_t)start, b = (time_t)end;
    struct tm tm;
    strftime(t1, sizeof t1, "%Y-%m-%dT%H:%M:%S", gmtime_r(&a, &tm));
    strftime(t2, sizeof t2, "%Y-%m-%dT%H:%M:%S", gmtime_r(&b, &tm));
    struct slt_argv av;
    slt_argv_init(&av);
    if (slt_argv_add(&av, sacct && sacct[0] ? sacct : "sacct", err) < 0 ||
        slt_argv_add(&av, "--parsable2", err) < 0 || slt_argv_add(&av, "--allusers", err) < 0 ||
        slt_argv_add(&av, "--allocations", err) < 0 || slt_argv_add(&av, "--duplicates", err) < 0 ||
        slt_argv_addf(&av, err, "--clusters=%s", cluster) < 0 ||
        slt_argv_addf(&av, err, "--starttime=%s", t1) < 0 ||
        slt_argv_addf(&av, err, "--endtime=%s", t2) < 0 ||
        slt_argv_addf(&av, err, "--state=%s", SACCT_FINAL_STATES) < 0 ||
        slt_argv_addf(&av, err, "--format=%s", SLT_SACCT_JOB_COLUMNS) < 0)
        return -1;
    /* sacct's times are local unless TZ says UTC; the rows are read as UTC. */
    if (setenv("TZ", "UTC0", 1) < 0)
        return allot_errorf(err, ALLOT_EIO, "TZ: %s", strerror(errno));
    char *out = NULL;
    size_t len = 0;
    if (cli_run_capture(av.argv, &out, &len, err) < 0)
        return -1;
    l->p = out;
    l->len = len;
    l->map = NULL;
    return 0;
}

/* ---- the import ---------------------------------------------------------------------- */

struct totals {
    int64_t imported, already, skipped, charged_sumin;
};

/* A batch in flight: while allotd reads and prices one batch on its request thread and
 * writes the one before in its transaction, the next is being built here, so the CLI, the
 * request thread and the writer work at once (two connections: each sender its own). */
struct sender {
    struct cli cli; /* a copy of the command's, with a client of its own */
    pthread_t th;
    int busy;
    json_t *body;    /* the thread's until joined */
    int64_t jobs;    /* jobs in the batch */
    int64_t first;   /* its first line */
    struct totals t; /* the batch's reply */
    int rc;
    struct allot_error err;
};

static void *send_batch(void *arg)
{
    struct sender *s = arg;
    char *reply = NULL;
    s->rc = cli_request(&s->cli, "POST", "/v1/jobs/import", s->body, &reply, &s->err);
    json_decref(s->body);
    s->body = NULL;
    json_t *r = s->rc == 0 ? json_loads(reply, 0, NULL) : NULL;
    free(reply);
    s->t = (struct totals){0};
    if (s->rc < 0)
        return NULL;
    s->t.imported = json_integer_value(json_object_get(r, "imported"));
    s->t.already = json_integer_value(json_object_get(r, "already"));
    s->t.skipped = json_integer_value(json_object_get(r, "skipped"));
    s->t.charged_sumin = json_integer_value(json_object_get(r, "charged_sumin"));
    json_decref(r);
    return NULL;
}

/* Wait for s's batch; add its counts.  0, or -1 with err (the batch's error, or ours). */
static int sender_join(struct sender *s, struct totals *t, struct progress *pg,
                       struct allot_error *err)
{
    if (!s->busy)
        return 0;
    pthread_join(s->th, NULL);
    s->busy = 0;
    if (s->rc < 0) {
        *err = s->err;
        return -1;
    }
    t->imported += s->t.imported;
    t->already += s->t.already;
    t->skipped += s->t.skipped;
    t->charged_sumin += s->t.charged_sumin;
    pg->done += s->jobs;
    progress_show(pg, 0);
    return 0;
}

/* Hand lines (now the body's) to s, after its previous batch.  0, or -1 with err. */
static int sender_start(struct sender *s, const char *cluster, int backfill, const char *header,
                        json_t *lines, int64_t first_line, int64_t jobs, struct totals *t,
                        struct progress *pg, struct allot_error *err)
{
    if (sender_join(s, t, pg, err) < 0) {
        json_decref(lines);
        return -1;
    }
    s->body = json_pack("{s:s, s:b, s:s, s:I, s:o}", "cluster", cluster, "backfill", backfill,
                        "header", header, "first_line", (json_int_t)first_line, "lines", lines);
    if (!s->body)
        return allot_errorf(err, ALLOT_EINVAL,
                            "lines %lld and after: not UTF-8 text (a name in another encoding)",
                            (long long)first_line);
    s->jobs = jobs;
    s->first = first_line;
    if (pthread_create(&s->th, NULL, send_batch, s) != 0) {
        json_decref(s->body);
        s->body = NULL;
        return allot_errorf(err, ALLOT_ENOMEM, "import: cannot start a thread");
    }
    s->busy = 1;
    return 0;
}

/* Check every row; *jobs = rows that are jobs, *header_line = its line number. */
static int check_all(const struct cli_listing *l, const char *name, struct slt_sacct_header *h,
                     struct slt_span *header, size_t *header_line, int64_t *jobs,
                     struct allot_error *err)
{
    size_t pos = 0, nline = 0;
    struct slt_span line;
    int have_header = 0;
    *jobs = 0;
    if (l->len > 0 && l->p[l->len - 1] != '\n')
        return allot_errorf(err, ALLOT_EINVAL, "%s: the last line has no newline (cut?)", name);
    while (slt_next_line(l->p, l->len, &pos, &line)) {
        nline++;
        if (line.n == 0)
            continue;
        struct allot_error le = {0};
        if (!have_header) {
            if (slt_sacct_header_parse(line, h, &le) < 0)
                return allot_errorf(err, ALLOT_EINVAL,
                                    "%s:%zu: %s (the first line must be "
                                    "sacct -P's header)",
                                    name, nline, le.msg);
            if (line.n >= 1024)
                return allot_errorf(err, ALLOT_EINVAL, "%s:%zu: header too long", name, nline);
            *header = line;
            *header_line = nline;
            have_header = 1;
            continue;
        }
        struct slt_sacct_job j;
        int k = slt_sacct_job_parse(h, line, &j, &le);
        if (k < 0)
            return allot_errorf(err, ALLOT_EINVAL, "%s:%zu: %s; nothing imported", name, nline,
                                le.msg);
        *jobs += k;
    }
    if (!have_header)
        return allot_errorf(err, ALLOT_EINVAL, "%s: no sacct header line", name);
    return 0;
}

static int import_listing(struct cli *cli, const struct cli_listing *l, const char *name,
                          const char *cluster, int backfill, struct allot_error *err)
{
    struct slt_sacct_header h;
    struct slt_span hs = {"", 0};
    size_t hline = 0;
    int64_t jobs = 0;
    if (check_all(l, name, &h, &hs, &hline, &jobs, err) < 0)
        return -1;
    char header[1024];
    memcpy(header, hs.p, hs.n);
    header[hs.n] = 0;
    struct progress pg;
    progress_start(&pg, "import", "jobs", jobs);
    struct totals t = {0};
    struct sender snd[2];
    memset(snd, 0, sizeof(snd));
    for (int i = 0; i < 2; i++) {
        snd[i].cli = *cli;
        snd[i].cli.client = NULL;
        if (snd[i].cli.timeout_ms < BATCH_TIMEOUT_MS)
            snd[i].cli.timeout_ms = BATCH_TIMEOUT_MS;
    }
    json_t *lines = json_array();
    size_t body = strlen(header) + 256, pos = 0, nline = 0;
    int64_t first = 0, in_batch = 0, nbatch = 0;
    uint32_t last_id = 0;
    struct slt_span line;
    int rc = lines ? 0 : allot_errorf(err, ALLOT_ENOMEM, "import: out of memory");
    while (rc == 0 && slt_next_line(l->p, l->len, &pos, &line)) {
        nline++;
        if (nline <= hline || line.n == 0)
            continue;
        struct slt_sacct_job j;
        int k = slt_sacct_job_parse(&h, line, &j, NULL); /* checked above */
        /* 2x: room for JSON escapes; a job's rows stay together */
        size_t need = 2 * line.n + 4;
        if (json_array_size(lines) > 0 && body + need > BATCH_BODY_MAX &&
            !(k == 1 && j.job_id == last_id)) {
            rc = sender_start(&snd[nbatch++ % 2], cluster, backfill, header, lines, first, in_batch,
                              &t, &pg, err);
            lines = json_array();
            body = strlen(header) + 256;
            in_batch = 0;
            if (rc < 0)
                break;
            if (!lines) {
                rc = allot_errorf(err, ALLOT_ENOMEM, "import: out of memory");
                break;
            }
        }
        if (json_array_size(lines) == 0)
            first = (int64_t)nline;
        json_t *s = json_stringn(line.p, line.n);
        if (!s) {
            rc = allot_errorf(err, ALLOT_EINVAL, "%s:%zu: not UTF-8 text", name, nline);
            break;
        }
        json_array_append_new(lines, s);
        body += need;
        if (k == 1) {
            in_batch++;
            last_id = j.job_id;
        }
    }
    if (rc == 0 && json_array_size(lines) > 0) {
        rc = sender_start(&snd[nbatch++ % 2], cluster, backfill, header, lines, first, in_batch, &t,
                          &pg, err);
        lines = NULL;
    }
    json_decref(lines);
    /* The batches in flight, oldest first: the first error is the one reported. */
    for (int64_t i = 0; i < 2; i++) {
        struct allot_error e = {0};
        if (sender_join(&snd[(nbatch + i) % 2], &t, &pg, &e) < 0 && rc == 0) {
            rc = -1;
            *err = e;
        }
    }
    for (int i = 0; i < 2; i++)
        allot_client_destroy(snd[i].cli.client);
    progress_show(&pg, 1);
    if (rc < 0) {
        /* What came before stands: a rerun skips it and finishes the rest. */
        allot_error_prefix(err,
                           "after %lld of %lld jobs (run the same import again to "
                           "finish; nothing is imported twice)",
                           (long long)pg.done, (long long)pg.total);
        return -1;
    }
    printf("%lld jobs read: %lld imported, %lld already in the bank, %lld rows passed over "
           "(steps, jobs not ended or never started)\n",
           (long long)jobs, (long long)t.imported, (long long)t.already, (long long)t.skipped);
    if (backfill)
        printf("backfill: %lld SU-minutes charged to allocations\n", (long long)t.charged_sumin);
    return 0;
}

int cli_import_sacct(struct cli *cli, int argc, char **argv, struct allot_error *err)
{
    const char *pos[1];
    int npos = 0, backfill = 0, rc = -1;
    struct kvlist kvs;
    int64_t start = 0, end = 0;
    char cluster[128];
    struct cli_listing l = {0};
    if (args_split(argc, argv, pos, 1, &npos, &kvs, err) < 0)
        return -1;
    const char *file = npos ? pos[0] : args_get(&kvs, "file");
    const char *cl = args_get(&kvs, "cluster"), *bf = args_get(&kvs, "backfill");
    const char *s1 = args_get(&kvs, "start"), *s2 = args_get(&kvs, "end");
    if ((bf && args_bool("backfill", bf, &backfill, err) < 0) ||
        (s1 && args_time("start", s1, &start, err) < 0) ||
        (s2 && args_time("end", s2, &end, err) < 0) ||
        args_check_used(&kvs, "import sacct", err) < 0)
        return -1;
    if (!file == !s1 || (s1 && !s2) || (!s1 && s2))
        return allot_errorf(err, ALLOT_EINVAL,
                            "import sacct: give a FILE (sacct -P output) or "
                            "start=DATE end=DATE (see 'allot import --help')");
    if (s1 && end <= start)
        return allot_errorf(err, ALLOT_EINVAL, "end: must be after start");
    if (cl)
        snprintf(cluster, sizeof cluster, "%s", cl);
    else if (cli_default_cluster(cli, cluster, sizeof cluster, err) < 0)
        return -1;
    if (file ? cli_listing_read(file, &l, err) < 0 : run_sacct(cluster, start, end, &l, err) < 0)
        return -1;
    rc = import_listing(cli, &l, file ? file : "sacct", cluster, backfill, err);
    cli_listing_free(&l);
    return rc;
}
