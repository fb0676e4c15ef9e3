/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * job_submit_allot.c - slurmctld's job_submit/allot plugin: admission of jobs by the
 * allot bank at submit time (doc/design.md §1.4, §3.5).
 *
 * Design: built against Slurm's public headers (slurm/slurm.h), job_view.c aside; the few
 * libslurmfull names it uses are declared in plugins/slurm_api.h.  plugin_version is the
 * SLURM_VERSION_NUMBER it was compiled with, so slurmctld loads it into that release only.
 * Slurm calls job_submit serially under its locks, so the call does at most one bounded
 * request to allotd (PluginTimeoutMs), plus one for a user's default account on a cache
 * miss; then FailMode decides when allotd did not answer (closed, the default: refuse
 * with a message saying so; open: admit and log, the hold at start reconciles).  After a
 * request that timed out, the circuit breaker (breaker.h) applies FailMode at once for
 * PluginBreakerMs, so submissions queued behind a hung allotd do not wait a timeout each.
 * The submit rules (default account, one partition, time limit, time_min, memory) are
 * submit_req.c's.  Partition facts (default partition, DefaultTime, MaxTime, DefMemPerCPU,
 * TRESBillingWeights) come from slurmctld itself through the public API
 * (slurm_load_partitions), asked by a thread of this plugin every PART_REFRESH_S whether
 * they changed since its last copy (an unchanged answer is a few bytes): job_submit itself
 * must not call slurmctld while slurmctld holds its locks for us.  The admission is priced
 * with those weights (slurm_price.h), not allotd's copy of the partition.  Default accounts
 * come from allotd (the user's default_account, cached for USER_CACHE_S); a user allotd
 * does not know is looked up in slurmctld's association manager, so the refusal says what
 * Slurm knows and the command that fixes it (no_account_message).
 * HoldMode=submit (allot.conf, read by the plugin like allotd reads it): each admit carries
 * a new submit token and, when admitted, takes the job's hold at once; the token goes into
 * the job's AdminComment as "allot_token=T" for prep/allot to bind at start.  Slurm 22.05
 * refuses an AdminComment at submit or update from anyone but root, SlurmUser and
 * administrators (job_mgr.c validate_job_create_req / update_job), and this plugin removes
 * any "allot_token=" word it did not write (at submit and at job_modify), so a token in a
 * job's AdminComment is always the one allotd admitted that job with.
 * A job array is admitted (and held at submit) as all its tasks (libslurmtext/arrayspec.c),
 * a het job's component with its earlier components' cost (submit_group.c).
 * job_modify also re-prices a job whose time limit changes (modify_limit.h), reading the
 * job through job_view.c, this plugin's one file built with Slurm's internal headers.
 * Without allot.conf the plugin is inactive and says so in slurmctld's log.
 * State: file-static, one mutex (STYLE §2 "Global state"); the partition thread is the
 * only other thread.
 */
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#include "allot/allot.h"
#include "libslurmtext/arrayspec.h"
#include "libutil/text.h"
#include "plugins/common/breaker.h"
#include "plugins/common/breaker_ready.h"
#include "plugins/common/plugin_conf.h"
#include "plugins/common/slurm_price.h"
#include "plugins/common/submit_token.h"
#include "plugins/job_submit/allot/submit_group.h"
#include "plugins/job_submit/allot/job_view.h"
#include "plugins/job_submit/allot/modify_limit.h"
#include "plugins/job_submit/allot/submit_req.h"
#include "plugins/plugin_export.h"
#include "plugins/slurm_api.h"

ALLOT_PLUGIN_EXPORT const char plugin_name[] = "allot allocation bank job_submit plugin";
ALLOT_PLUGIN_EXPORT const char plugin_type[] = "job_submit/allot";
ALLOT_PLUGIN_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define PART_MAX 64        /* partitions remembered */
#define PART_REFRESH_S 2   /* partition facts: asked for changes this often */
#define WEIGHTS_MAX 512    /* a partition's TRESBillingWeights text, with the NUL */
#define USER_CACHE_MAX 256 /* users' default accounts remembered */
#define USER_CACHE_S 60
#define CONF_RETRY_S 1 /* a missing allot.conf is looked for again after this */
#define MSG_MAX 1536

struct part_fact {
    char name[SUBMIT_NAME_MAX];
    int is_default;
    submit_partition_info_t info;
    char weights[WEIGHTS_MAX]; /* TRESBillingWeights; "" = none */
    int weights_ok;            /* 0: longer than WEIGHTS_MAX (allotd's copy prices it) */
};

struct user_fact {
    uint32_t uid;
    time_t fetched;
    int known; /* allotd knows the user */
    char account[SUBMIT_NAME_MAX];
};

/* Slurm plugin state (STYLE §2): guarded by js_mu. */
static pthread_mutex_t js_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t js_cv = PTHREAD_COND_INITIALIZER;
static struct part_fact js_parts[PART_MAX];
static int js_nparts = -1;     /* -1: not loaded yet */
static int js_max_tres;        /* PriorityFlags=MAX_TRES at the last load */
static time_t js_parts_update; /* slurmctld's last_update of the copy we hold */
static struct user_fact js_users[USER_CACHE_MAX];
static unsigned js_users_next;
static plugin_conf_t js_conf;
static allot_client_t *js_client; /* NULL until allot.conf was read */
static time_t js_conf_tried;
static int js_stop;
static pthread_t js_thread;
static int js_thread_started;
static int64_t js_last_token;   /* last submit token made (submit_token.h) */
static submit_group_t js_group; /* the het job being admitted (submit_group.h) */
/* Calls to allotd pass it (breaker.h): after one timeout, FailMode applies at once for
 * PluginBreakerMs rather than a timeout per queued submission.  Its own mutex. */
static breaker_t js_breaker = BREAKER_INITIALIZER;

/* ---- partition facts, refreshed by our own thread ---------------------------------- */

static void load_partitions(void)
{
    partition_info_msg_t *msg = NULL;
    static struct part_fact parts[PART_MAX]; /* only this thread loads */
    int n = 0;

    pthread_mutex_lock(&js_mu);
    time_t since = js_nparts < 0 ? (time_t)0 : js_parts_update;
    pthread_mutex_unlock(&js_mu);
    if (slurm_load_partitions(since, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        if (errno != SLURM_NO_CHANGE_IN_DATA)
            slurm_debug("job_submit/allot: partitions not loaded yet: %s", slurm_strerror(errno));
        return;
    }
    for (uint32_t i = 0; i < msg->record_count && n < PART_MAX; i++) {
        partition_info_t *p = &msg->partition_array[i];
        struct part_fact *f = &parts[n];
        if (!p->name || strlen(p->name) >= sizeof(f->name))
            continue;
        memset(f, 0, sizeof(*f));
        text_copy(f->name, sizeof(f->name), p->name);
        f->is_default = (p->flags & PART_FLAG_DEFAULT) != 0;
        f->info.default_time_min = p->default_time;
        f->info.max_time_min = p->max_time;
        /* A per-node default is not a per-CPU one: only MEM_PER_CPU values count. */
        if (p->def_mem_per_cpu != NO_VAL64 && (p->def_mem_per_cpu & MEM_PER_CPU))
            f->info.def_mem_per_cpu_mb = p->def_mem_per_cpu & ~MEM_PER_CPU;
        f->weights_ok = text_copy(f->weights, sizeof(f->weights),
                                  p->billing_weights_str ? p->billing_weights_str : "") == 0;
        if (!f->weights_ok)
            slurm_error("job_submit/allot: partition %s: TRESBillingWeights longer than %d "
                        "characters; its jobs are priced with allotd's copy",
                        f->name, WEIGHTS_MAX - 1);
        n++;
    }
    time_t update = msg->last_update;
    slurm_free_partition_info_msg(msg);
    pthread_mutex_lock(&js_mu);
    memcpy(js_parts, parts, sizeof(parts[0]) * (size_t)n);
    slurm_info("job_submit/allot: %d partition(s) loaded", n);
    js_nparts = n;
    js_parts_update = update;
    js_max_tres = (slurm_conf.priority_flags & PRIORITY_FLAGS_MAX_TRES) != 0;
    pthread_mutex_unlock(&js_mu);
}

static void *partition_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&js_mu);
    while (!js_stop) {
        pthread_mutex_unlock(&js_mu);
        load_partitions();
        pthread_mutex_lock(&js_mu);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += js_nparts < 0 ? 1 : PART_REFRESH_S;
        if (!js_stop)
            pthread_cond_timedwait(&js_cv, &js_mu, &ts);
    }
    pthread_mutex_unlock(&js_mu);
    return NULL;
}

