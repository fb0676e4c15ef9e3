/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sqlite_wal.c - tests of allot's handling of SQLite's WAL.
 * The "allot" VFS (db_sqlite_wal.c), which gathers a commit's WAL writes into one write: a
 * commit larger than the unix VFS's 128 KiB write limit lands whole; another connection
 * sees every commit as soon as it returns, through checkpoints and WAL restarts; a write
 * that fails (file size limit) fails the commit and leaves the database as it was; the file
 * is readable by plain SQLite afterwards.
 * The checkpointer of a split-sync connection (db_sqlite_ckpt.c), through db.h as allotd's
 * writer uses it, on a database file of its own: its commits no longer checkpoint every
 * 1000 WAL frames; the WAL still starts over, again and again, and stays below
 * DB_SQLITE_CKPT_RESTART + 2 x DB_SQLITE_CKPT_FRAMES pages; a reader's snapshot stays what
 * it was while the checkpointer runs beside it; every committed row is in the file
 * afterwards, for a connection of plain SQLite.
 * SQLite only: under the PostgreSQL run (pg.cmake) it reports a skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libstore/db.h"
#include "libstore/db_sqlite_ckpt.h"
#include "libstore/db_sqlite_wal.h"

static char dir[64], path[128];
static char cpath[128], cwal[140]; /* the checkpointer's tests: a file of their own */

static sqlite3 *open_db(const char *vfs)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs),
                     SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL, NULL),
        SQLITE_OK);
    return db;
}

static int64_t count_rows(sqlite3 *db, int64_t *bytes)
{
    sqlite3_stmt *q = NULL;
    int64_t n = -1;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT count(*), total(length(b)) FROM t", -1, &q, NULL),
        SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW) {
        n = sqlite3_column_int64(q, 0);
        if (bytes)
            *bytes = sqlite3_column_int64(q, 1);
    }
    sqlite3_finalize(q);
    return n;
}

/* Insert n rows of size bytes each in one transaction; the commit's result. */
static int insert(sqlite3 *db, int n, int size)
{
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return rc;
    assert_int_equal(
        sqlite3_prepare_v2(db, "INSERT INTO t (b) VALUES (randomblob($1))", -1, &q, NULL),
        SQLITE_OK);
    for (int i = 0; i < n && rc == SQLITE_OK; i++) {
        sqlite3_bind_int(q, 1, size);
        rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/allot-wal-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/w.db", dir);
    snprintf(cpath, sizeof cpath, "%s/c.db", dir);
    snprintf(cwal, sizeof cwal, "%s-wal", cpath);
    return db_sqlite_vfs_register() == SQLITE_OK ? 0 : -1;
}

static int teardown(void **state)
{
    char p[160];
    (void)state;
    const char *sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        unlink(p);
        snprintf(p, sizeof p, "%s%s", cpath, sfx[i]);
        unlink(p);
    }
    rmdir(dir);
    return 0;
}

static void test_large_commit(void **state)
{
    (void)state;
    sqlite3 *a = open_db(DB_SQLITE_VFS), *b = open_db(DB_SQLITE_VFS);
    assert_int_equal(
        sqlite3_exec(a, "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)", NULL, NULL, NULL),
        SQLITE_OK);
    /* ~3 MB in one commit: many 124 KiB pieces, beyond the unix VFS's single-write limit. */
    assert_int_equal(insert(a, 3000, 1000), SQLITE_OK);
    int64_t bytes = 0;
    assert_int_equal(count_rows(b, &bytes), 3000);
    assert_int_equal(bytes, 3000 * 1000);
    /* Beyond the gathering buffer's 8 MB: written through in runs. */
    assert_int_equal(insert(a, 10, 1000000), SQLITE_OK);
    assert_int_equal(count_rows(b, NULL), 3010);
    sqlite3_close(b);
    sqlite3_close(a);
    sqlite3 *plain = open_db(NULL); /* the default VFS reads the same file */
    assert_int_equal(count_rows(plain, NULL), 3010);
    sqlite3_close(plain);
}

