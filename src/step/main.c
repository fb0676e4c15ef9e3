/* SPDX-License-Identifier: GPL-3.0-or-later */
/* main.c - allot-step: run a command as a monitored Slurm step (doc/design.md §7).
 *
 *   allot-step run [options] -- CMD [ARGS...]
 *
 * Inside an allocation (SLURM_JOB_ID set) CMD runs under `srun --jobid --ntasks=1 --exact
 * --cpu-bind=none --job-name=<name> --nodes --cpus-per-task --mem --time=<minutes left>
 * [--signal]`; the step's numeric id is found with `squeue --steps` (bounded retries), sstat
 * is sampled every interval while it runs, and sacct is read afterwards with retries for
 * slurmdbd lag; the merged metrics are printed as one JSON object (stdout or --output) and
 * allot-step exits with the command's status (137 = out of memory, 152 = timeout).
 * Outside an allocation CMD runs directly (optionally under RLIMIT_AS = --mem).
 * Every wait is bounded: helper commands by --helper-timeout, retries by their counts; the
 * only unbounded wait is the user's command itself, which Slurm bounds with --time.
 * Slurm binaries come from ALLOT_SRUN, ALLOT_SSTAT, ALLOT_SACCT, ALLOT_SQUEUE (tests).
 * With --record, or by default when ALLOT_URL is set, a Slurm step's record is also filed
 * in allotd under (cluster, job, step, attempt) (post.h); a failure to record only warns.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libslurmtext/argv.h"
#include "libslurmtext/duration.h"
#include "libslurmtext/field.h"
#include "libslurmtext/memory.h"
#include "libutil/log.h"
#include "libutil/monotime.h"
#include "libutil/xalloc.h"
#include "step/collect.h"
#include "step/monitor.h"
#include "step/post.h"
#include "step/proc.h"
#include "step/record.h"
#include "step/step.h"

/* Whether to file the record in allotd: auto = when ALLOT_URL is set. */
enum record_mode { RECORD_AUTO = 0, RECORD_ON, RECORD_OFF };
struct record_opts {
    enum record_mode mode;
    const char *url, *cluster;
    long attempt;
    long timeout_ms;
};

/* Set by the signal handler only; forwarded to the child by the main loop. */
static volatile sig_atomic_t pending_signal;

static void on_signal(int sig)
{
    pending_signal = sig;
}

static void usage(FILE *f)
{
    fputs("usage: allot-step run [options] -- CMD [ARGS...]\n"
          "       allot-step --help\n"
          "\n"
          "allot-step runs CMD as one monitored step: inside a Slurm allocation through srun\n"
          "(sampling it with sstat, reading its end from sacct), elsewhere or with --direct as\n"
          "a child process.  It prints a JSON record of the step (state, exit code, elapsed,\n"
          "CPU, memory) and files it in allotd when ALLOT_URL is set (doc/step.md).  `allot\n"
          "step` runs it.\n"
          "\n"
          "options:\n"
          "  --name NAME           step name (default allot_<jobid>_<pid>)\n"
          "  --nodes N             srun --nodes (default 1)\n"
          "  --cpus N              srun --cpus-per-task\n"
          "  --mem SIZE            srun --mem (MiB, or with K/M/G/T suffix)\n"
          "  --signal SPEC         srun --signal, e.g. TERM@120\n"
          "  --time-limit MIN      cap the step's --time below the allocation's time left\n"
          "  --cpu-bind            keep srun's CPU binding (default --cpu-bind=none)\n"
          "  --direct              run directly even inside an allocation\n"
          "  --limit-mem           direct mode: enforce --mem with RLIMIT_AS\n"
          "  --interval-ms MS      sstat sample interval (default 10000)\n"
          "  --stepid-tries N      squeue --steps attempts (default 10)\n"
          "  --stepid-delay-ms MS  between attempts (default 300)\n"
          "  --sacct-tries N       sacct attempts (default 6)\n"
          "  --sacct-delay-ms MS   between attempts (default 5000)\n"
          "  --helper-timeout-ms MS  bound on each squeue/sstat/sacct run (default 30000)\n"
          "  --output FILE         write the JSON record to FILE instead of stdout\n"
          "  --record              also file the record in allotd (default when ALLOT_URL\n"
          "                        is set); failing to record only warns\n"
          "  --no-record           do not file the record in allotd\n"
          "  --url URL             allotd URL (default $ALLOT_URL)\n"
          "  --cluster NAME        cluster of the record (default $ALLOT_CLUSTER, else\n"
          "                        $SLURM_CLUSTER_NAME)\n"
          "  --attempt N           attempt number of this step name in the job (default 1)\n"
          "  --record-timeout-ms MS  bound on the request to allotd (default 10000)\n"
          "  -v, --verbose         debug log on stderr\n",
          f);
}