/* ---- the submit environment for submit_req.c --------------------------------------- */

struct env_arg {
    const char *default_account; /* resolved before the rules run; NULL: none */
};

static int env_default_account(uint32_t uid, char *buf, size_t size, void *arg)
{
    const struct env_arg *e = arg;
    (void)uid;
    if (!e->default_account || (size_t)snprintf(buf, size, "%s", e->default_account) >= size)
        return -1;
    return 0;
}

/* Caller holds js_mu (the env runs inside job_submit, which holds it). */
static int env_default_partition(char *buf, size_t size, void *arg)
{
    (void)arg;
    for (int i = 0; i < js_nparts; i++)
        if (js_parts[i].is_default)
            return (size_t)snprintf(buf, size, "%s", js_parts[i].name) < size ? 0 : -1;
    return -1;
}

static const struct part_fact *part_find_locked(const char *name)
{
    for (int i = 0; i < js_nparts; i++)
        if (!strcmp(js_parts[i].name, name))
            return &js_parts[i];
    return NULL;
}

static int env_partition_info(const char *name, submit_partition_info_t *out, void *arg)
{
    (void)arg;
    const struct part_fact *f = part_find_locked(name);
    if (!f)
        return -1;
    *out = f->info;
    return 0;
}

/* The job's billing under slurmctld's weights for PARTITION, in micro-units; 0 (allotd
 * prices with its copy) when they cannot be used, which is logged.  Caller holds js_mu. */