static void test_every_commit_visible_through_restarts(void **state)
{
    (void)state;
    sqlite3 *a = open_db(DB_SQLITE_VFS), *b = open_db(DB_SQLITE_VFS);
    /* Checkpoint every 8 pages: many checkpoints and WAL restarts in the loop. */
    assert_int_equal(sqlite3_exec(a, "PRAGMA wal_autocheckpoint=8", NULL, NULL, NULL), SQLITE_OK);
    int64_t base = count_rows(b, NULL);
    for (int i = 1; i <= 300; i++) {
        assert_int_equal(insert(a, 1 + i % 7, 300 + 37 * (i % 11)), SQLITE_OK);
        if (i % 3 == 0)
            assert_int_equal(
                sqlite3_wal_checkpoint_v2(a, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL),
                SQLITE_OK);
        int64_t want = 0;
        for (int k = 1; k <= i; k++)
            want += 1 + k % 7;
        assert_int_equal(count_rows(b, NULL), base + want);
    }
    sqlite3_close(b);
    sqlite3_close(a);
    sqlite3 *plain = open_db(NULL);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(plain, "PRAGMA integrity_check", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "ok");
    sqlite3_finalize(q);
    sqlite3_close(plain);
}

/* In a child (the limit is per process): with files capped at 64 KiB, a 1 MB commit into
 * an empty WAL must fail, and the rows must be what they were. */
