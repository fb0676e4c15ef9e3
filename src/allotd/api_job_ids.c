/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_job_ids.c - jobs named as Slurm prints them (api_job_ids.h). */
#include "allotd/api_job_ids.h"

#include <stdlib.h>

#include "libslurmtext/jobname.h"
#include "libutil/xalloc.h"

void api_job_ids_none(struct job_slurm_ids *ids)
{
    ids->array_job_id = ids->het_job_id = 0;
    ids->array_task_id = ids->het_job_offset = -1;
}

int api_job_ids_given(const struct job_slurm_ids *ids)
{
    return ids->array_job_id > 0 || ids->het_job_id > 0;
}

struct found {
    const struct slt_job_name *name;
    int64_t *v;
    size_t n, cap;
};

static void add(struct found *f, int64_t id)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->v = xrealloc(f->v, f->cap * sizeof(*f->v));
    }
    f->v[f->n++] = id;
}

static int on_ids(int64_t job_id, const struct job_slurm_ids *ids, void *arg)
{
    struct found *f = arg;
    if (f->name->kind != SLT_JOB_NAME_TASKS ||
        slt_job_name_has_task(f->name, (uint32_t)ids->array_job_id, (uint32_t)ids->array_task_id))
        add(f, job_id);
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int api_job_ids_resolve(store_t *st, const char *cluster, const char *text, int64_t **ids,
                        size_t *n, struct allot_error *err)
{
    struct slt_job_name name;
    if (slt_job_name_parse(text, "job_id", &name, err) < 0)
        return -1;
    struct found f = {.name = &name};
    struct job_slurm_ids m;
    api_job_ids_none(&m);
    int rc = 0;
    switch (name.kind) {
    case SLT_JOB_NAME_ID:
        add(&f, name.job);
        m.array_job_id = name.job;
        rc = store_job_ids_find(st, cluster, &m, on_ids, &f, err);
        api_job_ids_none(&m);
        m.het_job_id = name.job;
        if (rc == 0)
            rc = store_job_ids_find(st, cluster, &m, on_ids, &f, err);
        break;
    case SLT_JOB_NAME_TASK:
        m.array_job_id = name.job;
        m.array_task_id = name.index;
        rc = store_job_ids_find(st, cluster, &m, on_ids, &f, err);
        break;
    case SLT_JOB_NAME_TASKS:
        m.array_job_id = name.job;
        rc = store_job_ids_find(st, cluster, &m, on_ids, &f, err);
        break;
    case SLT_JOB_NAME_HET:
        m.het_job_id = name.job;
        m.het_job_offset = name.index;
        rc = store_job_ids_find(st, cluster, &m, on_ids, &f, err);
        break;
    }
    if (rc < 0) {
        free(f.v);
        return -1;
    }
    if (f.n > 1)
        qsort(f.v, f.n, sizeof(*f.v), cmp_id);
    size_t k = 0;
    for (size_t i = 0; i < f.n; i++)
        if (k == 0 || f.v[k - 1] != f.v[i])
            f.v[k++] = f.v[i];
    *ids = f.v;
    *n = k;
    return 0;
}