static int64_t slurm_billing_locked(const char *partition, const char *tres)
{
    const struct part_fact *f = part_find_locked(partition);
    struct allot_error err;
    int64_t b = 0;

    if (!f || !f->weights_ok)
        return 0;
    if (slurm_price_billing(f->weights, js_max_tres, tres, &b, &err) < 0) {
        slurm_error("job_submit/allot: partition %s: priced with allotd's copy: %s", partition,
                    err.msg);
        return 0;
    }
    return b;
}

/* ---- allotd ------------------------------------------------------------------------ */

/* Read allot.conf and make the client, once; caller holds js_mu.  0 when ready. */
static int ready_locked(void)
{
    struct allot_error err;
    time_t now = time(NULL);

    if (js_client)
        return 0;
    if (js_conf_tried && now - js_conf_tried < CONF_RETRY_S)
        return -1;
    js_conf_tried = now;
    if (plugin_conf_load(NULL, &js_conf, &err) < 0) {
        slurm_error("job_submit/allot: inactive (jobs pass unchecked) until allot.conf can "
                    "be read: %s",
                    err.msg);
        return -1;
    }
    js_client = plugin_client_create(&js_conf, &err);
    if (!js_client) {
        slurm_error("job_submit/allot: no allotd client: %s", err.msg);
        return -1;
    }
    breaker_init(&js_breaker, js_conf.breaker_ms, 2 * (int64_t)js_conf.timeout_ms + 1000);
    slurm_info("job_submit/allot: allotd %s (auth %s), FailMode=%s, HoldMode=%s, timeout %ld ms, "
               "breaker %ld ms",
               js_conf.url, js_conf.peer_auth ? "peer" : "munge",
               js_conf.fail_open ? "open" : "closed", js_conf.hold_at_submit ? "submit" : "start",
               js_conf.timeout_ms, js_conf.breaker_ms);
    return 0;
}

/* Ask the breaker before a call to allotd: 0 and *V to go on, or -1 with ERR (EUNAVAIL,
 * which fail_mode reports) when it is open.  Caller holds js_mu. */
static int breaker_gate(enum breaker_verdict *v, int64_t *t0_ms, struct allot_error *err)
{
    *t0_ms = breaker_now_ms();
    *v = breaker_enter(&js_breaker, *t0_ms);
    if (*v == BREAKER_PROBE && breaker_ready_gate(&js_breaker, *v, js_client, err) == BREAKER_SKIP)
        return (*v = BREAKER_SKIP), -1; /* err says why */
    if (*v != BREAKER_SKIP)
        return 0;
    return allot_errorf(err, ALLOT_EUNAVAIL,
                        "allotd did not answer within %ld ms lately; not asked again until "
                        "PluginBreakerMs (%ld ms) has passed",
                        js_conf.timeout_ms, js_conf.breaker_ms);
}

/* Report a call the breaker let through: FAILED_UNAVAIL when allotd was unavailable; it
 * counts as hung when it took the whole timeout.  Logs each open and close once. */
