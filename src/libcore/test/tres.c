/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/tres.c - TRES list parse/format/get/set: vectors, canonical order, error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/tres.h"

static const struct {
    const char *in;
    const char *out; /* canonical format; NULL = in */
} good[] = {
    {"", NULL},
    {"cpu=4,mem=4000M,node=1", NULL},
    {"node=1,mem=4000,cpu=4", "cpu=4,mem=4000M,node=1"},
    {"billing=1,cpu=1,mem=4000M,node=1", "cpu=1,mem=4000M,node=1,billing=1"},
    {"CPU=2,Mem=4G", "cpu=2,mem=4096M"},
    {"mem=1T", "mem=1048576M"},
    {"mem=1K", "mem=1M"},
    {"mem=1024K", "mem=1M"},
    {"mem=1025k", "mem=2M"},
    {"mem=0", "mem=0M"},
    {"gres/gpu:a100=2,gres/gpu=2,cpu=8", "cpu=8,gres/gpu=2,gres/gpu:a100=2"},
    {"license/foo=3,gres/gpu=1,fs/disk=5,pages=1,vmem=2,energy=9,billing=3",
     "energy=9,billing=3,fs/disk=5,vmem=2,pages=1,gres/gpu=1,license/foo=3"},
    {"ic/ofed=1,bb/cray=2,license/a=1", "license/a=1,bb/cray=2,ic/ofed=1"},
    {"cpu=9223372036854775807", NULL},
    {"gres/GPU:A100=1", "gres/gpu:a100=1"},
};

static const char *const bad[] = {
    "cpu",
    "cpu=",
    "=4",
    "cpu=-1",
    "cpu=1,cpu=2",
    "cpu=1,",
    ",cpu=1",
    "cpus=4",
    "gres/=1",
    "gres/gp u=1",
    "foo/bar=1",
    "cpu=1x",
    "mem=4X",
    "mem=M",
    "cpu=9223372036854775808",
    "mem=9007199254740992T",
    "cpu=1.5",
    "cpu=1,,mem=2",
    "gres/gpu=1 ",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1",
    "gres/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1",
};

static void test_good(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct tres_list l, l2;
        struct allot_error err = {0};
        char buf[1024];
        const char *want = good[i].out ? good[i].out : good[i].in;
        assert_int_equal(tres_parse(good[i].in, &l, &err), 0);
        assert_int_equal(tres_format(&l, buf, sizeof(buf), &err), 0);
        assert_string_equal(buf, want);
        /* parse(format(x)) == x */
        assert_int_equal(tres_parse(buf, &l2, &err), 0);
        assert_int_equal(l2.n, l.n);
        for (int j = 0; j < l.n; j++) {
            assert_string_equal(l.item[j].name, l2.item[j].name);
            assert_int_equal(l.item[j].count, l2.item[j].count);
        }
    }
}

static void test_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tres_list l = {.n = 7};
        struct allot_error err = {0};
        assert_int_equal(tres_parse(bad[i], &l, &err), -1);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_true(strlen(err.msg) > 0);
        assert_int_equal(l.n, 7); /* untouched */
    }
    struct allot_error err = {0};
    struct tres_list l;
    assert_int_equal(tres_parse(NULL, &l, &err), -1);
}

static void test_too_many(void **state)
{
    (void)state;
    char s[2048] = "";
    size_t used = 0;
    for (int i = 0; i < TRES_LIST_MAX + 1; i++)
        used += (size_t)snprintf(s + used, sizeof(s) - used, "%slicense/l%d=1", i ? "," : "", i);
    struct tres_list l;
    struct allot_error err = {0};
    assert_int_equal(tres_parse(s, &l, &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
}

static void test_format_small(void **state)
{
    (void)state;
    struct tres_list l;
    struct allot_error err = {0};
    char buf[8] = "keep";
    assert_int_equal(tres_parse("cpu=4,mem=4000M", &l, &err), 0);
    assert_int_equal(tres_format(&l, buf, sizeof(buf), &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    assert_string_equal(buf, "keep");
    l.n = TRES_LIST_MAX + 1;
    assert_int_equal(tres_format(&l, buf, sizeof(buf), &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    char exact[6];
    assert_int_equal(tres_parse("cpu=4", &l, &err), 0);
    assert_int_equal(tres_format(&l, exact, sizeof(exact), &err), 0);
    assert_string_equal(exact, "cpu=4");
}

static void test_get_set(void **state)
{
    (void)state;
    struct tres_list l = {.n = 0};
    struct allot_error err = {0};
    char buf[256];
    assert_int_equal(tres_get(&l, "cpu"), -1);
    assert_int_equal(tres_set(&l, "gres/gpu", 2, &err), 0);
    assert_int_equal(tres_set(&l, "CPU", 4, &err), 0);
    assert_int_equal(tres_set(&l, "mem", 100, &err), 0);
    assert_int_equal(tres_set(&l, "cpu", 8, &err), 0);
    assert_int_equal(tres_get(&l, "cpu"), 8);
    assert_int_equal(tres_get(&l, "gres/gpu"), 2);
    assert_int_equal(tres_format(&l, buf, sizeof(buf), &err), 0);
    assert_string_equal(buf, "cpu=8,mem=100M,gres/gpu=2");
    assert_int_equal(tres_set(&l, "cpu", -1, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(tres_set(&l, "bogus", 1, &err), -1);
    assert_int_equal(tres_set(&l, NULL, 1, &err), -1);
    assert_int_equal(tres_get(&l, "cpu"), 8);
    for (int i = l.n; i < TRES_LIST_MAX; i++) {
        char name[32];
        snprintf(name, sizeof(name), "license/x%02d", i);
        assert_int_equal(tres_set(&l, name, i, &err), 0);
    }
    assert_int_equal(tres_set(&l, "node", 1, &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    assert_int_equal(tres_set(&l, "cpu", 1, &err), 0); /* update still fits */
}

static void test_rank(void **state)
{
    (void)state;
    assert_true(tres_rank("cpu") < tres_rank("mem"));
    assert_true(tres_rank("billing") < tres_rank("fs/disk"));
    assert_true(tres_rank("fs/disk") < tres_rank("vmem"));
    assert_true(tres_rank("pages") < tres_rank("gres/gpu"));
    assert_true(tres_rank("license/a") < tres_rank("bb/x"));
    assert_int_equal(tres_rank("zzz"), 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),     cmocka_unit_test(test_bad),
        cmocka_unit_test(test_too_many), cmocka_unit_test(test_format_small),
        cmocka_unit_test(test_get_set),  cmocka_unit_test(test_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
