/* SPDX-License-Identifier: GPL-3.0-or-later */
/* prep_array.c - shares of job array tasks cancelled while pending (prep_array.h). */
#include "plugins/prep/allot/prep_array.h"

#include <pthread.h>
#include <string.h>

struct inflight {
    int64_t token;
    uint32_t job_id;
};

struct memory {
    int64_t token;
    uint32_t last;
};

/* Slurm plugin state (STYLE §2): the in-flight table under pa_mu; the memory is the sweep
 * thread's own. */
static pthread_mutex_t pa_mu = PTHREAD_MUTEX_INITIALIZER;
static struct inflight pa_inflight[PREP_ARRAY_INFLIGHT];
static struct memory pa_memory[PREP_ARRAY_MEMORY];
static unsigned pa_memory_next;

int prep_array_pass_add(prep_array_pass_t *p, int64_t token, uint32_t pending_tasks)
{
    for (int i = 0; i < p->n; i++)
        if (p->v[i].token == token) {
            p->v[i].may_start += pending_tasks;
            return 0;
        }
    if (p->n == PREP_ARRAY_PASS_MAX)
        return -1;
    p->v[p->n].token = token;
    p->v[p->n].may_start = pending_tasks;
    p->n++;
    return 0;
}

void prep_array_inflight_add(int64_t token, uint32_t job_id)
{
    pthread_mutex_lock(&pa_mu);
    for (int i = 0; i < PREP_ARRAY_INFLIGHT; i++)
        if (!pa_inflight[i].token) {
            pa_inflight[i].token = token;
            pa_inflight[i].job_id = job_id;
            break;
        }
    /* Full: this start is not counted; at worst its share is given back before its bind,
     * which then holds afresh (a check like any hold, never an overdraft). */
    pthread_mutex_unlock(&pa_mu);
}

void prep_array_inflight_done(int64_t token, uint32_t job_id)
{
    pthread_mutex_lock(&pa_mu);
    for (int i = 0; i < PREP_ARRAY_INFLIGHT; i++)
        if (pa_inflight[i].token == token && pa_inflight[i].job_id == job_id) {
            pa_inflight[i].token = 0;
            break;
        }
    pthread_mutex_unlock(&pa_mu);
}

static struct memory *remembered(int64_t token)
{
    for (unsigned i = 0; i < PREP_ARRAY_MEMORY; i++)
        if (pa_memory[i].token == token)
            return &pa_memory[i];
    return NULL;
}

int prep_array_decide(prep_array_pass_t *p, prep_array_count_t *out, int max)
{
    int n = 0;

    pthread_mutex_lock(&pa_mu);
    for (int i = 0; i < p->n; i++)
        for (int k = 0; k < PREP_ARRAY_INFLIGHT; k++)
            if (pa_inflight[k].token == p->v[i].token)
                p->v[i].may_start++;
    pthread_mutex_unlock(&pa_mu);
    for (int i = 0; i < p->n && n < max; i++) {
        struct memory *m = remembered(p->v[i].token);
        if (!m) {
            m = &pa_memory[pa_memory_next++ % PREP_ARRAY_MEMORY];
            m->token = p->v[i].token;
            /* First seen (a new array, or this plugin restarted): tasks may have been
             * cancelled before, and allotd's hold is the baseline, so ask once. */
            m->last = p->v[i].may_start;
            out[n++] = p->v[i];
            continue;
        }
        if (p->v[i].may_start < m->last) {
            m->last = p->v[i].may_start;
            out[n++] = p->v[i];
        }
    }
    return n;
}

void prep_array_reset(void)
{
    pthread_mutex_lock(&pa_mu);
    memset(pa_inflight, 0, sizeof(pa_inflight));
    memset(pa_memory, 0, sizeof(pa_memory));
    pa_memory_next = 0;
    pthread_mutex_unlock(&pa_mu);
}
