/* SPDX-License-Identifier: GPL-3.0-or-later */
/* db_sqlite_mem.c - SQLite's memory allocator (SQLITE_CONFIG_MALLOC): per-thread free lists
 * by size class in front of malloc.
 *
 * Why: Debian builds SQLite without lookaside (SQLITE_OMIT_LOOKASIDE), so every execution
 * of a statement mallocs and frees its record buffers, cursors and unpacked keys: about 60
 * allocations per hold or settle request, and glibc's malloc and free (mostly its slow
 * paths: the thread cache holds 7 blocks a size) were ~8% of allotd's instructions
 * (bench/results/bank.md, 2026-11-27, d4f1b01).  SQLite's documented way out is its own allocator.
 * A block of up to MEM_LARGE bytes is rounded up to a power of two (MEM_CLASSES classes)
 * and, when freed, kept on the freeing thread's list of its class, up to MEM_KEEP bytes a
 * class, for the next allocation of that class on that thread; larger blocks, and blocks
 * past that bound, go to malloc and free.  Lists are thread-local, so no lock: a block
 * freed by another thread than the one that took it simply joins that thread's list.  A
 * thread's lists go back to free() when it exits (a pthread key destructor) and when SQLite
 * shuts down (the thread calling sqlite3_shutdown).
 * Every block has a 16-byte header (its capacity, and the list link while it is free), so
 * user memory keeps malloc's 16-byte alignment.  Under AddressSanitizer a free block's user
 * memory is poisoned, so a use after free is still reported; under valgrind the allocator
 * is not installed, so memcheck sees SQLite's own mallocs as before.  The environment
 * variable ALLOT_SQLITE_MEM overrides: "malloc" never installs it, "lists" installs it under
 * valgrind too (bench/bank_callgrind.sh counts the instructions of what production runs).
 */
#include "libstore/db_sqlite_mem.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define MEM_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MEM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MEM_POISON(p, n) ((void)(p), (void)(n))
#define MEM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define MEM_MIN_SHIFT 5 /* the smallest class: 32 bytes */
#define MEM_CLASSES 8   /* 32, 64, ..., 4096 */
#define MEM_LARGE (1 << (MEM_MIN_SHIFT + MEM_CLASSES - 1))
#define MEM_KEEP (64 * 1024) /* bytes of free blocks kept per class and thread */

struct mem_hdr {
    size_t cap;           /* usable bytes after the header */
    struct mem_hdr *next; /* on a free list */
};
_Static_assert(sizeof(struct mem_hdr) == 16, "the header keeps 16-byte alignment");

struct mem_cache {
    struct mem_hdr *head[MEM_CLASSES];
    size_t count[MEM_CLASSES];
    int registered; /* the thread's destructor is armed */
};

static _Thread_local struct mem_cache cache;
static pthread_key_t cache_key;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int installed;

static int class_of(size_t n) /* 1 <= n <= MEM_LARGE */
{
    if (n <= (size_t)1 << MEM_MIN_SHIFT)
        return 0;
    return (int)(64 - __builtin_clzll((unsigned long long)(n - 1))) - MEM_MIN_SHIFT;
}

static size_t class_size(int c)
{
    return (size_t)1 << (MEM_MIN_SHIFT + c);
}

static size_t round_cap(size_t n)
{
    return n <= MEM_LARGE ? class_size(class_of(n)) : (n + 15) & ~(size_t)15;
}

static void *user_of(struct mem_hdr *h)
{
    return h + 1;
}

static struct mem_hdr *hdr_of(void *p)
{
    return (struct mem_hdr *)p - 1;
}

static void flush(struct mem_cache *c)
{
    for (int i = 0; i < MEM_CLASSES; i++) {
        while (c->head[i]) {
            struct mem_hdr *h = c->head[i];
            c->head[i] = h->next;
            MEM_UNPOISON(user_of(h), h->cap);
            free(h);
        }
        c->count[i] = 0;
    }
}

