/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import.h - the walk of POST /v1/import/slurm (api_import.c), apart from its HTTP
 * handler (api_slurm.c) so the handler's body checks and the walk stay small. */
#ifndef ALLOT_ALLOTD_API_IMPORT_H
#define ALLOT_ALLOTD_API_IMPORT_H

#include <jansson.h>
#include <stddef.h>

#include "allot/error.h"
#include "libstore/store.h"

struct import_input {
    const char *dump; /* `sacctmgr dump` text */
    size_t dump_len;
    const char *qos; /* `sacctmgr show qos -P` text with its header, or NULL */
    size_t qos_len;
    const char *cluster;    /* import under this cluster name; NULL: the dump's */
    const char *partitions; /* `scontrol show partition -o` text, or NULL */
    size_t partitions_len;
    const char *priority_flags; /* slurm.conf's PriorityFlags (MAX_TRES), or NULL */
};

/* Compare the input with the bank and, when apply is 1, write the difference (the caller
 * runs it in one write op, so an error leaves nothing written).  On success *reply is
 * {"cluster","dry_run","changed","changes":[..],"notes":[..],"read":{..}}.  Errors name the
 * dump's line ("line 17: ..."), the QOS text's ("qos line 3: ...") or the partitions'
 * ("partition line 2: ..."). */
int import_slurm_walk(store_t *st, const struct import_input *in, int apply, json_t **reply,
                      struct allot_error *err);

#endif
