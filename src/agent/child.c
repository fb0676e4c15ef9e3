/* SPDX-License-Identifier: GPL-3.0-or-later */
/* child.c - bounded runs of Slurm tools (see child.h). */
#include "agent/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

/* In the child: only async-signal-safe calls (the agent may have libcurl threads). */
static void child_exec(char *const argv[], char **envp, int in, int out, int err)
{
    setpgid(0, 0);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(126);
    if (envp)
        execvpe(argv[0], argv, envp);
    else
        execvp(argv[0], argv);
    static const char msg[] = "cannot run the program (exec failed)";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(127);
}

/* Read what fd has; 1 more may come, 0 EOF, -1 error (ENOMEM). */
static int drain(int fd, struct child_out *c, int is_err, size_t max_out, size_t *cap)
{
    char buf[65536];
    ssize_t k = read(fd, buf, sizeof buf);
    if (k < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (k == 0)
        return 0;
    if (is_err) {
        size_t en = strlen(c->errtext);
        size_t room = sizeof c->errtext - 1 - en;
        size_t m = (size_t)k < room ? (size_t)k : room;
        memcpy(c->errtext + en, buf, m);
        c->errtext[en + m] = 0;
        return 1;
    }
    if (c->too_big || c->n + (size_t)k > max_out) {
        c->too_big = 1;
        return 1; /* keep draining so the child is not blocked on a full pipe */
    }
    if (c->n + (size_t)k + 1 > *cap) {
        size_t nc = *cap ? *cap : 65536;
        while (nc < c->n + (size_t)k + 1)
            nc *= 2;
        char *p = realloc(c->out, nc);
        if (!p)
            return -1;
        c->out = p;
        *cap = nc;
    }
    memcpy(c->out + c->n, buf, (size_t)k);
    c->n += (size_t)k;
    c->out[c->n] = 0;
    return 1;
}

/* Read both pipes until EOF on both or the deadline.  0 EOF, 1 timed out, -1 failed. */
static int read_all(int fo, int fe, int64_t deadline_ms, size_t max_out, struct child_out *c)
{
    struct pollfd p[2] = {{.fd = fo, .events = POLLIN}, {.fd = fe, .events = POLLIN}};
    size_t cap = 0;
    int open_fds = 2;
    while (open_fds > 0) {
        int64_t left = deadline_ms - now_ms();
        if (left <= 0)
            return 1;
        int r = poll(p, 2, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR)
            return -1;
        for (int i = 0; r > 0 && i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            int d = drain(p[i].fd, c, i == 1, max_out, &cap);
            if (d < 0)
                return -1;
            if (d == 0) {
                p[i].fd = -1; /* the caller closes the descriptors */
                open_fds--;
            }
        }
    }
    return 0;
}

/* Reap pid by the deadline; past it, kill its process group and reap.  1 when killed. */
static int reap(pid_t pid, int64_t deadline_ms, int *status)
{
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return 0;
        if (w < 0 && errno != EINTR)
            return 0; /* not our child any more: nothing to wait for */
        if (now_ms() >= deadline_ms)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return 1;
}

int child_run(char *const argv[], char *const env[], int timeout_s, size_t max_out,
              struct child_out *c)
{
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, in = -1, rc = -1;
    char **envp = NULL;
    memset(c, 0, sizeof *c);
    int64_t deadline_ms = now_ms() + (int64_t)timeout_s * 1000;
    if (env && !(envp = env_merge(env))) {
        snprintf(c->errtext, sizeof c->errtext, "out of memory");
        return -1;
    }
    in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
        snprintf(c->errtext, sizeof c->errtext, "cannot run %s: %s", argv[0], strerror(errno));
        goto out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(c->errtext, sizeof c->errtext, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0)
        child_exec(argv, envp, in, po[1], pe[1]);
    setpgid(pid, pid); /* also here: no window where a kill of the group misses it */
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    int r = read_all(po[0], pe[0], deadline_ms, max_out, c);
    int status = 0;
    if (r != 0) /* before reaping: the group id stays ours while its leader is unreaped */
        kill(-pid, SIGKILL);
    int killed = reap(pid, r == 0 ? deadline_ms : 0, &status);
    if (r < 0) {
        snprintf(c->errtext, sizeof c->errtext, "reading %s's output failed", argv[0]);
    } else if (r > 0 || killed) {
        snprintf(c->errtext, sizeof c->errtext, "%s timed out after %d s (killed)", argv[0],
                 timeout_s);
    } else if (WIFSIGNALED(status)) {
        snprintf(c->errtext, sizeof c->errtext, "%s died of signal %d", argv[0], WTERMSIG(status));
    } else if (WIFEXITED(status)) {
        rc = WEXITSTATUS(status);
    }
out:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
    }
    if (in >= 0)
        close(in);
    free(envp);
    return rc;
}

void child_out_free(struct child_out *c)
{
    if (!c)
        return;
    free(c->out);
    c->out = NULL;
    c->n = 0;
}
