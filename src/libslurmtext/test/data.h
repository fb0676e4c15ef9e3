/* SPDX-License-Identifier: GPL-3.0-or-later */
/* data.h - load a file of test/data/ (real Slurm output) for the unit tests.  The directory
 * comes from SLURMTEXT_DATA (set by CMake) so tests run from any working directory. */
#ifndef ALLOT_LIBSLURMTEXT_TEST_DATA_H
#define ALLOT_LIBSLURMTEXT_TEST_DATA_H

#include <stdio.h>
#include <stdlib.h>

/* Whole file as a malloc'd NUL-terminated buffer (caller frees); aborts the test if absent. */
static inline char *data_load(const char *name, size_t *len)
{
    const char *dir = getenv("SLURMTEXT_DATA");
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir ? dir : "test/data", name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        abort();
    }
    char *buf = malloc(1 << 20);
    if (!buf)
        abort();
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

#endif
