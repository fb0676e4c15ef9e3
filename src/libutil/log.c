/* SPDX-License-Identifier: GPL-3.0-or-later */
/* log.c - the log sink of log.h.  Each line is formatted into a stack buffer, its control
 * bytes escaped, and written with a single write(2), so concurrent threads never interleave
 * within a line and no logged value can start a line of its own. */
#include "libutil/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

enum log_level log_threshold = LOG_LVL_INFO;
static const char *log_prog = "allot";
static int log_fd = 2;
static int log_kv;
static int log_syslog;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_init(const char *prog, int fd, int kv, enum log_level threshold)
{
    log_prog = prog;
    log_fd = fd;
    log_kv = kv;
    log_threshold = threshold;
}

void log_init_syslog(const char *prog, enum log_level threshold)
{
    log_prog = prog;
    log_kv = 1;
    log_syslog = 1;
    log_threshold = threshold;
    openlog(prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

int log_level_parse(const char *s)
{
    for (int i = 0; i <= LOG_LVL_DEBUG; i++)
        if (s && strcmp(s, level_names[i]) == 0)
            return i;
    return -1;
}

/* The escape of byte c into out (at least 5 bytes); its length, 0 if c needs none. */
static size_t escape_byte(unsigned char c, int quotes, char *out)
{
    static const char hex[] = "0123456789abcdef";
    char named = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : 0;
    if (quotes && (c == '"' || c == '\\'))
        named = (char)c;
    out[0] = '\\';
    if (named) {
        out[1] = named;
        return 2;
    }
    if (c >= 0x20 && c != 0x7f)
        return 0;
    out[1] = 'x';
    out[2] = hex[c >> 4];
    out[3] = hex[c & 15];
    return 4;
}

/* src into dst[size], escaped (quotes too when quotes); cut at a whole escape. */
static size_t escape_into(char *dst, size_t size, const char *src, int quotes)
{
    size_t off = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        char esc[5];
        size_t n = escape_byte(*p, quotes, esc);
        if (n == 0) {
            esc[0] = (char)*p;
            n = 1;
        }
        if (off + n >= size)
            break;
        memcpy(dst + off, esc, n);
        off += n;
    }
    dst[off] = '\0';
    return off;
}

const char *log_quote(char *dst, size_t size, const char *src)
{
    if (size == 0)
        return dst;
    escape_into(dst, size, src ? src : "", 1);
    return dst;
}

void log_write(enum log_level lvl, const char *fmt, ...)
{
    char line[2048], msg[2048];
    size_t off = 0;
    if (log_syslog) {
        off = 0;
    } else if (log_kv) {
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
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n < 0)
        msg[0] = '\0';
    off += escape_into(line + off, sizeof(line) - off - 1, msg, 0);
    if (log_syslog) {
        static const int priorities[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
        syslog(priorities[lvl], "%s", line);
        return;
    }
    line[off++] = '\n';
    ssize_t w = write(log_fd, line, off);
    (void)w; /* nowhere left to report a failed log write */
}
