/* SPDX-License-Identifier: GPL-3.0-or-later */
/* table.h - the CLI's output: aligned columns for people, `|`-separated lines for scripts.
 *
 * Design: a table collects rows of strings (copied), then prints them in one of four
 * forms: TABLE_ALIGNED (header, dashes, columns padded to their widest cell, or to the width
 * set for them; numeric columns right-aligned, like sacctmgr), TABLE_PARSABLE (`a|b|c`,
 * sacctmgr -P), TABLE_PARSABLE_END (`a|b|c|`, sacctmgr -p), TABLE_CSV (RFC 4180 fields, LF line
 * ends; --csv), with or without the header line.  Cells are printed verbatim except that '|'
 * and newlines in parsable output and newlines in aligned output become spaces, so one record
 * is always one line; CSV quotes a field that needs it instead. Memory: x* allocators (CLI only).
 * Thread rule: a table belongs to one thread.
 */
#ifndef ALLOT_CLI_TABLE_H
#define ALLOT_CLI_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef struct table table_t;

enum table_mode { TABLE_ALIGNED = 0, TABLE_PARSABLE, TABLE_PARSABLE_END, TABLE_CSV };

enum table_align { TABLE_LEFT = 0, TABLE_RIGHT };

/* A table with ncols columns named headers[0..ncols) (copied). */
table_t *table_create(int ncols, const char *const *headers);
void table_destroy(table_t *t); /* NULL is a no-op */

/* Right-align column col (numbers). */
void table_set_align(table_t *t, int col, enum table_align a);

/* Show column col (aligned form) exactly width characters wide, as sacct's format=Name%W:
 * a longer cell is cut to width-1 characters and a '+'.  0: as wide as its widest cell. */
void table_set_width(table_t *t, int col, size_t width);

/* Append a row of ncols cells (copied; NULL prints as ""). */
void table_add_row(table_t *t, const char *const *cells);

/* Display width of the UTF-8 string s: its code points (continuation bytes 10xxxxxx do not
 * count).  Columns are padded to this, not to strlen, so non-ASCII names line up. */
size_t table_width(const char *s);

/* Print to f.  header: 0 to leave the header (and the dashes) out. */
void table_print(const table_t *t, FILE *f, enum table_mode mode, int header);

#endif
