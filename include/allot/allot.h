/* SPDX-License-Identifier: GPL-3.0-or-later */
/* allot.h - liballot, the client library of allotd's HTTP/JSON API (doc/api.md).
 *
 * Used by the `allot` CLI, allot-agent and the Slurm plugins (inside slurmctld), so the
 * library never exits, never logs, never aborts on memory exhaustion (ALLOT_ENOMEM instead)
 * and keeps no global state except libcurl's one-time global initialisation.
 *
 * A client handle owns one libcurl easy handle that is reused between requests (HTTP
 * keep-alive), a MUNGE context pointing at the configured munged socket and the option
 * values.  Each request carries a fresh MUNGE credential in `X-Allot-Auth: MUNGE <cred>`,
 * unless the handle was told to rely on Unix-socket peer credentials (allot_client_set_auth).
 * The credential's payload is ALLOT_MUNGE_PAYLOAD: allotd refuses any other, so a
 * credential a user minted for another MUNGE service cannot be spent on allot.
 *
 * Threads: a handle may be shared between threads; requests on one handle are serialised
 * by the handle's mutex (plugins that need parallel requests create one handle per thread).
 * Setting options while another thread runs a request on the same handle is not allowed.
 *
 * Errors: every fallible function fills an optional struct allot_error (allot/error.h).
 * Error replies of allotd (`{"error":{"code":"EINVAL","message":..}}`) come back as the same
 * allot_errnum and message the daemon produced, so a CLI exit status is the daemon's verdict.
 */
#ifndef ALLOT_ALLOT_ALLOT_H
#define ALLOT_ALLOT_ALLOT_H

#include <stdint.h>

#include "allot/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct allot_client allot_client_t;

#define ALLOT_DEFAULT_URL "unix:/run/allot/allotd.sock"
#define ALLOT_DEFAULT_TIMEOUT_MS 5000
#define ALLOT_MAX_TIMEOUT_MS 600000 /* ten minutes: nothing allotd does takes longer */
#define ALLOT_MAX_REPLY_BYTES (64L * 1024 * 1024)
/* The payload of every MUNGE credential for allotd (`munge -s allot` from a shell). */
#define ALLOT_MUNGE_PAYLOAD "allot"

/* Create a client for url: "http://HOST:PORT[/prefix]", "https://..." or
 * "unix:/abs/path/allotd.sock".  url NULL or "" means $ALLOT_URL, else ALLOT_DEFAULT_URL.
 * Other defaults read from the environment: $ALLOT_MUNGE_SOCKET (munged socket; unset = the
 * MUNGE library's default), $ALLOT_AUTH ("munge" or "peer", see allot_client_set_auth) and
 * $ALLOT_TEST_USER (test user, see allot_client_set_test_user).
 * No connection is made until the first request.
 * Returns a handle the caller releases with allot_client_destroy(), or NULL with err set
 * (EINVAL for a malformed url, ENOMEM, EINTERNAL when libcurl cannot initialise). */
allot_client_t *allot_client_create(const char *url, struct allot_error *err);

/* Release the handle and its connection.  NULL is a no-op. */
void allot_client_destroy(allot_client_t *c);

/* The normalised URL the handle talks to (no trailing '/'); borrowed from c. */
const char *allot_client_url(const allot_client_t *c);

/* Whole-request timeout in milliseconds (connect + send + answer), 1..ALLOT_MAX_TIMEOUT_MS.
 * Default ALLOT_DEFAULT_TIMEOUT_MS; Slurm plugins use small values.  EINVAL outside bounds. */
int allot_client_set_timeout_ms(allot_client_t *c, long timeout_ms, struct allot_error *err);

/* The munged socket used to encode credentials; NULL = the MUNGE library's default.  The
 * string is copied.  ENOMEM, or EINVAL when the path is not absolute. */
int allot_client_set_munge_socket(allot_client_t *c, const char *path, struct allot_error *err);

/* Run requests as another user (header X-Allot-As; allotd honours it for superusers and
 * admins only).  NULL or "" clears it.  The name is copied.  EINVAL for a bad name. */
int allot_client_set_run_as(allot_client_t *c, const char *user, struct allot_error *err);

/* Test user for test daemons running AuthType=none (header X-Allot-User).  When set,
 * requests carry no MUNGE credential (munged is not asked).  NULL or "" clears it.  EINVAL
 * for a bad name. */
int allot_client_set_test_user(allot_client_t *c, const char *user, struct allot_error *err);

