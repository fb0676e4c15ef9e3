/* SPDX-License-Identifier: GPL-3.0-or-later */
/* store_fault.c - the fault injectors of store_fault.h (test builds only; empty otherwise).
 *
 * db layer: the armed connection's `ops` pointer is replaced by a copy of its driver's table
 * whose fallible calls first pass through fault_due(); every other member forwards
 * unchanged, and the driver's own structs are untouched, so disarming is one pointer store.
 * SQLite layer: a VFS whose files embed the real file after our header; only xWrite and xSync
 * of the main database, WAL and rollback journal consult the plan, everything else forwards.
 */
#include "libstore/store_fault.h"

#ifdef ALLOT_TEST
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libstore/store_int.h"

/* ---- db layer ------------------------------------------------------------------------- */

/* Test-build fault state (STYLE §2): one armed connection at a time. */
static struct {
    store_t *st;
    const struct db_ops *real;
    struct db_ops ops;
    long nth, calls, hits;
    int persistent, suspended;
    enum allot_errnum code;
    /* ROLLBACK statements prepared while armed: never failed (see store_fault.h). */
    db_stmt_t *exempt[2 * STORE_SAVEPOINT_MAX + 2];
    int n_exempt;
} fdb;

static int fault_due(const char *what, struct allot_error *err)
{
    if (fdb.suspended)
        return 0;
    long n = ++fdb.calls;
    if (n == fdb.nth || (fdb.persistent && n > fdb.nth)) {
        fdb.hits++;
        allot_errorf(err, fdb.code, "store fault: injected failure of db call %ld (%s)", n, what);
        return 1;
    }
    return 0;
}

static int is_exempt(db_stmt_t *s)
{
    for (int i = 0; i < fdb.n_exempt; i++)
        if (fdb.exempt[i] == s)
            return 1;
    return 0;
}

static int f_exec(db_t *db, const char *sql, struct allot_error *err)
{
    if (strncmp(sql, "ROLLBACK", 8) != 0 && fault_due("exec", err))
        return -1;
    return fdb.real->exec(db, sql, err);
}

static int f_begin(db_t *db, struct allot_error *err)
{
    if (fault_due("begin", err))
        return -1;
    return fdb.real->begin(db, err);
}

static int f_table_exists(db_t *db, const char *table, int *exists, struct allot_error *err)
{
    if (fault_due("table_exists", err))
        return -1;
    return fdb.real->table_exists(db, table, exists, err);
}

static db_stmt_t *f_prepare(db_t *db, const char *sql, struct allot_error *err)
{
    int rollback = strncmp(sql, "ROLLBACK", 8) == 0;
    if (!rollback && fault_due("prepare", err))
        return NULL;
    db_stmt_t *s = fdb.real->prepare(db, sql, err);
    if (s && rollback && fdb.n_exempt < (int)(sizeof fdb.exempt / sizeof fdb.exempt[0]))
        fdb.exempt[fdb.n_exempt++] = s;
    return s;
}

static int f_step(db_stmt_t *s, struct allot_error *err)
{
    if (!is_exempt(s) && fault_due("step", err))
        return -1;
    return fdb.real->step(s, err);
}

static void f_finalize(db_stmt_t *s)
{
    for (int i = 0; i < fdb.n_exempt; i++)
        if (fdb.exempt[i] == s)
            fdb.exempt[i] = fdb.exempt[--fdb.n_exempt];
    fdb.real->finalize(s);
}

int store_fault_arm(store_t *st, long nth, int persistent, enum allot_errnum code,
                    struct allot_error *err)
{
    if (nth < 1)
        return allot_errorf(err, ALLOT_EINVAL, "store_fault_arm: nth must be >= 1");
    if (fdb.st && fdb.st != st)
        return allot_errorf(err, ALLOT_EINVAL, "store_fault_arm: another store is armed");
    if (!fdb.st) {
        fdb.st = st;
        fdb.real = st->db->ops;
        fdb.ops = *fdb.real;
        fdb.ops.exec = f_exec;
        fdb.ops.begin = f_begin;
        fdb.ops.table_exists = f_table_exists;
        fdb.ops.prepare = f_prepare;
        fdb.ops.step = f_step;
        fdb.ops.finalize = f_finalize;
        fdb.n_exempt = 0;
        st->db->ops = &fdb.ops;
    }
    fdb.nth = nth;
    fdb.persistent = persistent;
    fdb.code = code;
    fdb.calls = fdb.hits = 0;
    fdb.suspended = 0;
    return 0;
}

