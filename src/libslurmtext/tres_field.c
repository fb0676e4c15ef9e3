/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tres_field.c - TRES columns through libcore's tres_parse (see tres_field.h). */
#include "libslurmtext/tres_field.h"

#include <string.h>

int slt_tres_field_parse(struct slt_span v, const char *field, bool *has, struct tres_list *out,
                         struct allot_error *err)
{
    char text[SLT_TRES_TEXT_MAX];
    if (v.n >= sizeof(text))
        return allot_errorf(err, ALLOT_ETOOBIG, "%s: TRES list of %zu bytes too long", field, v.n);
    if (memchr(v.p, '\0', v.n))
        return slt_field_error(err, field, "invalid TRES list", v);
    memcpy(text, v.p, v.n);
    text[v.n] = '\0';
    struct tres_list l;
    if (tres_parse(text, &l, err) < 0)
        return allot_error_prefix(err, "%s", field);
    *has = v.n > 0;
    *out = l;
    return 0;
}
