/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import_qos.c - the QOS of `sacctmgr show qos -P` (a dump holds none) created or updated
 * by `allot import slurm`; columns the bank has no place for are notes (api_import_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "allotd/api.h"
#include "allotd/api_import_int.h"
#include "libcore/numparse.h"
#include "libslurmtext/sacctmgr.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

/* ---- QOS definitions (`sacctmgr show qos -P`, header line first) ---------------------- */

static const char *qos_limit_name(const char *col)
{
    /* show qos's column names that are not spellings limits_find knows */
    if (strcasecmp(col, "GrpSubmit") == 0)
        return "GrpSubmitJobs";
    return col;
}

int import_qos_text(struct walk *w, const char *text, size_t len, struct allot_error *err)
{
    size_t pos = 0;
    struct slt_span line;
    long ln = 0;
    char *header = NULL;
    struct slt_mgr_format fmt;
    int rc = -1;
    while (slt_next_line(text, len, &pos, &line)) {
        ln++;
        if (line.n == 0)
            continue;
        if (!header) {
            /* slt_mgr_format_parse reads a format= list: the header's '|' become ',' */
            header = xmalloc(line.n + 1);
            memcpy(header, line.p, line.n);
            header[line.n] = '\0';
            for (char *c = header; *c; c++)
                if (*c == '|')
                    *c = ',';
                else if (*c == ',')
                    *c = ' ';
            if (slt_mgr_format_parse(header, &fmt, err) < 0)
                goto fail;
            struct slt_span nm;
            struct slt_mgr_row hr = {.fmt = &fmt, .n = fmt.n};
            memcpy(hr.v, fmt.name, fmt.n * sizeof fmt.name[0]);
            if (!slt_mgr_get(&hr, "Name", &nm)) {
                allot_errorf(err, ALLOT_EINVAL,
                             "the header has no Name column (use "
                             "`sacctmgr show qos -P`, with its header)");
                goto fail;
            }
            continue;
        }
        struct slt_mgr_row row;
        if (slt_mgr_row_parse(&fmt, line, &row, err) < 0)
            goto fail;
        struct qos q = {.usage_factor_ppm = 1000000, .limit_factor_ppm = -1}, cur;
        struct limset *lim = xcalloc(1, sizeof *lim);
        int bad = 0;
        for (size_t c = 0; c < fmt.n && !bad; c++) {
            char col[ALLOT_NAME_MAX];
            struct slt_span v = row.v[c];
            if (import_span_copy(col, sizeof col, "column", fmt.name[c], err) < 0) {
                bad = 1;
                break;
            }
            if (strcasecmp(col, "Name") == 0) {
                bad = import_span_copy(q.name, sizeof q.name, "Name", v, err) < 0 ||
                      model_check_name("Name", q.name, 0, err) < 0;
            } else if (strcasecmp(col, "Priority") == 0) {
                uint64_t p = 0;
                if (v.n && slt_uint(v.p, v.n, INT32_MAX, &p) < 0)
                    bad = slt_field_error(err, "Priority", "not a number", v) < 0;
                q.priority = (int64_t)p;
            } else if (strcasecmp(col, "Flags") == 0) {
                bad = import_span_copy(q.flags, sizeof q.flags, "Flags", v, err) < 0;
            } else if (strcasecmp(col, "Description") == 0) {
                bad = import_span_copy(q.description, sizeof q.description, "Description", v, err) <
                      0;
            } else if (strcasecmp(col, "UsageFactor") == 0 || strcasecmp(col, "LimitFactor") == 0) {
                int64_t ppm;
                if (v.n == 0)
                    continue;
                if (numparse_fixed(v.p, v.n, 6, &ppm) < 0) {
                    bad = slt_field_error(err, col, "not a decimal", v) < 0;
                    break;
                }
                if (strcasecmp(col, "UsageFactor") == 0)
                    q.usage_factor_ppm = ppm;
                else
                    q.limit_factor_ppm = ppm;
            } else if (strcasecmp(col, "GraceTime") == 0) {
                if (v.n && !slt_eq(v, "00:00:00") && !slt_eq(v, "0"))
                    bad = import_limit_add(lim, LIMIT_SCOPE_QOS, "GraceTime", v, err) < 0;
            } else if (strcasecmp(col, "PreemptMode") == 0 || strcasecmp(col, "Preempt") == 0 ||
                       strcasecmp(col, "PreemptExemptTime") == 0 ||
                       strcasecmp(col, "UsageThres") == 0) {
                if (v.n && !(strcasecmp(col, "PreemptMode") == 0 && slt_eq_nocase(v, "cluster"))) {
                    char buf[512];
                    snprintf(buf, sizeof buf,
                             "qos line %ld: QOS %s: %s='%.*s' is not kept (the "
                             "bank has no preemption)",
                             ln, q.name, col, (int)(v.n > 200 ? 200 : v.n), v.p);
                    json_array_append_new(w->notes, json_string(buf));
                }
            } else if (limits_find(LIMIT_SCOPE_QOS, qos_limit_name(col))) {
                if (v.n)
                    bad = import_limit_add(lim, LIMIT_SCOPE_QOS, qos_limit_name(col), v, err) < 0;
            } else if (v.n) {
                char buf[512];
                snprintf(buf, sizeof buf, "qos line %ld: QOS %s: column %s='%.*s' is not kept", ln,
                         q.name, col, (int)(v.n > 200 ? 200 : v.n), v.p);
                json_array_append_new(w->notes, json_string(buf));
            }
        }
        if (bad) {
            free(lim);
            allot_error_prefix(err, "qos line %ld", ln);
            goto fail;
        }
        struct allot_error e;
        int exists = store_qos_get(w->st, q.name, &cur, &e) == 0;
        int r2 = 0;
        if (!exists && e.code != ALLOT_ENOENT) {
            *err = e;
            r2 = -1;
        } else if (!exists) {
            import_change(w, "+ qos %s: priority=%lld flags='%s' usage_factor_ppm=%lld", q.name,
                          (long long)q.priority, q.flags, (long long)q.usage_factor_ppm);
            if (w->apply)
                r2 = store_qos_add(w->st, &q, err);
        } else {
            text_copy(q.description, sizeof q.description, cur.description);
            if (cur.priority != q.priority || strcmp(cur.flags, q.flags) != 0 ||
                cur.usage_factor_ppm != q.usage_factor_ppm ||
                cur.limit_factor_ppm != q.limit_factor_ppm) {
                import_change(w,
                              "~ qos %s: priority %lld -> %lld, flags '%s' -> '%s', "
                              "usage_factor_ppm %lld -> %lld, limit_factor_ppm %lld -> %lld",
                              q.name, (long long)cur.priority, (long long)q.priority, cur.flags,
                              q.flags, (long long)cur.usage_factor_ppm,
                              (long long)q.usage_factor_ppm, (long long)cur.limit_factor_ppm,
                              (long long)q.limit_factor_ppm);
                if (w->apply)
                    r2 = store_qos_modify(w->st, &q, err);
            }
        }
        if (r2 == 0)
            r2 = import_limits_sync(w, LIMIT_SCOPE_QOS, q.name, "qos", lim, err);
        free(lim);
        if (r2 < 0) {
            allot_error_prefix(err, "qos line %ld", ln);
            goto fail;
        }
        if (w->nqos == w->capqos) {
            w->capqos = w->capqos ? w->capqos * 2 : 32;
            w->qos_names = xrealloc(w->qos_names, w->capqos * sizeof *w->qos_names);
        }
        text_copy(w->qos_names[w->nqos++], ALLOT_NAME_MAX, q.name);
        w->counts[3]++;
    }
    rc = 0;
fail:
    free(header);
    return rc;
}
