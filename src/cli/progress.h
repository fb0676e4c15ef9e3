/* SPDX-License-Identifier: GPL-3.0-or-later */
/* progress.h - the progress line of the CLI's long commands (imports, db export and import):
 * "\r<what>: <done> / <total> <unit> (P%), R <unit>/s, ETA S s" on stderr, redrawn at most
 * five times a second, only when stderr is a terminal, so scripts and logs see nothing.
 * Memory: none.  Thread rule: one progress per thread.
 */
#ifndef ALLOT_CLI_PROGRESS_H
#define ALLOT_CLI_PROGRESS_H

#include <stdint.h>

struct progress {
    const char *what; /* "import", "db export" */
    const char *unit; /* "jobs", "rows" */
    int tty;          /* stderr is a terminal: draw */
    int64_t total;    /* -1: not known (no percentage, no ETA) */
    int64_t done;
    double t0, last;
    int drawn; /* a line is on the screen: the final call ends it */
};

/* Start p (the clock, whether stderr is a terminal). */
void progress_start(struct progress *p, const char *what, const char *unit, int64_t total);

/* Redraw with p->done (rate-limited); final: draw the last state and end the line. */
void progress_show(struct progress *p, int final);

#endif
