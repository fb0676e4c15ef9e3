/* SPDX-License-Identifier: GPL-3.0-or-later */
/* main.c - allotd, the bank daemon: main() is the table of contents.
 *
 * Init in order (command line, config, log, signals, storage check, writer, HTTP), run
 * (wait for signals: SIGHUP reopens LogFile and re-reads the config, SIGTERM/SIGINT stop),
 * fini in reverse
 * (stop accepting, drain the writer queue and commit, close).  Startup errors go to the
 * terminal and exit non-zero before anything is served.
 *
 * Schema policy (doc/allotd.md): an empty database is initialised automatically; a database
 * with an older schema is refused until `allot db upgrade` ran; a newer one is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allotd/allotd.h"
#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/crash.h"
#include "allotd/http.h"
#include "allotd/metrics.h"
#include "allotd/notify.h"
#include "allotd/partcache.h"
#include "allotd/tokens.h"
#include "allotd/tick.h"
#include "allotd/writer.h"
#include "libstore/store_fault.h"
#include "libutil/log.h"
#include "libutil/monotime.h"
#include "libutil/text.h"

/* Signal flags: set by the handler and nothing else (STYLE §2). */
static volatile sig_atomic_t got_term, got_hup;

static void on_signal(int sig)
{
    if (sig == SIGHUP)
        got_hup = 1;
    else
        got_term = 1;
}

static void usage(FILE *f)
{
    fputs("usage: allotd --config FILE [--foreground] [--check-config]\n"
          "       allotd --version | --help | --config-table\n"
          "\n"
          "allotd is the allot allocation bank: accounts, allocations of service units, the\n"
          "ledger, job charges, limits and fair-share usage, stored in SQLite or PostgreSQL\n"
          "(StorageType) and served as an HTTP/JSON API (doc/api.md) on a TCP address and Unix\n"
          "sockets to the allot command, the Slurm plugins and allot-agent.  allot.conf(5) lists\n"
          "the keys of its configuration file (doc/allotd.md).\n"
          "\n"
          "options:\n"
          "  --config FILE    allot.conf to read (required)\n"
          "  --foreground     stay attached to the terminal (log to stderr without LogFile)\n"
          "  --check-config   parse the configuration, report, exit 0 if valid\n"
          "  --config-table   print the allot.conf keys as a Markdown table (doc/allotd.md)\n"
          "  --version        print the version\n"
          "  -h, --help       this text\n"
          "\n"
          "signals:\n"
          "  SIGHUP           re-read the configuration file; keys marked reloadable take\n"
          "                   effect, the others are logged as needing a restart\n"
          "  SIGTERM, SIGINT  stop accepting, commit the queued writes, stop\n"
          "\n"
          "allotd never detaches (run it under systemd or a supervisor).  Exit status: 0 after\n"
          "a clean stop, 2 for command line or configuration errors, 1 when it cannot start.\n",
          f);
}

/* The conf table as Markdown; doc/allotd.md embeds this output (t0100 compares them). */
static void print_config_table(void)
{
    printf("| key | type | default | reload | meaning |\n|---|---|---|---|---|\n");
    for (int i = 0; i < conf_key_count(); i++) {
        const struct conf_key_info *k = conf_key_at(i);
        char type[96];
        if (k->type == CONF_ENUM)
            text_copy(type, sizeof(type), k->choices[0] == '|' ? "\"\"|local" : k->choices);
        else if (k->type == CONF_INT)
            snprintf(type, sizeof(type), "int %lld..%lld", (long long)k->min, (long long)k->max);
        else
            text_copy(type, sizeof(type), conf_type_name(k->type));
        printf("| %s | %s | %s | %s | %s |\n", k->key, type, k->def[0] ? k->def : "(empty)",
               k->reloadable ? "yes" : "no", k->doc);
    }
}

struct options {
    const char *config;
    int foreground;
    int check_only;
};

