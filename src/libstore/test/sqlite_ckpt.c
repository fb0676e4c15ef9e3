/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sqlite_ckpt.c - tests of the checkpointer of a split-sync SQLite connection
 * (db_sqlite_ckpt.c), through db.h as allotd's writer uses it: its commits no longer
 * checkpoint every 1000 WAL frames; the WAL still starts over, again and again, and stays
 * below DB_SQLITE_CKPT_RESTART + 2 x DB_SQLITE_CKPT_FRAMES pages; a reader's snapshot stays
 * what it was while the checkpointer runs beside it; every committed row is in the file
 * afterwards, for a connection of plain SQLite.
 * SQLite only: under the PostgreSQL run (pg.cmake) it reports a skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libstore/db.h"
#include "libstore/db_sqlite_ckpt.h"

static char dir[64], path[128], wal[140];

#define FRAME (4096 + 24) /* page size of a new database, plus the frame header */

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/allot-ckpt-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/c.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    return 0;
}

static int teardown(void **state)
{
    char p[160];
    (void)state;
    const char *sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        unlink(p);
    }
    rmdir(dir);
    return 0;
}

/* The WAL's frames by its size (it never shrinks: frames are overwritten after a restart). */
static long wal_frames(void)
{
    struct stat sb;
    if (stat(wal, &sb) < 0 || sb.st_size < 32)
        return 0;
    return (long)((sb.st_size - 32) / FRAME);
}

/* Salt-1 of the WAL header: SQLite changes it each time the WAL starts over. */
static uint32_t wal_salt(void)
{
    unsigned char h[32];
    int fd = open(wal, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, h, sizeof h, 0), (ssize_t)sizeof h);
    close(fd);
    return (uint32_t)h[16] << 24 | (uint32_t)h[17] << 16 | (uint32_t)h[18] << 8 | h[19];
}

static int64_t count_rows(sqlite3 *c)
{
    sqlite3_stmt *q = NULL;
    int64_t n = -1;
    assert_int_equal(sqlite3_prepare_v2(c, "SELECT count(*) FROM t", -1, &q, NULL), SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return n;
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
    db_t *db = db_sqlite_open(path, 5000, 1, &err);
    assert_non_null(db);
    assert_int_equal(db_exec(db, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, b BLOB)",
                             &err),
                     0);
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
    assert_int_equal(sqlite3_open_v2(path, &plain, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(count_rows(plain), rows);
    sqlite3_close(plain);
}

static void test_reader_snapshot_kept(void **state)
{
    (void)state;
    db_t *db = open_split();
    sqlite3 *r = NULL;
    assert_int_equal(sqlite3_open_v2(path, &r, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(r, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    int64_t before = count_rows(r); /* the read transaction's snapshot starts here */
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
    assert_int_equal(count_rows(r), before);
    assert_int_equal(sqlite3_exec(r, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(count_rows(r), before + added);
    long peak = 0;
    added += commit_until_restarts(db, 1, &peak); /* the cycle resumes without the reader */
    assert_int_equal(count_rows(r), before + added);
    sqlite3_close(r);
    db_close(db);
}

int main(void)
{
    if (getenv("ALLOT_TEST_PG_CONNINFO")) {
        printf("1..0 # SKIP the SQLite checkpointer has no PostgreSQL counterpart\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wal_bounded_and_restarted),
        cmocka_unit_test(test_reader_snapshot_kept),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
