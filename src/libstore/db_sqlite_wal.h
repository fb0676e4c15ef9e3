/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db_sqlite_wal.h - the SQLite VFS that gathers a commit's WAL writes (db_sqlite_wal.c).
 * Internal to libstore. */
#ifndef ALLOT_LIBSTORE_DB_SQLITE_WAL_H
#define ALLOT_LIBSTORE_DB_SQLITE_WAL_H

#define DB_SQLITE_VFS "allot"

/* Register the VFS DB_SQLITE_VFS (once per process, not as the default).  Returns
 * SQLITE_OK, or an SQLite error code when the default VFS cannot be wrapped (the caller
 * then opens with the default VFS).  Thread-safe. */
int db_sqlite_vfs_register(void);

#endif