static int parse_cmdline(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
                                             {"foreground", no_argument, NULL, 'F'},
                                             {"check-config", no_argument, NULL, 'C'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"config-table", no_argument, NULL, 'T'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "c:FCh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'T':
            print_config_table();
            exit(0);
        case 'V':
            printf("allotd %s\n", ALLOT_VERSION);
            exit(0);
        case 'c':
            o->config = optarg;
            break;
        case 'F':
            o->foreground = 1;
            break;
        case 'C':
            o->check_only = 1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc || !o->config) {
        usage(stderr);
        return -1;
    }
    return 0;
}

/* LogFile's descriptor, -1 when lines go to stderr or syslog. */
static int log_file_fd = -1;

static int log_to_syslog(const struct allot_conf *c)
{
    return strcmp(c->log_file, "syslog") == 0;
}

static int open_log(const struct allot_conf *c)
{
    enum log_level lvl = (enum log_level)log_level_parse(c->log_level);
    if (log_to_syslog(c)) {
        log_init_syslog("allotd", lvl);
        return 0;
    }
    int fd = 2;
    if (c->log_file[0]) {
        fd = open(c->log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        if (fd < 0) {
            fprintf(stderr, "allotd: LogFile %s: %s\n", c->log_file, strerror(errno));
            return -1;
        }
        log_file_fd = fd;
    }
    log_init("allotd", fd, 1, lvl);
    return 0;
}

/* SIGHUP: open LogFile again (logrotate renamed it) and put the new file under the same
 * descriptor, so every thread's next line goes there; on failure keep the old file. */
static void reopen_log(const struct allot_conf *c)
{
    if (log_file_fd < 0)
        return;
    int fd = open(c->log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0) {
        log_error("msg=\"cannot reopen LogFile; still writing the old one\" path=%s error=\"%s\"",
                  c->log_file, strerror(errno));
        return;
    }
    if (dup3(fd, log_file_fd, O_CLOEXEC) < 0)
        log_error("msg=\"cannot reopen LogFile; still writing the old one\" path=%s error=\"%s\"",
                  c->log_file, strerror(errno));
    close(fd);
}

static int write_pidfile(const struct allot_conf *c)
{
    if (!c->pid_file[0])
        return 0;
    FILE *f = fopen(c->pid_file, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
        fprintf(stderr, "allotd: PidFile %s: %s\n", c->pid_file, strerror(errno));
        return -1;
    }
    return 0;
}

/* Fair-share usage accumulators kept with this configuration's decay and UsageSource: built
 * from the jobs on a bank's first start with them (an upgrade) and when those keys changed,
 * else only the runs a batch left pending are folded in. */
static int usage_check(struct allotd *d, store_t *st, struct allot_error *err)
{
    struct store_usage_params p;
    api_usage_params(d->conf, &p);
    int rebuilt = 0;
    int64_t t0 = monotime_ms();
    if (store_begin(st, err) < 0)
        return -1;
    if (store_usage_configure(st, &p, (int64_t)time(NULL), &rebuilt, err) < 0 ||
        store_commit(st, err) < 0) {
        store_rollback(st);
        return -1;
    }
    if (rebuilt)
        log_info("msg=\"rebuilt the usage accumulators from the jobs\" ms=%lld",
                 (long long)(monotime_ms() - t0));
    return 0;
}

/* Check (and on an empty database create) the schema; see the top of this file. */
static int storage_check(struct allotd *d, struct allot_error *err)
{
    store_t *st = store_open(&d->store_cfg, err);
    if (!st)
        return -1;
    int cur = 0, latest = 0, rc = -1;
    if (store_schema_version(st, &cur, &latest, err) < 0)
        goto out;
    if (cur == 0) {
        if (store_upgrade(st, err) < 0)
            goto out;
        log_info("msg=\"initialised an empty database\" schema=%d backend=%s", latest,
                 store_backend(st));
        cur = latest;
    } else if (cur < latest) {
        allot_errorf(err, ALLOT_ECONFLICT,
                     "database schema %d is older than this allotd's %d: run 'allot db upgrade'",
                     cur, latest);
        goto out;
    } else if (cur > latest) {
        allot_errorf(err, ALLOT_ECONFLICT,
                     "database schema %d is newer than this allotd's %d: upgrade allotd", cur,
                     latest);
        goto out;
    }
    d->schema_version = cur;
    if (usage_check(d, st, err) < 0)
        goto out;
    rc = 0;
out:
    store_close(st);
    return rc;
}

static void on_diff(const char *key, int reloadable, void *arg)
{
    if (reloadable)
        log_info("msg=\"reloaded\" key=%s", key);
    else
        log_warn("msg=\"changed key needs a restart; keeping the running value\" key=%s", key);
}

/* SIGHUP: build a new conf; on success swap it in with the running values of the keys that
 * are not reloadable (consumed at startup), so each SIGHUP warns again while the file still
 * differs from what runs. */
static void reload(struct allotd *d)
{
    struct allot_error err = {0};
    struct allot_conf *c = conf_load(d->conf_path, &err);
    if (!c) {
        log_error("msg=\"reload failed; keeping the running configuration\" error=\"%s\"", err.msg);
        return;
    }
    conf_diff(d->conf, c, on_diff, NULL);
    conf_keep_fixed(c, d->conf);
    log_threshold = (enum log_level)log_level_parse(c->log_level);
    pthread_mutex_lock(&d->conf_lock);
    struct allot_conf *old = d->conf;
    d->conf = c;
    pthread_mutex_unlock(&d->conf_lock);
    conf_unref(old);
    log_info("msg=\"configuration reloaded\" path=%s", d->conf_path);
}

static int setup_signals(sigset_t *waitset)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0 ||
        sigaction(SIGHUP, &sa, NULL) < 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    /* Block them in every thread but main's sigsuspend (threads inherit the mask). */
    sigemptyset(waitset);
    sigaddset(waitset, SIGTERM);
    sigaddset(waitset, SIGINT);
    sigaddset(waitset, SIGHUP);
    return pthread_sigmask(SIG_BLOCK, waitset, NULL) == 0 ? 0 : -1;
}

