/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_tres.c - libcore tres_parse (Slurm TRES lists).  Invariants: failure leaves the
 * output untouched with EINVAL/ETOOBIG; a parsed list is canonical (names valid and unique,
 * counts >= 0, n within bounds); parse -> format -> parse is the identity and formatting is
 * stable; a too-small buffer is left untouched; tres_get finds every item. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/tres.h"

#define FMT_MAX (TRES_LIST_MAX * (TRES_NAME_MAX + 24))

static int same(const struct tres_list *a, const struct tres_list *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->item[i].name, b->item[i].name) != 0 || a->item[i].count != b->item[i].count)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    static struct tres_list l, sentinel, again;
    memset(&l, 0x5a, sizeof l);
    sentinel = l;
    struct allot_error err = {0};
    if (tres_parse(s, &l, &err) < 0) {
        if (memcmp(&l, &sentinel, sizeof l) != 0 ||
            (err.code != ALLOT_EINVAL && err.code != ALLOT_ETOOBIG) || !err.msg[0])
            abort();
        free(s);
        return 0;
    }
    if (l.n < 0 || l.n > TRES_LIST_MAX)
        abort();
    for (int i = 0; i < l.n; i++) {
        if (l.item[i].count < 0 || !l.item[i].name[0] ||
            tres_get(&l, l.item[i].name) != l.item[i].count)
            abort();
        for (int j = 0; j < i; j++)
            if (strcmp(l.item[i].name, l.item[j].name) == 0)
                abort();
    }
    static char buf[FMT_MAX], buf2[FMT_MAX];
    if (tres_format(&l, buf, sizeof buf, &err) < 0)
        abort();
    if (tres_parse(buf, &again, &err) < 0 || !same(&l, &again))
        abort();
    if (tres_format(&again, buf2, sizeof buf2, &err) < 0 || strcmp(buf, buf2) != 0)
        abort();
    size_t len = strlen(buf);
    if (len > 0) {
        char small[8];
        memset(small, 'z', sizeof small);
        size_t cap = len < sizeof small ? len : sizeof small; /* one byte short of the NUL */
        if (tres_format(&l, small, cap, &err) != -1 || err.code != ALLOT_ETOOBIG)
            abort();
        for (size_t i = 0; i < sizeof small; i++)
            if (small[i] != 'z')
                abort();
    }
    free(s);
    return 0;
}
