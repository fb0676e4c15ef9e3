/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db_sqlite_mem.h - SQLite's memory allocator: per-thread free lists by size class
 * (db_sqlite_mem.c).  Internal to libstore. */
#ifndef ALLOT_LIBSTORE_DB_SQLITE_MEM_H
#define ALLOT_LIBSTORE_DB_SQLITE_MEM_H

#include <stddef.h>

/* Make SQLite allocate through db_sqlite_mem_*, once per process, before SQLite initializes
 * (it must be called before any other SQLite call).
 * Returns 1 if installed, 0 if not: under valgrind (which then sees SQLite's own mallocs),
 * when SQLite was already initialized, or as ALLOT_SQLITE_MEM says ("malloc": never,
 * "lists": under valgrind too).  Thread-safe. */
int db_sqlite_mem_install(void);

/* The methods themselves, for the unit test (they work whether or not installed).  n > 0. */
void *db_sqlite_mem_malloc(int n);
void db_sqlite_mem_free(void *p);
void *db_sqlite_mem_realloc(void *p, int n);
int db_sqlite_mem_size(void *p);
int db_sqlite_mem_roundup(int n);
/* Blocks the calling thread keeps on its free lists, and giving them all back to free(). */
size_t db_sqlite_mem_cached(void);
void db_sqlite_mem_flush(void);

#endif
