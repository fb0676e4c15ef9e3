/* SPDX-License-Identifier: GPL-3.0-or-later */
/* args.h - the CLI's argument syntax: `key=value` words and the value types people type
 * (amounts with h/m suffixes, dates, Slurm time limits, booleans).
 *
 * Design: parsing is separate from dispatch so each rule is unit-tested with tables
 * (src/cli/test/args.c).  Every parser leaves its output untouched on error and names the
 * key in the message ("start: expected YYYY-MM-DD ..."), which the CLI prints after
 * "allot: error: " and maps to exit status 2 (ALLOT_EINVAL).
 * Thread rule: reentrant, no globals.
 */
#ifndef ALLOT_CLI_ARGS_H
#define ALLOT_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

#define ARGS_MAX_KV 64

/* One `key=value` word, split in place: key and value point into the argv string. */
struct kv {
    char key[64]; /* lower-cased copy of the key */
    const char *value;
    int used; /* set by the consumer; unused pairs are reported as unknown keys */
};

struct kvlist {
    struct kv kv[ARGS_MAX_KV];
    int n;
};

/* Split argv[0..argc) into positional words (pos, at most max_pos, in order) and key=value
 * pairs (kvs).  A word is a pair when it contains '=' after a non-empty key of
 * [A-Za-z0-9_]; keys are case-insensitive (sacctmgr's habit).  A repeated key, a pair with
 * an empty key, more than ARGS_MAX_KV pairs or more than max_pos positional words are
 * EINVAL.  Strings are borrowed from argv. */
int args_split(int argc, char **argv, const char **pos, int max_pos, int *npos, struct kvlist *kvs,
               struct allot_error *err);

/* The value of key (lower case) or NULL; marks the pair used. */
const char *args_get(struct kvlist *kvs, const char *key);

/* EINVAL naming the first pair nobody used ("unknown key 'foo' for 'account add'"). */
int args_check_used(const struct kvlist *kvs, const char *what, struct allot_error *err);

/* An amount people type ("100000h", "90m", "1.5h", "12h30m"; money_parse_sumin), as
 * SU-minutes.  signed_ok: a leading '+'/'-' is allowed (adjustments). */
int args_amount(const char *key, const char *s, int signed_ok, int64_t *sumin,
                struct allot_error *err);

/* A UTC time: "YYYY-MM-DD" (midnight), "YYYY-MM-DDTHH:MM[:SS][Z]" (also with a space in
 * place of 'T'), or epoch seconds ("1767225600").  Range 1970..9999. */
int args_time(const char *key, const char *s, int64_t *epoch_s, struct allot_error *err);

/* A time limit in Slurm's syntax, as seconds: "MM", "MM:SS", "HH:MM:SS", "D-HH",
 * "D-HH:MM", "D-HH:MM:SS"; or "<N>s" for plain seconds.  Must be > 0, at most 366 days
 * (D up to 365: a year, leap years too). */
int args_duration(const char *key, const char *s, int64_t *seconds, struct allot_error *err);

/* The same syntax for an elapsed time: 0 ("0", "00:00:00", "0s") is allowed. */
int args_elapsed(const char *key, const char *s, int64_t *seconds, struct allot_error *err);

/* A partition's DefaultTime or MaxTime: args_duration's syntax, or UNLIMITED, INFINITE,
 * NONE (any case) or an empty value for "no limit", as -1. */
int args_timelimit(const char *key, const char *s, int64_t *seconds, struct allot_error *err);

/* A non-negative decimal integer up to INT64_MAX (ids, counts, shares). */
int args_uint(const char *key, const char *s, int64_t *out, struct allot_error *err);

/* yes|no|true|false|1|0|on|off, case-insensitive. */
int args_bool(const char *key, const char *s, int *out, struct allot_error *err);

/* A decimal factor ("1", "1.5", "0.25"): digits with at most 6 decimals. */
int args_decimal(const char *key, const char *s, struct allot_error *err);

/* Format epoch seconds as "YYYY-MM-DDTHH:MM:SSZ" into buf (at least 21 bytes). */
void args_format_time(int64_t epoch_s, char *buf, size_t len);

#endif
