/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_token.c - POST /v1/tokens: a read-only bearer token for the web dashboard (tokens.h).
 *
 * The token stands for the caller as authenticated now (after X-Allot-As: the effective user
 * and role), so `allot --as alice dashboard` gives an admin alice's view.  Nothing is
 * written to the bank: tokens live in allotd's memory and end with it. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "allotd/api.h"
#include "allotd/auth.h"
#include "allotd/json.h"
#include "allotd/tokens.h"
#include "libutil/log.h"
#include "libutil/text.h"

int api_token_add(struct req *r, struct allot_error *err)
{
    int64_t ttl_s = TOKEN_TTL_DEFAULT_S;
    struct jfield f[] = {{.name = "ttl_s", .type = JF_INT, .dst = &ttl_s, .min = TOKEN_TTL_MIN_S}};
    if (json_body(r, err) < 0 || json_read(r->in, f, 1, err) < 0)
        return -1;
    if (ttl_s > TOKEN_TTL_MAX_S)
        return allot_errorf(err, ALLOT_EINVAL, "ttl_s: at most %d seconds (a day)",
                            TOKEN_TTL_MAX_S);
    int64_t now_s = (int64_t)time(NULL);
    struct token_grant g = {.role = (int)r->who.role, .expires_s = now_s + ttl_s};
    text_copy(g.user, sizeof(g.user), r->who.user);
    char hex[TOKEN_HEX_LEN + 1];
    if (tokens_add(r->d->tokens, &g, now_s, hex, err) < 0)
        return -1;
    /* The first 8 digits name the token in the log; they do not make it guessable. */
    log_info("msg=\"dashboard token issued\" req=%llu user=%s role=%s real_user=%s "
             "expires_s=%lld token=%.8s...",
             (unsigned long long)r->id, g.user, auth_role_name(r->who.role), r->who.real,
             (long long)g.expires_s, hex);
    char path[sizeof("/dashboard#token=") + TOKEN_HEX_LEN];
    snprintf(path, sizeof(path), "/dashboard#token=%s", hex);
    /* listen: allotd's TCP address, for a client on the Unix socket to build the link. */
    r->out = json_pack("{s:s, s:s, s:s, s:o, s:s, s:s}", "token", hex, "user", g.user, "role",
                       auth_role_name(r->who.role), "expires", json_time(g.expires_s), "dashboard",
                       path, "listen", r->conf->listen_addr);
    explicit_bzero(hex, sizeof(hex));
    r->status = 201;
    return 0;
}