void store_fault_disarm(store_t *st)
{
    if (!st || fdb.st != st)
        return;
    st->db->ops = fdb.real;
    fdb.st = NULL;
    fdb.real = NULL;
    fdb.n_exempt = 0;
    fdb.suspended = 0;
}

void store_fault_suspend(int on)
{
    fdb.suspended = on;
}

long store_fault_hits(void)
{
    return fdb.hits;
}

/* ---- SQLite VFS shim ------------------------------------------------------------------ */

/* Test-build fault state (STYLE §2): the wrapped VFS and the one plan. */
static struct {
    sqlite3_vfs vfs;
    sqlite3_vfs *real;
    int installed;
    enum store_fault_io what;
    long nth, calls, hits;
    int persistent, code;
} fvfs;

struct fault_file {
    sqlite3_file base; /* first: SQLite sees this */
    int watched;       /* main db, WAL or journal */
    /* the real VFS's file follows (szOsFile bytes) */
};

static sqlite3_file *real_file(sqlite3_file *f)
{
    return (sqlite3_file *)((struct fault_file *)f + 1);
}

static int vfs_due(sqlite3_file *f, enum store_fault_io what)
{
    if (!((struct fault_file *)f)->watched || fvfs.nth == 0 || fvfs.what != what)
        return 0;
    long n = ++fvfs.calls;
    if (n == fvfs.nth || (fvfs.persistent && n > fvfs.nth)) {
        fvfs.hits++;
        return 1;
    }
    return 0;
}

static int ff_close(sqlite3_file *f)
{
    sqlite3_file *r = real_file(f);
    return r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
}
static int ff_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    return real_file(f)->pMethods->xRead(real_file(f), buf, n, off);
}
static int ff_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    if (vfs_due(f, STORE_FAULT_WRITE))
        return fvfs.code;
    return real_file(f)->pMethods->xWrite(real_file(f), buf, n, off);
}
static int ff_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return real_file(f)->pMethods->xTruncate(real_file(f), size);
}
static int ff_sync(sqlite3_file *f, int flags)
{
    if (vfs_due(f, STORE_FAULT_SYNC))
        return fvfs.code;
    return real_file(f)->pMethods->xSync(real_file(f), flags);
}
static int ff_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return real_file(f)->pMethods->xFileSize(real_file(f), size);
}
static int ff_lock(sqlite3_file *f, int lock)
{
    return real_file(f)->pMethods->xLock(real_file(f), lock);
}
static int ff_unlock(sqlite3_file *f, int lock)
{
    return real_file(f)->pMethods->xUnlock(real_file(f), lock);
}
static int ff_check_reserved(sqlite3_file *f, int *out)
{
    return real_file(f)->pMethods->xCheckReservedLock(real_file(f), out);
}
static int ff_file_control(sqlite3_file *f, int op, void *arg)
{
    return real_file(f)->pMethods->xFileControl(real_file(f), op, arg);
}
static int ff_sector_size(sqlite3_file *f)
{
    return real_file(f)->pMethods->xSectorSize(real_file(f));
}
static int ff_device_chars(sqlite3_file *f)
{
    return real_file(f)->pMethods->xDeviceCharacteristics(real_file(f));
}
static int ff_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
    return real_file(f)->pMethods->xShmMap(real_file(f), pg, pgsz, extend, pp);
}
static int ff_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return real_file(f)->pMethods->xShmLock(real_file(f), off, n, flags);
}
static void ff_shm_barrier(sqlite3_file *f)
{
    real_file(f)->pMethods->xShmBarrier(real_file(f));
}
static int ff_shm_unmap(sqlite3_file *f, int del)
{
    return real_file(f)->pMethods->xShmUnmap(real_file(f), del);
}
static int ff_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
    return real_file(f)->pMethods->xFetch(real_file(f), off, n, pp);
}
static int ff_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return real_file(f)->pMethods->xUnfetch(real_file(f), off, p);
}

/* The methods of each version: a real file with an older table gets the matching prefix. */
#define FF_METHODS_V1                                                                              \
    .xClose = ff_close, .xRead = ff_read, .xWrite = ff_write, .xTruncate = ff_truncate,            \
    .xSync = ff_sync, .xFileSize = ff_file_size, .xLock = ff_lock, .xUnlock = ff_unlock,           \
    .xCheckReservedLock = ff_check_reserved, .xFileControl = ff_file_control,                      \
    .xSectorSize = ff_sector_size, .xDeviceCharacteristics = ff_device_chars