/* How requests prove who sends them. */
enum allot_auth {
    ALLOT_AUTH_MUNGE = 0, /* default: a fresh MUNGE credential per request (X-Allot-Auth) */
    ALLOT_AUTH_PEER = 1   /* none: allotd takes the kernel's word for the Unix-socket peer
                           * (SO_PEERCRED; allot.conf SocketPeerAuth=yes on the daemon).
                           * Only for unix: URLs; saves the two munged round trips. */
};

/* Choose the authentication of c's requests.  ALLOT_AUTH_PEER needs a unix: URL (EINVAL
 * otherwise: over TCP allotd always wants a credential) and a daemon with SocketPeerAuth=yes,
 * else requests get EAUTH (401).  allot_client_create() reads $ALLOT_AUTH ("munge" or
 * "peer") as the initial value.  A test user (allot_client_set_test_user) wins over both. */
int allot_client_set_auth(allot_client_t *c, enum allot_auth auth, struct allot_error *err);

/* on = 1 (default): keep the connection open between requests; 0: close it after each. */
void allot_client_set_keepalive(allot_client_t *c, int on);

/* Send one request.  method: "GET", "POST", "PUT", "PATCH" or "DELETE"; path: starts with
 * '/' (for instance "/v1/balances?account=chem"), query values already percent-encoded (see
 * allot_urlencode); json_body: a JSON text or NULL for none.
 * Outputs (each pointer may be NULL when the caller does not want it):
 *   *http_status: the HTTP status, 0 when no answer was received;
 *   *reply: the reply body, NUL-terminated, malloc'd, the caller frees it with free(); set
 *           for error statuses too (a refused admit carries its numbers), NULL when no
 *           answer was received.
 * Returns 0 for a 2xx status.  Returns -1 with err set otherwise: an error reply's code
 * (allot_errnum_from_name of `error.code`) and message (prefixed by `field: ` when the
 * message does not name it already); EUNAVAIL when allotd cannot be reached or did not
 * answer within the timeout or munged is unreachable; EAUTH when munged refuses to encode
 * a credential; EPROTO for an
 * answer that is not the protocol; ETOOBIG for a reply over ALLOT_MAX_REPLY_BYTES.
 * Outcome unknown: an EINDOUBT answer that allotd marks "retry_safe" (an idempotent request
 * whose COMMIT answer the database lost, doc/api.md "Outcome unknown") is sent again, up to
 * 4 times within about 4 s, and the first known outcome is returned (a replay when the first
 * request had committed); EINDOUBT only when none came.  Other EINDOUBT answers are
 * returned at once: the change may or may not have been made. */
int allot_request(allot_client_t *c, const char *method, const char *path, const char *json_body,
                  int *http_status, char **reply, struct allot_error *err);

/* Percent-encode s for a URL query value or path segment (RFC 3986 unreserved characters
 * pass).  Returns a malloc'd string the caller frees, or NULL with err ENOMEM. */
char *allot_urlencode(const char *s, struct allot_error *err);

/* ---- Typed job verbs for the Slurm plugins and the agent (doc/api.md "Job verbs") ------- */

/* A job run as the plugins see it.  Both structs only grow at their end (0.x ABI: callers
 * are rebuilt with the header they link against).  Strings are borrowed for the call; NULL or ""
 * means "not given" and the field is left out of the request.  Integer fields <= 0 are left out,
 * except run (always sent by hold/settle/release; 0 = first run) and elapsed_s, which
 * settle sends when >= 0 (0 = never ran; set -1 when unknown). */
struct allot_job_desc {
    const char *cluster;
    int64_t job_id; /* 0 at admission: Slurm has not assigned one yet */
    int32_t run;    /* 0 for the first run; a requeue is a new run */
    const char *user;
    const char *account;
    const char *partition;
    const char *qos;
    int64_t submit_s; /* UTC epoch seconds */
    int64_t start_s;
    int64_t end_s;
    int64_t time_limit_s;
    int64_t elapsed_s;
    const char *tres;       /* requested TRES, Slurm syntax "cpu=4,mem=8000M,node=1" */
    const char *alloc_tres; /* allocated TRES (hold, settle) */
    int64_t billing;        /* Slurm's integer billing TRES */
    int64_t billing_micro;  /* allot's exact billing; 1 unit = 1,000,000 */
    const char *state;      /* Slurm job state at settle ("COMPLETED", "NODE_FAIL", ...) */
    const char *source;     /* settle source: "epilog", "sacct" or "api" */
    const char *comment;    /* release comment; void: why the plugin cancelled the run */
    /* HoldMode=submit (doc/slurm.md "Hold at submit"): the job's submit token, in
     * [2^32, 2^62]; 0 = none.  admit: take the provisional hold under it; hold: move that
     * hold to (job_id, run).  Other verbs ignore it (release a provisional hold by passing
     * the token as job_id). */
    int64_t submit_token;
    /* admit: the number of tasks of a job array (doc/slurm.md "Hold at submit"): admission
     * and the hold at submit cover tasks x the cost of one; 0 = 1.  release of a submit
     * hold (job_id = token): keep the shares of this many tasks, release the rest; 0 = all. */
    int64_t tasks;
    /* admit: credit the same submission needs besides this job (the het components
     * admitted before this one), checked with it when no hold is taken at submit; 0 = none. */
    int64_t extra_sumin;
    /* hold, settle: Slurm's names of the job (doc/api.md "Job ids"): a task of job array
     * array_job_id (Slurm prints "J_T"), a component of het job het_job_id ("J+C"); 0 =
     * none (the task id or offset is then not sent). */
    int64_t array_job_id, array_task_id;
    int64_t het_job_id, het_job_offset;
};

