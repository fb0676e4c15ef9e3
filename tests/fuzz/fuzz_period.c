/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_period.c - libcore period_parse ("2026-07", "2026-Q3", "2026", "total") and
 * period_kind_parse.  Invariants: failure leaves the output untouched with EINVAL; a parsed
 * period is in range; parse -> format -> parse is the identity. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/period.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct period p, sentinel, again;
    memset(&p, 0x5a, sizeof p);
    sentinel = p;
    struct allot_error err = {0};
    if (period_parse(s, &p, &err) < 0) {
        if (memcmp(&p, &sentinel, sizeof p) != 0 || err.code != ALLOT_EINVAL || !err.msg[0])
            abort();
    } else {
        int ok = (p.kind == PERIOD_MONTH && p.index >= 1 && p.index <= 12) ||
                 (p.kind == PERIOD_QUARTER && p.index >= 1 && p.index <= 4) ||
                 (p.kind == PERIOD_YEAR && p.index == 0) ||
                 (p.kind == PERIOD_TOTAL && p.index == 0 && p.year == 0);
        if (!ok || (p.kind != PERIOD_TOTAL && (p.year < 1 || p.year > 9999)))
            abort();
        char buf[PERIOD_STR_MAX];
        if (period_format(&p, buf, sizeof buf, &err) < 0)
            abort();
        if (period_parse(buf, &again, &err) < 0 || again.kind != p.kind || again.year != p.year ||
            again.index != p.index)
            abort();
    }
    enum period_kind k = (enum period_kind)77;
    if (period_kind_parse(s, &k) == 0) {
        if (strcmp(period_kind_name(k), s) != 0)
            abort();
    } else if (k != (enum period_kind)77) {
        abort();
    }
    free(s);
    return 0;
}
