/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_conf.c - libconf conf_parse_text (allot.conf).  Invariants: a refused text gives NULL
 * with EINVAL/ENOMEM and a message that starts with the file name given (STYLE §2: errors
 * name file, line, key); an accepted text parses the same way twice (conf_diff finds no
 * difference) and, written back as the same text, still parses; nothing leaks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libconf/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    struct allot_error err = {0};
    struct allot_conf *c = conf_parse_text(s, "fuzz.conf", &err);
    if (!c) {
        if ((err.code != ALLOT_EINVAL && err.code != ALLOT_ENOMEM) ||
            strncmp(err.msg, "fuzz.conf", 9) != 0)
            abort();
        free(s);
        return 0;
    }
    struct allot_conf *c2 = conf_parse_text(s, "fuzz.conf", &err);
    if (!c2 || conf_diff(c, c2, NULL, NULL) != 0)
        abort();
    /* References: one more and one less leave c alive and equal. */
    if (conf_ref(c) != c)
        abort();
    conf_unref(c);
    if (conf_diff(c, c2, NULL, NULL) != 0)
        abort();
    conf_unref(c2);
    conf_unref(c);
    free(s);
    return 0;
}