#define FF_METHODS_V2                                                                              \
    FF_METHODS_V1, .xShmMap = ff_shm_map, .xShmLock = ff_shm_lock, .xShmBarrier = ff_shm_barrier,  \
                   .xShmUnmap = ff_shm_unmap
static const sqlite3_io_methods ff_methods = {
    .iVersion = 3, FF_METHODS_V2, .xFetch = ff_fetch, .xUnfetch = ff_unfetch};
static const sqlite3_io_methods ff_methods_v2 = {.iVersion = 2, FF_METHODS_V2};
static const sqlite3_io_methods ff_methods_v1 = {.iVersion = 1, FF_METHODS_V1};
#undef FF_METHODS_V2
#undef FF_METHODS_V1

static int fv_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    (void)vfs;
    struct fault_file *p = (struct fault_file *)f;
    sqlite3_file *r = real_file(f);
    memset(p, 0, sizeof *p);
    p->watched = (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) != 0;
    int rc = fvfs.real->xOpen(fvfs.real, name, r, flags, out_flags);
    /* SQLite calls xClose when pMethods is set, even after a failed open. */
    if (r->pMethods) {
        int v = r->pMethods->iVersion;
        p->base.pMethods = v >= 3 ? &ff_methods : v == 2 ? &ff_methods_v2 : &ff_methods_v1;
    }
    return rc;
}

int store_fault_vfs_install(struct allot_error *err)
{
    if (fvfs.installed)
        return 0;
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real)
        return allot_errorf(err, ALLOT_EIO, "store fault: no default SQLite VFS");
    fvfs.real = real;
    fvfs.vfs = *real; /* every other method forwards to the real VFS with its own pAppData */
    fvfs.vfs.pNext = NULL;
    fvfs.vfs.zName = "allot-fault";
    fvfs.vfs.szOsFile = (int)sizeof(struct fault_file) + real->szOsFile;
    fvfs.vfs.xOpen = fv_open;
    int rc = sqlite3_vfs_register(&fvfs.vfs, 1);
    if (rc != SQLITE_OK)
        return allot_errorf(err, ALLOT_EIO, "store fault: registering the VFS: %s",
                            sqlite3_errstr(rc));
    fvfs.installed = 1;
    return 0;
}

void store_fault_vfs_arm(enum store_fault_io what, long nth, int persistent, int sqlite_code)
{
    fvfs.what = what;
    fvfs.nth = nth;
    fvfs.persistent = persistent;
    fvfs.code = sqlite_code;
    fvfs.calls = fvfs.hits = 0;
}

long store_fault_vfs_hits(void)
{
    return fvfs.hits;
}

/* ---- lost COMMIT answers --------------------------------------------------------------- */

/* Test-build fault state (STYLE §2): the trigger file, and whether the last lost answer
 * asked the driver to wait. */
static struct {
    char path[512];
    int wait;
} flost;

void store_fault_commit_lost_arm(const char *path)
{
    snprintf(flost.path, sizeof flost.path, "%s", path ? path : "");
    flost.wait = 0;
}

int store_fault_commit_lost_due(int step_tx)
{
    if (!flost.path[0])
        return 0;
    FILE *f = fopen(flost.path, "r");
    if (!f)
        return 0;
    char line[64] = "";
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    fclose(f);
    if ((strstr(line, "batch") && !step_tx) || (strstr(line, "commit") && step_tx))
        return 0; /* meant for the other kind of COMMIT */
    flost.wait = strstr(line, "wait") != NULL;
    return unlink(flost.path) == 0; /* one fault per file */
}

void store_fault_commit_lost_wait(void)
{
    if (!flost.wait)
        return;
    flost.wait = 0;
    char lost[sizeof flost.path + 8], go[sizeof flost.path + 8];
    snprintf(lost, sizeof lost, "%s.lost", flost.path);
    snprintf(go, sizeof go, "%s.go", flost.path);
    FILE *f = fopen(lost, "w");
    if (f)
        fclose(f);
    const struct timespec tick = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 3000 && access(go, F_OK) != 0; i++)
        nanosleep(&tick, NULL);
    unlink(go);
    unlink(lost);
}
#endif
