/* SPDX-License-Identifier: GPL-3.0-or-later */
/* numparse.h - exact number scanning shared by libcore's parsers (money, billing, limits).
 *
 * Design: every function scans a bounded slice [s, s+len) that must be consumed whole, so
 * callers split their own syntax ("1.5h", "cpu=4") and hand over only the digits.  Numbers are
 * decimal, unsigned (callers handle a sign), without spaces, exponents or locale; fractions are
 * read into fixed point exactly or refused, never rounded.  Pure: no I/O, no globals.
 * Thread rule: reentrant.
 */
#ifndef ALLOT_LIBCORE_NUMPARSE_H
#define ALLOT_LIBCORE_NUMPARSE_H

#include <stddef.h>
#include <stdint.h>

/* Read "[0-9]+" from s[0..len) into *out.  Returns 0, or -1 (out untouched) when the slice
 * is empty, holds anything but digits, or exceeds INT64_MAX. */
int numparse_uint(const char *s, size_t len, int64_t *out);

/* Read "D+[.D*]" or ".D+" from s[0..len) as fixed point with `scale` decimal digits after
 * the point (0 <= scale <= 18): "1.5" at scale 6 gives 1500000.  Returns 0, or -1 (out
 * untouched) for syntax errors, more fraction digits than scale that are not zeros, or a
 * result above INT64_MAX. */
int numparse_fixed(const char *s, size_t len, int scale, int64_t *out);

/* Write the fixed-point value v (scale digits after the point, v >= 0) as the shortest
 * exact decimal ("1.5", "2", "0.03125") into buf.  Returns the length, or -1 when buf is
 * too small (buf then holds ""). */
int numparse_format_fixed(int64_t v, int scale, char *buf, size_t len);

#endif
