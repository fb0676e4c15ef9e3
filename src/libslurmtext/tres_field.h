/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tres_field.h - a TRES column of sacct/sacctmgr output (AllocTRES, ReqTRES, GrpTRES, ...)
 * read with libcore's tres_parse(), so every part of allot agrees on one TRES grammar.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_TRES_FIELD_H
#define ALLOT_LIBSLURMTEXT_TRES_FIELD_H

#include <stdbool.h>

#include "allot/error.h"
#include "libcore/tres.h"
#include "libslurmtext/field.h"

/* Longest TRES text accepted (the span is copied to a NUL-terminated stack buffer). */
#define SLT_TRES_TEXT_MAX 2048

/* Parse v into *out; *has = false (and out->n = 0) for an empty field.  Errors: EINVAL /
 * ETOOBIG prefixed with field; outputs untouched.  The module's tested contract: a TRES
 * column of real sacct and sacctmgr output (the acct, acct_recorded and sacctmgr tests) reads
 * as libcore reads TRES; bench/forecast_replay.c reads AllocTRES with it. */
int slt_tres_field_parse(struct slt_span v, const char *field, bool *has, struct tres_list *out,
                         struct allot_error *err);

#endif