static void breaker_done(enum breaker_verdict v, int64_t t0_ms, int failed_unavail)
{
    int64_t now = breaker_now_ms(), open_ms = 0;
    uint64_t skipped = 0, opens, total;
    int hung = failed_unavail && now - t0_ms >= js_conf.timeout_ms * 9 / 10;
    enum breaker_event ev = breaker_leave(&js_breaker, v, hung, now, &open_ms, &skipped);

    if (ev == BREAKER_NONE)
        return;
    breaker_counts(&js_breaker, &opens, &total);
    if (ev == BREAKER_OPENED)
        slurm_error("job_submit/allot: circuit breaker open: allotd did not answer within %ld "
                    "ms; FailMode=%s applies without asking it for %ld ms, then one request "
                    "probes it (opened %llu time(s) since start)",
                    js_conf.timeout_ms, js_conf.fail_open ? "open" : "closed", js_conf.breaker_ms,
                    (unsigned long long)opens);
    else
        slurm_info("job_submit/allot: circuit breaker closed: allotd answers again after %lld "
                   "ms; %llu submission(s) decided by FailMode meanwhile (%llu since start)",
                   (long long)open_ms, (unsigned long long)skipped, (unsigned long long)total);
}

/*
 * The user's default account from allotd (cached).  0 with BUF set; 1 when allotd knows the
 * user but it has none; 2 when allotd does not know the user; -1 with ERR when allotd did
 * not answer.  Caller holds js_mu.
 */
static int default_account_locked(uint32_t uid, const char *user, char *buf, size_t size,
                                  struct allot_error *err)
{
    time_t now = time(NULL);
    char path[256], *reply = NULL, *enc;
    int status = 0;

    for (unsigned i = 0; i < USER_CACHE_MAX; i++) {
        struct user_fact *u = &js_users[i];
        if (u->fetched && u->uid == uid && now - u->fetched < USER_CACHE_S) {
            snprintf(buf, size, "%s", u->account);
            return u->account[0] ? 0 : u->known ? 1 : 2;
        }
    }
    int known = 1;
    enc = allot_urlencode(user, err);
    if (!enc)
        return -1;
    snprintf(path, sizeof(path), "/v1/users/%s", enc);
    free(enc);
    enum breaker_verdict bv;
    int64_t t0;
    if (breaker_gate(&bv, &t0, err) < 0)
        return -1;
    int arc = allot_request(js_client, "GET", path, NULL, &status, &reply, err);
    breaker_done(bv, t0, arc < 0 && (err->code == ALLOT_EUNAVAIL || err->code == ALLOT_EINDOUBT));
    if (arc < 0) {
        free(reply);
        if (err->code != ALLOT_ENOENT)
            return -1;
        buf[0] = '\0';
        known = 0;
    } else {
        /* The one field we need; a JSON parser for it would be more code than this. */
        const char *k = strstr(reply, "\"default_account\"");
        const char *q = k ? strchr(k + 17, '"') : NULL;
        const char *e = q ? strchr(q + 1, '"') : NULL;
        if (e && (size_t)(e - q - 1) < size) {
            memcpy(buf, q + 1, (size_t)(e - q - 1));
            buf[e - q - 1] = '\0';
        } else {
            buf[0] = '\0';
        }
        free(reply);
    }
    struct user_fact *u = &js_users[js_users_next++ % USER_CACHE_MAX];
    u->uid = uid;
    u->fetched = now;
    u->known = known;
    text_copy(u->account, sizeof(u->account), buf);
    return buf[0] ? 0 : known ? 1 : 2;
}

/* UID's DefaultAccount in slurmctld's association manager into BUF ("" when Slurm has no
 * such user or no default).  The manager takes its own read lock (job_submit holds none of
 * its locks), as Slurm's job_submit/lua does; the name is copied before anything can
 * change it. */
static void slurm_default_account(uint32_t uid, char *buf, size_t size)
{
    slurmdb_user_rec_t rec;

    memset(&rec, 0, sizeof(rec));
    rec.uid = uid;
    buf[0] = '\0';
    if (assoc_mgr_fill_in_user(acct_db_conn, &rec, accounting_enforce, NULL, false) !=
            SLURM_ERROR &&
        rec.default_acct)
        text_copy(buf, size, rec.default_acct);
}

/*
 * The refusal for a job of USER (UID) that allot cannot place under an account: KNOWN is
 * default_account_locked's answer (1: allot knows the user, without a default account;
 * 2: allot does not know the user).  Says what Slurm and allot each know, and the command
 * that fixes it.  Writes MSG; returns 1 when Slurm knows the user (allot's copy lags),
 * else 0.
 */
