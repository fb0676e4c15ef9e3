/* SPDX-License-Identifier: GPL-3.0-or-later */
/* field.h - zero-copy splitting of Slurm's parsable output: lines of a buffer and the
 * `|`-separated fields of one line (`sacct -P`, `sstat -P`, `squeue -o "%i|%j"`,
 * `sacctmgr -P`), plus the small number scanners every field parser shares.
 *
 * Design: a field is a span (pointer + length) into the caller's buffer; nothing is copied
 * or allocated, so splitting a 1,000,000-line file costs one pass of memchr.  Spans are not
 * NUL-terminated.  Empty spans are "no data" and every parser reports them as such (a has
 * flag), never as zero.
 * Thread rule: pure functions over caller memory; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_FIELD_H
#define ALLOT_LIBSLURMTEXT_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

/* A borrowed slice of text; valid as long as the buffer it points into. */
struct slt_span {
    const char *p;
    size_t n;
};

/* Upper bound of fields in one line; sacct with every column has about 110. */
#define SLT_FIELDS_MAX 128
/* Longest text quoted back in an error message (the rest is elided with "..."). */
#define SLT_ERRTEXT_MAX 48

/* Next line of buf[0..len) starting at *pos: sets *line (without the '\n' and a trailing
 * '\r') and advances *pos past the newline.  A last line without '\n' counts.  Returns true
 * while a line was produced, false at the end (outputs untouched then). */
bool slt_next_line(const char *buf, size_t len, size_t *pos, struct slt_span *line);

/* Split line at every sep into fields[0..max).  *nfields gets the count (an empty line is
 * one empty field, "a|" two fields, as Slurm prints trailing separators with -p).  Returns 0,
 * or -1 with ALLOT_ETOOBIG when the line has more than max fields (*nfields untouched;
 * fields[] is scratch space then and may have been written). */
int slt_split(struct slt_span line, char sep, struct slt_span *fields, size_t max, size_t *nfields,
              struct allot_error *err);

/* Exact match of a span and a NUL-terminated string; the case-insensitive variant too. */
bool slt_eq(struct slt_span s, const char *lit);
bool slt_eq_nocase(struct slt_span s, const char *lit);

/* "[0-9]+" exactly, no sign or spaces, value <= max.  Returns 0 or -1 (out untouched). */
int slt_uint(const char *p, size_t n, uint64_t max, uint64_t *out);

/* Fill err with ALLOT_EINVAL "<field>: <what> '<text>'", quoting at most SLT_ERRTEXT_MAX
 * bytes of text (non-printable bytes shown as '?').  Returns -1. */
int slt_field_error(struct allot_error *err, const char *field, const char *what,
                    struct slt_span text);

#endif
