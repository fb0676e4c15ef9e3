/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dashboard.h - the web dashboard's static files, compiled into allotd (api_dashboard.c).
 *
 * src/allotd/dashboard/{index.html,dashboard.js,dashboard.css} become the table
 * dashboard_files[] of a C file generated at build time (dashboard_embed.cmake), so allotd
 * never reads a file to serve them and the page always matches the daemon serving it.
 * The files carry no data: the page fetches everything from the JSON API with a token.
 * Threads: everything here is constant; any thread may call dashboard_find(). */
#ifndef ALLOT_ALLOTD_DASHBOARD_H
#define ALLOT_ALLOTD_DASHBOARD_H

#include <stddef.h>

/* One embedded file (a row of the generated table). */
struct dashboard_file {
    const char *name; /* file name in src/allotd/dashboard/, no directory: "dashboard.js" */
    const char *data; /* its bytes, followed by a NUL not counted in len */
    size_t len;       /* bytes */
};

/* The generated table (dashboard_files.c in the build tree), sorted by name. */
extern const struct dashboard_file dashboard_files[];
extern const size_t dashboard_file_count;

/* What to serve for a name. */
struct dashboard_asset {
    const char *data;  /* borrowed: static, never freed */
    size_t len;        /* bytes */
    const char *ctype; /* Content-Type, with its charset */
};

/* The embedded file NAME ("index.html", "dashboard.js", "dashboard.css") into *out.
 * Returns 0, or -1 with ALLOT_ENOENT in err for any other name (empty, a path, "..", a file
 * of a type the table of content types does not know); *out is untouched then. */
struct allot_error;
int dashboard_find(const char *name, struct dashboard_asset *out, struct allot_error *err);

/* The Content-Security-Policy every dashboard reply carries (doc/allotd.md "Web
 * dashboard"): the page may run only its own script and style and talk only to its own
 * origin, so text from the bank can never run as code. */
extern const char dashboard_csp[];

#endif
