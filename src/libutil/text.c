/* SPDX-License-Identifier: GPL-3.0-or-later */
/* text.c - bounded text copies (text.h). */
#include "libutil/text.h"

#include <string.h>

int text_copy(char *dst, size_t size, const char *src)
{
    if (!src)
        src = "";
    size_t n = strnlen(src, size);
    int cut = n == size;
    if (cut)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return cut;
}
