/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tres.h - Slurm TRES lists ("cpu=4,mem=4000M,gres/gpu:a100=2,node=1") as fixed-size values.
 *
 * Design: a list is a plain struct (no allocation) kept in one canonical order at all times,
 * Slurm's TRES id order: cpu, mem, energy, node, billing, fs/<x>, vmem, pages, gres/<x>,
 * license/<x>, bb/<x>, ic/<x>; entries of one type sorted by name.  Because parse and set
 * keep that order, parse(format(x)) == x and two equal lists compare equal member by member.
 * Names are stored lowercase; memory counts are MiB (Slurm's base unit for mem).
 * Invariants: 0 <= n <= TRES_LIST_MAX, names unique and valid, counts >= 0.
 * Thread rule: plain data; functions are reentrant.
 */
#ifndef ALLOT_LIBCORE_TRES_H
#define ALLOT_LIBCORE_TRES_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

#define TRES_NAME_MAX 48
#define TRES_LIST_MAX 24

struct tres_item {
    char name[TRES_NAME_MAX]; /* lowercase: "cpu", "mem", "gres/gpu:a100", "license/foo" */
    int64_t count;            /* mem in MiB; others in their own unit */
};

struct tres_list {
    int n;
    struct tres_item item[TRES_LIST_MAX];
};

/* Parse a Slurm TRES string into *out.  Names are case-insensitive and stored lowercase;
 * valid names: cpu, mem, energy, node, billing, vmem, pages, and fs/, gres/, license/, bb/,
 * ic/ followed by [a-z0-9_.:-]+.  mem takes a K/M/G/T suffix (K rounds up to whole MiB; no
 * suffix = MiB).  "" gives n = 0.  Errors: ALLOT_EINVAL for syntax, unknown names, duplicates,
 * negative counts, overflow; ALLOT_ETOOBIG for more than TRES_LIST_MAX items.  *out is
 * untouched on error. */
int tres_parse(const char *s, struct tres_list *out, struct allot_error *err);

/* Write l in canonical order, mem with an "M" suffix ("cpu=4,mem=4000M,node=1") into buf.
 * Errors: ALLOT_ETOOBIG when buf (len bytes with the NUL) is too small, ALLOT_EINVAL for an
 * invalid list; buf is then left as it was. */
int tres_format(const struct tres_list *l, char *buf, size_t len, struct allot_error *err);

/* Count of the TRES named name (exact, lowercase), or -1 if absent. */
int64_t tres_get(const struct tres_list *l, const char *name);

/* Set name (case-insensitive) to count >= 0, inserting it in canonical order if absent.
 * Errors: ALLOT_EINVAL (bad name, negative count), ALLOT_ETOOBIG (list full); l untouched. */
int tres_set(struct tres_list *l, const char *name, int64_t count, struct allot_error *err);

/* Check and lowercase a TRES name into out (TRES_NAME_MAX bytes).  Returns 0 or -1 with
 * ALLOT_EINVAL; out untouched on error.  Exposed for billing weights and limits. */
int tres_name_canon(const char *name, size_t len, char out[TRES_NAME_MAX], struct allot_error *err);

/* Rank of a canonical name in Slurm's order (0 = cpu ...); used to sort. */
int tres_rank(const char *name);

#endif
