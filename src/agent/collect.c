/* SPDX-License-Identifier: GPL-3.0-or-later */
/* collect.c - sacct reconciliation windows (collect.h).
 *
 * sacct is run as
 *   sacct --parsable2 --noheader --allocations --clusters=C --starttime=FROM --endtime=TO
 *         --state=<final states> --format=JobIDRaw,State,User,...
 * with TZ=UTC0 in its environment and UTC times both ways (no DST fold).  sacct selects by state
 * *during* the window; the agent keeps only rows whose End lies in [from, to), so consecutive
 * windows partition the jobs by end time and the marker means "every job that ended before
 * it".  JobIDRaw (not JobID) is the key: an array task prints JobID as 12_3, but the plugins
 * and allotd know it by its own job id; JobID (the last column) goes with the settle as the
 * job's array or het ids.  A window's rows go to allotd BULK_JOBS at a time in one POST
 * /v1/jobs/settle/bulk each (one transaction there), which picks each job's run from what the
 * bank has of it.  Output is read into a growing buffer capped at
 * SACCT_OUT_MAX; a window whose output exceeds it is halved and retried.  Output that cannot
 * be read whole (a row with extra or missing columns, an unknown state, a billing with a
 * unit, a last line without its newline) refuses the window: the marker stays.
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

#include "agent/child.h"
#include "libslurmtext/acct.h"
#include "libutil/text.h"

#define SACCT_OUT_MAX (256L * 1024 * 1024)
#define REPORT_MAX 240 /* fits ALLOT_TEXT_MAX on allotd's side */
#define BULK_JOBS 2000 /* settles per POST /v1/jobs/settle/bulk (allotd takes 10000) */
/* A bulk request's bound: thousands of settles, each a few statements (round trips on
 * PostgreSQL), on a loaded host take longer than a poll's timeout. */
#define BULK_TIMEOUT_MS 300000L

/* ElapsedRaw, not Elapsed: the charge is billed on the seconds slurmdbd recorded (end -
 * start - suspended, doc/money.md), the same number prep/allot settles with.  JobID last:
 * Slurm's name of an array task ("12_3") or het component ("12+1"), sent with the settle
 * so the bank finds the job under it (doc/api.md "Job ids"). */
static const char SACCT_FORMAT[] = "JobIDRaw,State,User,Account,Partition,QOS,Start,End,"
                                   "ElapsedRaw,Timelimit,AllocTRES,AllocCPUS,JobID";
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

/* sacct runs with TZ=UTC0 and its times are read as UTC: local time text is ambiguous in
 * the hour a DST change repeats, and a job whose End was read an hour off would fall
 * outside the window that listed it and be lost. */
static char *const SACCT_ENV[] = {"TZ=UTC0", NULL};
static const struct slt_tz SACCT_TZ = {.kind = SLT_TZ_OFFSET, .offset_s = 0};

