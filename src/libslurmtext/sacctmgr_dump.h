/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacctmgr_dump.h - the file `sacctmgr dump CLUSTER file=F` writes and `sacctmgr load` reads.
 *
 * A dump is lines of the form
 *     Cluster - 'test':DefaultQOS='normal':Fairshare=1:QOS='high,normal'
 *     Parent - 'root'
 *     Account - 'chem':Description='chemistry':Organization='sci':Fairshare=10:GrpTRES=cpu=8
 *     User - 'alice':DefaultAccount='chem':Fairshare=1:MaxJobs=4
 * plus '#' comments and blank lines.  A record is a kind, a name and `:Key=Value` options;
 * a value is either quoted with ' or " (Slurm writes quoted values without quotes inside)
 * or runs to the next ':'.  Account and User lines belong to the account of the last
 * Parent line.  slt_dump_line_parse splits one line; slt_dump_next walks a buffer and tracks
 * the Parent, so a caller gets every record with its line number and parent and can say
 * where a bad one is.  Keys are kept as written (the reader of a record matches them
 * case-insensitively, as sacctmgr does).
 * Design: no allocation; spans borrow from the caller's buffer.
 * Thread rule: pure; reentrant.
 */
#ifndef ALLOT_LIBSLURMTEXT_SACCTMGR_DUMP_H
#define ALLOT_LIBSLURMTEXT_SACCTMGR_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "libslurmtext/field.h"

#define SLT_DUMP_OPTS_MAX 48

enum slt_dump_kind { SLT_DUMP_CLUSTER = 0, SLT_DUMP_PARENT, SLT_DUMP_ACCOUNT, SLT_DUMP_USER };

struct slt_dump_opt {
    struct slt_span key;
    struct slt_span value; /* without its quotes */
};

struct slt_dump_record {
    enum slt_dump_kind kind;
    struct slt_span name;
    size_t n;
    struct slt_dump_opt opt[SLT_DUMP_OPTS_MAX];
};

/* Parse one line.  Returns 1 with *out set, 0 for a blank or comment line (out untouched),
 * or -1 with ALLOT_EINVAL saying what is wrong (unknown kind, no quoted name, an option
 * without '=', an empty key, an unterminated quote, a key given twice, more than
 * SLT_DUMP_OPTS_MAX options); out untouched then. */
int slt_dump_line_parse(struct slt_span line, struct slt_dump_record *out, struct allot_error *err);

/* "Cluster", "Parent", "Account", "User". */
const char *slt_dump_kind_name(enum slt_dump_kind k);

/* Walking a whole dump.  Start with slt_dump_cursor_init; each slt_dump_next gives the next
 * record with its 1-based line number and the account its Account/User line is under (the
 * last Parent; empty before one).  Returns 1, 0 at the end, or -1 with the error prefixed
 * "line N: " (a dump without a Cluster line: "no Cluster line in the dump (N lines read)").  A
 * Parent line is returned too (its parent is itself).  Structural rules checked here: the first
 * record is the Cluster line and there is one; an Account or User line needs a Parent before it; a
 * line is at most 64 KiB. */
struct slt_dump_cursor {
    const char *buf;
    size_t len, pos;
    long line;
    int seen_cluster;
    struct slt_span parent;
};

void slt_dump_cursor_init(struct slt_dump_cursor *c, const char *buf, size_t len);
int slt_dump_next(struct slt_dump_cursor *c, struct slt_dump_record *out, long *line,
                  struct slt_span *parent, struct allot_error *err);

#endif