static void run(struct allotd *d)
{
    sigset_t empty;
    sigemptyset(&empty);
    while (!got_term) {
        sigsuspend(&empty);
        if (got_hup) {
            got_hup = 0;
            notify_state("RELOADING=1");
            reopen_log(d->conf);
            reload(d);
            notify_state("READY=1");
        }
    }
    notify_state("STOPPING=1");
}

int main(int argc, char **argv)
{
    struct options opt = {0};
    struct allotd d = {0};
    struct allot_error err = {0};
    sigset_t sigs;
    int status = 1;
    struct tick *tick = NULL; /* the policy clock, once started */

    if (parse_cmdline(argc, argv, &opt) < 0)
        return 2;
    d.conf_path = opt.config;
    pthread_mutex_init(&d.conf_lock, NULL);
    d.conf = conf_load(opt.config, &err);
    if (!d.conf) {
        fprintf(stderr, "allotd: %s\n", err.msg);
        return 2;
    }
    if (opt.check_only) {
        printf("allotd: %s: configuration OK\n", opt.config);
        conf_unref(d.conf);
        return 0;
    }
    if (open_log(d.conf) < 0)
        goto out_conf;
#ifdef ALLOT_TEST
    d.test_local = strcmp(d.conf->test_mode, "local") == 0;
#endif
    d.auth_none = strcmp(d.conf->auth_type, "none") == 0 && d.test_local;
    if (d.test_local)
        log_warn("msg=\"TEST MODE: test switches enabled (TestMode=local); never use in "
                 "production\" auth=%s",
                 d.conf->auth_type);
    if (d.auth_none)
        log_warn("msg=\"AUTHENTICATION DISABLED (AuthType=none): loopback callers name "
                 "themselves with X-Allot-User\"");
    if (crash_init(d.test_local) < 0)
        goto out_log;
#ifdef ALLOT_TEST
    /* Lost COMMIT answers on PostgreSQL (store_fault.h), for the tests of writer.h's doubt. */
    const char *lost = getenv("ALLOT_TEST_COMMIT_LOST");
    if (d.test_local && lost && *lost) {
        store_fault_commit_lost_arm(lost);
        log_warn("msg=\"lost COMMIT answers armed\" trigger=\"%s\"", lost);
    }
#endif
    if (setup_signals(&sigs) < 0 || allotd_readers_init() < 0 || auth_init(&err) < 0) {
        fprintf(stderr, "allotd: cannot set up signals or thread keys\n");
        goto out_log;
    }
    /* Kept until exit: a SIGHUP drops d.conf's reference, and readers open later. */
    d.boot_conf = conf_ref(d.conf);
    d.store_cfg = (struct store_config){.backend = d.boot_conf->storage_type,
                                        .target = d.boot_conf->storage_loc,
                                        .busy_timeout_ms = (int)d.conf->storage_timeout_ms,
                                        .durable = 1};
    if (storage_check(&d, &err) < 0) {
        fprintf(stderr, "allotd: storage %s: %s\n", d.conf->storage_loc, err.msg);
        log_error("msg=\"storage check failed\" error=\"%s\"", err.msg);
        goto out_log;
    }
    d.metrics = metrics_create();
    d.tokens = tokens_new();
    d.partcache = partcache_start(&d.store_cfg, d.metrics, &err);
    if (!d.partcache) {
        fprintf(stderr, "allotd: %s\n", err.msg);
        goto out_metrics;
    }
    d.writer =
        writer_start(&d.store_cfg, (int)d.conf->max_batch, (int)d.conf->queue_max, d.metrics, &err);
    if (!d.writer) {
        fprintf(stderr, "allotd: writer: %s\n", err.msg);
        goto out_partcache;
    }
    /* The period/policy clock (tick.c); started before HTTP so TZ is set single-threaded. */
    tick = tick_start(&d, d.conf->time_zone, (int)d.conf->policy_tick_interval_s, &err);
    if (!tick) {
        fprintf(stderr, "allotd: %s\n", err.msg);
        goto out_writer;
    }
    d.http = http_start(&d, d.conf, &err);
    if (!d.http) {
        fprintf(stderr, "allotd: %s\n", err.msg);
        goto out_writer;
    }
    if (write_pidfile(d.conf) < 0)
        goto out_http;
    log_info("msg=\"allotd started\" pid=%ld listen=\"%s\" socket=\"%s\" backend=%s schema=%d "
             "threads=%u max_batch=%lld",
             (long)getpid(), d.conf->listen_addr, d.conf->listen_socket, d.conf->storage_type,
             d.schema_version, http_threads(d.conf), (long long)d.conf->max_batch);
    notify_state("READY=1");

    run(&d);
    log_info("msg=\"stopping: draining writes\"");
    status = 0;

    http_quiesce(d.http);
out_http:
    /* Drain the writer after HTTP stopped accepting: its last commit resumes the suspended
     * requests; requests arriving later on open connections get EUNAVAIL.  Then stop the
     * workers (closing their read stores) and free the writer. */
    tick_stop(tick);
    tick = NULL;
    writer_stop(d.writer);
    http_stop(d.http);
    if (d.conf->pid_file[0])
        unlink(d.conf->pid_file);
out_writer:
    tick_stop(tick);
    writer_destroy(d.writer);
out_partcache:
    partcache_stop(d.partcache); /* after http_stop: its workers price jobs with it */
out_metrics:
    tokens_free(d.tokens); /* after http_stop: its workers look tokens up */
    metrics_destroy(d.metrics);
    if (status == 0)
        log_info("msg=\"allotd stopped\"");
out_log:
out_conf:
    conf_unref(d.boot_conf);
    conf_unref(d.conf);
    return status;
}
