/* SPDX-License-Identifier: GPL-3.0-or-later */
/* log.h - one log sink per program: allotd writes one key=value line per event
 * (`ts= level= msg= ...`), the CLI writes `allot: error: ...` to stderr.
 * The level check happens in the macro, before arguments are evaluated.
 * The sink is process-global (the one global besides signal flags): set it once at
 * startup with log_init(); log_*() are thread-safe (one write(2) per line). */
#ifndef ALLOT_LIBUTIL_LOG_H
#define ALLOT_LIBUTIL_LOG_H

#include <stddef.h>

enum log_level { LOG_LVL_ERROR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

extern enum log_level log_threshold;

/* prog: name printed by the human format; fd: where lines go; kv: 1 for key=value lines
 * with timestamps (daemons), 0 for "prog: level: msg" (tools). */
void log_init(const char *prog, int fd, int kv, enum log_level threshold);
/* Lines go to the system logger instead (syslog(3), facility daemon, as prog[pid]), each
 * at its level's priority (err, warning, info, debug), in key=value form without ts= and
 * level= (the logger records both). */
void log_init_syslog(const char *prog, enum log_level threshold);
/* Parse "error|warn|info|debug"; -1 if unknown. */
int log_level_parse(const char *s);

/* Every control byte of a line (newline, carriage return, escape, ...) is written as \n,
 * \r, \t or \xNN, so no logged text can end a line early and forge the next one. */
void log_write(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy src into dst[size] for use inside a quoted field (`key="%s"`): `"` and `\` get a
 * backslash, control bytes become \n, \r, \t or \xNN; cut at a whole escape, always
 * terminated.  For text a caller chose (paths, names, error text), so it cannot close the
 * quotes and add fields of its own.  Returns dst. */
const char *log_quote(char *dst, size_t size, const char *src);

#define log_at(lvl, ...)                                                                           \
    do {                                                                                           \
        if ((lvl) <= log_threshold)                                                                \
            log_write((lvl), __VA_ARGS__);                                                         \
    } while (0)
#define log_error(...) log_at(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_at(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_at(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
