/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * prep_job.c - prep/allot's requests: the allotd call with its retry rules, and the spool
 * file format (prep_job.h).
 *
 * Spool format: "key=value" lines, one field each, values without newlines (names and TRES
 * strings never hold one).  Unknown keys are errors, so a file from a newer release is set
 * aside (renamed .bad) rather than half-understood.  submit_token (HoldMode=submit) is
 * written only when set and optional when read, so files of the release before it still
 * load, and files without a token are byte-identical to that release's; so are the array
 * and het ids (array_job_id, array_task_id, het_job_id, het_job_offset).  A void record
 * (prep_job.h) adds "kind=void" and its "reason"; other files have no kind line.
 */
#include "plugins/prep/allot/prep_job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000

void prep_job_desc(const prep_job_t *job, struct allot_job_desc *d)
{
    memset(d, 0, sizeof(*d));
    d->cluster = job->cluster;
    d->job_id = job->job_id;
    d->run = job->run;
    d->user = job->user;
    d->account = job->account;
    d->partition = job->partition;
    d->qos = job->qos;
    d->time_limit_s = job->time_limit_s;
    d->alloc_tres = job->alloc_tres;
    if (job->kind == PREP_JOB_RELEASE) {
        /* The provisional run is keyed by the token (doc/slurm.md "Hold at submit"). */
        d->job_id = job->submit_token;
        d->run = 0;
        d->tasks = job->keep_tasks;
        d->elapsed_s = -1;
        d->comment = "job ended before it started (cancelled or rejected while pending)";
        return;
    }
    d->submit_token = job->submit_token;
    d->array_job_id = job->array_job_id;
    d->array_task_id = job->array_task_id;
    d->het_job_id = job->het_job_id;
    d->het_job_offset = job->het_job_offset;
    if (job->kind == PREP_JOB_VOID) {
        d->submit_s = job->submit_s;
        d->start_s = job->start_s;
        d->elapsed_s = -1;
        d->comment = job->reason;
        return;
    }
    if (job->kind == PREP_JOB_HOLD) {
        d->submit_s = job->submit_s;
        d->start_s = job->start_s;
        d->elapsed_s = -1;
        d->billing_micro = job->billing_micro;
    } else {
        d->start_s = job->start_s;
        d->end_s = job->end_s;
        d->elapsed_s = job->elapsed_s;
        d->state = job->state;
        d->source = "epilog";
        d->billing_micro = job->billing_micro;
    }
}

int32_t prep_job_epilog_run(uint32_t restart_cnt, int pending)
{
    if (pending && restart_cnt > 0)
        restart_cnt--; /* Slurm counted the next run before our epilog (prep_job.h) */
    return restart_cnt > INT32_MAX ? INT32_MAX : (int32_t)restart_cnt;
}

const char *prep_job_epilog_state(const char *base, int pending, int requeue_flag)
{
    if (!pending)
        return base;
    return requeue_flag ? "REQUEUED" : "NODE_FAIL";
}

int64_t prep_job_elapsed(int64_t start_time, int64_t end_time, int64_t suspend_time,
                         int64_t pre_sus_time)
{
    int64_t el;

    if (start_time <= 0)
        return 0;
    if (suspend_time <= 0)
        el = end_time - start_time;
    else
        el = pre_sus_time + (end_time > suspend_time ? end_time - suspend_time : 0);
    return el > 0 ? el : 0;
}

int prep_job_queue_copy(const prep_job_t *job, int64_t now_ms, prep_job_push_f push, void *arg)
{
    prep_job_t *j = malloc(sizeof(*j));

    if (!j)
        return -1;
    *j = *job;
    j->enqueued_ms = now_ms;
    if (push(j, arg) < 0) {
        free(j);
        return -1;
    }
    return 0;
}

/* Errors worth another try: allotd or its storage away, or an answer cut short (EINDOUBT:
 * the answer to its commit was lost; the verbs are idempotent, so the same call again is
 * safe and answers what stands). */