static int no_account_message(uint32_t uid, const char *user, int known, char *msg, size_t size)
{
    char sacct[SUBMIT_NAME_MAX];

    slurm_default_account(uid, sacct, sizeof(sacct));
    if (sacct[0] && known == 2)
        snprintf(msg, size,
                 "user %s (uid %u) is known to Slurm (DefaultAccount=%s) but not to allot: an "
                 "allot administrator adds it with 'allot user add %s uid=%u "
                 "defaultaccount=%s' and 'allot assoc add cluster=%s account=%s user=%s' "
                 "(allot-agent --sync follow does this itself)",
                 user, uid, sacct, user, uid, sacct, slurm_conf.cluster_name, sacct, user);
    else if (sacct[0])
        snprintf(msg, size,
                 "user %s (uid %u) has DefaultAccount=%s in Slurm but no default account in "
                 "allot: submit with --account=%s, or an allot administrator runs 'allot user "
                 "modify %s defaultaccount=%s' (allot-agent --sync follow does this itself)",
                 user, uid, sacct, sacct, user, sacct);
    else
        snprintf(msg, size,
                 "user %s (uid %u) has no default account in Slurm or in allot: submit with "
                 "--account=NAME",
                 user, uid);
    return sacct[0] != 0;
}

static void user_name(uint32_t uid, char *buf, size_t size)
{
    struct passwd pw, *res = NULL;
    char tmp[4096];

    if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
        snprintf(buf, size, "%s", pw.pw_name);
    else
        snprintf(buf, size, "%u", uid);
}

/* Errors with which allotd itself refuses a request: they are answers, so FailMode does not
 * apply.  Outages, protocol and authentication trouble are not (the bank could not decide). */
static int admit_is_decision(enum allot_errnum code)
{
    return code == ALLOT_EINVAL || code == ALLOT_ENOENT || code == ALLOT_ECONFLICT ||
           code == ALLOT_EFUNDS || code == ALLOT_ELIMIT || code == ALLOT_ETOOBIG;
}

/* allotd did not answer: FailMode decides.  Returns the code for job_submit. */
static int fail_mode(const char *what, uint32_t uid, const char *account,
                     const struct allot_error *err, char **err_msg)
{
    char msg[MSG_MAX];

    if (js_conf.fail_open) {
        slurm_info("job_submit/allot: fail-open: uid %u account %s admitted without allotd "
                   "(%s: %s); the hold at start checks it",
                   uid, account ? account : "(default)", what, err->msg);
        return SLURM_SUCCESS;
    }
    slurm_error("job_submit/allot: fail-closed: uid %u refused, allotd did not answer (%s: %s)",
                uid, what, err->msg);
    snprintf(msg, sizeof(msg),
             "allot: the allocation bank cannot be reached (%s), so no job can be admitted "
             "now; try again later",
             err->msg);
    *err_msg = slurm_xstrdup(msg);
    return ESLURM_ACCOUNTING_POLICY;
}

/*
 * allot cannot name the job's account (KNOWN as no_account_message takes it).  A user
 * Slurm knows and allot does not is allot's copy lagging behind Slurm: FailMode decides
 * (open: admitted, logged).  Otherwise the job is refused.  Returns the code for
 * job_submit.
 */
static int refuse_no_account(uint32_t uid, const char *user, int known, char **err_msg)
{
    char msg[MSG_MAX], full[MSG_MAX + 8];

    int lag = no_account_message(uid, user, known, msg, sizeof(msg));
    if (lag && known == 2 && js_conf.fail_open) {
        slurm_info("job_submit/allot: fail-open: uid %u admitted: %s", uid, msg);
        return SLURM_SUCCESS;
    }
    snprintf(full, sizeof(full), "allot: %s", msg);
    *err_msg = slurm_xstrdup(full);
    slurm_info("job_submit/allot: uid %u refused: %s", uid, msg);
    return ESLURM_INVALID_ACCOUNT;
}

/* Slurm's ACCOUNTING_ENFORCE_ASSOCS (src/common/read_config.h): with it, the association
 * manager answers SLURM_ERROR for an association it does not have, instead of success. */
#define ALLOT_ENFORCE_ASSOCS 0x1

/* 1 when slurmctld's association manager has an association of UID with ACCOUNT (on this
 * cluster; PARTITION's, else the account-wide one), else 0.  Its own read lock, as in
 * slurm_default_account. */
