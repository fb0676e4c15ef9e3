/* SPDX-License-Identifier: GPL-3.0-or-later */
/* subproc.c - bounded runs of a program (see subproc.h).
 * Design: a close-on-exec pipe tells the parent whether exec succeeded (it reads EOF) or
 * failed (it reads the child's errno); then one poll loop drains stdout and stderr until
 * both reach EOF or the deadline; the reap shares the same deadline. */
#include "libutil/subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libutil/monotime.h"

extern char **environ;

/* environ plus extra (an entry of extra replaces the same NAME=); malloc'd array of
 * borrowed pointers, NULL on ENOMEM. */
static char **env_merge(char *const extra[])
{
    size_t n = 0, k = 0;
    while (environ && environ[n])
        n++;
    while (extra[k])
        k++;
    char **v = calloc(n + k + 1, sizeof *v);
    if (!v)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int replaced = 0;
        for (size_t j = 0; j < k && !replaced; j++) {
            const char *eq = strchr(extra[j], '=');
            size_t len = eq ? (size_t)(eq - extra[j]) + 1 : strlen(extra[j]);
            replaced = strncmp(environ[i], extra[j], len) == 0;
        }
        if (!replaced)
            v[m++] = environ[i];
    }
    for (size_t j = 0; j < k; j++)
        v[m++] = extra[j];
    v[m] = NULL;
    return v;
}

/* In the child: only async-signal-safe calls.  exec's failure goes to the parent as an int
 * on fd st (close-on-exec, so a successful exec closes it with nothing written). */
static void child_exec(char *const argv[], char **envp, int own_group, int out, int err, int st)
{
    if (own_group)
        setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    int e = 0;
    if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
        e = errno;
    } else {
        if (envp)
            execvpe(argv[0], argv, envp);
        else
            execvp(argv[0], argv);
        e = errno;
    }
    ssize_t w = write(st, &e, sizeof e);
    (void)w;
    _exit(127);
}

/* Append k bytes of stdout, within out_max.  0 kept or dropped, -1 ENOMEM. */
static int keep_out(struct subproc_result *r, const char *buf, size_t k, size_t out_max,
                    size_t *cap)
{
    if (r->too_big || r->n + k > out_max) {
        r->too_big = 1;
        return 0;
    }
    if (r->n + k + 1 > *cap) {
        size_t nc = *cap ? *cap : 65536;
        while (nc < r->n + k + 1)
            nc *= 2;
        char *p = realloc(r->out, nc);
        if (!p)
            return -1;
        r->out = p;
        *cap = nc;
    }
    memcpy(r->out + r->n, buf, k);
    r->n += k;
    r->out[r->n] = '\0';
    return 0;
}

static void keep_err(struct subproc_result *r, const char *buf, size_t k)
{
    size_t en = strlen(r->err);
    size_t room = sizeof r->err - 1 - en;
    size_t m = k < room ? k : room;
    memcpy(r->err + en, buf, m);
    r->err[en + m] = '\0';
}

/* Read both pipes until EOF on both or the deadline.  0 EOF, 1 timed out, 2 stdout passed
 * its cap with kill_at_cap, -1 failed (ENOMEM or a read error). */
