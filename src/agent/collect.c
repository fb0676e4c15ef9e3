/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect.c - sacct reconciliation windows (collect.h).
 *
 * sacct is run as
 *   sacct --parsable2 --noheader --allocations --clusters=C --starttime=FROM --endtime=TO
 *         --state=<final states> --format=JobIDRaw,State,User,...
 * with local times (sacct reads and prints the agent's zone).  sacct selects by state
 * *during* the window; the agent keeps only rows whose End lies in [from, to), so consecutive
 * windows partition the jobs by end time and the marker means "every job that ended before
 * it".  JobIDRaw (not JobID) is the key: an array task prints JobID as 12_3, but the plugins
 * and allotd know it by its own job id.  Output is read into a growing buffer capped at
 * SACCT_OUT_MAX; a window whose output exceeds it is halved and retried.
 */
#include "agent/collect.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libslurmtext/acct.h"

#define SACCT_OUT_MAX (256L * 1024 * 1024)
#define SACCT_ERR_MAX 2048
#define REPORT_MAX 240 /* fits ALLOT_TEXT_MAX on allotd's side */

static const char SACCT_FORMAT[] = "JobIDRaw,State,User,Account,Partition,QOS,Start,End,"
                                   "Elapsed,Timelimit,AllocTRES,AllocCPUS";
/* Final job states (sacct --state short names): the job will not change any more. */
static const char SACCT_STATES[] = "CA,CD,DL,F,NF,OOM,PR,TO,BF";

__attribute__((format(printf, 1, 2))) static void clog_(const char *fmt, ...)
{
    time_t now = time(NULL);
    struct tm tm;
    char ts[32];
    va_list ap;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(stderr, "%s allot-agent: reconcile: ", ts);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Output of one child run: stdout whole (malloc'd), stderr's first SACCT_ERR_MAX bytes. */
struct capture {
    char *out;
    size_t n, cap;
    char errtext[SACCT_ERR_MAX];
    size_t en;
    int too_big;
};

static int drain(int fd, struct capture *c, int is_err)
{
    char buf[65536];
    ssize_t k = read(fd, buf, sizeof buf);
    if (k < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (k == 0)
        return 0;
    if (is_err) {
        size_t room = sizeof c->errtext - 1 - c->en;
        size_t m = (size_t)k < room ? (size_t)k : room;
        memcpy(c->errtext + c->en, buf, m);
        c->en += m;
        c->errtext[c->en] = 0;
        return 1;
    }
    if (c->n + (size_t)k + 1 > (size_t)SACCT_OUT_MAX) {
        c->too_big = 1;
        return 1; /* keep draining so the child does not block; the window is retried */
    }
    if (c->n + (size_t)k + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 65536;
        while (cap < c->n + (size_t)k + 1)
            cap *= 2;
        char *p = realloc(c->out, cap);
        if (!p)
            return -1;
        c->out = p;
        c->cap = cap;
    }
    memcpy(c->out + c->n, buf, (size_t)k);
    c->n += (size_t)k;
    c->out[c->n] = 0;
    return 1;
}

/* Run argv with a bounded wait; returns the exit status (0..255) or -1 (could not run,
 * killed at timeout: c->errtext says why). */
static int run_capture(char *const argv[], int timeout_s, struct capture *c)
{
    int po[2], pe[2];
    memset(c, 0, sizeof *c);
    if (pipe(po) < 0) {
        snprintf(c->errtext, sizeof c->errtext, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe(pe) < 0) {
        snprintf(c->errtext, sizeof c->errtext, "pipe: %s", strerror(errno));
        close(po[0]);
        close(po[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(c->errtext, sizeof c->errtext, "fork: %s", strerror(errno));
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    struct pollfd p[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
    int open_fds = 2, timed_out = 0, failed = 0;
    time_t deadline = time(NULL) + timeout_s;
    while (open_fds > 0) {
        int left_ms = (int)(deadline - time(NULL)) * 1000;
        if (left_ms <= 0) {
            timed_out = 1;
            break;
        }
        int r = poll(p, 2, left_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            failed = 1;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            int d = drain(p[i].fd, c, i == 1);
            if (d < 0) {
                failed = 1;
                break;
            }
            if (d == 0) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
            }
        }
        if (failed)
            break;
    }
    for (int i = 0; i < 2; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    if (timed_out || failed)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        snprintf(c->errtext, sizeof c->errtext, "%s timed out after %d s", argv[0], timeout_s);
        return -1;
    }
    if (failed) {
        snprintf(c->errtext, sizeof c->errtext, "reading %s's output failed", argv[0]);
        return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void local_time_text(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    localtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

static void span_copy(struct st_span s, char *dst, size_t len)
{
    size_t n = s.n < len - 1 ? s.n : len - 1;
    memcpy(dst, s.p, n);
    dst[n] = 0;
}

/* Slurm's integer billing from AllocTRES ("billing=4,cpu=4,..."); 0 when absent. */
static int64_t tres_billing(struct st_span t)
{
    static const char key[] = "billing=";
    for (size_t i = 0; i + sizeof key - 1 <= t.n; i++) {
        if ((i == 0 || t.p[i - 1] == ',') && memcmp(t.p + i, key, sizeof key - 1) == 0) {
            int64_t v = 0;
            for (size_t j = i + sizeof key - 1; j < t.n && t.p[j] >= '0' && t.p[j] <= '9'; j++)
                if (v < INT64_MAX / 100)
                    v = v * 10 + (t.p[j] - '0');
            return v;
        }
    }
    return 0;
}

/* One run of a job as allotd knows it. */
struct known_run {
    int run;
    int64_t start_s;
    char status[16];
};

/* GET /v1/jobs/<cluster>/<id>: the runs allot knows (0 when none).  -1: allotd failed. */
static int known_runs(allot_client_t *c, const char *cluster, int64_t id, struct known_run *v,
                      int max, int *n, struct allot_error *err)
{
    char path[256];
    char *reply = NULL;
    *n = 0;
    snprintf(path, sizeof path, "/v1/jobs/%s/%lld", cluster, (long long)id);
    struct allot_error e = {0};
    if (allot_request(c, "GET", path, NULL, NULL, &reply, &e) < 0) {
        free(reply);
        if (e.code == ALLOT_ENOENT)
            return 0;
        if (err)
            *err = e;
        return -1;
    }
    json_t *doc = json_loads(reply, 0, NULL);
    free(reply);
    json_t *runs = json_object_get(doc, "runs");
    if (!json_is_array(runs)) {
        json_decref(doc);
        return allot_errorf(err, ALLOT_EPROTO, "job %lld: reply without runs", (long long)id);
    }
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r)
    {
        if (*n >= max)
            break;
        struct known_run *k = &v[(*n)++];
        k->run = (int)json_integer_value(json_object_get(r, "run"));
        json_t *st = json_object_get(r, "start");
        k->start_s = 0;
        if (json_is_string(st)) {
            struct tm tm = {0};
            const char *e2 = strptime(json_string_value(st), "%Y-%m-%dT%H:%M:%SZ", &tm);
            if (e2)
                k->start_s = (int64_t)timegm(&tm);
        }
        const char *s = json_string_value(json_object_get(r, "status"));
        snprintf(k->status, sizeof k->status, "%s", s ? s : "");
    }
    json_decref(doc);
    return 0;
}

struct window {
    int64_t from_s, to_s;
    int64_t settled, unknown;
    char report[REPORT_MAX];
};

static void report_add(struct window *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void report_add(struct window *w, const char *fmt, ...)
{
    size_t n = strlen(w->report);
    if (n + 4 >= sizeof w->report)
        return;
    if (n)
        n += (size_t)snprintf(w->report + n, sizeof w->report - n, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->report + n, sizeof w->report - n, fmt, ap);
    va_end(ap);
}

/* Is this a failure of allotd itself (retry later) rather than a refusal of the job? */
static int transient(enum allot_errnum e)
{
    return e == ALLOT_EUNAVAIL || e == ALLOT_EIO || e == ALLOT_EPROTO || e == ALLOT_EAUTH ||
           e == ALLOT_EPERM || e == ALLOT_EINTERNAL || e == ALLOT_ENOMEM;
}

/* Reconcile one row.  0 done (settled, already, unknown or skipped), -1 allotd failed. */
static int one_row(allot_client_t *c, const struct collect_opts *o, int64_t id,
                   const struct st_acct_row *row, struct window *w, struct collect_stats *s,
                   struct allot_error *err)
{
    struct st_tz tz = {.kind = ST_TZ_LOCAL};
    int64_t start = 0, end = 0;
    if (row->start.kind == ST_TIME_VALUE && st_time_to_epoch(&row->start, &tz, &start, NULL) < 0)
        start = 0;
    if (row->end.kind == ST_TIME_VALUE && st_time_to_epoch(&row->end, &tz, &end, NULL) < 0)
        end = 0;
    struct known_run runs[16];
    int n = 0;
    if (known_runs(c, o->cluster, id, runs, 16, &n, err) < 0)
        return -1;
    int pick = -1, max_run = -1;
    for (int i = 0; i < n; i++) {
        if (runs[i].run > max_run)
            max_run = runs[i].run;
        if (start > 0 && runs[i].start_s == start)
            pick = i;
    }
    if (pick >= 0 && strcmp(runs[pick].status, "held") != 0) {
        s->already++;
        return 0; /* settled by the epilog or an earlier window: untouched */
    }
    if (pick < 0) /* a held run whose recorded start differs (hold at submit) */
        for (int i = 0; i < n; i++)
            if (strcmp(runs[i].status, "held") == 0 && (pick < 0 || runs[i].run > runs[pick].run))
                pick = i;
    if (start == 0 && pick < 0) {
        s->skipped++;
        return 0; /* never ran and never held: nothing to charge or release */
    }
    char user[64], account[64], partition[64], qos[64], state[32], tres[1024];
    span_copy(row->user, user, sizeof user);
    span_copy(row->account, account, sizeof account);
    span_copy(row->partition, partition, sizeof partition);
    span_copy(row->qos, qos, sizeof qos);
    span_copy(row->alloc_tres, tres, sizeof tres);
    snprintf(state, sizeof state, "%s", st_state_name(row->state.state));
    int64_t billing = tres_billing(row->alloc_tres);
    if (billing == 0 && row->has_alloc_cpus)
        billing = row->alloc_cpus; /* DESIGN §3: without weights, allocated CPUs */
    struct allot_job_desc d = {
        .cluster = o->cluster,
        .job_id = id,
        .run = pick >= 0 ? runs[pick].run : max_run + 1,
        .start_s = start,
        .end_s = end,
        .elapsed_s = row->elapsed.kind == ST_DUR_VALUE ? row->elapsed.ms / 1000 : 0,
        .alloc_tres = tres,
        .billing = billing,
        .state = state,
        .source = "sacct",
    };
    if (pick < 0) { /* never held: allotd needs who and where */
        d.user = user;
        d.account = account;
        d.partition = partition;
        d.qos = qos;
        d.time_limit_s = row->timelimit.kind == ST_DUR_VALUE ? row->timelimit.ms / 1000 : 0;
    }
    struct allot_job_result res;
    struct allot_error e = {0};
    if (allot_job_settle(c, &d, &res, &e) < 0) {
        if (transient(e.code)) {
            if (err)
                *err = e;
            return -1;
        }
        s->unknown++;
        w->unknown++;
        report_add(w, "job %lld (account %s, partition %s): %s", (long long)id, account,
                   partition, e.msg);
        clog_("job %lld unknown to allot: account=%s user=%s partition=%s: %s", (long long)id,
              account, user, partition, e.msg);
        return 0;
    }
    if (res.replay) {
        s->already++;
        return 0;
    }
    s->settled++;
    w->settled++;
    clog_("settled job %lld run %d from sacct: %s elapsed=%lld s charge=%lld SU-min",
          (long long)id, (int)d.run, state, (long long)d.elapsed_s, (long long)res.charge_sumin);
    return 0;
}

/* Parse and reconcile the rows of one sacct output. */
static int window_rows(allot_client_t *c, const struct collect_opts *o,
                       const struct st_acct_format *fmt, const char *out, size_t len,
                       struct window *w, struct collect_stats *s, struct allot_error *err)
{
    size_t pos = 0;
    struct st_span line;
    struct st_tz tz = {.kind = ST_TZ_LOCAL};
    while (st_next_line(out, len, &pos, &line)) {
        if (line.n == 0)
            continue;
        struct st_acct_row row;
        struct allot_error pe = {0};
        if (st_acct_row_parse(fmt, line, &row, &pe) < 0) {
            clog_("unparsable sacct row skipped: %s", pe.msg);
            continue;
        }
        uint64_t id = 0;
        size_t k = 0;
        while (k < line.n && line.p[k] != '|')
            k++;
        if (st_uint(line.p, k, UINT32_MAX, &id) < 0 || id == 0)
            continue; /* not a plain job id: a step row cannot appear with --allocations */
        if (!st_state_is_final(row.state.state))
            continue;
        int64_t end = 0;
        if (row.end.kind != ST_TIME_VALUE || st_time_to_epoch(&row.end, &tz, &end, NULL) < 0)
            continue;
        if (end < w->from_s || end >= w->to_s)
            continue; /* another window's job (sacct selects by state during the window) */
        s->rows++;
        if (one_row(c, o, (int64_t)id, &row, w, s, err) < 0)
            return -1;
    }
    return 0;
}

static int post_marker(allot_client_t *c, const struct collect_opts *o, const struct window *w,
                       struct allot_error *err)
{
    json_t *b = json_pack("{s:I, s:I, s:I, s:s}", "until", (json_int_t)w->to_s, "settled",
                          (json_int_t)w->settled, "unknown", (json_int_t)w->unknown, "report",
                          w->report);
    char *body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    if (!body)
        return allot_errorf(err, ALLOT_ENOMEM, "reconcile report: out of memory");
    char path[200];
    snprintf(path, sizeof path, "/v1/agents/%s/reconcile", o->cluster);
    int rc = allot_request(c, "POST", path, body, NULL, NULL, err);
    free(body);
    return rc;
}

static int get_marker(allot_client_t *c, const struct collect_opts *o, int64_t *until_s,
                      struct allot_error *err)
{
    char path[200];
    char *reply = NULL;
    snprintf(path, sizeof path, "/v1/agents/%s", o->cluster);
    if (allot_request(c, "GET", path, NULL, NULL, &reply, err) < 0) {
        free(reply);
        return -1;
    }
    json_t *doc = json_loads(reply, 0, NULL);
    free(reply);
    json_t *v = json_object_get(json_object_get(doc, "reconcile"), "until_s");
    if (!json_is_integer(v)) {
        json_decref(doc);
        return allot_errorf(err, ALLOT_EPROTO, "agent status: no reconcile.until_s");
    }
    *until_s = (int64_t)json_integer_value(v);
    json_decref(doc);
    return 0;
}

/* Run sacct for [from, to); *out receives the malloc'd output.  Returns 0, 1 when the
 * output is too large (halve the window), -1 with err after o->attempts failures. */
static int sacct_window(const struct collect_opts *o, int64_t from_s, int64_t to_s,
                        struct capture *cap, struct allot_error *err)
{
    char a_cl[200], a_s[64], a_e[64], a_st[64], a_f[256], t1[32], t2[32];
    local_time_text(from_s, t1, sizeof t1);
    local_time_text(to_s, t2, sizeof t2);
    snprintf(a_cl, sizeof a_cl, "--clusters=%s", o->cluster);
    snprintf(a_s, sizeof a_s, "--starttime=%s", t1);
    snprintf(a_e, sizeof a_e, "--endtime=%s", t2);
    snprintf(a_st, sizeof a_st, "--state=%s", SACCT_STATES);
    snprintf(a_f, sizeof a_f, "--format=%s", SACCT_FORMAT);
    char *argv[] = {(char *)o->sacct, "--parsable2", "--noheader", "--allocations", a_cl, a_s,
                    a_e, a_st, a_f, NULL};
    int backoff_s = 1;
    for (int attempt = 1;; attempt++) {
        int rc = run_capture(argv, o->timeout_s, cap);
        if (rc == 0 && cap->too_big) {
            free(cap->out);
            cap->out = NULL;
            return 1;
        }
        if (rc == 0)
            return 0;
        char *nl = strchr(cap->errtext, '\n');
        if (nl)
            *nl = 0;
        free(cap->out);
        cap->out = NULL;
        clog_("sacct %s..%s failed (attempt %d of %d): exit %d: %s", t1, t2, attempt,
              o->attempts, rc, cap->errtext);
        if (attempt >= o->attempts)
            return allot_errorf(err, ALLOT_EUNAVAIL, "sacct failed %d times: %s", attempt,
                                cap->errtext);
        sleep((unsigned)backoff_s); /* slurmdbd restarting or lagging: bounded backoff */
        backoff_s = backoff_s < 8 ? backoff_s * 2 : 8;
    }
}

int collect_run(allot_client_t *c, const struct collect_opts *o, int64_t now_s,
                struct collect_stats *s, struct allot_error *err)
{
    struct st_acct_format fmt;
    if (st_acct_format_parse(SACCT_FORMAT, &fmt, err) < 0)
        return -1;
    int64_t from = 0;
    if (get_marker(c, o, &from, err) < 0)
        return -1;
    if (o->from_s > 0)
        from = o->from_s;
    else if (from == 0)
        from = now_s - o->lookback_s;
    int64_t horizon = now_s - o->lag_s;
    int64_t window = o->window_s;
    while (from < horizon) {
        struct window w = {.from_s = from};
        w.to_s = from + window < horizon ? from + window : horizon;
        struct capture cap;
        int rc = sacct_window(o, w.from_s, w.to_s, &cap, err);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            if (window <= 60)
                return allot_errorf(err, ALLOT_ETOOBIG, "sacct output over %ld bytes for a "
                                    "one-minute window", SACCT_OUT_MAX);
            window /= 2;
            continue;
        }
        rc = window_rows(c, o, &fmt, cap.out ? cap.out : "", cap.n, &w, s, err);
        free(cap.out);
        if (rc < 0 || post_marker(c, o, &w, err) < 0)
            return -1;
        s->windows++;
        from = w.to_s;
        window = o->window_s;
    }
    return 0;
}
