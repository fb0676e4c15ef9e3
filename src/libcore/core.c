/* SPDX-License-Identifier: GPL-3.0-or-later */
/* core.c - libcore's version string; the bank rules live in one module per concern. */
#include "libcore/core.h"

const char *core_version(void)
{
    return "0.1.0";
}
