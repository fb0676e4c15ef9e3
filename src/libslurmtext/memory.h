/* SPDX-License-Identifier: GPL-3.0-or-later */
/* memory.h - Slurm memory sizes: MaxRSS "1528K", "2.50M", bare "0"; ReqMem "4000M" and the
 * older per-node / per-CPU forms "4000Mn" / "2000Mc".
 *
 * Grammar: D+[.D{1,9}][K|M|G|T|P][n|c].  Suffixes are binary (K = 1024, as Slurm's
 * convert_num_unit prints them).  A bare number is in the unit the caller names (bytes for
 * sacct/sstat MaxRSS, MiB for sacctmgr/ReqMem input).  Fractions are rounded to the nearest
 * byte ("2.50M" is exactly 2621440).  Empty text is "no data" (has = false), never zero.
 * Values above INT64_MAX bytes are refused.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_MEMORY_H
#define ALLOT_LIBSLURMTEXT_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

enum slt_mem_scope {
    SLT_MEM_TOTAL = 0, /* no n/c flag */
    SLT_MEM_PER_NODE,  /* "n": --mem per node (older ReqMem) */
    SLT_MEM_PER_CPU,   /* "c": --mem-per-cpu (older ReqMem) */
};

struct slt_memory {
    bool has;      /* false: the field was empty */
    int64_t bytes; /* >= 0 */
    enum slt_mem_scope scope;
};

/* Parse text[0..n); bare_unit_bytes (1, 1024, 1048576, ...) is the unit of a number without
 * suffix.  field names the column in errors.  Returns 0, or -1 with ALLOT_EINVAL naming field
 * and text; *out untouched on error. */
int slt_memory_parse(const char *text, size_t n, const char *field, int64_t bare_unit_bytes,
                     struct slt_memory *out, struct allot_error *err);

/* Write m exactly: the largest binary suffix that divides bytes ("4000M", "1528K"), else bare
 * bytes, then "n"/"c" for the scope; "" when !has.  Re-parsing with bare_unit_bytes = 1 gives
 * m back.  Returns the length, or -1 with ALLOT_ETOOBIG (buf untouched); 32 bytes suffice. */
int slt_memory_format(const struct slt_memory *m, char *buf, size_t len, struct allot_error *err);

#endif
