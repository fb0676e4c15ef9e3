/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db_sqlite_wal.c - the "allot" SQLite VFS: the default VFS, except that a commit's writes
 * to the WAL file reach the kernel as one write instead of two per page, and that an
 * exclusive lock of the shared-memory index is refused while its file cannot be written
 * (shm_unwritable: an I/O error instead of a SIGBUS).
 *
 * Why: SQLite writes each WAL frame as a 24-byte header then the page, one pwrite each, so
 * a group commit of a few dozen pages costs ~100 system calls on the writer's serial path
 * (bench/results/bank.md).  Here WAL writes that follow each other in the file are gathered
 * in a per-file buffer and written with one call when the commit frame's page arrives (a
 * frame header whose "database size after commit" field is non-zero marks the commit; WAL
 * format, sqlite.org/fileformat2.html#walformat).  The commit's own xWrite does that final
 * write, so an error (disk full) fails the commit as it would have without the buffer.
 *
 * Invariant: a reader never needs buffered bytes.  Frames become visible to other
 * connections only when the writer publishes a new wal-index header, after its commit
 * frame (already written through); a page spilled in the middle of a transaction is not
 * visible before its commit.  Every other access to the same file (read, size, sync,
 * truncate, file control, close, a write elsewhere) writes the buffer through first, so
 * this connection sees its own writes too.  Files other than WALs pass through.
 * Threads: one sqlite3_file belongs to one connection, used by one thread at a time.
 */
#include "libstore/db_sqlite_wal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define WALBUF_MAX (8 << 20) /* a larger run of writes goes straight through */
/* The unix VFS writes at most 128 KiB - 1 bytes per call (it masks the count with 0x1ffff
 * and reports a short write as a full disk), so a gathered run is written in pieces. */
#define WALBUF_CHUNK ((size_t)124 << 10)

struct walbuf_file {
    sqlite3_file base;  /* first: SQLite sees this */
    sqlite3_file *real; /* the default VFS's file, allocated right after this struct */
    int is_wal;
    unsigned char *buf;
    size_t len, cap;
    sqlite3_int64 off;         /* file offset of buf[0] */
    sqlite3_int64 commit_page; /* offset of the commit frame's page; -1 = none pending */
    const char *name;          /* the database's path (SQLite keeps it until xClose); NULL: none */
    int shm_fd;                /* its -shm file, read-only, for shm_unwritable; -1: not open yet */
    int shm_noflags;           /* the file system keeps no inode flags: nothing to check */
};

static sqlite3_vfs walbuf_vfs;

static struct walbuf_file *wf(sqlite3_file *f)
{
    return (struct walbuf_file *)f;
}

static int flush(struct walbuf_file *p)
{
    if (p->len == 0)
        return SQLITE_OK;
    int rc = SQLITE_OK;
    for (size_t done = 0; done < p->len && rc == SQLITE_OK; done += WALBUF_CHUNK) {
        size_t n = p->len - done < WALBUF_CHUNK ? p->len - done : WALBUF_CHUNK;
        rc =
            p->real->pMethods->xWrite(p->real, p->buf + done, (int)n, p->off + (sqlite3_int64)done);
    }
    p->len = 0;
    p->commit_page = -1;
    return rc;
}

static int x_close(sqlite3_file *f)
{
    struct walbuf_file *p = wf(f);
    int rc = flush(p);
    int rc2 = p->real->pMethods->xClose(p->real);
    if (p->shm_fd >= 0)
        close(p->shm_fd);
    p->shm_fd = -1;
    free(p->buf);
    p->buf = NULL;
    p->len = p->cap = 0;
    return rc != SQLITE_OK ? rc : rc2;
}

static int x_read(sqlite3_file *f, void *dst, int amt, sqlite3_int64 off)
{
    struct walbuf_file *p = wf(f);
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xRead(p->real, dst, amt, off);
}

/* Big-endian 32-bit field of a WAL frame header. */
static unsigned be32(const unsigned char *b)
{
    return (unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3];
}

