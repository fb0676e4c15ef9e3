/* SPDX-License-Identifier: GPL-3.0-or-later */
/* breaker_ready.c - the circuit breaker's probe asks allotd's /readyz (breaker_ready.h). */
#include "plugins/common/breaker_ready.h"

#include <stdlib.h>

enum breaker_verdict breaker_ready_gate(breaker_t *b, enum breaker_verdict v, allot_client_t *c,
                                        struct allot_error *err)
{
    if (v != BREAKER_PROBE || !c)
        return v;
    int status = 0;
    struct allot_error e = {0};
    if (allot_request(c, "GET", "/readyz", NULL, &status, NULL, &e) == 0 || status == 404)
        return v; /* ready, or an allotd without /readyz: the job's call is the probe */
    int64_t open_ms = 0;
    uint64_t skipped = 0;
    breaker_leave(b, v, 1, breaker_now_ms(), &open_ms, &skipped); /* another window */
    (void)breaker_enter(b, breaker_now_ms()); /* counts this call as decided by FailMode */
    allot_errorf(err, ALLOT_EUNAVAIL, "allotd is not ready to write (%s)", e.msg);
    return BREAKER_SKIP;
}
