/* SPDX-License-Identifier: GPL-3.0-or-later */
/* log.c - the log sink of log.h.  Each line is formatted into a stack buffer and written
 * with a single write(2), so concurrent threads never interleave within a line. */
#include "libutil/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum log_level log_threshold = LOG_LVL_INFO;
static const char *log_prog = "allot";
static int log_fd = 2;
static int log_kv;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_init(const char *prog, int fd, int kv, enum log_level threshold)
{
    log_prog = prog;
    log_fd = fd;
    log_kv = kv;
    log_threshold = threshold;
}

int log_level_parse(const char *s)
{
    for (int i = 0; i <= LOG_LVL_DEBUG; i++)
        if (s && strcmp(s, level_names[i]) == 0)
            return i;
    return -1;
}

void log_write(enum log_level lvl, const char *fmt, ...)
{
    char line[2048];
    size_t off = 0;
    if (log_kv) {
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        off = strftime(line, sizeof(line), "ts=%Y-%m-%dT%H:%M:%S", &tm);
        off += (size_t)snprintf(line + off, sizeof(line) - off, ".%03ldZ level=%s ",
                                ts.tv_nsec / 1000000L, level_names[lvl]);
    } else {
        off = (size_t)snprintf(line, sizeof(line), "%s: %s: ", log_prog, level_names[lvl]);
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + off, sizeof(line) - off - 1, fmt, ap);
    va_end(ap);
    off = (n < 0) ? off : off + (size_t)n;
    if (off > sizeof(line) - 2)
        off = sizeof(line) - 2;
    line[off++] = '\n';
    ssize_t w = write(log_fd, line, off);
    (void)w; /* nowhere left to report a failed log write */
}
