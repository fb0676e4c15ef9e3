/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacctmgr.h - rows of `sacctmgr -P -n show assoc|qos format=...`.
 *
 * Design: sacctmgr's columns are many and site-chosen, so a row is kept as spans addressed by
 * column name (the format list the caller passed); the caller reads a span with the parser
 * of its kind (slt_duration_parse, slt_tres_field_parse, ...), where empty means no limit
 * set.  No allocation; spans borrow from the line.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_SACCTMGR_H
#define ALLOT_LIBSLURMTEXT_SACCTMGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libslurmtext/field.h"

#define SLT_MGR_COLS_MAX 64

struct slt_mgr_format {
    size_t n;
    struct slt_span name[SLT_MGR_COLS_MAX]; /* borrow from the list text */
};

struct slt_mgr_row {
    const struct slt_mgr_format *fmt; /* borrowed */
    size_t n;
    struct slt_span v[SLT_MGR_COLS_MAX];
};

/* Parse "Cluster,Account,User,GrpTRES" (the format= value).  The list text must outlive the
 * format.  Errors: EINVAL empty name, ETOOBIG too many; out untouched. */
int slt_mgr_format_parse(const char *list, struct slt_mgr_format *out, struct allot_error *err);

/* Split one -P line; field count must match the format (a trailing empty field from -p is
 * allowed).  Errors: EINVAL; row untouched. */
int slt_mgr_row_parse(const struct slt_mgr_format *fmt, struct slt_span line,
                      struct slt_mgr_row *row, struct allot_error *err);

/* The value of column `col` (case-insensitive); false if the format has no such column. */
bool slt_mgr_get(const struct slt_mgr_row *row, const char *col, struct slt_span *out);

#endif
