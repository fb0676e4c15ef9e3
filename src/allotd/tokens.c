/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tokens.c - the dashboard's bearer tokens (tokens.h).
 *
 * A fixed array of TOKENS_MAX slots: a slot whose expiry has passed is free.  Lookups scan
 * every slot and compare all 32 bytes of each live one without an early exit, so the time a
 * lookup takes says nothing about how close a guess came.  The dashboard makes a handful of
 * requests per page, so the scan (a few microseconds per hundred live tokens) is not on
 * any hot path.
 */
#include "allotd/tokens.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "libutil/xalloc.h"

#define TOKEN_BYTES (TOKEN_HEX_LEN / 2)

struct slot {
    unsigned char key[TOKEN_BYTES];
    struct token_grant grant; /* expires_s == 0: free */
    uint64_t seq;             /* issue order: the smallest of a user's is their oldest */
};

struct tokens {
    pthread_mutex_t lock;
    uint64_t next_seq;
    struct slot slot[TOKENS_MAX];
};

struct tokens *tokens_new(void)
{
    struct tokens *t = xcalloc(1, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void tokens_free(struct tokens *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->lock);
    /* The keys were secrets: leave none in freed memory. */
    explicit_bzero(t->slot, sizeof(t->slot));
    free(t);
}

static int live(const struct slot *s, int64_t now_s)
{
    return s->grant.expires_s > now_s;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; /* upper case is not what tokens_add writes: refused, not folded */
}

/* The 32 bytes of a 64-digit lower-case hex text; -1 if it is anything else. */
static int parse_hex(const char *hex, unsigned char *key)
{
    for (int i = 0; i < TOKEN_BYTES; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hi < 0 ? -1 : hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        key[i] = (unsigned char)(hi << 4 | lo);
    }
    return hex[TOKEN_HEX_LEN] == '\0' ? 0 : -1;
}

static int fill_random(unsigned char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = getrandom(buf + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

int tokens_add(struct tokens *t, const struct token_grant *g, int64_t now_s, char *hex,
               struct allot_error *err)
{
    unsigned char key[TOKEN_BYTES];
    if (fill_random(key, sizeof(key)) < 0)
        return allot_errorf(err, ALLOT_EINTERNAL, "no random bytes for a token: %s",
                            strerror(errno));
    pthread_mutex_lock(&t->lock);
    struct slot *free_slot = NULL, *oldest = NULL;
    int mine = 0;
    for (int i = 0; i < TOKENS_MAX; i++) {
        struct slot *s = &t->slot[i];
        if (!live(s, now_s)) {
            if (!free_slot)
                free_slot = s;
        } else if (strcmp(s->grant.user, g->user) == 0) {
            mine++;
            if (!oldest || s->seq < oldest->seq)
                oldest = s;
        }
    }
    if (mine >= TOKENS_PER_USER)
        free_slot = oldest; /* the user's oldest token ends: a cap per user, not a refusal */
    if (free_slot) {
        memcpy(free_slot->key, key, sizeof(key));
        free_slot->grant = *g;
        free_slot->seq = ++t->next_seq;
    }
    pthread_mutex_unlock(&t->lock);
    if (!free_slot) {
        explicit_bzero(key, sizeof(key));
        return allot_errorf(err, ALLOT_EUNAVAIL,
                            "%d dashboard tokens are live, the most allotd keeps; retry when "
                            "some expire",
                            TOKENS_MAX);
    }
    for (int i = 0; i < TOKEN_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    explicit_bzero(key, sizeof(key));
    return 0;
}

int tokens_find(struct tokens *t, const char *hex, int64_t now_s, struct token_grant *out)
{
    unsigned char key[TOKEN_BYTES];
    if (!hex || strnlen(hex, TOKEN_HEX_LEN + 1) != TOKEN_HEX_LEN || parse_hex(hex, key) < 0)
        return 0;
    int found = 0;
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < TOKENS_MAX; i++) {
        const struct slot *s = &t->slot[i];
        unsigned char diff = 0;
        for (int k = 0; k < TOKEN_BYTES; k++)
            diff |= (unsigned char)(s->key[k] ^ key[k]);
        if (diff == 0 && live(s, now_s)) {
            *out = s->grant;
            found = 1;
        }
    }
    pthread_mutex_unlock(&t->lock);
    explicit_bzero(key, sizeof(key));
    return found;
}