static int read_all(int fo, int fe, int64_t deadline_ms, const struct subproc_opts *o,
                    struct subproc_result *r)
{
    struct pollfd p[2] = {{.fd = fo, .events = POLLIN}, {.fd = fe, .events = POLLIN}};
    size_t cap = 0;
    int open_fds = 2;
    while (open_fds > 0) {
        int64_t left = deadline_ms - monotime_ms();
        if (left <= 0)
            return 1;
        int pr = poll(p, 2, left > 1000 ? 1000 : (int)left);
        if (pr < 0 && errno != EINTR)
            return -1;
        for (int i = 0; pr > 0 && i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[65536];
            ssize_t k = read(p[i].fd, buf, sizeof buf);
            if (k < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (k < 0)
                return -1;
            if (k == 0) {
                p[i].fd = -1; /* the caller closes the descriptors */
                open_fds--;
            } else if (i == 1) {
                keep_err(r, buf, (size_t)k);
            } else if (keep_out(r, buf, (size_t)k, o->out_max, &cap) < 0) {
                return -1;
            } else if (r->too_big && o->kill_at_cap) {
                return 2;
            }
        }
    }
    return 0;
}

static void kill_child(pid_t pid, int own_group)
{
    if (own_group)
        kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

/* Reap pid by the deadline; past it, kill it and reap.  1 when killed here. */
static int reap(pid_t pid, int own_group, int64_t deadline_ms, int *status)
{
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return 0;
        if (w < 0 && errno != EINTR)
            return 0; /* not our child any more: nothing to wait for */
        if (monotime_ms() >= deadline_ms)
            break;
        monotime_sleep_ms(5, NULL);
    }
    kill_child(pid, own_group);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return 1;
}

/* The child's exec outcome: 0 when it ran, else its errno.  Reads until EOF or an int. */
static int exec_outcome(int st)
{
    int e = 0;
    ssize_t k;
    while ((k = read(st, &e, sizeof e)) < 0 && errno == EINTR)
        ;
    return k == (ssize_t)sizeof e ? (e ? e : EIO) : 0;
}

static void close_fds(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0) {
            close(fds[i]);
            fds[i] = -1;
        }
}

int subproc_run(char *const argv[], const struct subproc_opts *o, struct subproc_result *r)
{
    /* po: stdout, pe: stderr, ps: exec status */
    int fds[6] = {-1, -1, -1, -1, -1, -1}, *po = fds, *pe = fds + 2, *ps = fds + 4;
    char **envp = NULL;
    int rc = -1;
    memset(r, 0, sizeof *r);
    r->status = -1;
    int64_t deadline_ms = monotime_ms() + o->timeout_ms;
    if (o->env && !(envp = env_merge(o->env))) {
        r->exec_errno = ENOMEM;
        snprintf(r->err, sizeof r->err, "cannot run %s: %s", argv[0], strerror(ENOMEM));
        return -1;
    }
    if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 || pipe2(ps, O_CLOEXEC) < 0) {
        r->exec_errno = errno;
        snprintf(r->err, sizeof r->err, "cannot run %s: %s", argv[0], strerror(errno));
        goto out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        r->exec_errno = errno;
        snprintf(r->err, sizeof r->err, "cannot run %s: fork: %s", argv[0], strerror(errno));
        goto out;
    }
    if (pid == 0)
        child_exec(argv, envp, o->own_group, po[1], pe[1], ps[1]);
    if (o->own_group)
        setpgid(pid, pid); /* also here: no window where a kill of the group misses it */
    close(po[1]);
    close(pe[1]);
    close(ps[1]);
    po[1] = pe[1] = ps[1] = -1;
    int status = 0;
    r->exec_errno = exec_outcome(ps[0]);
    if (r->exec_errno) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        r->status = 127;
        snprintf(r->err, sizeof r->err, "cannot run %s: %s", argv[0], strerror(r->exec_errno));
        goto out;
    }
    int rd = read_all(po[0], pe[0], deadline_ms, o, r);
    if (rd != 0) /* before reaping: the group id stays ours while its leader is unreaped */
        kill_child(pid, o->own_group);
    int killed = reap(pid, o->own_group, rd == 0 ? deadline_ms : 0, &status);
    if (rd < 0) {
        snprintf(r->err, sizeof r->err, "reading %s's output failed", argv[0]);
    } else if (rd == 1 || (rd == 0 && killed)) {
        r->timed_out = 1;
        snprintf(r->err, sizeof r->err, "%s: no answer within %lld ms (killed)", argv[0],
                 (long long)o->timeout_ms);
    } else if (rd == 2) {
        snprintf(r->err, sizeof r->err, "%s: more than %zu bytes of output (killed)", argv[0],
                 o->out_max);
    } else if (WIFSIGNALED(status)) {
        r->signo = WTERMSIG(status);
        r->status = 128 + r->signo;
        rc = 0;
    } else if (WIFEXITED(status)) {
        r->status = WEXITSTATUS(status);
        rc = 0;
    }
out:
    close_fds(fds, 6);
    free(envp);
    return rc;
}

void subproc_result_free(struct subproc_result *r)
{
    if (!r)
        return;
    free(r->out);
    r->out = NULL;
    r->n = 0;
}
