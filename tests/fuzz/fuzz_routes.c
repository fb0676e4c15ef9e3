/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_routes.c - allotd's route table (src/allotd/routes.c): the input is "METHOD\nPATH".
 * Invariants: a match returns a valid route whose name is "METHOD pattern" and whose pattern
 * with the captured parameters put back is exactly the path (each parameter one non-empty
 * segment without '/', shorter than REQ_PARAM_LEN); a miss is ENOENT (unknown path) or
 * EINVAL naming "method" (405).  A refused escape at any offset of the path is always EINVAL
 * "<parameter or path>: contains ..." (routes_path_escape). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allotd/routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char *nl = strchr(s, '\n');
    const char *method = s, *path = "";
    if (nl) {
        *nl = '\0';
        path = nl + 1;
    }
    static struct req r;
    memset(&r, 0, sizeof r);
    struct allot_error err = {0};
    size_t plen = strlen(path);
    for (size_t at = 0; at <= plen; at += 1 + plen / 8) {
        struct allot_error e = {0};
        const char *colon;
        if (routes_path_escape(path, at, "X", &e) != -1 || e.code != ALLOT_EINVAL ||
            !(colon = strchr(e.msg, ':')) || strcmp(colon, ": contains X") != 0)
            abort();
    }
    int i = routes_match(method, path, &r, &err);
    if (i < 0) {
        if (err.code == ALLOT_EINVAL ? strncmp(err.msg, "method:", 7) != 0
                                     : err.code != ALLOT_ENOENT)
            abort();
        free(s);
        return 0;
    }
    const char *name = routes_name(i);
    size_t ml = strlen(method);
    if (i >= routes_count() || !name || strncmp(name, method, ml) != 0 || name[ml] != ' ' ||
        routes_handler(i) == NULL)
        abort();
    /* Rebuild the path from the pattern and the parameters. */
    char rebuilt[4096];
    size_t k = 0;
    int np = 0;
    for (const char *p = name + ml + 1; *p; p++) {
        if (p[0] == '{' && p[1] == '}') {
            const char *v = r.param[np++];
            size_t vl = strlen(v);
            if (vl == 0 || vl >= REQ_PARAM_LEN || strchr(v, '/') || k + vl >= sizeof rebuilt)
                abort();
            memcpy(rebuilt + k, v, vl);
            k += vl;
            p++;
        } else if (k + 1 < sizeof rebuilt) {
            rebuilt[k++] = *p;
        }
    }
    rebuilt[k] = '\0';
    if (np > REQ_PARAMS_MAX || strcmp(rebuilt, path) != 0)
        abort();
    free(s);
    return 0;
}