/* The decision of a job verb and its numbers (0 when the reply did not carry them). */
struct allot_job_result {
    int ok;                    /* 1: admitted / held / settled / released; 0: refused */
    int replay;                /* 1: allotd had already done this (idempotent repeat) */
    enum allot_errnum refusal; /* EFUNDS or ELIMIT when refused (with ok = 1: observed only,
                                * EnforceMode=observe), else ALLOT_OK */
    int64_t alloc_id;
    char payer_account[64];
    int64_t billing_micro;
    int64_t cost_sumin; /* admit, refused hold: the job's maximum cost */
    int64_t available_sumin;
    int64_t held_sumin;
    int64_t hold_sumin;   /* hold / settle: the job's hold */
    int64_t charge_sumin; /* settle: the debit */
    char message[1024];   /* refusal text a user can act on ("" when admitted, unless
                           * observed) */
    int64_t submit_token; /* admit with a token: the token allotd held under, else 0 */
    int64_t tasks;        /* admit: the tasks priced (1 unless a job array) */
    int64_t total_sumin;  /* admit: tasks x cost_sumin (+ extra_sumin), what was checked */
};

/* POST /v1/jobs/admit, /hold, /settle, /release, /adjust.  A refusal (insufficient funds, a
 * limit) is an outcome: the call returns 0 with res->ok = 0, res->refusal and res->message
 * set.  With
 * allotd's EnforceMode=observe, an admit or hold the bank would refuse returns res->ok = 1
 * (the job goes on; an observed hold holds nothing) with res->refusal and res->message
 * saying what enforcement would have refused.  -1
 * with err set means no decision was obtained (unreachable, timeout, bad request, protocol);
 * the caller then fails open or closed as configured.  res is always fully written on 0 and
 * zeroed on -1.  Hold, settle, release, adjust and void are idempotent per (cluster, job_id,
 * run): an answer lost with allotd's database connection is asked again (allot_request), and
 * -1 with EINDOUBT means it stayed unknown whether the verb took effect (the plugins treat it
 * as an unanswered call: sending the same verb again later is safe). */
int allot_job_admit(allot_client_t *c, const struct allot_job_desc *job,
                    struct allot_job_result *res, struct allot_error *err);
int allot_job_hold(allot_client_t *c, const struct allot_job_desc *job,
                   struct allot_job_result *res, struct allot_error *err);
int allot_job_settle(allot_client_t *c, const struct allot_job_desc *job,
                     struct allot_job_result *res, struct allot_error *err);
int allot_job_release(allot_client_t *c, const struct allot_job_desc *job,
                      struct allot_job_result *res, struct allot_error *err);
/* POST /v1/jobs/adjust: re-price the hold of run (cluster, job_id, run) at job->time_limit_s
 * (the job's time limit changed).  A raise the allocation cannot cover is a refusal (res->ok
 * 0, res->message, res->cost_sumin = the new price); res->hold_sumin is the run's hold after
 * the call. */
int allot_job_adjust(allot_client_t *c, const struct allot_job_desc *job,
                     struct allot_job_result *res, struct allot_error *err);
/* POST /v1/jobs/void: run (job_id, run) was cancelled by the plugins before it started,
 * without a hold the bank answered (FailMode=closed): allotd records it so that no settle
 * of it is ever charged.  Idempotent; res->message says what allotd recorded. */
int allot_job_void(allot_client_t *c, const struct allot_job_desc *job,
                   struct allot_job_result *res, struct allot_error *err);

/* Static version string of liballot, the project's version ("0.1.0"). */
const char *allot_version(void);

#ifdef __cplusplus
}
#endif

#endif