static void utc_time_text(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

static void span_copy(struct slt_span s, char *dst, size_t len)
{
    size_t n = s.n < len - 1 ? s.n : len - 1;
    memcpy(dst, s.p, n);
    dst[n] = 0;
}

/* Slurm's integer billing from AllocTRES ("billing=4,cpu=4,..."): 1 with *v, 0 when the
 * list has no billing, -1 when its value is not a plain whole number (a unit suffix, a
 * fraction, an overflow): refused, never read as a smaller number. */
static int tres_billing(struct slt_span t, int64_t *v)
{
    static const char key[] = "billing=";
    for (size_t i = 0; i + sizeof key - 1 <= t.n; i++) {
        if ((i == 0 || t.p[i - 1] == ',') && memcmp(t.p + i, key, sizeof key - 1) == 0) {
            size_t j = i + sizeof key - 1, k = j;
            while (k < t.n && t.p[k] != ',')
                k++;
            uint64_t x;
            if (slt_uint(t.p + j, k - j, INT64_MAX, &x) < 0)
                return -1;
            *v = (int64_t)x;
            return 1;
        }
    }
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

/* One row as a settle of POST /v1/jobs/settle/bulk with match "sacct": allotd picks the run
 * (the held one with this start or a hold at submit, else a new run after the job's last;
 * a run settled or cancelled by allot before start is a replay; never started and never
 * held is skipped).  Appended to jobs, or counted as unknown when a name is too long. */
static int row_job(const struct collect_opts *o, int64_t id, const struct slt_acct_row *row,
                   json_t *jobs, struct window *w, struct collect_stats *s, struct allot_error *err)
{
    int64_t start = 0, end = 0;
    if (row->start.kind == SLT_TIME_VALUE &&
        slt_time_to_epoch(&row->start, &SACCT_TZ, &start, NULL) < 0)
        start = 0;
    if (row->end.kind == SLT_TIME_VALUE && slt_time_to_epoch(&row->end, &SACCT_TZ, &end, NULL) < 0)
        end = 0;
    char user[64], account[64], partition[64], qos[64], state[32], tres[1024];
    if (row->user.n >= sizeof user || row->account.n >= sizeof account ||
        row->partition.n >= sizeof partition || row->qos.n >= sizeof qos ||
        row->alloc_tres.n >= sizeof tres) {
        /* cut, a name could be another account's: reported, never charged as a guess */
        s->unknown++;
        w->unknown++;
        report_add(w, "job %lld: a name or AllocTRES too long for allot", (long long)id);
        clog_("job %lld: user/account/partition/QOS or AllocTRES too long; not settled",
              (long long)id);
        return 0;
    }
    span_copy(row->user, user, sizeof user);
    span_copy(row->account, account, sizeof account);
    span_copy(row->partition, partition, sizeof partition);
    span_copy(row->qos, qos, sizeof qos);
    span_copy(row->alloc_tres, tres, sizeof tres);
    text_copy(state, sizeof state, slt_state_name(row->state.state));
    int64_t billing = 0;
    if (tres_billing(row->alloc_tres, &billing) <= 0)
        billing = 0;
    if (billing == 0 && row->has_alloc_cpus)
        billing = row->alloc_cpus; /* doc/design.md §3.2: without weights, allocated CPUs */
    int64_t limit_s = row->timelimit.kind == SLT_DUR_VALUE ? row->timelimit.ms / 1000 : 0;
    json_t *j = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s}", "cluster", o->cluster,
                          "job_id", (json_int_t)id, "elapsed_s",
                          (json_int_t)(row->has_elapsed_raw ? (int64_t)row->elapsed_raw_s : 0),
                          "state", state, "source", "sacct", "user", user, "account", account,
                          "partition", partition, "qos", qos);
    int bad = !j;
    /* Absent, not 0: allotd takes 0 for no time, and a name only when there is one. */
    if (j && start > 0)
        bad |= json_object_set_new(j, "start", json_integer(start));
    if (j && end > 0)
        bad |= json_object_set_new(j, "end", json_integer(end));
    if (j && tres[0])
        bad |= json_object_set_new(j, "alloc_tres", json_string(tres));
    if (j && billing > 0)
        bad |= json_object_set_new(j, "billing", json_integer(billing));
    if (j && limit_s > 0)
        bad |= json_object_set_new(j, "time_limit_s", json_integer(limit_s));
    if (j && row->has_id && row->id.has_array_task) {
        bad |= json_object_set_new(j, "array_job_id", json_integer(row->id.job));
        bad |= json_object_set_new(j, "array_task_id", json_integer(row->id.array_task));
    } else if (j && row->has_id && row->id.has_het) {
        bad |= json_object_set_new(j, "het_job_id", json_integer(row->id.job));
        bad |= json_object_set_new(j, "het_job_offset", json_integer(row->id.het_offset));
    }
    if (bad || json_array_append_new(jobs, j) < 0) {
        if (bad)
            json_decref(j);
        return allot_errorf(err, ALLOT_ENOMEM, "job %lld: out of memory", (long long)id);
    }
    return 0;
}

static const char *jstr(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "";
}

/* POST the settles in jobs (then emptied) and count each item's outcome.  -1 with err when
 * allotd did not settle them (unreachable, or the request failed as a whole: nothing of it
 * was written). */
