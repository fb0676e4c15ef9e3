/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sqlite_mem.c - SQLite's allocator (db_sqlite_mem.c): every size from 1 to past the largest
 * class gets at least what it asked for, 16-byte aligned, all of it writable, and the size
 * it reports is the rounded size; a freed block is reused by the next allocation of its
 * class on that thread and the lists keep at most their bound; realloc keeps the contents,
 * in place within a class and copied across classes and from large blocks; threads that
 * allocate, free each other's blocks and exit, many times over, corrupt nothing (each block
 * carries a pattern checked before it is freed) and leave nothing behind (an exited
 * thread's lists are freed: LeakSanitizer checks that under the ASan build); under ASan a
 * free block is poisoned, so a read after its free is reported; and once
 * installed it is SQLite's allocator (sqlite3_msize answers with its rounding) and a bank
 * runs on it.
 * SQLite only: under the PostgreSQL run (pg.cmake) it reports a skip.
 */
#include "store_test.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libstore/db_sqlite_mem.h"

#define LARGEST_CLASS 4096

static void fill(unsigned char *p, int n, unsigned seed)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + (unsigned)i * 31u);
}

static int intact(const unsigned char *p, int n, unsigned seed)
{
    for (int i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + (unsigned)i * 31u))
            return 0;
    return 1;
}

static void test_sizes(void **state)
{
    (void)state;
    for (int n = 1; n <= LARGEST_CLASS + 600; n++) {
        unsigned char *p = db_sqlite_mem_malloc(n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        int size = db_sqlite_mem_size(p);
        assert_true(size >= n);
        assert_int_equal(size, db_sqlite_mem_roundup(n));
        if (n <= LARGEST_CLASS) /* a power of two from 32 */
            assert_int_equal(size & (size - 1), 0);
        assert_true(n > LARGEST_CLASS || size >= 32);
        assert_true(n <= LARGEST_CLASS || size < n + 16);
        fill(p, size, (unsigned)n);
        assert_true(intact(p, size, (unsigned)n));
        db_sqlite_mem_free(p);
    }
    assert_null(db_sqlite_mem_malloc(0));
    db_sqlite_mem_free(NULL);
    db_sqlite_mem_flush();
    assert_int_equal(db_sqlite_mem_cached(), 0);
}

static void test_reuse_and_bound(void **state)
{
    (void)state;
    db_sqlite_mem_flush();
    void *a = db_sqlite_mem_malloc(100);
    db_sqlite_mem_free(a);
    assert_int_equal(db_sqlite_mem_cached(), 1);
    void *b = db_sqlite_mem_malloc(120); /* the same 128-byte class */
    assert_ptr_equal(a, b);
    assert_int_equal(db_sqlite_mem_cached(), 0);
    void *c = db_sqlite_mem_malloc(200); /* another class: a new block */
    assert_ptr_not_equal(c, b);
    db_sqlite_mem_free(b);
    db_sqlite_mem_free(c);
    assert_int_equal(db_sqlite_mem_cached(), 2);
    void *big = db_sqlite_mem_malloc(LARGEST_CLASS + 1); /* never kept */
    db_sqlite_mem_free(big);
    assert_int_equal(db_sqlite_mem_cached(), 2);
    db_sqlite_mem_flush();
    assert_int_equal(db_sqlite_mem_cached(), 0);

    /* At most 64 KiB of a class stays on a thread's list: 16 blocks of 4 KiB. */
    void *p[40];
    for (int i = 0; i < 40; i++)
        p[i] = db_sqlite_mem_malloc(LARGEST_CLASS);
    for (int i = 0; i < 40; i++)
        db_sqlite_mem_free(p[i]);
    assert_int_equal(db_sqlite_mem_cached(), 16);
    db_sqlite_mem_flush();
    assert_int_equal(db_sqlite_mem_cached(), 0);
}

static void test_resize(void **state)
{
    (void)state;
    unsigned char *p = db_sqlite_mem_realloc(NULL, 40); /* as malloc: the 64-byte class */
    assert_non_null(p);
    fill(p, 40, 7);
    unsigned char *q = db_sqlite_mem_realloc(p, 60); /* same class: in place */
    assert_ptr_equal(p, q);
    assert_true(intact(q, 40, 7));
    fill(q, 60, 8);
    unsigned char *r = db_sqlite_mem_realloc(q, 3000); /* grows across classes: copied */
    assert_non_null(r);
    assert_true(intact(r, 60, 8));
    fill(r, 3000, 9);
    unsigned char *s = db_sqlite_mem_realloc(r, 10000); /* to a large block */
    assert_true(intact(s, 3000, 9));
    fill(s, 10000, 10);
    unsigned char *t = db_sqlite_mem_realloc(s, 20000); /* large to larger */
    assert_true(intact(t, 10000, 10));
    unsigned char *u = db_sqlite_mem_realloc(t, 50); /* shrinks to a class: the prefix */
    assert_int_equal(db_sqlite_mem_size(u), 64);
    assert_true(intact(u, 50, 10));
    assert_null(db_sqlite_mem_realloc(u, 0)); /* frees */
    db_sqlite_mem_flush();
}

/* Threads that take blocks of random sizes, each filled with its own pattern, hand half of
 * them to a shared pool and free the pool's blocks that other threads left there, checking
 * every pattern before the free; then they exit with blocks on their lists. */
#define THREADS 4
#define ROUNDS 20
#define OPS 3000
#define POOL 256

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *pool[POOL];
static int pool_size[POOL];
static int bad;

static void check_and_free(unsigned char *p, int n)
{
    if (!intact(p, n, (unsigned)n))
        __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    db_sqlite_mem_free(p);
}

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    unsigned char *mine[64] = {0};
    int mine_n[64] = {0};
    for (int op = 0; op < OPS; op++) {
        seed = seed * 1103515245u + 12345u;
        int slot = (int)((seed >> 8) % 64);
        int n = 1 + (int)((seed >> 16) % (LARGEST_CLASS + 2048));
        if (mine[slot]) {
            if (op % 2) { /* to the pool: another thread frees it */
                pthread_mutex_lock(&pool_lock);
                int k = (int)((seed >> 4) % POOL);
                unsigned char *old = pool[k];
                int old_n = pool_size[k];
                pool[k] = mine[slot];
                pool_size[k] = mine_n[slot];
                pthread_mutex_unlock(&pool_lock);
                if (old)
                    check_and_free(old, old_n);
            } else {
                check_and_free(mine[slot], mine_n[slot]);
            }
        }
        mine[slot] = db_sqlite_mem_malloc(n);
        if (!mine[slot]) {
            __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
            break;
        }
        mine_n[slot] = n;
        fill(mine[slot], n, (unsigned)n);
    }
    for (int i = 0; i < 64; i++)
        if (mine[i])
            check_and_free(mine[i], mine_n[i]);
    /* Exits with blocks on its lists: the key's destructor gives them back. */
    return db_sqlite_mem_cached() > 0 ? NULL : (void *)1;
}

