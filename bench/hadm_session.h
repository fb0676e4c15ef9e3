/* SPDX-License-Identifier: GPL-3.0-or-later */
/* hadm_session.h - one PostgreSQL session of the HADM baseline (bench/hadm_baseline.sql),
 * shared by hadm_baseline (direct libpq) and hadm_api (behind HTTP) so both call the
 * procedures the same way. */
#ifndef ALLOT_BENCH_HADM_SESSION_H
#define ALLOT_BENCH_HADM_SESSION_H

#include <libpq-fe.h>
#include <stddef.h>

/* Prepared statement names: "pre" = hadm.predebit(alloc, job, uid, amount),
 * "deb" = hadm.debit(job, actual). */
#define HADM_PREDEBIT "pre"
#define HADM_DEBIT "deb"

/* Connect to conninfo and prepare both statements.  The session, or NULL with PostgreSQL's
 * message (without its trailing newline) in err[size]. */
PGconn *hadm_session_open(const char *conninfo, char *err, size_t size);

#endif
