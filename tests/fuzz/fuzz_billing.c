/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_billing.c - libcore billing_weights_parse (TRESBillingWeights); the first byte picks
 * MAX_TRES, the rest is the text.  Invariants: failure leaves the output untouched with
 * EINVAL/ETOOBIG; parse -> format -> parse is the identity (every weight, suffix and unit);
 * the billing of a fixed job under parsed weights is >= 0 or a clean EINVAL, and the same
 * under the re-parsed weights. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/billing.h"

static int same(const struct billing_weights *a, const struct billing_weights *b)
{
    if (a->n != b->n || a->max_tres != b->max_tres)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->w[i].name, b->w[i].name) != 0 || a->w[i].weight_nano != b->w[i].weight_nano ||
            a->w[i].suffix != b->w[i].suffix || a->w[i].div_exp != b->w[i].div_exp)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int max_tres = data[0] & 1;
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    static struct billing_weights w, sentinel, again;
    memset(&w, 0x5a, sizeof w);
    sentinel = w;
    struct allot_error err = {0};
    if (billing_weights_parse(s, max_tres, &w, &err) < 0) {
        if (memcmp(&w, &sentinel, sizeof w) != 0 ||
            (err.code != ALLOT_EINVAL && err.code != ALLOT_ETOOBIG) || !err.msg[0])
            abort();
        free(s);
        return 0;
    }
    static char buf[BILLING_WEIGHTS_MAX * (TRES_NAME_MAX + 40)];
    if (billing_weights_format(&w, buf, sizeof buf, &err) < 0)
        abort();
    if (billing_weights_parse(buf, max_tres, &again, &err) < 0 || !same(&w, &again))
        abort();
    struct tres_list job;
    if (tres_parse("cpu=32,mem=257000M,node=2,gres/gpu=4,license/x=1", &job, &err) < 0)
        abort();
    int64_t b1 = -1, b2 = -1;
    int r1 = billing_compute(&w, &job, &b1, &err);
    if (r1 < 0 && err.code != ALLOT_EINVAL)
        abort();
    int r2 = billing_compute(&again, &job, &b2, &err);
    if (r1 != r2 || (r1 == 0 && (b1 < 0 || b1 != b2)))
        abort();
    free(s);
    return 0;
}
