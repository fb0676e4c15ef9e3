/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_args.c - the CLI's key=value syntax (src/cli/args.h).  The input is split at
 * newlines into argv; args_split sorts it into positional words and pairs, then every value
 * goes through each typed parser (amount, time, duration, uint, bool, decimal).
 * Invariants: a failed parser leaves its output untouched and names the key in an EINVAL
 * message; split results are consistent (pairs have non-empty lower-case keys, values point
 * into argv, no key twice); an accepted time formats and parses back to itself; an amount
 * agrees with libcore's money_parse_sumin. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "libcore/money.h"

#define MAX_ARGS 80
#define SENTINEL INT64_C(0x5a5a5a5a5a5a5a5a)

static void check_fail(int rc, int64_t out, const struct allot_error *err)
{
    if (rc < 0 && (out != SENTINEL || err->code != ALLOT_EINVAL || strncmp(err->msg, "k", 1) != 0))
        abort();
}

static void values(const char *v)
{
    struct allot_error err = {0};
    int64_t out = SENTINEL;
    int rc = args_amount("k", v, 0, &out, &err);
    check_fail(rc, out, &err);
    if (rc == 0) {
        int64_t m = SENTINEL;
        if (out < 0 || money_parse_sumin(v, &m, &err) < 0 || m != out)
            abort();
    }
    out = SENTINEL;
    check_fail(args_amount("k", v, 1, &out, &err), out, &err);
    out = SENTINEL;
    rc = args_time("k", v, &out, &err);
    check_fail(rc, out, &err);
    if (rc == 0) {
        char buf[32];
        int64_t again = SENTINEL;
        args_format_time(out, buf, sizeof buf);
        if (args_time("k", buf, &again, &err) < 0 || again != out)
            abort();
    }
    out = SENTINEL;
    rc = args_duration("k", v, &out, &err);
    check_fail(rc, out, &err);
    if (rc == 0 && (out <= 0 || out > 366 * 86400))
        abort();
    out = SENTINEL;
    rc = args_uint("k", v, &out, &err);
    check_fail(rc, out, &err);
    if (rc == 0 && out < 0)
        abort();
    int b = 7;
    rc = args_bool("k", v, &b, &err);
    if ((rc < 0 && (b != 7 || err.code != ALLOT_EINVAL)) || (rc == 0 && b != 0 && b != 1))
        abort();
    if (args_decimal("k", v, &err) < 0 && err.code != ALLOT_EINVAL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char *argv[MAX_ARGS];
    int argc = 0;
    for (char *p = s; argc < MAX_ARGS;) {
        argv[argc++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    const char *pos[4];
    int npos = -1;
    static struct kvlist kvs;
    struct allot_error err = {0};
    if (args_split(argc, argv, pos, 4, &npos, &kvs, &err) < 0) {
        if (err.code != ALLOT_EINVAL || !err.msg[0])
            abort();
        free(s);
        return 0;
    }
    if (npos < 0 || npos > 4 || kvs.n < 0 || kvs.n > ARGS_MAX_KV || npos + kvs.n != argc)
        abort();
    for (int i = 0; i < kvs.n; i++) {
        const struct kv *kv = &kvs.kv[i];
        if (!kv->key[0] || kv->value < s || kv->value > s + size)
            abort();
        for (const char *k = kv->key; *k; k++)
            if (isupper((unsigned char)*k))
                abort();
        for (int j = 0; j < i; j++)
            if (strcmp(kvs.kv[j].key, kv->key) == 0)
                abort();
        if (args_get(&kvs, kv->key) != kv->value)
            abort();
        values(kv->value);
    }
    for (int i = 0; i < npos; i++)
        values(pos[i]);
    if (kvs.n > 0 && args_check_used(&kvs, "fuzz", &err) < 0)
        abort(); /* every pair was read by args_get above */
    free(s);
    return 0;
}
