/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/conf.c - unit tests of libconf/conf.c: table defaults, every value type, the errors
 * that name file:line:key, aliases, cross-field checks, diff and list lookup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libconf/conf.h"

static void test_defaults(void **state)
{
    struct allot_error err = {0};
    struct allot_conf *c = conf_parse_text("", "t.conf", &err);
    assert_non_null(c);
    assert_string_equal(c->storage_type, "sqlite");
    assert_string_equal(c->listen_addr, "127.0.0.1:8760");
    assert_string_equal(c->auth_type, "munge");
    assert_string_equal(c->hold_mode, "start");
    assert_int_equal(c->threads, 0);
    assert_int_equal(c->max_batch, 512);
    conf_unref(c);
}

static void test_values(void **state)
{
    const char *text = "# comment\n"
                       "  storagetype = PG   # trailing comment\n"
                       "StorageLoc=\"host=127.0.0.1 dbname=allot # not a comment\"\n"
                       "\n"
                       "SuperUsers= root , alice\n"
                       "ClusterName=c1,c2\n"
                       "Threads=16\n"
                       "ListenAddr=\n"
                       "ListenSocket=/tmp/x.sock\n";
    struct allot_error err = {0};
    struct allot_conf *c = conf_parse_text(text, "t.conf", &err);
    assert_non_null(c);
    assert_string_equal(c->storage_type, "pg");
    assert_string_equal(c->storage_loc, "host=127.0.0.1 dbname=allot # not a comment");
    assert_string_equal(c->super_users, "root,alice");
    assert_string_equal(c->cluster_names, "c1,c2");
    assert_int_equal(c->threads, 16);
    assert_string_equal(c->listen_addr, "");
    assert_true(conf_list_contains(c->super_users, "alice"));
    assert_false(conf_list_contains(c->super_users, "ali"));
    assert_false(conf_list_contains(c->super_users, ""));
    assert_ptr_equal(conf_ref(c), c);
    conf_unref(c);
    conf_unref(c);
}

/* Each bad input and the words its message must contain. */
static const struct {
    const char *text;
    const char *msg;
} bad[] = {
    {"Bogus=1\n", "t.conf:1: Bogus: unknown key"},
    {"Threads=2\nthreads=3\n", "t.conf:2: Threads: repeated key (first set on line 1)"},
    {"ClusterNames=a\nClusterName=b\n", "t.conf:2: ClusterName: repeated key"},
    {"Threads=257\n", "t.conf:1: Threads: 257 is out of range [0, 256]"},
    {"Threads=x\n", "t.conf:1: Threads: 'x' is not an integer"},
    {"Threads=99999999999999999999\n", "Threads: '99999999999999999999' is not an integer"},
    {"StorageType=mysql\n", "t.conf:1: StorageType: 'mysql' is not one of sqlite|pg"},
    {"ListenAddr=nohost\n", "ListenAddr: 'nohost' is not host:port"},
    {"ListenAddr=127.0.0.1:70000\n", "ListenAddr: port of '127.0.0.1:70000' must be 1..65535"},
    {"SuperUsers=root,,bob\n", "SuperUsers: empty entry"},
    {"SuperUsers=ro ot\n", "is not a name"},
    {"\n\njust words\n", "t.conf:3: expected Key=Value"},
    {"=3\n", "missing key"},
    {"StorageLoc=\"abc\n", "unterminated quote"},
    {"StorageLoc=\"abc\" x\n", "text after the closing quote"},
    {"ListenAddr=\nListenSocket=\n", "at least one listener"},
    {"StorageLoc=\n", "StorageLoc: must not be empty"},
    {"AuthType=none\n", "AuthType: 'none' requires TestMode=local"},
};

static void test_errors(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct allot_error err = {0};
        struct allot_conf *c = conf_parse_text(bad[i].text, "t.conf", &err);
        if (c || !strstr(err.msg, bad[i].msg))
            fail_msg("case %zu: want '%s', got '%s'", i, bad[i].msg, err.msg);
        assert_int_equal(err.code, ALLOT_EINVAL);
    }
}

static void test_long_line(void **state)
{
    char text[6000];
    memset(text, 'a', sizeof(text) - 1);
    text[sizeof(text) - 1] = '\0';
    struct allot_error err = {0};
    assert_null(conf_parse_text(text, "t.conf", &err));
    assert_non_null(strstr(err.msg, "t.conf:1: line longer"));
}

static void test_test_mode(void **state)
{
    struct allot_error err = {0};
    struct allot_conf *c = conf_parse_text("AuthType=none\nTestMode=local\n", "t", &err);
    assert_non_null(c);
    assert_string_equal(c->test_mode, "local");
    conf_unref(c);
}

static int diffs;
static void on_diff(const char *key, int reloadable, void *arg)
{
    diffs++;
}

static void test_diff(void **state)
{
    struct allot_error err = {0};
    struct allot_conf *a = conf_parse_text("Admins=a\nThreads=2\n", "t", &err);
    struct allot_conf *b = conf_parse_text("Admins=b\nThreads=3\n", "t", &err);
    assert_non_null(a);
    assert_non_null(b);
    diffs = 0;
    assert_int_equal(conf_diff(a, b, on_diff, NULL), 1); /* Threads needs a restart */
    assert_int_equal(diffs, 2);
    assert_int_equal(conf_diff(a, a, on_diff, NULL), 0);
    /* Swapped in on SIGHUP: the restart-only key keeps its running value, the other is new,
     * so the same file read again still differs (and is warned about) in Threads only. */
    conf_keep_fixed(b, a);
    assert_int_equal(b->threads, 2);
    assert_string_equal(b->admins, "b");
    struct allot_conf *again = conf_parse_text("Admins=b\nThreads=3\n", "t", &err);
    assert_non_null(again);
    diffs = 0;
    assert_int_equal(conf_diff(b, again, on_diff, NULL), 1);
    assert_int_equal(diffs, 1);
    conf_unref(again);
    conf_unref(a);
    conf_unref(b);
}

static void test_load_file(void **state)
{
    struct allot_error err = {0};
    assert_null(conf_load("/nonexistent/allot.conf", &err));
    assert_int_equal(err.code, ALLOT_EIO);
    char path[] = "/tmp/allot-conf-test-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("Threads=4\nMaxBatch=0\n", f);
    fclose(f);
    assert_null(conf_load(path, &err));
    char want[512];
    snprintf(want, sizeof(want), "%s:2: MaxBatch:", path);
    assert_non_null(strstr(err.msg, want));
    remove(path);
}

static void test_table(void **state)
{
    assert_true(conf_key_count() >= 20);
    for (int i = 0; i < conf_key_count(); i++) {
        const struct conf_key_info *k = conf_key_at(i);
        assert_non_null(k->doc);
        assert_true(strlen(k->doc) > 0);
    }
    assert_null(conf_key_at(conf_key_count()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),  cmocka_unit_test(test_values),
        cmocka_unit_test(test_errors),    cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_test_mode), cmocka_unit_test(test_diff),
        cmocka_unit_test(test_load_file), cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
