/* SPDX-License-Identifier: GPL-3.0-or-later */
/* auth.h - who is calling (doc/design.md §8.3, doc/api.md "Authentication and roles").
 *
 * AuthType=munge: the header `X-Allot-Auth: MUNGE <credential>` is decoded by munged (the
 * configured MungeSocket) with one munge_ctx per worker thread; the uid inside is the
 * caller, mapped to a name with getpwuid_r.  Replays are refused by munged itself
 * (EMUNGE_CRED_REPLAYED).  Every munge failure is EAUTH (401) with a message saying what
 * was wrong; an unreachable munged is EUNAVAIL (503).
 * SocketPeerAuth=yes (the default): a request on ListenSocket WITHOUT X-Allot-Auth is the
 * peer's uid as the kernel recorded it at connect (SO_PEERCRED), mapped to a name the same
 * way; a uid without a passwd entry is EAUTH.  TCP requests without a credential stay EAUTH,
 * and a request that carries a credential is judged by MUNGE alone (its uid, not the peer's).
 * AuthType=none (ALLOT_TEST builds with TestMode=local only): loopback peers only; the
 * caller is X-Allot-User (default root).
 * Roles come from the current conf: SuperUsers, Admins, Operators, else user; a user may
 * also coordinate accounts (stored per account), which lets it read them.  X-Allot-As
 * lets a superuser or admin act as another user; the effective role is the lower of the
 * two users' roles.
 * Threads: auth_request() is reentrant; the per-thread munge_ctx is freed at thread exit.
 */
#ifndef ALLOT_ALLOTD_AUTH_H
#define ALLOT_ALLOTD_AUTH_H

#include "allotd/request.h"

/* Fill r->who from the request's headers.  -1 with err (EAUTH, EPERM, EUNAVAIL). */
int auth_request(struct req *r, struct allot_error *err);
/* The refusal of a route the caller's role may not call: -1 with EPERM naming the caller
 * (and, acting as another user, both names), the method and the request's own path (cut
 * at 256 bytes), and the role.  For http.c's authorize stage. */
int auth_refuse(const struct req *r, struct allot_error *err);
/* Role of a user name under conf c. */
enum role auth_role(const struct allot_conf *c, const char *user);
const char *auth_role_name(enum role role);
/* Create the thread key for the per-thread munge contexts.  Call once before serving. */
int auth_init(struct allot_error *err);

/* 1 if the effective user is one of account's coordinators (its PIs: they may read the
 * account's per-user usage, jobs, refusals and forecasts, never write), else 0 (also for an
 * account that does not exist).  -1 with err on a storage error. */
int auth_coordinates(struct req *r, const char *account, struct allot_error *err);
/* The accounts the effective user coordinates: *out is a new object keyed by their names
 * (the caller json_decref()s it).  -1 with err on a storage error. */
int auth_coordinated(struct req *r, json_t **out, struct allot_error *err);
/* For ROLE_USER callers: 1 if the effective user has an association with account on any
 * cluster or coordinates it, else 0; for other roles always 1.  -1 with err on a storage
 * error. */
int auth_sees_account(struct req *r, const char *account, struct allot_error *err);
/* The same rule for a listing of many rows, with two store reads: for ROLE_USER callers
 * *out is a new object whose keys are the accounts the effective user has an association
 * with or coordinates (the caller json_decref()s it); for other roles *out is NULL (they see all).
 * -1 with err on a storage error. */
int auth_account_set(struct req *r, json_t **out, struct allot_error *err);
/* 1 if account is in set (from auth_account_set) or set is NULL, else 0. */
int auth_set_sees(const json_t *set, const char *account);

#endif