static int transient(enum allot_errnum e)
{
    return e == ALLOT_EUNAVAIL || e == ALLOT_EIO || e == ALLOT_ENOMEM || e == ALLOT_EPROTO ||
           e == ALLOT_EAUTH || e == ALLOT_EINDOUBT;
}

static int64_t backoff_ms(int attempt)
{
    int64_t ms = BACKOFF_FIRST_MS;

    for (int i = 0; i < attempt && ms < BACKOFF_MAX_MS; i++)
        ms *= 2;
    return ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS;
}

enum prep_job_verdict prep_job_call(allot_client_t *c, const prep_job_t *job, int attempt,
                                    int64_t now_ms, int64_t budget_ms, int64_t *due_ms,
                                    struct allot_job_result *res, struct allot_error *err)
{
    struct allot_job_desc d;
    int rc;

    prep_job_desc(job, &d);
    if (job->kind == PREP_JOB_HOLD)
        rc = allot_job_hold(c, &d, res, err);
    else if (job->kind == PREP_JOB_RELEASE)
        rc = allot_job_release(c, &d, res, err);
    else if (job->kind == PREP_JOB_VOID)
        rc = allot_job_void(c, &d, res, err);
    else
        rc = allot_job_settle(c, &d, res, err);
    if (rc == 0)
        return res->ok ? PREP_JOB_OK : PREP_JOB_REFUSED;
    if (!transient(err->code))
        return PREP_JOB_FAILED;
    int64_t due = now_ms + backoff_ms(attempt);
    if (job->kind == PREP_JOB_HOLD && due - job->enqueued_ms > budget_ms)
        return PREP_JOB_UNREACHABLE;
    *due_ms = due;
    return PREP_JOB_RETRY;
}

int prep_job_tres_copy(char *dst, size_t size, const char *src)
{
    size_t len = src ? strlen(src) : 0;
    if (size == 0)
        return len > 0;
    if (len < size) {
        memcpy(dst, src ? src : "", len + 1);
        return 0;
    }
    size_t keep = size - 1; /* the longest prefix that fits */
    while (keep > 0 && src[keep] != ',')
        keep--; /* src[keep] is the comma after the last whole entry (src[size - 1] may be) */
    memcpy(dst, src, keep);
    dst[keep] = '\0';
    return 1;
}