static int flush_jobs(allot_client_t *c, const struct collect_opts *o, json_t *jobs,
                      struct window *w, struct collect_stats *s, struct allot_error *err)
{
    size_t n = json_array_size(jobs);
    if (n == 0)
        return 0;
    json_t *b = json_pack("{s:s, s:O}", "match", "sacct", "jobs", jobs);
    char *body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    if (!body)
        return allot_errorf(err, ALLOT_ENOMEM, "bulk settle: out of memory");
    char *reply = NULL;
    int rc = allot_client_set_timeout_ms(c, BULK_TIMEOUT_MS, err);
    if (rc == 0)
        rc = allot_request(c, "POST", "/v1/jobs/settle/bulk", body, NULL, &reply, err);
    free(body);
    if (o->timeout_ms > 0 && allot_client_set_timeout_ms(c, o->timeout_ms, rc < 0 ? NULL : err) < 0)
        rc = -1;
    json_t *doc = rc == 0 ? json_loads(reply ? reply : "", 0, NULL) : NULL;
    free(reply);
    if (rc < 0)
        return -1;
    json_t *items = json_object_get(doc, "items");
    if (json_array_size(items) != n) {
        json_decref(doc);
        return allot_errorf(err, ALLOT_EPROTO, "bulk settle: %zu jobs sent, %zu items answered", n,
                            json_array_size(items));
    }
    for (size_t i = 0; i < n; i++) {
        json_t *it = json_array_get(items, i), *j = json_array_get(jobs, i);
        long long id = (long long)json_integer_value(json_object_get(j, "job_id"));
        int run = (int)json_integer_value(json_object_get(it, "run"));
        const char *out = jstr(it, "outcome");
        if (!strcmp(out, "settled")) {
            s->settled++;
            w->settled++;
            clog_("settled job %lld run %d from sacct: %s elapsed=%lld s charge=%lld SU-min", id,
                  run, jstr(j, "state"),
                  (long long)json_integer_value(json_object_get(j, "elapsed_s")),
                  (long long)json_integer_value(json_object_get(it, "charge_sumin")));
        } else if (!strcmp(out, "replay")) {
            s->already++; /* settled by the epilog or an earlier window: untouched */
            if (json_object_get(it, "message")) /* a run allot cancelled before it started */
                clog_("job %lld run %d: %s", id, run, jstr(it, "message"));
        } else if (!strcmp(out, "skipped")) {
            s->skipped++; /* never ran and never held: nothing to charge or release */
        } else {
            const char *msg = jstr(json_object_get(it, "error"), "message");
            s->unknown++;
            w->unknown++;
            report_add(w, "job %lld (account %s, partition %s): %s", id, jstr(j, "account"),
                       jstr(j, "partition"), msg);
            clog_("job %lld unknown to allot: account=%s user=%s partition=%s: %s", id,
                  jstr(j, "account"), jstr(j, "user"), jstr(j, "partition"), msg);
        }
    }
    json_decref(doc);
    json_array_clear(jobs);
    return 0;
}

/* Parse one sacct line: 1 with *row and *id, or -1 with err naming what is wrong. */
static int parse_line(const struct slt_acct_format *fmt, struct slt_span line,
                      struct slt_acct_row *row, uint64_t *id, struct allot_error *err)
{
    if (slt_acct_row_parse(fmt, line, row, err) < 0)
        return -1;
    size_t k = 0;
    while (k < line.n && line.p[k] != '|')
        k++;
    if (slt_uint(line.p, k, UINT32_MAX, id) < 0 || *id == 0)
        return slt_field_error(err, "JobIDRaw", "not a job id", (struct slt_span){line.p, k});
    int64_t billing;
    if (tres_billing(row->alloc_tres, &billing) < 0)
        return slt_field_error(err, "AllocTRES", "billing not a whole number", row->alloc_tres);
    return 1;
}

int collect_check_output(const char *out, size_t len, struct allot_error *err)
{
    struct slt_acct_format fmt;
    if (slt_acct_format_parse(SACCT_FORMAT, &fmt, err) < 0)
        return -1;
    if (len > 0 && out[len - 1] != '\n')
        return allot_errorf(err, ALLOT_EPROTO, "sacct output cut: its last line has no newline");
    size_t pos = 0, nline = 0;
    struct slt_span line;
    while (slt_next_line(out, len, &pos, &line)) {
        nline++;
        if (line.n == 0)
            continue;
        struct slt_acct_row row;
        uint64_t id;
        struct allot_error pe = {0};
        if (parse_line(&fmt, line, &row, &id, &pe) < 0)
            return allot_errorf(err, ALLOT_EPROTO, "sacct line %zu refused: %s", nline, pe.msg);
    }
    return 0;
}

/* Reconcile the rows of one sacct output.  The whole output is checked first: one row that
 * cannot be read refuses the window (the marker stays, the log says why), because a row
 * skipped and a marker moved past it would be a job never charged. */
