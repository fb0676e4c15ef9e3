/* SPDX-License-Identifier: GPL-3.0-or-later */
/* text.h - bounded copies of NUL-terminated text into fixed arrays. */
#ifndef ALLOT_LIBUTIL_TEXT_H
#define ALLOT_LIBUTIL_TEXT_H

#include <stddef.h>

/* Copy src into dst[size] (size >= 1), cut to size - 1 bytes and always terminated: what
 * snprintf(dst, size, "%s", src) does, at a tenth of its cost (it parses the format on every
 * call, ~550 instructions; the bank's writer ran six a settle).  A NULL src copies as ""
 * (glibc's snprintf would write "(null)"; a missing JSON string reads as empty).  Returns 1
 * when src was cut, else 0.  src must not overlap dst. */
int text_copy(char *dst, size_t size, const char *src);

#endif
