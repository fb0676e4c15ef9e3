/* SPDX-License-Identifier: GPL-3.0-or-later */
/* exitcode.h - Slurm's ExitCode / DerivedExitCode "exit:signal" ("0:0", "3:0", "0:9").
 * Empty text means no data (has = false).  Both numbers are 0..255.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_EXITCODE_H
#define ALLOT_LIBSLURMTEXT_EXITCODE_H

#include <stdbool.h>
#include <stddef.h>

#include "allot/error.h"

struct slt_exitcode {
    bool has;
    int status; /* exit status 0..255 */
    int signal; /* terminating signal 0..255, 0 = none */
};

/* Parse text[0..n).  Errors: ALLOT_EINVAL naming field and text; out untouched. */
int slt_exitcode_parse(const char *text, size_t n, const char *field, struct slt_exitcode *out,
                       struct allot_error *err);

/* Write "status:signal" ("" when !has).  Returns length or -1 (ETOOBIG/EINVAL, buf
 * untouched). */
int slt_exitcode_format(const struct slt_exitcode *e, char *buf, size_t len,
                        struct allot_error *err);

#endif