static void flush_at_exit(void *arg)
{
    struct mem_cache *c = arg;
    flush(c);
    c->registered = 0;
}

void *db_sqlite_mem_malloc(int n)
{
    if (n <= 0)
        return NULL;
    size_t cap = round_cap((size_t)n);
    if (cap <= MEM_LARGE) {
        int c = class_of(cap);
        struct mem_hdr *h = cache.head[c];
        if (h) {
            cache.head[c] = h->next;
            cache.count[c]--;
            MEM_UNPOISON(user_of(h), cap);
            return user_of(h);
        }
    }
    struct mem_hdr *h = malloc(sizeof *h + cap);
    if (!h)
        return NULL;
    h->cap = cap;
    return user_of(h);
}

void db_sqlite_mem_free(void *p)
{
    if (!p)
        return;
    struct mem_hdr *h = hdr_of(p);
    if (h->cap <= MEM_LARGE) {
        int c = class_of(h->cap);
        if (cache.count[c] < ((size_t)MEM_KEEP >> (MEM_MIN_SHIFT + c))) { /* MEM_KEEP / cap */
            if (!cache.registered && installed) {
                /* Arm the thread's destructor once; without it (no key) the lists are
                 * still correct, only not given back when the thread exits. */
                cache.registered = pthread_setspecific(cache_key, &cache) == 0;
            }
            MEM_POISON(p, h->cap);
            h->next = cache.head[c];
            cache.head[c] = h;
            cache.count[c]++;
            return;
        }
    }
    free(h);
}

void *db_sqlite_mem_realloc(void *p, int n)
{
    if (!p)
        return db_sqlite_mem_malloc(n);
    if (n <= 0) {
        db_sqlite_mem_free(p);
        return NULL;
    }
    size_t old = hdr_of(p)->cap;
    if (round_cap((size_t)n) == old) /* the block it has is the one it would get */
        return p;
    void *q = db_sqlite_mem_malloc(n);
    if (!q)
        return NULL; /* p is left as it was, as realloc() leaves it */
    memcpy(q, p, old < (size_t)n ? old : (size_t)n);
    db_sqlite_mem_free(p);
    return q;
}

int db_sqlite_mem_size(void *p)
{
    return p ? (int)hdr_of(p)->cap : 0;
}

int db_sqlite_mem_roundup(int n)
{
    if (n <= 0)
        return n;
    size_t cap = round_cap((size_t)n);
    return cap > INT32_MAX ? n : (int)cap;
}

size_t db_sqlite_mem_cached(void)
{
    size_t n = 0;
    for (int i = 0; i < MEM_CLASSES; i++)
        n += cache.count[i];
    return n;
}

void db_sqlite_mem_flush(void)
{
    flush(&cache);
}

static int mem_init(void *arg)
{
    (void)arg;
    return SQLITE_OK;
}

static void mem_shutdown(void *arg)
{
    (void)arg;
    db_sqlite_mem_flush();
}

static void install(void)
{
    static const sqlite3_mem_methods methods = {
        .xMalloc = db_sqlite_mem_malloc,
        .xFree = db_sqlite_mem_free,
        .xRealloc = db_sqlite_mem_realloc,
        .xSize = db_sqlite_mem_size,
        .xRoundup = db_sqlite_mem_roundup,
        .xInit = mem_init,
        .xShutdown = mem_shutdown,
    };
    const char *how = getenv("ALLOT_SQLITE_MEM");
    if (how && strcmp(how, "malloc") == 0)
        return;
    if (RUNNING_ON_VALGRIND && !(how && strcmp(how, "lists") == 0))
        return;
    if (pthread_key_create(&cache_key, flush_at_exit) != 0)
        return;
    installed = 1; /* before SQLite can call xFree */
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK) {
        installed = 0; /* SQLite is running already: it keeps its allocator */
        pthread_key_delete(cache_key);
    }
}

int db_sqlite_mem_install(void)
{
    if (pthread_once(&install_once, install) != 0)
        return 0;
    return installed;
}
