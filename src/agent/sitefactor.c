/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sitefactor.c - the site factor push of sitefactor.h.
 * Invariant: only pending jobs are touched, and a job is updated only when its factor
 * differs, so a pass on a settled queue makes no RPC besides the job list.
 */
#include "agent/sitefactor.h"
#include "libutil/text.h"

#include <errno.h>
#include <jansson.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdlib.h>
#include <string.h>

/* The factor allotd gives (account, partition); -1 when none. */
static long long lookup(json_t *jobs, const char *account, const char *partition)
{
    size_t i;
    json_t *row;
    json_array_foreach(jobs, i, row)
    {
        const char *a = json_string_value(json_object_get(row, "account"));
        const char *p = json_string_value(json_object_get(row, "partition"));
        json_t *v = json_object_get(row, "site_factor");
        if (a && p && json_is_integer(v) && !strcmp(a, account) && !strcmp(p, partition))
            return (long long)json_integer_value(v);
    }
    return -1;
}

int sitefactor_push(allot_client_t *c, const char *cluster, struct sitefactor_stats *s,
                    struct allot_error *err)
{
    memset(s, 0, sizeof *s);
    char *enc = allot_urlencode(cluster, err);
    if (!enc)
        return -1;
    char path[512], *reply = NULL;
    snprintf(path, sizeof path, "/v1/sitefactors?cluster=%s", enc);
    free(enc);
    if (allot_request(c, "GET", path, NULL, NULL, &reply, err) < 0) {
        free(reply);
        return -1;
    }
    json_error_t jerr;
    json_t *doc = json_loads(reply, 0, &jerr);
    free(reply);
    json_t *jobs = json_object_get(doc, "jobs");
    if (!json_is_array(jobs)) {
        json_decref(doc);
        return allot_errorf(err, ALLOT_EPROTO, "sitefactors: no jobs array in allotd's answer");
    }
    s->enabled = json_is_true(json_object_get(doc, "enabled"));
    if (!s->enabled) {
        json_decref(doc);
        return 0;
    }
    static int slurm_ready;
    if (!slurm_ready) {
        slurm_init(NULL); /* reads $SLURM_CONF; required before the API in 22.05 */
        slurm_ready = 1;
    }
    job_info_msg_t *msg = NULL;
    if (slurm_load_jobs((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        int e = errno; /* libslurm's error; slurm_get_errno() returned it, and 24.11 dropped it */
        json_decref(doc);
        return allot_errorf(err, ALLOT_EUNAVAIL, "slurm_load_jobs: %s", slurm_strerror(e));
    }
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const slurm_job_info_t *j = &msg->job_array[i];
        if ((j->job_state & JOB_STATE_BASE) != JOB_PENDING || !j->account || !j->partition)
            continue;
        s->pending++;
        /* A job queued on several partitions gets its first one's factor. */
        char part[256];
        text_copy(part, sizeof part, j->partition);
        part[strcspn(part, ",")] = '\0';
        long long v = lookup(jobs, j->account, part);
        if (v < 0) {
            s->unmapped++;
            continue;
        }
        uint32_t want = (uint32_t)NICE_OFFSET + (uint32_t)v;
        if (j->site_factor == want) {
            s->unchanged++;
            continue;
        }
        job_desc_msg_t d;
        slurm_init_job_desc_msg(&d);
        d.job_id = j->job_id;
        d.site_factor = want;
        if (slurm_update_job(&d) == SLURM_SUCCESS)
            s->updated++;
        else
            s->failed++; /* e.g. it started meanwhile; the next pass looks again */
    }
    slurm_free_job_info_msg(msg);
    json_decref(doc);
    return 0;
}