static void test_threads(void **state)
{
    (void)state;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++)
            assert_int_equal(
                pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(round * THREADS + i + 1)),
                0);
        for (int i = 0; i < THREADS; i++) {
            void *empty = NULL;
            assert_int_equal(pthread_join(t[i], &empty), 0);
            assert_null(empty); /* it did exit with blocks kept */
        }
    }
    for (int k = 0; k < POOL; k++)
        if (pool[k])
            check_and_free(pool[k], pool_size[k]);
    assert_int_equal(bad, 0);
    db_sqlite_mem_flush();
}

/* Under AddressSanitizer a block on a free list is poisoned: a read of it after its free is
 * reported (in a child, which ASan stops), and the same read before the free is not. */
#if defined(__SANITIZE_ADDRESS__)
static int child_reads(int after_free)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(3);
        volatile unsigned char *p = db_sqlite_mem_malloc(100);
        p[5] = 1;
        if (after_free)
            db_sqlite_mem_free((void *)p);
        _exit(p[5] == 1 ? 0 : 2);
    }
    int status = 0;
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
#endif

static void test_poisoned_when_free(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    assert_true(child_reads(0));
    assert_false(child_reads(1));
#else
    skip();
#endif
}

/* Installed, it is SQLite's allocator, and a bank works on it. */
static void test_sqlite_uses_it(void **state)
{
    struct fx *f = *state; /* the fixture opened a store: installed by then */
    void *p = sqlite3_malloc(100);
    assert_non_null(p);
    assert_int_equal(sqlite3_msize(p), 128);
    assert_int_equal(db_sqlite_mem_size(p), 128);
    sqlite3_free(p);
    fx_add_account(f, "chem", "root");
    int64_t id = fx_add_alloc(f, "chem", "cpu", "", 1767225600, 1767225600 + 86400, 1000);
    struct balance b;
    OK(f, store_alloc_get(f->st, id, NULL, &b, &f->err));
    assert_int_equal(b.granted_sumin, 1000);
    fx_check_clean(f);
}

int main(void)
{
    if (getenv("ALLOT_TEST_PG_CONNINFO")) {
        printf("1..0 # SKIP SQLite's allocator has no PostgreSQL counterpart\n");
        return 0;
    }
    if (!db_sqlite_mem_install()) { /* before any other SQLite call of this process */
        printf("1..0 # SKIP not installed (running under valgrind)\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_reuse_and_bound),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_poisoned_when_free),
        cmocka_unit_test_setup_teardown(test_sqlite_uses_it, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