static int x_write(sqlite3_file *f, const void *src, int amt, sqlite3_int64 off)
{
    struct walbuf_file *p = wf(f);
    int rc;

    if (!p->is_wal)
        return p->real->pMethods->xWrite(p->real, src, amt, off);
    if (p->len && off != p->off + (sqlite3_int64)p->len && (rc = flush(p)) != SQLITE_OK)
        return rc;
    if (p->len + (size_t)amt > p->cap) {
        size_t want = p->cap ? p->cap : 256 * 1024;
        while (want < p->len + (size_t)amt && want < WALBUF_MAX)
            want *= 2;
        unsigned char *nb = want >= p->len + (size_t)amt ? realloc(p->buf, want) : NULL;
        if (!nb) { /* too big to gather, or no memory: write what we have, then this */
            if ((rc = flush(p)) != SQLITE_OK)
                return rc;
            return p->real->pMethods->xWrite(p->real, src, amt, off);
        }
        p->buf = nb;
        p->cap = want;
    }
    if (p->len == 0)
        p->off = off;
    memcpy(p->buf + p->len, src, (size_t)amt);
    p->len += (size_t)amt;
    if (amt == 24 && be32((const unsigned char *)src + 4) != 0) /* a commit frame's header */
        p->commit_page = off + 24;
    else if (off == p->commit_page)
        return flush(p); /* the commit's last write: its outcome is the commit's */
    return SQLITE_OK;
}

static int x_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    struct walbuf_file *p = wf(f);
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xTruncate(p->real, size);
}

static int x_sync(sqlite3_file *f, int flags)
{
    struct walbuf_file *p = wf(f);
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xSync(p->real, flags);
}

static int x_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
    struct walbuf_file *p = wf(f);
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xFileSize(p->real, size);
}

static int x_lock(sqlite3_file *f, int lvl)
{
    return wf(f)->real->pMethods->xLock(wf(f)->real, lvl);
}

static int x_unlock(sqlite3_file *f, int lvl)
{
    return wf(f)->real->pMethods->xUnlock(wf(f)->real, lvl);
}

static int x_check_reserved(sqlite3_file *f, int *out)
{
    return wf(f)->real->pMethods->xCheckReservedLock(wf(f)->real, out);
}

static int x_file_control(sqlite3_file *f, int op, void *arg)
{
    struct walbuf_file *p = wf(f);
    int rc = flush(p);
    return rc != SQLITE_OK ? rc : p->real->pMethods->xFileControl(p->real, op, arg);
}

static int x_sector_size(sqlite3_file *f)
{
    return wf(f)->real->pMethods->xSectorSize(wf(f)->real);
}

static int x_device_characteristics(sqlite3_file *f)
{
    return wf(f)->real->pMethods->xDeviceCharacteristics(wf(f)->real);
}

static int x_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
    return wf(f)->real->pMethods->xShmMap(wf(f)->real, pg, pgsz, extend, pp);
}

/* 1 when the -shm file is immutable or append-only (chattr +i / +a).  SQLite maps it
 * shared; the kernel then refuses the page fault of a store to a page it had written back
 * with SIGBUS, which no error path could catch: the process died without a word.  Every
 * store to the wal-index is made under an exclusive shm lock (the writer's, a reader's
 * read mark, a checkpoint's), so refusing such a lock while the file cannot be written
 * turns the fault into an I/O error of the statement (503, and a retry once the file is
 * writable again).  An ioctl per exclusive lock: once per write transaction. */
static int shm_unwritable(struct walbuf_file *p)
{
    if (!p->name || p->shm_noflags)
        return 0;
    if (p->shm_fd < 0) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s-shm", p->name) >= (int)sizeof path)
            return 0;
        p->shm_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (p->shm_fd < 0)
            return 0; /* not there yet: SQLite creates it, and its errors are its own */
    }
    int fl = 0;
    if (ioctl(p->shm_fd, FS_IOC_GETFLAGS, &fl) < 0) {
        p->shm_noflags = errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL;
        return 0;
    }
    return (fl & (FS_IMMUTABLE_FL | FS_APPEND_FL)) != 0;
}

static int x_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    if ((flags & SQLITE_SHM_LOCK) && (flags & SQLITE_SHM_EXCLUSIVE) && shm_unwritable(wf(f)))
        return SQLITE_IOERR_SHMLOCK;
    return wf(f)->real->pMethods->xShmLock(wf(f)->real, offset, n, flags);
}

/* SQLite calls the shm methods on the database file's handle, never on the WAL's: they
 * have nothing buffered to write. */
static void x_shm_barrier(sqlite3_file *f)
{
    wf(f)->real->pMethods->xShmBarrier(wf(f)->real);
}

static int x_shm_unmap(sqlite3_file *f, int del)
{
    return wf(f)->real->pMethods->xShmUnmap(wf(f)->real, del);
}

static int x_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
    return wf(f)->real->pMethods->xFetch(wf(f)->real, off, amt, pp);
}

static int x_unfetch(sqlite3_file *f, sqlite3_int64 off, void *page)
{
    return wf(f)->real->pMethods->xUnfetch(wf(f)->real, off, page);
}