static int slurm_has_assoc(uint32_t uid, const char *account, const char *partition)
{
    slurmdb_assoc_rec_t rec;

    memset(&rec, 0, sizeof(rec));
    rec.uid = uid;
    rec.acct = (char *)account;
    rec.partition = partition && partition[0] ? (char *)partition : NULL;
    return assoc_mgr_fill_in_assoc(acct_db_conn, &rec, ALLOT_ENFORCE_ASSOCS, NULL, false) ==
               SLURM_SUCCESS &&
           rec.id != 0;
}

/*
 * allotd has no association of USER with ACCOUNT, Slurm has one: allot's copy lags behind
 * Slurm.  The message says so and names the command that fixes it; FailMode decides (open:
 * admitted, logged).  Returns the code for job_submit.
 */
static int refuse_assoc_lag(uint32_t uid, const char *user, const char *account, char **err_msg)
{
    char msg[MSG_MAX], full[MSG_MAX + 8];

    snprintf(msg, sizeof(msg),
             "user %s (uid %u) has an association with account %s on cluster %s in Slurm but "
             "not in allot: an allot administrator adds it with 'allot assoc add cluster=%s "
             "account=%s user=%s' (after 'allot account add %s' or 'allot user add %s "
             "uid=%u' when allot lacks them; allot-agent --sync follow does this itself)",
             user, uid, account, slurm_conf.cluster_name, slurm_conf.cluster_name, account, user,
             account, user, uid);
    if (js_conf.fail_open) {
        slurm_info("job_submit/allot: fail-open: uid %u admitted: %s", uid, msg);
        return SLURM_SUCCESS;
    }
    snprintf(full, sizeof(full), "allot: %s", msg);
    *err_msg = slurm_xstrdup(full);
    slurm_info("job_submit/allot: uid %u refused: %s", uid, msg);
    return ESLURM_INVALID_ACCOUNT;
}

/*
 * Replace DESC's AdminComment with itself minus any "allot_token=" word, plus the word
 * for TOKEN when TOKEN != 0.  0, or -1 when the result does not fit.
 */
static int set_token(job_desc_msg_t *desc, int64_t token)
{
    char buf[MSG_MAX];

    int foreign = desc->admin_comment && strstr(desc->admin_comment, SUBMIT_TOKEN_KEY);

    if (!token && !foreign)
        return 0;
    if (submit_token_annotate(desc->admin_comment, token, buf, sizeof(buf)) < 0)
        return -1;
    if (foreign)
        slurm_info("job_submit/allot: removed a submit token allot did not write from the "
                   "AdminComment \"%s\"",
                   desc->admin_comment);
    slurm_xfree((void **)&desc->admin_comment);
    desc->admin_comment = buf[0] ? slurm_xstrdup(buf) : NULL;
    return 0;
}

/* A het job's component was refused, so the whole job is: give back the submit holds its
 * earlier components took (one try each; SubmitHoldTTL is the backstop).  Caller holds
 * js_mu. */
static void het_refused(uint32_t uid)
{
    int64_t tokens[SUBMIT_GROUP_MAX];
    int n = submit_group_refused(&js_group, tokens, SUBMIT_GROUP_MAX);
    for (int i = 0; i < n; i++) {
        struct allot_job_desc d = {.cluster = slurm_conf.cluster_name,
                                   .job_id = tokens[i],
                                   .elapsed_s = -1,
                                   .comment = "another component of its het job was refused"};
        struct allot_job_result res;
        struct allot_error err = {0};
        if (allot_job_release(js_client, &d, &res, &err) < 0)
            slurm_error("job_submit/allot: uid %u: submit hold %lld of a refused het job not "
                        "released (%s); SubmitHoldTTL releases it",
                        uid, (long long)tokens[i], err.msg);
    }
}

ALLOT_PLUGIN_EXPORT int init(void)
{
    slurm_info("job_submit/allot: loaded, built for Slurm %d.%02d.%d",
               SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER), SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER),
               SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
    pthread_mutex_lock(&js_mu);
    js_stop = 0;
    (void)ready_locked();
    pthread_mutex_unlock(&js_mu);
    if (pthread_create(&js_thread, NULL, partition_thread, NULL) != 0) {
        slurm_error("job_submit/allot: cannot start the partition thread");
        return SLURM_ERROR;
    }
    js_thread_started = 1;
    return SLURM_SUCCESS;
}

ALLOT_PLUGIN_EXPORT void fini(void)
{
    pthread_mutex_lock(&js_mu);
    js_stop = 1;
    pthread_cond_broadcast(&js_cv);
    pthread_mutex_unlock(&js_mu);
    if (js_thread_started)
        pthread_join(js_thread, NULL);
    js_thread_started = 0;
    allot_client_destroy(js_client);
    js_client = NULL;
    slurm_info("job_submit/allot: unloaded");
}

