/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_money.c - libcore money: money_parse_sumin / money_parse_signed_sumin on the input as
 * text, and money_charge_sumin / money_hold_sumin on its first 16 bytes as two int64.
 * Invariants: a failed parse leaves the output untouched with an EINVAL message; an unsigned
 * parse is never negative and agrees with the signed one; format -> parse is the identity;
 * formatting into a too-small buffer leaves it untouched; a charge is the exact ceiling of
 * billing x seconds / 60e6 (doc/design.md §3.3), checked in 128 bits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/money.h"

static void roundtrip(int64_t v)
{
    char buf[MONEY_FORMAT_MAX];
    struct allot_error err = {0};
    if (money_format_sumin(v, buf, sizeof buf) < 0)
        abort();
    int64_t again = 0;
    if (money_parse_signed_sumin(buf, &again, &err) < 0 || again != v)
        abort();
    if (v >= 0 && (money_parse_sumin(buf, &again, &err) < 0 || again != v))
        abort();
    char small[4] = "zzz";
    if (strlen(buf) >= sizeof small &&
        (money_format_sumin(v, small, sizeof small) != -1 || memcmp(small, "zzz", 4) != 0))
        abort();
}

static void charge(const uint8_t *data, size_t size)
{
    if (size < 16)
        return;
    int64_t billing, secs;
    memcpy(&billing, data, 8);
    memcpy(&secs, data + 8, 8);
    struct allot_error err = {0};
    const int64_t sentinel = INT64_C(0x5a5a5a5a5a5a5a5a);
    int64_t out = sentinel;
    if (money_charge_sumin(billing, secs, &out, &err) < 0) {
        if (out != sentinel || err.code != ALLOT_EINVAL)
            abort();
        return;
    }
    __int128 want = (__int128)billing * secs;
    if (billing < 0 || secs < 0 || out < 0 || (__int128)out * 60000000 < want ||
        (out > 0 && (__int128)(out - 1) * 60000000 >= want))
        abort();
    int64_t hold = sentinel;
    if (money_hold_sumin(billing, secs, &hold, &err) < 0 || hold != out)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct allot_error err = {0};
    const int64_t sentinel = INT64_C(0x5a5a5a5a5a5a5a5a);
    int64_t u = sentinel, v = sentinel;
    int ru = money_parse_sumin(s, &u, &err);
    if (ru < 0 && (u != sentinel || err.code != ALLOT_EINVAL || !err.msg[0]))
        abort();
    allot_error_clear(&err);
    int rv = money_parse_signed_sumin(s, &v, &err);
    if (rv < 0 && (v != sentinel || err.code != ALLOT_EINVAL || !err.msg[0]))
        abort();
    if (ru == 0) {
        if (u < 0 || rv < 0 || v != u)
            abort();
        roundtrip(u);
    }
    if (rv == 0)
        roundtrip(v);
    charge(data, size);
    free(s);
    return 0;
}
