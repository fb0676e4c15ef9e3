/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_state.c - State and ExitCode: format(parse(x)) == x for states; exit codes round-trip
 * by value; outputs untouched on failure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libslurmtext/exitcode.h"
#include "libslurmtext/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct slt_state s, ssent;
    memset(&s, 0x11, sizeof(s));
    ssent = s;
    char buf[64];
    if (slt_state_parse((const char *)data, size, "F", &s, NULL) < 0) {
        if (memcmp(&s, &ssent, sizeof(s)) != 0)
            abort();
    } else {
        int n = slt_state_format(&s, buf, sizeof(buf), NULL);
        struct slt_state again;
        if (n < 0 || slt_state_parse(buf, (size_t)n, "F", &again, NULL) < 0 ||
            again.state != s.state || again.has_by_uid != s.has_by_uid || again.by_uid != s.by_uid)
            abort();
    }
    struct slt_exitcode e, esent;
    memset(&e, 0x22, sizeof(e));
    esent = e;
    if (slt_exitcode_parse((const char *)data, size, "F", &e, NULL) < 0) {
        if (memcmp(&e, &esent, sizeof(e)) != 0)
            abort();
    } else {
        int n = slt_exitcode_format(&e, buf, sizeof(buf), NULL);
        struct slt_exitcode again;
        if (n < 0 || slt_exitcode_parse(buf, (size_t)n, "F", &again, NULL) < 0 ||
            again.has != e.has || again.status != e.status || again.signal != e.signal)
            abort();
    }
    return 0;
}