ALLOT_PLUGIN_EXPORT int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
    char user[SUBMIT_NAME_MAX], account[SUBMIT_NAME_MAX] = "", msg[MSG_MAX], tres[512];
    struct allot_error err = {0};
    struct allot_job_result res;
    struct env_arg ea = {NULL};
    submit_env_t env = {env_default_account, env_default_partition, env_partition_info, 0, &ea};
    submit_req_t req;
    uint32_t uid = job_desc->user_id != NO_VAL ? job_desc->user_id : submit_uid;
    int rc;

    /* Before any decision, fail-open and inactive paths included: no job keeps a token
     * this plugin did not write (only administrators can set AdminComment at all). */
    if (set_token(job_desc, 0) < 0)
        return ESLURM_ACCOUNTING_POLICY;
    pthread_mutex_lock(&js_mu);
    if (ready_locked() < 0) {
        rc = SLURM_SUCCESS;
        goto out;
    }
    user_name(uid, user, sizeof(user));
    if (js_nparts < 0) {
        snprintf(err.msg, sizeof(err.msg), "slurmctld's partitions are not loaded yet");
        rc = fail_mode("partitions", uid, job_desc->account, &err, err_msg);
        goto out;
    }
    if (!job_desc->account || !job_desc->account[0]) {
        int d = default_account_locked(uid, user, account, sizeof(account), &err);
        if (d < 0) {
            rc = fail_mode("default account", uid, NULL, &err, err_msg);
            goto out;
        }
        if (d == 0) {
            ea.default_account = account;
        } else {
            rc = refuse_no_account(uid, user, d, err_msg);
            goto out;
        }
    }
    rc = submit_req_from_desc(job_desc, submit_uid, &env, &req, msg, sizeof(msg));
    if (rc != SLURM_SUCCESS) {
        char full[MSG_MAX + 8];
        snprintf(full, sizeof(full), "allot: %s", msg);
        *err_msg = slurm_xstrdup(full);
        slurm_info("job_submit/allot: uid %u refused: %s", uid, msg);
        goto out;
    }
    if (submit_req_tres(&req, tres, sizeof(tres)) < 0) {
        *err_msg = slurm_xstrdup("allot: the job's TRES request cannot be read");
        rc = ESLURM_INVALID_TRES;
        goto out;
    }
    /* A job array costs all its tasks, a het job all its components (doc/slurm.md). */
    uint32_t tasks = 1;
    if (job_desc->array_inx && job_desc->array_inx[0] &&
        slt_array_spec_count(job_desc->array_inx, &tasks, msg, sizeof(msg)) < 0) {
        char full[MSG_MAX + 8];
        snprintf(full, sizeof(full), "allot: %s", msg);
        *err_msg = slurm_xstrdup(full);
        rc = ESLURM_INVALID_ARRAY;
        goto out;
    }
    int het = job_desc->het_job_offset != NO_VAL;
    int64_t het_before = het ? submit_group_begin(&js_group, uid, job_desc->het_job_offset) : 0;
    struct allot_job_desc d = {
        .cluster = slurm_conf.cluster_name,
        .user = user,
        .account = req.account,
        .partition = req.partition,
        .qos = req.qos,
        .time_limit_s = (int64_t)req.time_limit_min * 60,
        .tres = tres,
        .billing_micro = slurm_billing_locked(req.partition, tres),
        .elapsed_s = -1,
        .tasks = tasks,
        /* With a hold at submit the earlier components already hold theirs. */
        .extra_sumin = js_conf.hold_at_submit ? 0 : het_before,
    };
    if (js_conf.hold_at_submit) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        d.submit_token =
            submit_token_next(&js_last_token, (int64_t)now.tv_sec, (int64_t)(now.tv_nsec / 1000));
    }
    enum breaker_verdict bv;
    int64_t t0;
    if (breaker_gate(&bv, &t0, &err) < 0) {
        rc = fail_mode("admit", uid, req.account, &err, err_msg);
        goto out;
    }
    int arc = allot_job_admit(js_client, &d, &res, &err);
    if (arc < 0 && d.submit_token && err.code == ALLOT_EINVAL &&
        !strncmp(err.msg, "submit_token:", 13)) {
        /* allot.conf says HoldMode=submit here but allotd runs another configuration:
         * admit as HoldMode=start rather than refuse every job. */
        slurm_error("job_submit/allot: allotd refuses submit tokens (%s); admitting with the "
                    "hold at start until both read HoldMode=submit",
                    err.msg);
        d.submit_token = 0;
        d.extra_sumin = het_before; /* no hold at submit: count the earlier components */
        arc = allot_job_admit(js_client, &d, &res, &err);
    }
    breaker_done(bv, t0, arc < 0 && (err.code == ALLOT_EUNAVAIL || err.code == ALLOT_EINDOUBT));
    if (arc < 0) {
        if (err.code == ALLOT_ENOENT && strstr(err.msg, "has no association") &&
            slurm_has_assoc(uid, req.account, req.partition)) {
            rc = refuse_assoc_lag(uid, user, req.account, err_msg);
            goto out;
        }
        if (admit_is_decision(err.code)) {
            /* allotd answered and refused the request itself (unknown account, no
             * association, bad value): that is a decision, not an outage. */
            snprintf(msg, sizeof(msg), "allot: %s", err.msg);
            *err_msg = slurm_xstrdup(msg);
            slurm_info("job_submit/allot: uid %u account %s refused: %s", uid, req.account,
                       err.msg);
            rc = err.code == ALLOT_ENOENT ? ESLURM_INVALID_ACCOUNT : ESLURM_ACCOUNTING_POLICY;
            if (het)
                het_refused(uid);
            goto out;
        }
        rc = fail_mode("admit", uid, req.account, &err, err_msg);
        goto out;
    }
    if (!res.ok) {
        snprintf(msg, sizeof(msg), "allot: %s", res.message);
        *err_msg = slurm_xstrdup(msg);
        slurm_info("job_submit/allot: uid %u account %s refused: %s", uid, req.account,
                   res.message);
        rc = ESLURM_ACCOUNTING_POLICY;
        if (het)
            het_refused(uid);
        goto out;
    }
    if (res.refusal != ALLOT_OK) /* allotd's EnforceMode=observe: admitted all the same */
        slurm_info("job_submit/allot: observe: uid %u account %s admitted; enforcement would "
                   "refuse: %s",
                   uid, req.account, res.message);
    if (het)
        submit_group_admitted(&js_group, job_desc->het_job_offset,
                              res.total_sumin ? res.total_sumin : res.cost_sumin, res.submit_token);
    if (set_token(job_desc, res.submit_token) < 0) {
        /* Admitted and held, but prep/allot could not find the hold: refuse rather than
         * hold the credit twice; the provisional hold is released by SubmitHoldTTL. */
        *err_msg = slurm_xstrdup("allot: the job's AdminComment is too long to carry allot's "
                                 "submit token");
        rc = ESLURM_ACCOUNTING_POLICY;
        goto out;
    }
    submit_req_apply(&req, job_desc);
    /* Bill and run the job under the account allot priced (allot's default account). */
    if (!job_desc->account || !job_desc->account[0])
        job_desc->account = slurm_xstrdup(req.account);
    slurm_debug("job_submit/allot: uid %u account %s partition %s admitted, %u task(s) cost "
                "up to %lld SU-min each of %lld available",
                uid, req.account, req.partition, tasks, (long long)res.cost_sumin,
                (long long)res.available_sumin);
    rc = SLURM_SUCCESS;
