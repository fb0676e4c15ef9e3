/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * breaker_ready.h - the circuit breaker's probe asks allotd's readiness first.
 *
 * Design: when the breaker's window has passed, one call probes allotd (breaker.h).  That
 * call is a job's: if allotd still cannot write, the job pays for finding out.  So the
 * probe first asks GET /readyz (doc/allotd.md "Liveness and readiness": whether a write can
 * commit now); only when allotd is ready (or too old to know /readyz: 404) does the job's
 * request go.  Not ready, or no answer, re-opens the breaker for another window and the job
 * meets FailMode at once, as while the breaker was open.
 */
#ifndef ALLOT_PLUGINS_BREAKER_READY_H
#define ALLOT_PLUGINS_BREAKER_READY_H

#include "allot/allot.h"
#include "plugins/common/breaker.h"

/* V is what breaker_enter(B) said.  For BREAKER_PROBE, ask C's allotd whether it is ready:
 * returns V when it is, else BREAKER_SKIP with ERR (EUNAVAIL, naming why) after opening B
 * again.  Any other V is returned as it is. */
enum breaker_verdict breaker_ready_gate(breaker_t *b, enum breaker_verdict v, allot_client_t *c,
                                        struct allot_error *err);

#endif
