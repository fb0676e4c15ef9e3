/* SPDX-License-Identifier: GPL-3.0-or-later */
/* post.c - file a step record in allotd (see post.h). */
#include "step/post.h"

#include <stdlib.h>

#include "allot/allot.h"
#include "libutil/log.h"

int step_post_record(const struct step_post *p, json_t *rec)
{
    struct allot_error err = {0};
    allot_client_t *c = NULL;
    char *body = NULL, *reply = NULL;
    int status = 0, rc = -1;
    if (!p->cluster || !p->cluster[0]) {
        log_warn("step %s: not recorded in allotd: no cluster name (--cluster, ALLOT_CLUSTER "
                 "or SLURM_CLUSTER_NAME)",
                 p->step_name);
        return -1;
    }
    json_t *env = json_pack("{s:s, s:I, s:s, s:I, s:O}", "cluster", p->cluster, "job_id",
                            (json_int_t)p->job_id, "step_name", p->step_name, "attempt",
                            (json_int_t)p->attempt, "record", rec);
    body = env ? json_dumps(env, JSON_COMPACT) : NULL;
    json_decref(env);
    if (!body) {
        log_warn("step %s: not recorded in allotd: out of memory", p->step_name);
        return -1;
    }
    c = allot_client_create(p->url, &err);
    if (!c || allot_client_set_timeout_ms(c, p->timeout_ms, &err) < 0 ||
        allot_request(c, "POST", "/v1/steps", body, &status, &reply, &err) < 0) {
        log_warn("step %s: not recorded in allotd%s%s: %s", p->step_name, c ? " at " : "",
                 c ? allot_client_url(c) : "", err.msg[0] ? err.msg : allot_strerror(err.code));
        goto out;
    }
    rc = status == 200 ? 2 : 1;
    log_debug("step %s: recorded in allotd as %s/%u attempt %lld%s", p->step_name, p->cluster,
              p->job_id, (long long)p->attempt, rc == 2 ? " (already recorded)" : "");
out:
    allot_client_destroy(c);
    free(body);
    free(reply);
    return rc;
}
