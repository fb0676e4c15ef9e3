/* SPDX-License-Identifier: GPL-3.0-or-later */
/* proc.c - bounded capture of a helper command's output (see proc.h).
 * Design: one poll loop over the stdout and stderr pipes with a deadline; at the deadline the
 * child gets SIGKILL and is reaped, so a hung sacct (slurmdbd down) never hangs allot-step. */
#include "step/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long proc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void proc_sleep_ms(long long ms, volatile int *stop)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        if (stop && *stop)
            return;
}

static int shell_status(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return -1;
}

int proc_capture(char *const argv[], int timeout_ms, struct proc_out *o)
{
    int pout[2], perr[2];
    o->len = 0;
    o->out[0] = '\0';
    o->err[0] = '\0';
    o->status = -1;
    o->timed_out = 0;
    if (pipe2(pout, O_CLOEXEC) < 0) {
        snprintf(o->err, sizeof(o->err), "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(perr, O_CLOEXEC) < 0) {
        snprintf(o->err, sizeof(o->err), "pipe: %s", strerror(errno));
        close(pout[0]);
        close(pout[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(o->err, sizeof(o->err), "fork: %s", strerror(errno));
        close(pout[0]);
        close(pout[1]);
        close(perr[0]);
        close(perr[1]);
        return -1;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0)
            _exit(127);
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(pout[1]);
    close(perr[1]);
    long long deadline = proc_now_ms() + timeout_ms;
    size_t errlen = 0;
    struct pollfd fds[2] = {{pout[0], POLLIN, 0}, {perr[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        long long left = deadline - proc_now_ms();
        if (left <= 0) {
            o->timed_out = 1;
            break;
        }
        int r = poll(fds, 2, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[4096];
            ssize_t n = read(fds[i].fd, chunk, sizeof(chunk));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
                continue;
            }
            if (i == 0) {
                size_t room = o->cap - 1 - o->len;
                size_t k = (size_t)n < room ? (size_t)n : room;
                memcpy(o->out + o->len, chunk, k);
                o->len += k;
                o->out[o->len] = '\0';
            } else {
                size_t room = sizeof(o->err) - 1 - errlen;
                size_t k = (size_t)n < room ? (size_t)n : room;
                memcpy(o->err + errlen, chunk, k);
                errlen += k;
                o->err[errlen] = '\0';
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    if (o->timed_out)
        kill(pid, SIGKILL);
    int wstatus;
    /* After EOF on both pipes the child exits promptly; bound the reap as well. */
    long long reap_deadline = proc_now_ms() + 2000;
    while (1) {
        pid_t w = waitpid(pid, &wstatus, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            snprintf(o->err, sizeof(o->err), "waitpid: %s", strerror(errno));
            return -1;
        }
        if (proc_now_ms() > reap_deadline) {
            kill(pid, SIGKILL);
            reap_deadline = proc_now_ms() + 2000;
        }
        proc_sleep_ms(5, NULL);
    }
    if (o->timed_out) {
        snprintf(o->err, sizeof(o->err), "%s: no answer within %d ms", argv[0], timeout_ms);
        return -1;
    }
    o->status = shell_status(wstatus);
    return 0;
}
