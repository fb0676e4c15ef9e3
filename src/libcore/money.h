/* SPDX-License-Identifier: GPL-3.0-or-later */
/* money.h - service-unit arithmetic (doc/design.md §3.1): amounts, charges and holds in SU-minutes.
 *
 * Design: every amount is an int64 count of SU-minutes (`_sumin`); one SU is one billing unit
 * for one hour, so 1 SU = 60 SU-minutes.  No floating point anywhere: amounts typed by people
 * are read exactly or refused, and charges are computed with a 128-bit intermediate and one
 * rounding, upwards, per charge (HADM core-minute round-up: 55 core-seconds cost 1 minute).
 * Billing rates come from billing.h as micro-units (`_micro`, 1 billing unit = 1,000,000).
 * Every arithmetic helper reports overflow instead of wrapping.
 * Thread rule: pure functions, reentrant.
 */
#ifndef ALLOT_LIBCORE_MONEY_H
#define ALLOT_LIBCORE_MONEY_H

#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"

#define MONEY_SUMIN_PER_SU 60
#define MONEY_FORMAT_MAX 32 /* enough for any int64 amount: "-153722867280912930h7m" */

/* Parse a non-negative amount typed by a person into SU-minutes.
 * Accepted: "<hours>h" ("100000h", "1.5h" = 90), "<minutes>m" ("250m"), "<H>h<M>m" with
 * M < 60 ("12h30m"), and a bare number, read as HOURS ("2" = 120, "0.5" = 30).  Hours may
 * carry a decimal fraction only if it is a whole number of minutes ("0.05h" = 3 min,
 * "0.01h" is refused); minutes must be whole.  No spaces, signs or exponents.
 * Errors: ALLOT_EINVAL naming the problem (syntax, negative, fraction of a minute, overflow);
 * *out untouched on error. */
int money_parse_sumin(const char *s, int64_t *out, struct allot_error *err);

/* As money_parse_sumin, but a leading '-' or '+' is allowed (ledger adjustments). */
int money_parse_signed_sumin(const char *s, int64_t *out, struct allot_error *err);

/* Write sumin exactly as hours and minutes with unit suffixes: 90000 -> "1500h",
 * 750 -> "12h30m", -3 -> "-3m", 0 -> "0h".  money_parse_signed_sumin() reads it back.
 * Returns 0, or -1 when buf (len bytes) is too small; buf is then untouched. */
int money_format_sumin(int64_t sumin, char *buf, size_t len);

/* Write a time limit in seconds as the factor of a cost: 7200 -> "120 min", 7230 ->
 * "120 min 30 s" (the parts of a hold must multiply to it, so no rounding).  Returns 0, or -1
 * when buf (len bytes) is too small or seconds is negative; buf is then untouched. */
int money_format_limit(int64_t seconds, char *buf, size_t len);

/* Checked arithmetic: *out = a op b, or -1 (out untouched) on int64 overflow. */
int money_add(int64_t a, int64_t b, int64_t *out);
int money_sub(int64_t a, int64_t b, int64_t *out);
int money_mul(int64_t a, int64_t b, int64_t *out);

/* Charge of a job run (doc/design.md §3.3): ceil(billing x elapsed seconds / 60) SU-minutes, with
 * billing in micro-units, i.e. ceil(billing_micro * elapsed_s / 60e6) computed in 128 bits.
 * 0 s costs 0; 1 billing unit for 60 s costs 1, for 61 s costs 2.
 * Errors: ALLOT_EINVAL for negative inputs or a result above INT64_MAX; out untouched. */
int money_charge_sumin(int64_t billing_micro, int64_t elapsed_s, int64_t *out,
                       struct allot_error *err);

/* Hold of a job run (doc/design.md §3.3): the same rule applied to the time limit in seconds. */
int money_hold_sumin(int64_t billing_micro, int64_t time_limit_s, int64_t *out,
                     struct allot_error *err);

/* 1 when a run that ended in Slurm state slurm_state costs nothing (doc/design.md §3.3:
 * NODE_FAIL, alone or followed by " by ..."), else 0.  The settle and the what-if replay
 * both ask here. */
int money_state_free(const char *slurm_state);

#endif
