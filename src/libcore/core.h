/* SPDX-License-Identifier: GPL-3.0-or-later */
/* core.h - libcore: bank rules, pure and I/O-free (no files, sockets, clocks or globals). */
#ifndef ALLOT_CORE_H
#define ALLOT_CORE_H

/* Static version string of the library. */
const char *core_version(void);

#endif