static void test_write_error_fails_commit(void **state)
{
    (void)state;
    sqlite3 *a = open_db(DB_SQLITE_VFS);
    int64_t before = count_rows(a, NULL);
    assert_true(before > 0);
    assert_int_equal(sqlite3_exec(a, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(a);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
        struct rlimit rl;
        if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(10);
        sqlite3 *c = open_db(DB_SQLITE_VFS);
        /* The WAL is empty (truncated above): it may grow to 64 KiB, not to 1 MB. */
        rl.rlim_cur = 64 * 1024;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(11);
        int rc = insert(c, 1000, 1000);
        if (rc == SQLITE_OK)
            _exit(12); /* the commit must not succeed */
        if (count_rows(c, NULL) != before)
            _exit(13);
        sqlite3_close(c);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    sqlite3 *d = open_db(DB_SQLITE_VFS); /* recovery after the failed commit */
    assert_int_equal(count_rows(d, NULL), before);
    assert_int_equal(insert(d, 5, 100), SQLITE_OK);
    assert_int_equal(count_rows(d, NULL), before + 5);
    sqlite3_close(d);
}

#define FRAME (4096 + 24) /* page size of a new database, plus the frame header */

/* ---- the checkpointer ---- */

/* The WAL's frames by its size (it never shrinks: frames are overwritten after a restart). */
static long wal_frames(void)
{
    struct stat sb;
    if (stat(cwal, &sb) < 0 || sb.st_size < 32)
        return 0;
    return (long)((sb.st_size - 32) / FRAME);
}

/* Salt-1 of the WAL header: SQLite changes it each time the WAL starts over. */
static uint32_t wal_salt(void)
{
    unsigned char h[32];
    int fd = open(cwal, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, h, sizeof h, 0), (ssize_t)sizeof h);
    close(fd);
    return (uint32_t)h[16] << 24 | (uint32_t)h[17] << 16 | (uint32_t)h[18] << 8 | h[19];
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Commit three ~4 KiB rows (about four WAL frames) per transaction until the WAL has
 * started over `restarts` times; the number of rows committed.  While the WAL is long the
 * loop gives the checkpointer a moment, as a writer that waits for its clients would:
 * otherwise a slow machine (valgrind) could outrun a pass and the WAL's bound, checked after
 * every commit, would measure the machine.  The most frames the WAL held go to *peak. */
static int64_t commit_until_restarts(db_t *db, int restarts, long *peak)
{
    struct allot_error err;
    uint32_t salt = wal_salt();
    int seen = 0;
    int64_t rows = 0;
    time_t deadline = time(NULL) + 120;
    *peak = 0;
    while (seen < restarts) {
        assert_true(time(NULL) < deadline);
        assert_int_equal(db_exec(db,
                                 "BEGIN IMMEDIATE; INSERT INTO t (b) VALUES (randomblob(4000)), "
                                 "(randomblob(4000)), (randomblob(4000)); COMMIT",
                                 &err),
                         0);
        rows += 3;
        long f = wal_frames();
        assert_true(f <= DB_SQLITE_CKPT_RESTART + 2 * DB_SQLITE_CKPT_FRAMES); /* bounded */
        if (f > *peak)
            *peak = f;
        if (f >= DB_SQLITE_CKPT_RESTART)
            sleep_ms(1);
        uint32_t s = wal_salt();
        if (s != salt) {
            salt = s;
            seen++;
        }
    }
    return rows;
}

static db_t *open_split(void)
{
    struct allot_error err;
    db_t *db = db_sqlite_open(cpath, 5000, 1, &err);
    assert_non_null(db);
    assert_int_equal(
        db_exec(db, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, b BLOB)", &err), 0);
    int fd = -1;
    assert_int_equal(db_split_sync(db, &fd, &err), 1);
    assert_true(fd >= 0);
    close(fd);
    return db;
}

static void test_wal_bounded_and_restarted(void **state)
{
    (void)state;
    db_t *db = open_split();
    long peak = 0;
    int64_t rows = commit_until_restarts(db, 3, &peak);
    /* Not autocheckpoint's ~1000 frames: the writer's commits left the copying alone. */
    assert_true(peak >= 2 * DB_SQLITE_CKPT_FRAMES);
    db_close(db);
    sqlite3 *plain = NULL;
    assert_int_equal(sqlite3_open_v2(cpath, &plain, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(count_rows(plain, NULL), rows);
    sqlite3_close(plain);
}

static void test_reader_snapshot_kept(void **state)
{
    (void)state;
    db_t *db = open_split();
    sqlite3 *r = NULL;
    assert_int_equal(sqlite3_open_v2(cpath, &r, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(r, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    int64_t before = count_rows(r, NULL); /* the read transaction's snapshot starts here */
    struct allot_error err;
    int64_t added = 0;
    /* Several passes' worth of frames while the snapshot is open: no pass may copy past it,
     * and the WAL cannot start over under it. */
    for (int i = 0; i < 3 * DB_SQLITE_CKPT_FRAMES / 4; i++) {
        assert_int_equal(db_exec(db,
                                 "BEGIN IMMEDIATE; INSERT INTO t (b) VALUES (randomblob(4000)), "
                                 "(randomblob(4000)), (randomblob(4000)); COMMIT",
                                 &err),
                         0);
        added += 3;
        if (i % 100 == 0)
            sleep_ms(2);
    }
    assert_int_equal(count_rows(r, NULL), before);
    assert_int_equal(sqlite3_exec(r, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(count_rows(r, NULL), before + added);
    long peak = 0;
    added += commit_until_restarts(db, 1, &peak); /* the cycle resumes without the reader */
    assert_int_equal(count_rows(r, NULL), before + added);
    sqlite3_close(r);
    db_close(db);
}

int main(void)
{
    if (getenv("ALLOT_TEST_PG_CONNINFO")) {
        printf("1..0 # SKIP SQLite's WAL has no PostgreSQL counterpart\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_commit),
        cmocka_unit_test(test_every_commit_visible_through_restarts),
        cmocka_unit_test(test_write_error_fails_commit),
        cmocka_unit_test(test_wal_bounded_and_restarted),
        cmocka_unit_test(test_reader_snapshot_kept),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