out:
    pthread_mutex_unlock(&js_mu);
    return rc;
}

/* job_record_t is slurmctld-internal: read through job_view.c only. */
ALLOT_PLUGIN_EXPORT int job_modify(job_desc_msg_t *job_desc, struct job_record *job_ptr,
                                   uint32_t modify_uid)
{
    job_view_t v;
    char user[SUBMIT_NAME_MAX];
    int rc = SLURM_SUCCESS;

    (void)modify_uid;
    /* Only job_submit writes tokens: an administrator's AdminComment update loses any. */
    if (set_token(job_desc, 0) < 0)
        return ESLURM_ACCOUNTING_POLICY;
    if (job_desc->time_limit == NO_VAL || job_view_read(job_ptr, &v) < 0)
        return SLURM_SUCCESS;
    pthread_mutex_lock(&js_mu);
    if (ready_locked() == 0) {
        user_name(v.user_id, user, sizeof(user));
        int64_t billing = v.state == JOB_VIEW_PENDING && !v.submit_token
                              ? slurm_billing_locked(v.partition, v.req_tres)
                              : 0;
        rc =
            modify_limit(js_client, &js_conf, slurm_conf.cluster_name, user, job_desc, &v, billing);
    }
    pthread_mutex_unlock(&js_mu);
    return rc;
}
