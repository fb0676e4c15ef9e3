/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * submit_token.h - hold-at-submit tokens (doc/slurm.md "Hold at submit"): making them in
 * job_submit/allot and carrying them in a job's AdminComment as the word "allot_token=T".
 *
 * Design: a token is (time_s << 20) | sub-second part, in [2^32, 2^62], so it never
 * equals a 32-bit Slurm job id.  The sub-second part starts at the current microsecond
 * and each token is at least the previous one + 1: tokens are unique within one
 * slurmctld (job_submit calls are serialised) and, since a restart takes far longer than
 * a microsecond per token made before it, across restarts too.
 * AdminComment is free text an administrator may also use, so the token is one
 * space-separated word in it; parsing is strict (digits only, in range, exactly once) and
 * job_submit removes any such word it did not write itself before adding its own.
 * No Slurm headers: both plugins and the unit tests use it.
 * Threads: reentrant; the caller serialises calls sharing one *last.
 */
#ifndef ALLOT_PLUGINS_COMMON_SUBMIT_TOKEN_H
#define ALLOT_PLUGINS_COMMON_SUBMIT_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define SUBMIT_TOKEN_KEY "allot_token="
#define SUBMIT_TOKEN_MIN ((int64_t)1 << 32)
#define SUBMIT_TOKEN_MAX ((int64_t)1 << 62)

/*
 * submit_token_next - a new token for time NOW_S (epoch seconds) and NOW_US (0..999999),
 * greater than *LAST (0 at first); updates *LAST.  Always in [SUBMIT_TOKEN_MIN,
 * SUBMIT_TOKEN_MAX] for any real clock (NOW_S >= 4096).
 */
int64_t submit_token_next(int64_t *last, int64_t now_s, int64_t now_us);

/*
 * submit_token_parse - the token in admin comment TEXT (NULL = none).
 * Returns 1 with *TOKEN set, 0 when TEXT has no "allot_token=" word, -1 when it has one
 * that is malformed (not all digits, out of range) or more than one (never trusted).
 */
int submit_token_parse(const char *text, int64_t *token);

/*
 * submit_token_annotate - TEXT (NULL = empty) without any "allot_token=" word (its other
 * words kept in order, separated by one space), then
 * "allot_token=TOKEN" appended (space-separated) when TOKEN != 0, into OUT (SIZE bytes).
 * Returns the length written, or -1 when it does not fit (OUT is then "").
 */
int submit_token_annotate(const char *text, int64_t token, char *out, size_t size);

#endif