int prep_job_spool_name(const prep_job_t *job, char *buf, size_t size)
{
    int n = snprintf(buf, size, "settle.%" PRIu32 ".%" PRId32, job->job_id, job->run);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int spool_path(const char *dir, const char *name, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Write all of BUF to FD, across short writes and interruptions.  0 or -1 (errno). */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Make DIR's entries (the rename) durable.  0 or -1 (errno). */
static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc;

    if (fd < 0)
        return -1;
    rc = fsync(fd);
    if (rc < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return close(fd);
}

/* The file's text into BUF; -1 if it does not fit (it always does: fields are bounded). */
static int spool_format(const prep_job_t *job, char *buf, size_t size)
{
    int n = snprintf(buf, size,
                     "cluster=%s\njob_id=%" PRIu32 "\nrun=%" PRId32 "\nuser=%s\naccount=%s\n"
                     "partition=%s\nqos=%s\nsubmit=%" PRId64 "\nstart=%" PRId64 "\nend=%" PRId64
                     "\ntime_limit_s=%" PRId64 "\nelapsed_s=%" PRId64 "\nalloc_tres=%s\nstate=%s\n"
                     "billing_micro=%" PRId64 "\n",
                     job->cluster, job->job_id, job->run, job->user, job->account, job->partition,
                     job->qos, job->submit_s, job->start_s, job->end_s, job->time_limit_s,
                     job->elapsed_s, job->alloc_tres, job->state, job->billing_micro);
    if (n < 0 || (size_t)n >= size)
        return -1;
    if (job->kind == PREP_JOB_VOID) {
        int m = snprintf(buf + n, size - (size_t)n, "kind=void\nreason=%s\n", job->reason);
        if (m < 0 || (size_t)m >= size - (size_t)n)
            return -1;
        n += m;
    }
    if (job->submit_token) {
        int m =
            snprintf(buf + n, size - (size_t)n, "submit_token=%" PRId64 "\n", job->submit_token);
        if (m < 0 || (size_t)m >= size - (size_t)n)
            return -1;
        n += m;
    }
    if (job->array_job_id) {
        int m = snprintf(buf + n, size - (size_t)n,
                         "array_job_id=%" PRIu32 "\narray_task_id=%" PRIu32 "\n", job->array_job_id,
                         job->array_task_id);
        if (m < 0 || (size_t)m >= size - (size_t)n)
            return -1;
        n += m;
    }
    if (job->het_job_id) {
        int m = snprintf(buf + n, size - (size_t)n,
                         "het_job_id=%" PRIu32 "\nhet_job_offset=%" PRIu32 "\n", job->het_job_id,
                         job->het_job_offset);
        if (m < 0 || (size_t)m >= size - (size_t)n)
            return -1;
        n += m;
    }
    return n;
}

/*
 * Durability: the epilog returns once this does, and slurmctld then forgets the job's end,
 * so the file must survive a crash of the machine too.  Its data is synced before the
 * rename (else a crash can leave the new name on an empty or short file: delayed
 * allocation commits the rename first, and that settle would be set aside as .bad) and the
 * directory after it (else the name itself can vanish).  A failure at any step (disk full,
 * I/O error, also reported only by fsync on some file systems) removes the temporary file
 * and is returned, so the caller knows the settle is held in memory only.
 */
int prep_job_spool_write(const char *dir, const prep_job_t *job, struct allot_error *err)
{
    char name[128], path[4096], tmp[4096 + 8], text[4096];
    const char *step = "write";
    int fd, len, e;

    if (prep_job_spool_name(job, name, sizeof(name)) < 0 ||
        spool_path(dir, name, path, sizeof(path)) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "spool path under %s too long", dir);
    len = spool_format(job, text, sizeof(text));
    if (len < 0)
        return allot_errorf(err, ALLOT_EINVAL, "%s: spool record too long", path);
    snprintf(tmp, sizeof(tmp), "%s/.%s", dir, name);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return allot_errorf(err, ALLOT_EIO, "%s: cannot create: %s", dir, strerror(errno));
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return allot_errorf(err, ALLOT_EIO, "%s: %s", tmp, strerror(errno));
    if (write_all(fd, text, (size_t)len) < 0 || (step = "fsync", fsync(fd) < 0)) {
        e = errno;
        close(fd);
        goto fail;
    }
    step = "close";
    if (close(fd) < 0 || (step = "rename", rename(tmp, path) < 0)) {
        e = errno;
        goto fail;
    }
    if (sync_dir(dir) < 0) {
        /* The file is complete under its name; only its surviving a crash is in doubt. */
        e = errno;
        return allot_errorf(err, ALLOT_EIO, "%s: fsync of the directory: %s", dir, strerror(e));
    }
    return 0;
fail:
    unlink(tmp);
    return allot_errorf(err, ALLOT_EIO, "%s: cannot %s: %s", tmp, step, strerror(e));
}

int prep_job_spool_remove(const char *dir, const prep_job_t *job, struct allot_error *err)
{
    char name[128], path[4096];

    if (prep_job_spool_name(job, name, sizeof(name)) < 0 ||
        spool_path(dir, name, path, sizeof(path)) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "spool path under %s too long", dir);
    if (unlink(path) < 0 && errno != ENOENT)
        return allot_errorf(err, ALLOT_EIO, "%s: %s", path, strerror(errno));
    return 0;
}

int prep_job_settle_done(const char *dir, const prep_job_t *job, enum prep_job_verdict v,
                         char *kept, size_t kept_size, struct allot_error *err)
{
    char name[128], path[4096], to[4096 + 16];

    if (kept && kept_size)
        kept[0] = '\0';
    if (v == PREP_JOB_OK)
        return prep_job_spool_remove(dir, job, err);
    if (prep_job_spool_name(job, name, sizeof(name)) < 0 ||
        spool_path(dir, name, path, sizeof(path)) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "spool path under %s too long", dir);
    snprintf(to, sizeof(to), "%s.rejected", path);
    if (rename(path, to) < 0)
        return allot_errorf(err, ALLOT_EIO, "%s: cannot keep it as %s: %s", path, to,
                            strerror(errno));
    if (kept && kept_size)
        snprintf(kept, kept_size, "%s", to);
    return 0;
}

static int has_suffix(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len > n && strcmp(s + len - n, suffix) == 0;
}

static int set_str(char *dst, size_t size, const char *v)
{
    size_t n = strlen(v);

    if (n >= size)
        return -1;
    memcpy(dst, v, n + 1);
    return 0;
}

static int set_int(int64_t *dst, const char *v, int64_t min, int64_t max)
{
    char *end;
    long long x;

    errno = 0;
    x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < min || x > max)
        return -1;
    *dst = x;
    return 0;
}

int prep_job_spool_read(const char *path, prep_job_t *out, struct allot_error *err)
{
    prep_job_t j;
    char line[1024];
    int lineno = 0, seen = 0;
    FILE *f = fopen(path, "r");

    if (!f)
        return allot_errorf(err, ALLOT_EIO, "%s: %s", path, strerror(errno));
    memset(&j, 0, sizeof(j));
    j.kind = PREP_JOB_SETTLE;
    while (fgets(line, sizeof(line), f)) {
        size_t n = strlen(line);
        int64_t v = 0;
        int bad = 0;

        lineno++;
        if (n == 0 || line[n - 1] != '\n') {
            fclose(f);
            return allot_errorf(err, ALLOT_EINVAL, "%s:%d: line too long or unterminated", path,
                                lineno);
        }
        line[n - 1] = '\0';
        char *eq = strchr(line, '=');
        if (!eq) {
            fclose(f);
            return allot_errorf(err, ALLOT_EINVAL, "%s:%d: not key=value", path, lineno);
        }
        *eq = '\0';
        const char *k = line, *val = eq + 1;
        if (!strcmp(k, "cluster"))
            bad = set_str(j.cluster, sizeof(j.cluster), val);
        else if (!strcmp(k, "user"))
            bad = set_str(j.user, sizeof(j.user), val);
        else if (!strcmp(k, "account"))
            bad = set_str(j.account, sizeof(j.account), val);
        else if (!strcmp(k, "partition"))
            bad = set_str(j.partition, sizeof(j.partition), val);
        else if (!strcmp(k, "qos"))
            bad = set_str(j.qos, sizeof(j.qos), val);
        else if (!strcmp(k, "alloc_tres"))
            bad = set_str(j.alloc_tres, sizeof(j.alloc_tres), val);
        else if (!strcmp(k, "state"))
            bad = set_str(j.state, sizeof(j.state), val);
        else if (!strcmp(k, "reason"))
            bad = set_str(j.reason, sizeof(j.reason), val);
        else if (!strcmp(k, "kind"))
            bad = strcmp(val, "void") ? -1 : (j.kind = PREP_JOB_VOID, 0);
        else if (!strcmp(k, "job_id")) {
            bad = set_int(&v, val, 1, UINT32_MAX);
            j.job_id = (uint32_t)v;
            seen |= 1;
        } else if (!strcmp(k, "run")) {
            bad = set_int(&v, val, 0, INT32_MAX);
            j.run = (int32_t)v;
        } else if (!strcmp(k, "submit"))
            bad = set_int(&j.submit_s, val, 0, INT64_MAX);
        else if (!strcmp(k, "start"))
            bad = set_int(&j.start_s, val, 0, INT64_MAX);
        else if (!strcmp(k, "end"))
            bad = set_int(&j.end_s, val, 0, INT64_MAX);
        else if (!strcmp(k, "submit_token"))
            bad = set_int(&j.submit_token, val, (int64_t)1 << 32, (int64_t)1 << 62);
        else if (!strcmp(k, "array_job_id") || !strcmp(k, "array_task_id") ||
                 !strcmp(k, "het_job_id") || !strcmp(k, "het_job_offset")) {
            int id = !strcmp(k, "array_job_id") || !strcmp(k, "het_job_id");
            bad = set_int(&v, val, id ? 1 : 0, UINT32_MAX);
            *(k[0] == 'a' ? (id ? &j.array_job_id : &j.array_task_id)
                          : (id ? &j.het_job_id : &j.het_job_offset)) = (uint32_t)v;
        } else if (!strcmp(k, "billing_micro"))
            bad = set_int(&j.billing_micro, val, 0, INT64_MAX);
        else if (!strcmp(k, "time_limit_s"))
            bad = set_int(&j.time_limit_s, val, 0, INT64_MAX);
        else if (!strcmp(k, "elapsed_s")) {
            bad = set_int(&j.elapsed_s, val, 0, INT64_MAX);
            seen |= 2;
        } else {
            fclose(f);
            return allot_errorf(err, ALLOT_EINVAL, "%s:%d: unknown key %s", path, lineno, k);
        }
        if (bad) {
            fclose(f);
            return allot_errorf(err, ALLOT_EINVAL, "%s:%d: %s: bad value", path, lineno, k);
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (rerr)
        return allot_errorf(err, ALLOT_EIO, "%s: read error", path);
    if (seen != 3 || !j.cluster[0])
        return allot_errorf(err, ALLOT_EINVAL, "%s: cluster, job_id or elapsed_s missing", path);
    *out = j;
    return 0;
}

/* A ".settle.*" is a spool write that never reached its rename (the write's commit point):
 * its process died mid-write, so it holds nothing that was promised to anyone, and the
 * agent's reconcile from sacct settles that run.  The scan removes one this old; a younger
 * one may be a write in progress in another thread. */
#define SPOOL_TEMP_STALE_S 60

/* Remove spool temporary NAME in DIR when stale; report it through BAD_CB. */
static void drop_stale_temp(const char *dir, const char *name, prep_job_bad_f bad_cb, void *arg)
{
    char path[4096];
    struct stat sb;
    if (spool_path(dir, name, path, sizeof(path)) < 0 || stat(path, &sb) < 0 ||
        time(NULL) - sb.st_mtime < SPOOL_TEMP_STALE_S || unlink(path) < 0)
        return;
    if (bad_cb) {
        struct allot_error why;
        allot_errorf(&why, ALLOT_EIO, "an incomplete write left by a crash (%lld bytes), removed",
                     (long long)sb.st_size);
        bad_cb(path, &why, arg);
    }
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int prep_job_spool_scan(const char *dir, prep_job_scan_f cb, prep_job_bad_f bad_cb, void *arg,
                        struct allot_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int count = 0;

    if (!d) {
        if (errno == ENOENT)
            return 0;
        return allot_errorf(err, ALLOT_EIO, "%s: %s", dir, strerror(errno));
    }
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, ".settle.", 8) == 0) {
            drop_stale_temp(dir, e->d_name, bad_cb, arg);
            continue;
        }
        if (strncmp(e->d_name, "settle.", 7) != 0 || has_suffix(e->d_name, len, ".bad") ||
            has_suffix(e->d_name, len, ".rejected"))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **nn = realloc(names, ncap * sizeof(*nn));
            if (!nn)
                break;
            names = nn;
            cap = ncap;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n; i++) {
        char path[4096], bad[4096 + 8];
        prep_job_t j;
        struct allot_error why;

        if (spool_path(dir, names[i], path, sizeof(path)) == 0) {
            if (prep_job_spool_read(path, &j, &why) == 0) {
                cb(&j, arg);
                count++;
            } else {
                snprintf(bad, sizeof(bad), "%s.bad", path);
                (void)rename(path, bad);
                allot_error_prefix(&why, "unreadable, set aside as .bad");
                if (bad_cb)
                    bad_cb(path, &why, arg);
            }
        }
        free(names[i]);
    }
    free(names);
    return count;
}
