/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tokens.h - read-only bearer tokens for the web dashboard (doc/api.md "Dashboard tokens").
 *
 * A browser cannot make a MUNGE credential, and one credential serves one request; so a
 * caller who authenticated the usual way (`allot dashboard`) gets a random token that
 * stands for that user and role until it expires.  The tokens live in allotd's memory only
 * (a restart ends them all), at most TOKENS_MAX at once and TOKENS_PER_USER per user (a
 * new one then replaces that user's oldest, so one user cannot fill the table for everyone
 * else); a token is 32 bytes from
 * getrandom(), shown as 64 hex digits, and compared in constant time.  What a token may do
 * (GET only) is auth.c's rule, not this table's.
 * Threads: every function takes the table's mutex; safe from any thread.
 */
#ifndef ALLOT_ALLOTD_TOKENS_H
#define ALLOT_ALLOTD_TOKENS_H

#include <stdint.h>

#include "allot/error.h"
#include "libcore/model.h"

#define TOKENS_MAX 4096
#define TOKENS_PER_USER 16
#define TOKEN_HEX_LEN 64
#define TOKEN_TTL_DEFAULT_S (8 * 3600)
#define TOKEN_TTL_MIN_S 60
#define TOKEN_TTL_MAX_S 86400

struct tokens;

struct token_grant {
    char user[ALLOT_NAME_MAX];
    int role;          /* enum role at creation; auth.c never lets it exceed the current one */
    int64_t expires_s; /* CLOCK_REALTIME seconds */
};

struct tokens *tokens_new(void);
void tokens_free(struct tokens *t);

/* A new token for g (expired ones are dropped first): its hex text into hex (at least
 * TOKEN_HEX_LEN + 1 bytes).  When g->user already has TOKENS_PER_USER live tokens, the one
 * issued first stops working and its slot holds the new one.  -1 with err: EUNAVAIL when
 * TOKENS_MAX are live, EINTERNAL when the kernel gives no random bytes. */
int tokens_add(struct tokens *t, const struct token_grant *g, int64_t now_s, char *hex,
               struct allot_error *err);
/* The grant of the token whose hex text is hex, if it is live at now_s: 1 with *out set;
 * 0 when unknown, malformed or expired. */
int tokens_find(struct tokens *t, const char *hex, int64_t now_s, struct token_grant *out);

#endif
