/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacctmgr.c - sacctmgr -P row splitting and column lookup (see sacctmgr.h). */
#include "libslurmtext/sacctmgr.h"

#include <string.h>

int slt_mgr_format_parse(const char *list, struct slt_mgr_format *out, struct allot_error *err)
{
    struct slt_mgr_format f;
    struct slt_span all = {list, strlen(list)};
    if (slt_split(all, ',', f.name, SLT_MGR_COLS_MAX, &f.n, err) < 0)
        return -1;
    for (size_t i = 0; i < f.n; i++) {
        const char *pct = memchr(f.name[i].p, '%', f.name[i].n);
        if (pct)
            f.name[i].n = (size_t)(pct - f.name[i].p);
        if (f.name[i].n == 0)
            return allot_errorf(err, ALLOT_EINVAL, "format: empty column name at position %zu",
                                i + 1);
    }
    *out = f;
    return 0;
}

int slt_mgr_row_parse(const struct slt_mgr_format *fmt, struct slt_span line,
                      struct slt_mgr_row *row, struct allot_error *err)
{
    struct slt_span v[SLT_MGR_COLS_MAX + 1];
    size_t n;
    if (slt_split(line, '|', v, SLT_MGR_COLS_MAX + 1, &n, err) < 0)
        return -1;
    if (n == fmt->n + 1 && v[n - 1].n == 0)
        n--;
    if (n != fmt->n)
        return allot_errorf(err, ALLOT_EINVAL,
                            "sacctmgr: line has %zu fields, %zu columns "
                            "expected",
                            n, fmt->n);
    row->fmt = fmt;
    row->n = n;
    memcpy(row->v, v, n * sizeof(v[0]));
    return 0;
}

bool slt_mgr_get(const struct slt_mgr_row *row, const char *col, struct slt_span *out)
{
    for (size_t i = 0; i < row->n; i++) {
        if (slt_eq_nocase(row->fmt->name[i], col)) {
            *out = row->v[i];
            return true;
        }
    }
    return false;
}