static int window_rows(allot_client_t *c, const struct collect_opts *o,
                       const struct slt_acct_format *fmt, const char *out, size_t len,
                       struct window *w, struct collect_stats *s, struct allot_error *err)
{
    if (collect_check_output(out, len, err) < 0)
        return -1;
    json_t *jobs = json_array();
    if (!jobs)
        return allot_errorf(err, ALLOT_ENOMEM, "bulk settle: out of memory");
    size_t pos = 0;
    struct slt_span line;
    int rc = 0;
    while (rc == 0 && slt_next_line(out, len, &pos, &line)) {
        struct slt_acct_row row;
        uint64_t id = 0;
        if (line.n == 0 || parse_line(fmt, line, &row, &id, err) < 0)
            continue; /* cannot fail: checked above */
        if (!slt_state_is_final(row.state.state))
            continue; /* requeued and running again, or still completing: not yet */
        int64_t end = 0;
        if (row.end.kind != SLT_TIME_VALUE ||
            slt_time_to_epoch(&row.end, &SACCT_TZ, &end, NULL) < 0)
            continue;
        if (end < w->from_s || end >= w->to_s)
            continue; /* another window's job (sacct selects by state during the window) */
        s->rows++;
        rc = row_job(o, (int64_t)id, &row, jobs, w, s, err);
        if (rc == 0 && json_array_size(jobs) >= BULK_JOBS)
            rc = flush_jobs(c, o, jobs, w, s, err);
    }
    if (rc == 0)
        rc = flush_jobs(c, o, jobs, w, s, err);
    json_decref(jobs);
    return rc;
}

static int post_marker(allot_client_t *c, const struct collect_opts *o, const struct window *w,
                       struct allot_error *err)
{
    json_t *b =
        json_pack("{s:I, s:I, s:I, s:s}", "until", (json_int_t)w->to_s, "settled",
                  (json_int_t)w->settled, "unknown", (json_int_t)w->unknown, "report", w->report);
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
                        struct child_out *cap, struct allot_error *err)
{
    char a_cl[200], a_s[64], a_e[64], a_st[64], a_f[256], t1[32], t2[32];
    utc_time_text(from_s, t1, sizeof t1);
    utc_time_text(to_s, t2, sizeof t2);
    snprintf(a_cl, sizeof a_cl, "--clusters=%s", o->cluster);
    snprintf(a_s, sizeof a_s, "--starttime=%s", t1);
    snprintf(a_e, sizeof a_e, "--endtime=%s", t2);
    snprintf(a_st, sizeof a_st, "--state=%s", SACCT_STATES);
    snprintf(a_f, sizeof a_f, "--format=%s", SACCT_FORMAT);
    char *argv[] = {(char *)o->sacct,
                    "--parsable2",
                    "--noheader",
                    "--allocations",
                    a_cl,
                    a_s,
                    a_e,
                    a_st,
                    a_f,
                    NULL};
    int backoff_s = 1;
    for (int attempt = 1;; attempt++) {
        int rc = child_run(argv, SACCT_ENV, o->timeout_s, (size_t)SACCT_OUT_MAX, cap);
        if (rc == 0 && cap->too_big) {
            child_out_free(cap);
            return 1;
        }
        if (rc == 0)
            return 0;
        char *nl = strchr(cap->errtext, '\n');
        if (nl)
            *nl = 0;
        child_out_free(cap);
        clog_("sacct %s..%s failed (attempt %d of %d): exit %d: %s", t1, t2, attempt, o->attempts,
              rc, cap->errtext);
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
    struct slt_acct_format fmt;
    if (slt_acct_format_parse(SACCT_FORMAT, &fmt, err) < 0)
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
        if (o->stop && *o->stop)
            return allot_errorf(err, ALLOT_EUNAVAIL, "stopping (signal): marker left at %lld",
                                (long long)from);
        struct window w = {.from_s = from};
        w.to_s = from + window < horizon ? from + window : horizon;
        struct child_out cap;
        int rc = sacct_window(o, w.from_s, w.to_s, &cap, err);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            if (window <= 60)
                return allot_errorf(err, ALLOT_ETOOBIG,
                                    "sacct output over %ld bytes for a "
                                    "one-minute window",
                                    SACCT_OUT_MAX);
            window /= 2;
            continue;
        }
        rc = window_rows(c, o, &fmt, cap.out ? cap.out : "", cap.n, &w, s, err);
        child_out_free(&cap);
        if (rc < 0 || post_marker(c, o, &w, err) < 0)
            return -1;
        s->windows++;
        from = w.to_s;
        window = o->window_s;
    }
    return 0;
}