static int opt_int(const char *name, const char *v, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < min || x > max) {
        log_error("%s: invalid value '%s' (want %ld..%ld)", name, v, min, max);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_args(int argc, char **argv, struct step_config *c, struct record_opts *ro)
{
    enum {
        O_NAME = 256,
        O_NODES,
        O_CPUS,
        O_MEM,
        O_SIGNAL,
        O_CPUBIND,
        O_DIRECT,
        O_LIMITMEM,
        O_INTERVAL,
        O_SIDTRIES,
        O_SIDDELAY,
        O_SATRIES,
        O_SADELAY,
        O_HTIMEOUT,
        O_OUTPUT,
        O_TIMELIMIT,
        O_RECORD,
        O_NORECORD,
        O_URL,
        O_CLUSTER,
        O_ATTEMPT,
        O_RTIMEOUT
    };
    static const struct option opts[] = {
        {"name", required_argument, 0, O_NAME},
        {"nodes", required_argument, 0, O_NODES},
        {"cpus", required_argument, 0, O_CPUS},
        {"mem", required_argument, 0, O_MEM},
        {"signal", required_argument, 0, O_SIGNAL},
        {"cpu-bind", no_argument, 0, O_CPUBIND},
        {"direct", no_argument, 0, O_DIRECT},
        {"limit-mem", no_argument, 0, O_LIMITMEM},
        {"interval-ms", required_argument, 0, O_INTERVAL},
        {"stepid-tries", required_argument, 0, O_SIDTRIES},
        {"stepid-delay-ms", required_argument, 0, O_SIDDELAY},
        {"sacct-tries", required_argument, 0, O_SATRIES},
        {"sacct-delay-ms", required_argument, 0, O_SADELAY},
        {"helper-timeout-ms", required_argument, 0, O_HTIMEOUT},
        {"output", required_argument, 0, O_OUTPUT},
        {"time-limit", required_argument, 0, O_TIMELIMIT},
        {"record", no_argument, 0, O_RECORD},
        {"no-record", no_argument, 0, O_NORECORD},
        {"url", required_argument, 0, O_URL},
        {"cluster", required_argument, 0, O_CLUSTER},
        {"attempt", required_argument, 0, O_ATTEMPT},
        {"record-timeout-ms", required_argument, 0, O_RTIMEOUT},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int ch;
    long v;
    struct allot_error err = {0};
    while ((ch = getopt_long(argc, argv, "+vh", opts, NULL)) != -1) {
        switch (ch) {
        case O_NAME:
            c->name = optarg;
            break;
        case O_NODES:
            if (opt_int("--nodes", optarg, 1, 100000, &v) < 0)
                return -1;
            c->nodes = (uint32_t)v;
            break;
        case O_CPUS:
            if (opt_int("--cpus", optarg, 1, 100000, &v) < 0)
                return -1;
            c->cpus = (uint32_t)v;
            break;
        case O_MEM: {
            struct slt_memory m;
            if (slt_memory_parse(optarg, strlen(optarg), "--mem", 1LL << 20, &m, &err) < 0 ||
                !m.has || m.bytes <= 0) {
                log_error("%s", err.msg[0] ? err.msg : "--mem: must be positive");
                return -1;
            }
            c->mem_mb = (m.bytes + (1LL << 20) - 1) >> 20;
            break;
        }
        case O_SIGNAL:
            c->signal = optarg;
            break;
        case O_CPUBIND:
            c->cpu_bind = true;
            break;
        case O_DIRECT:
            c->direct = true;
            break;
        case O_LIMITMEM:
            c->limit_mem = true;
            break;
        case O_INTERVAL:
            if (opt_int("--interval-ms", optarg, 100, 3600000, &v) < 0)
                return -1;
            c->interval_ms = (int)v;
            break;
        case O_SIDTRIES:
            if (opt_int("--stepid-tries", optarg, 0, 1000, &v) < 0)
                return -1;
            c->stepid_tries = (int)v;
            break;
        case O_SIDDELAY:
            if (opt_int("--stepid-delay-ms", optarg, 0, 60000, &v) < 0)
                return -1;
            c->stepid_delay_ms = (int)v;
            break;
        case O_SATRIES:
            if (opt_int("--sacct-tries", optarg, 1, 100, &v) < 0)
                return -1;
            c->sacct_tries = (int)v;
            break;
        case O_SADELAY:
            if (opt_int("--sacct-delay-ms", optarg, 0, 600000, &v) < 0)
                return -1;
            c->sacct_delay_ms = (int)v;
            break;
        case O_HTIMEOUT:
            if (opt_int("--helper-timeout-ms", optarg, 100, 600000, &v) < 0)
                return -1;
            c->helper_timeout_ms = (int)v;
            break;
        case O_OUTPUT:
            c->output = optarg;
            break;
        case O_TIMELIMIT:
            if (opt_int("--time-limit", optarg, 1, 100000000, &v) < 0)
                return -1;
            c->time_cap_min = v;
            break;
        case O_RECORD:
            ro->mode = RECORD_ON;
            break;
        case O_NORECORD:
            ro->mode = RECORD_OFF;
            break;
        case O_URL:
            ro->url = optarg;
            break;
        case O_CLUSTER:
            ro->cluster = optarg;
            break;
        case O_ATTEMPT:
            if (opt_int("--attempt", optarg, 1, 1000000, &v) < 0)
                return -1;
            ro->attempt = v;
            break;
        case O_RTIMEOUT:
            if (opt_int("--record-timeout-ms", optarg, 1, 600000, &v) < 0)
                return -1;
            ro->timeout_ms = v;
            break;
        case 'v':
            log_threshold = LOG_LVL_DEBUG;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind >= argc) {
        log_error("no command given (allot-step run [options] -- CMD...)");
        return -1;
    }
    c->cmd = argv + optind;
    return 0;
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && v[0] ? v : dflt;
}

/* A job id from the environment variable name (set and non-empty): 0, or -1 logged. */
static int env_id(const char *name, uint64_t *out)
{
    const char *v = getenv(name);
    if (slt_uint(v, strlen(v), UINT32_MAX, out) < 0) {
        log_error("%s: invalid id '%.32s'", name, v);
        return -1;
    }
    return 0;
}

/* The job as squeue and sacct print it: in an array task (SLURM_ARRAY_JOB_ID set) its rows
 * are "<array job>_<task>", not SLURM_JOB_ID.  0, or -1 logged for a malformed id. */
static int job_ref_from_env(uint32_t job, struct slt_job_ref *ref)
{
    uint64_t array_job, array_task;
    memset(ref, 0, sizeof(*ref));
    ref->job = job;
    const char *aj = getenv("SLURM_ARRAY_JOB_ID");
    if (!aj || !aj[0])
        return 0;
    if (!getenv("SLURM_ARRAY_TASK_ID")) {
        log_error("SLURM_ARRAY_JOB_ID is set but SLURM_ARRAY_TASK_ID is not");
        return -1;
    }
    if (env_id("SLURM_ARRAY_JOB_ID", &array_job) < 0 ||
        env_id("SLURM_ARRAY_TASK_ID", &array_task) < 0)
        return -1;
    ref->is_array_task = true;
    ref->array_job = (uint32_t)array_job;
    ref->array_task = (uint32_t)array_task;
    return 0;
}

static int shell_status(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 1;
}

/* Minutes for srun --time: the allocation's time left (squeue %L), rounded down, min 1;
 * 0 (no --time) when unlimited or unknown. */
static int64_t step_time_min(const struct step_config *c, uint32_t job)
{
    struct slt_argv a;
    struct allot_error err = {0};
    char out[256];
    struct proc_out po = {.out = out, .cap = sizeof(out)};
    slt_argv_init(&a);
    if (slt_argv_squeue_time_left(&a, c->squeue, job, &err) < 0 ||
        proc_capture(a.argv, c->helper_timeout_ms, &po) < 0 || po.status != 0) {
        log_warn("cannot read the allocation's time left (%s); no --time", po.err);
        return 0;
    }
    struct slt_span line;
    size_t pos = 0;
    struct slt_duration d;
    if (!slt_next_line(out, po.len, &pos, &line) ||
        slt_duration_parse(line.p, line.n, "TimeLeft", &d, &err) < 0) {
        log_warn("squeue time left: %s; no --time", err.msg[0] ? err.msg : "no output");
        return 0;
    }
    if (d.kind != SLT_DUR_VALUE)
        return 0;
    return slt_step_time_min(slt_duration_s(&d));
}

/* Wait for pid, forwarding signals; call tick(now) every 50 ms. */
struct waiter {
    const struct step_config *c;
    struct step_result *r;
    long long next_discover, next_sample;
};

static void slurm_tick(struct waiter *w, long long now)
{
    struct step_live *l = &w->r->live;
    if (!l->step_found && l->stepid_attempts < w->c->stepid_tries && now >= w->next_discover) {
        monitor_discover(w->c, &w->r->job, l);
        w->next_discover = monotime_ms() + w->c->stepid_delay_ms;
        if (l->step_found)
            w->next_sample = monotime_ms(); /* baseline sample right away */
        else if (l->stepid_attempts == w->c->stepid_tries)
            log_warn("step %s: no step id after %d squeue attempts; no live metrics", w->c->name,
                     l->stepid_attempts);
    }
    if (l->step_found && now >= w->next_sample) {
        monitor_sample(w->c, w->r->job.job, l);
        w->next_sample = monotime_ms() + w->c->interval_ms;
    }
}

static int wait_child(pid_t pid, struct waiter *w, struct rusage *ru)
{
    /* A pidfd turns "child exited" into a poll event, so the loop wakes the moment the
     * command ends instead of at the next 50 ms tick; signals interrupt poll (EINTR: the
     * handler has no SA_RESTART) and are forwarded at once.  Without pidfds, poll(NULL)
     * degrades to a 50 ms sleep. */
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int wstatus;
    while (1) {
        pid_t got = wait4(pid, &wstatus, WNOHANG, ru);
        if (got == pid) {
            if (pidfd >= 0)
                close(pidfd);
            return shell_status(wstatus);
        }
        if (got < 0 && errno != EINTR) {
            log_error("wait: %s", strerror(errno));
            if (pidfd >= 0)
                close(pidfd);
            return 1;
        }
        if (pending_signal) {
            int sig = pending_signal;
            pending_signal = 0;
            kill(pid, sig);
        }
        if (w)
            slurm_tick(w, monotime_ms());
        struct pollfd pfd = {pidfd, POLLIN, 0};
        poll(pidfd >= 0 ? &pfd : NULL, pidfd >= 0 ? 1 : 0, 50);
    }
}

static pid_t spawn(char **argv, const struct step_config *c, bool limit)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        log_error("fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (limit) {
            rlim_t bytes = (rlim_t)c->mem_mb << 20;
            struct rlimit rl = {bytes, bytes};
            if (setrlimit(RLIMIT_AS, &rl) < 0) {
                dprintf(2, "allot-step: setrlimit: %s\n", strerror(errno));
                _exit(126);
            }
        }
        execvp(argv[0], argv);
        dprintf(2, "allot-step: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    return pid;
}

static int run_slurm(const struct step_config *c, const struct slt_job_ref *ref,
                     struct step_result *r)
{
    static struct slt_argv a;
    struct allot_error err = {0};
    uint32_t job = ref->job;
    r->slurm = true;
    r->job = *ref;
    r->time_limit_min = step_time_min(c, job);
    /* An explicit cap only lowers the limit: the step must still end before its allocation. */
    if (c->time_cap_min > 0 && (r->time_limit_min == 0 || c->time_cap_min < r->time_limit_min))
        r->time_limit_min = c->time_cap_min;
    struct slt_srun_opts o = {.job_id = job,
                              .step_name = c->name,
                              .nodes = c->nodes,
                              .cpus_per_task = c->cpus,
                              .mem_mb = c->mem_mb,
                              .time_min = r->time_limit_min,
                              .cpu_bind = c->cpu_bind,
                              .signal = c->signal};
    slt_argv_init(&a);
    if (slt_argv_srun(&a, c->srun, &o, c->cmd, &err) < 0) {
        log_error("%s", err.msg);
        return -1;
    }
    long long t0 = monotime_ms();
    pid_t pid = spawn(a.argv, c, false);
    if (pid < 0)
        return -1;
    struct waiter w = {c, r, t0, t0 + c->interval_ms};
    struct rusage ru;
    r->return_code = wait_child(pid, &w, &ru);
    r->exec_ms = monotime_ms() - t0;
    const struct step_live *l = &r->live;
    if (l->has_peak_rss) {
        r->has_peak_mem = true;
        r->peak_memory_bytes = l->peak_rss_bytes;
    }
    if (l->rss_samples > 0) {
        r->has_avg_mem = true;
        r->avg_memory_bytes = l->rss_sum_bytes / l->rss_samples;
    }
    if (l->cpu_samples > 0) {
        r->has_peak_cpu = r->has_avg_cpu = true;
        r->peak_cpu_percent = l->peak_cpu_pct;
        r->avg_cpu_percent = l->cpu_pct_sum / l->cpu_samples;
    }
    collect_sacct(c, ref, l->step_found ? (long long)l->step_id : -1, &r->acct);
    step_backfill(r);
    step_classify(r, c->mem_mb << 20);
    return 0;
}

static int run_direct(const struct step_config *c, struct step_result *r)
{
    long long t0 = monotime_ms();
    pid_t pid = spawn(c->cmd, c, c->limit_mem && c->mem_mb > 0);
    if (pid < 0)
        return -1;
    struct rusage ru;
    memset(&ru, 0, sizeof(ru));
    r->return_code = wait_child(pid, NULL, &ru);
    r->exec_ms = monotime_ms() - t0;
    /* wait4's rusage covers the command and the descendants it waited for. */
    r->has_peak_mem = true;
    r->peak_memory_bytes = (int64_t)ru.ru_maxrss * 1024;
    long long cpu_ms = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
    if (r->exec_ms > 0) {
        r->has_avg_cpu = r->has_peak_cpu = true;
        r->avg_cpu_percent = r->peak_cpu_percent = 100.0 * (double)cpu_ms / (double)r->exec_ms;
    }
    if (r->return_code == STEP_EXIT_OOM)
        r->oom = true;
    return 0;
}

/* File the record in allotd when asked (or by default with ALLOT_URL); only warns. */
static void post_record(const struct step_config *c, const struct record_opts *o,
                        const struct step_result *r, json_t *rec)
{
    const char *url = o->url ? o->url : getenv("ALLOT_URL");
    if (o->mode == RECORD_OFF || (o->mode == RECORD_AUTO && !(url && url[0])))
        return;
    if (!r->slurm) {
        if (o->mode == RECORD_ON)
            log_warn("step %s: not recorded in allotd: it did not run in a Slurm job", c->name);
        return;
    }
    const char *cluster = o->cluster ? o->cluster : env_or("ALLOT_CLUSTER", NULL);
    if (!cluster)
        cluster = env_or("SLURM_CLUSTER_NAME", NULL);
    struct step_post p = {.url = o->url,
                          .cluster = cluster,
                          .job_id = r->job.job,
                          .step_name = c->name,
                          .attempt = o->attempt,
                          .timeout_ms = o->timeout_ms};
    step_post_record(&p, rec);
}

static int write_record(const struct step_config *c, const struct record_opts *ro,
                        const struct step_result *r)
{
    json_t *rec = step_record_json(c, r);
    if (!rec) {
        log_error("out of memory building the record");
        return -1;
    }
    int rc;
    if (c->output) {
        rc = json_dump_file(rec, c->output, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (rc < 0)
            log_error("--output %s: cannot write", c->output);
    } else {
        rc = json_dumpf(rec, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (rc == 0 && (fputc('\n', stdout) == EOF || fflush(stdout) == EOF))
            rc = -1;
    }
    if (rc == 0)
        post_record(c, ro, r, rec);
    json_decref(rec);
    return rc;
}

int main(int argc, char **argv)
{
    log_init("allot-step", 2, 0, LOG_LVL_WARN);
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "run") != 0) {
        usage(stderr);
        return 2;
    }
    struct step_config c = {
        .nodes = 1,
        .interval_ms = 10000,
        .stepid_tries = 10,
        .stepid_delay_ms = 300,
        .sacct_tries = 6,
        .sacct_delay_ms = 5000,
        .helper_timeout_ms = 30000,
        .srun = env_or("ALLOT_SRUN", "srun"),
        .sstat = env_or("ALLOT_SSTAT", "sstat"),
        .sacct = env_or("ALLOT_SACCT", "sacct"),
        .squeue = env_or("ALLOT_SQUEUE", "squeue"),
    };
    struct record_opts ro = {.attempt = 1, .timeout_ms = 10000};
    if (parse_args(argc - 1, argv + 1, &c, &ro) < 0)
        return 2;

    const char *jobenv = getenv("SLURM_JOB_ID");
    uint64_t job = 0;
    bool slurm = !c.direct && jobenv && jobenv[0];
    struct slt_job_ref ref = {0};
    if (slurm && (env_id("SLURM_JOB_ID", &job) < 0 || job_ref_from_env((uint32_t)job, &ref) < 0))
        return 2;
    char *name = NULL;
    if (!c.name) {
        name = xasprintf("allot_%llu_%ld", (unsigned long long)job, (long)getpid());
        c.name = name;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    struct step_result r;
    memset(&r, 0, sizeof(r));
    int rc = slurm ? run_slurm(&c, &ref, &r) : run_direct(&c, &r);
    if (rc < 0) {
        free(name);
        return 125;
    }
    if (r.oom)
        log_warn("step %s ran out of memory (limit %lld MiB): exit %d", c.name, (long long)c.mem_mb,
                 r.return_code);
    else if (r.timeout)
        log_warn("step %s hit its time limit (%lld min): exit %d", c.name,
                 (long long)r.time_limit_min, r.return_code);
    if (write_record(&c, &ro, &r) < 0) {
        free(name);
        return 125;
    }
    free(name);
    return r.return_code;
}