static const sqlite3_io_methods walbuf_io = {
    .iVersion = 3,
    .xClose = x_close,
    .xRead = x_read,
    .xWrite = x_write,
    .xTruncate = x_truncate,
    .xSync = x_sync,
    .xFileSize = x_file_size,
    .xLock = x_lock,
    .xUnlock = x_unlock,
    .xCheckReservedLock = x_check_reserved,
    .xFileControl = x_file_control,
    .xSectorSize = x_sector_size,
    .xDeviceCharacteristics = x_device_characteristics,
    .xShmMap = x_shm_map,
    .xShmLock = x_shm_lock,
    .xShmBarrier = x_shm_barrier,
    .xShmUnmap = x_shm_unmap,
    .xFetch = x_fetch,
    .xUnfetch = x_unfetch,
};

static sqlite3_vfs *real_vfs(void)
{
    return walbuf_vfs.pAppData;
}

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    struct walbuf_file *p = wf(f);
    (void)vfs;
    memset(p, 0, sizeof(*p));
    p->real = (sqlite3_file *)(p + 1);
    p->commit_page = -1;
    p->is_wal = (flags & SQLITE_OPEN_WAL) != 0;
    p->shm_fd = -1;
    p->name = (flags & SQLITE_OPEN_MAIN_DB) ? name : NULL;
    int rc = real_vfs()->xOpen(real_vfs(), name, p->real, flags, out_flags);
    if (rc != SQLITE_OK || !p->real->pMethods) {
        p->base.pMethods = NULL; /* SQLite calls no method of a file that failed to open */
        return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
    }
    /* Older method tables lack shm/fetch, which walbuf_io forwards (the unix VFS has all). */
    if (p->real->pMethods->iVersion < 3) {
        p->real->pMethods->xClose(p->real);
        p->base.pMethods = NULL;
        return SQLITE_CANTOPEN;
    }
    p->base.pMethods = &walbuf_io;
    return SQLITE_OK;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
    (void)vfs;
    return real_vfs()->xDelete(real_vfs(), name, sync_dir);
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    return real_vfs()->xAccess(real_vfs(), name, flags, out);
}

static int v_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
    (void)vfs;
    return real_vfs()->xFullPathname(real_vfs(), name, n, out);
}

static void *v_dlopen(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    return real_vfs()->xDlOpen(real_vfs(), name);
}

static void v_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
    (void)vfs;
    real_vfs()->xDlError(real_vfs(), n, msg);
}

static void (*v_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
    (void)vfs;
    return real_vfs()->xDlSym(real_vfs(), h, sym);
}

static void v_dlclose(sqlite3_vfs *vfs, void *h)
{
    (void)vfs;
    real_vfs()->xDlClose(real_vfs(), h);
}

static int v_randomness(sqlite3_vfs *vfs, int n, char *out)
{
    (void)vfs;
    return real_vfs()->xRandomness(real_vfs(), n, out);
}

static int v_sleep(sqlite3_vfs *vfs, int us)
{
    (void)vfs;
    return real_vfs()->xSleep(real_vfs(), us);
}

static int v_current_time(sqlite3_vfs *vfs, double *out)
{
    (void)vfs;
    return real_vfs()->xCurrentTime(real_vfs(), out);
}

static int v_last_error(sqlite3_vfs *vfs, int n, char *out)
{
    (void)vfs;
    return real_vfs()->xGetLastError(real_vfs(), n, out);
}

static int v_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
    (void)vfs;
    return real_vfs()->xCurrentTimeInt64(real_vfs(), out);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int register_rc = SQLITE_ERROR;

static void register_vfs(void)
{
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64)
        return;
    walbuf_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct walbuf_file) + real->szOsFile,
        .mxPathname = real->mxPathname,
        .zName = DB_SQLITE_VFS,
        .pAppData = real,
        .xOpen = v_open,
        .xDelete = v_delete,
        .xAccess = v_access,
        .xFullPathname = v_full_pathname,
        .xDlOpen = v_dlopen,
        .xDlError = v_dlerror,
        .xDlSym = v_dlsym,
        .xDlClose = v_dlclose,
        .xRandomness = v_randomness,
        .xSleep = v_sleep,
        .xCurrentTime = v_current_time,
        .xGetLastError = v_last_error,
        .xCurrentTimeInt64 = v_current_time64,
    };
    register_rc = sqlite3_vfs_register(&walbuf_vfs, 0);
}

int db_sqlite_vfs_register(void)
{
    if (pthread_once(&once, register_vfs) != 0)
        return SQLITE_ERROR;
    return register_rc;
}
