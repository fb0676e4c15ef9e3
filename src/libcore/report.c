/* SPDX-License-Identifier: GPL-3.0-or-later */
/* report.c - usage report rows per group and period (report.h). */
#include "libcore/report.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/text.h"
#include "libutil/xalloc.h"

void report_init(struct report *r, enum period_kind kind, const struct period_tz *tz)
{
    memset(r, 0, sizeof(*r));
    r->kind = kind;
    r->tz = tz;
}

void report_fini(struct report *r)
{
    free(r->rows);
    memset(r, 0, sizeof(*r));
}

/* The row of at (its key, and its label or the period of its instant), made when missing;
 * NULL with err. */
static struct report_row *row_of(struct report *r, const struct report_at *at,
                                 struct allot_error *err)
{
    struct period p;
    char label[PERIOD_STR_MAX];
    int64_t start_s = at->start_s, end_s = at->end_s;
    const char *key = at->key;
    if (strlen(key) >= ALLOT_NAME_MAX) {
        allot_errorf(err, ALLOT_EINVAL, "report: key '%.32s...' is too long", key);
        return NULL;
    }
    if (at->label) {
        if (strlen(at->label) >= sizeof label) {
            allot_errorf(err, ALLOT_EINVAL, "report: period '%.32s' is too long", at->label);
            return NULL;
        }
        text_copy(label, sizeof label, at->label);
    } else if (period_of(r->kind, at->t_s, r->tz, &p, err) < 0 ||
               period_format(&p, label, sizeof label, err) < 0 ||
               period_start_utc(&p, r->tz, &start_s, err) < 0 ||
               period_end_utc(&p, r->tz, &end_s, err) < 0)
        return NULL;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].key, key) && !strcmp(r->rows[i].period, label))
            return &r->rows[i];
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->rows = xrealloc(r->rows, r->cap * sizeof(*r->rows));
    }
    struct report_row *w = &r->rows[r->n++];
    memset(w, 0, sizeof(*w));
    text_copy(w->key, sizeof w->key, key);
    text_copy(w->period, sizeof w->period, label);
    w->start_s = start_s;
    w->end_s = end_s;
    return w;
}

/* *acc += v for each pair, all or none. */
static int add_all(int64_t *const *acc, const int64_t *v, int n, struct allot_error *err)
{
    int64_t out[8];
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || __builtin_add_overflow(*acc[i], v[i], &out[i]))
            return allot_errorf(err, ALLOT_EINVAL,
                                "report: an amount is negative or a sum "
                                "leaves int64");
    for (int i = 0; i < n; i++)
        *acc[i] = out[i];
    return 0;
}

static int add(struct report *r, const struct report_at *at, int n, const size_t *fields,
               const int64_t *v, struct allot_error *err)
{
    size_t before = r->n;
    struct report_row *w = row_of(r, at, err);
    if (!w)
        return -1;
    int64_t *acc[8];
    for (int i = 0; i < n; i++)
        acc[i] = (int64_t *)((char *)w + fields[i]);
    if (add_all(acc, v, n, err) < 0) {
        r->n = before; /* a row made for this call goes again */
        return -1;
    }
    return 0;
}

#define OFF(m) offsetof(struct report_row, m)

int report_add_jobs(struct report *r, const struct report_at *at, int64_t jobs,
                    int64_t charge_sumin, int64_t cpu_s, int64_t gpu_s, struct allot_error *err)
{
    const size_t f[] = {OFF(charged_sumin), OFF(jobs), OFF(cpu_s), OFF(gpu_s)};
    const int64_t v[] = {charge_sumin, jobs, cpu_s, gpu_s};
    return add(r, at, 4, f, v, err);
}

int report_add_refusals(struct report *r, const struct report_at *at, int64_t n,
                        struct allot_error *err)
{
    const size_t f[] = {OFF(refusals)};
    const int64_t v[] = {n};
    return add(r, at, 1, f, v, err);
}

int report_add_cpu(struct report *r, const struct report_at *at, int64_t used_s, int64_t alloc_s,
                   struct allot_error *err)
{
    const size_t f[] = {OFF(cpu_used_s), OFF(cpu_alloc_s)};
    const int64_t v[] = {used_s, alloc_s};
    return add(r, at, 2, f, v, err);
}

static int cmp_row(const void *a, const void *b)
{
    const struct report_row *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    return strcmp(x->period, y->period);
}

void report_sort(struct report *r)
{
    if (r->n > 1)
        qsort(r->rows, r->n, sizeof(*r->rows), cmp_row);
}
