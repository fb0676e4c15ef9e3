/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/billing.c - TRESBillingWeights parsing and Slurm's billing rule, HADM vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "libcore/billing.h"
#include "libcore/money.h"

#define HADM "CPU=0.0625,Mem=0.03125G,GRES/gpu=1.0"

static const struct {
    const char *weights;
    int max_tres;
    const char *tres;
    int64_t micro;
    int64_t slurm;
} vectors[] = {
    /* HADM (64 cores, 128 GiB, 4 GPUs per node) with MAX_TRES: (1 core, 64 GiB) bills the
     * same as (32 cores, 1 GiB): half a node's worth = 2.0. */
    {HADM, 1, "cpu=1,mem=64G,node=1", 2000000, 2},
    {HADM, 1, "cpu=32,mem=1G,node=1", 2000000, 2},
    {HADM, 1, "cpu=64,mem=128G,gres/gpu=4,node=1", 4000000, 4},
    {HADM, 1, "cpu=1,mem=1G,node=1", 62500, 0},
    {HADM, 0, "cpu=1,mem=1G,node=1", 93750, 0},
    /* slurm.conf(5) example: 1 CPU, 8 GB under CPU=1.0,Mem=0.25G,GRES/gpu=2.0. */
    {"CPU=1.0,Mem=0.25G,GRES/gpu=2.0", 0, "cpu=1,mem=8G", 3000000, 3},
    {"CPU=1.0,Mem=0.25G,GRES/gpu=2.0", 1, "cpu=1,mem=8G", 2000000, 2},
    /* No unit on mem: per MiB; K and M also mean per MiB for mem (Slurm's base is MiB). */
    {"Mem=.25", 0, "mem=8G", 2048000000, 2048},
    {"Mem=.25K", 0, "mem=8G", 2048000000, 2048},
    {"Mem=.25M", 0, "mem=8G", 2048000000, 2048},
    {"Mem=1T", 0, "mem=1M", 1, 0}, /* 1/1048576 rounds up to one micro-unit */
    /* For other TRES K divides by 1024. */
    {"CPU=1K", 0, "cpu=2048", 2000000, 2},
    /* No weights: allocated CPUs, MAX_TRES or not. */
    {"", 0, "cpu=4,mem=100G", 4000000, 4},
    {"", 1, "cpu=4,mem=100G", 4000000, 4},
    {"", 0, "mem=100G", 0, 0},
    /* MAX over node-level TRES plus the sum of global ones (licenses). */
    {"CPU=1,License/matlab=3,Node=1.5", 1, "cpu=2,node=2,license/matlab=1", 6000000, 6},
    {"CPU=1,License/matlab=3,Node=1.5", 0, "cpu=2,node=2,license/matlab=1", 8000000, 8},
    /* The billing TRES itself and TRES without a weight count nothing. */
    {"CPU=1,Billing=5", 0, "cpu=2,billing=100,gres/gpu=3", 2000000, 2},
    /* Inexact sums round up once: 3 x 0.333333333 = 0.999999999. */
    {"CPU=0.333333333", 0, "cpu=3", 1000000, 1},
    {"CPU=0.1", 0, "cpu=3", 300000, 0},
    {"GRES/gpu:a100=2.5,GRES/gpu=0", 1, "cpu=8,gres/gpu=2,gres/gpu:a100=2", 5000000, 5},
};

static void test_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        struct billing_weights w;
        struct tres_list t;
        struct allot_error err = {0};
        int64_t micro = -1;
        assert_int_equal(billing_weights_parse(vectors[i].weights, vectors[i].max_tres, &w, &err),
                         0);
        assert_int_equal(tres_parse(vectors[i].tres, &t, &err), 0);
        if (billing_compute(&w, &t, &micro, &err) != 0)
            fail_msg("vector %zu: %s", i, err.msg);
        if (micro != vectors[i].micro)
            fail_msg("vector %zu (%s on %s): %lld != %lld", i, vectors[i].weights, vectors[i].tres,
                     (long long)micro, (long long)vectors[i].micro);
        assert_int_equal(billing_slurm_units(micro), vectors[i].slurm);
    }
}

/* HADM's core-minute round-up on a billed job: 55 core-seconds cost one core-minute. */
static void test_hadm_charges(void **state)
{
    (void)state;
    struct billing_weights w;
    struct tres_list t;
    int64_t micro, c;
    assert_int_equal(billing_weights_parse("", 0, &w, NULL), 0);
    assert_int_equal(tres_parse("cpu=1,mem=1G,node=1", &t, NULL), 0);
    assert_int_equal(billing_compute(&w, &t, &micro, NULL), 0);
    assert_int_equal(money_charge_sumin(micro, 55, &c, NULL), 0);
    assert_int_equal(c, 1);
    assert_int_equal(money_charge_sumin(micro, 0, &c, NULL), 0);
    assert_int_equal(c, 0);
    assert_int_equal(money_charge_sumin(micro, 60, &c, NULL), 0);
    assert_int_equal(c, 1);
    assert_int_equal(money_charge_sumin(micro, 61, &c, NULL), 0);
    assert_int_equal(c, 2);
    /* (1 core, 64 GiB) and (32 cores, 1 GiB) for one hour both hold 120 SU-minutes. */
    assert_int_equal(billing_weights_parse(HADM, 1, &w, NULL), 0);
    int64_t h1, h2;
    assert_int_equal(tres_parse("cpu=1,mem=64G,node=1", &t, NULL), 0);
    assert_int_equal(billing_compute(&w, &t, &micro, NULL), 0);
    assert_int_equal(money_hold_sumin(micro, 3600, &h1, NULL), 0);
    assert_int_equal(tres_parse("cpu=32,mem=1G,node=1", &t, NULL), 0);
    assert_int_equal(billing_compute(&w, &t, &micro, NULL), 0);
    assert_int_equal(money_hold_sumin(micro, 3600, &h2, NULL), 0);
    assert_int_equal(h1, 120);
    assert_int_equal(h2, 120);
}

static const struct {
    const char *in;
    const char *out;
} formats[] = {
    {HADM, HADM},
    {"cpu=1,mem=0.25g,gres/GPU=4", "CPU=1.0,Mem=0.25G,GRES/gpu=4.0"},
    {"Mem=1G", "Mem=1G"},
    {"node=2,energy=0.000000001,billing=1,vmem=1,pages=1,license/a=1,fs/disk=1,bb/x=1M,ic/y=1",
     "Node=2.0,Energy=0.000000001,Billing=1.0,VMem=1.0,Pages=1.0,License/a=1.0,FS/disk=1.0,"
     "BB/x=1M,IC/y=1.0"},
    {"", ""},
};

static void test_format(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        struct billing_weights w, w2;
        struct allot_error err = {0};
        char buf[512];
        assert_int_equal(billing_weights_parse(formats[i].in, 1, &w, &err), 0);
        assert_int_equal(billing_weights_format(&w, buf, sizeof(buf), &err), 0);
        assert_string_equal(buf, formats[i].out);
        assert_int_equal(billing_weights_parse(buf, 1, &w2, &err), 0);
        assert_int_equal(w2.n, w.n);
        for (int j = 0; j < w.n; j++) {
            assert_string_equal(w.w[j].name, w2.w[j].name);
            assert_int_equal(w.w[j].weight_nano, w2.w[j].weight_nano);
            assert_int_equal(w.w[j].suffix, w2.w[j].suffix);
            assert_int_equal(w.w[j].div_exp, w2.w[j].div_exp);
        }
    }
    struct billing_weights w;
    struct allot_error err = {0};
    char small[8] = "keep";
    assert_int_equal(billing_weights_parse(HADM, 1, &w, &err), 0);
    assert_int_equal(billing_weights_format(&w, small, sizeof(small), &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    assert_string_equal(small, "keep");
    w.w[0].weight_nano = -1;
    assert_int_equal(billing_weights_format(&w, small, sizeof(small), &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
}

static const char *const bad_weights[] = {
    "CPU",          "CPU=",  "=1",          "CPU=-1",  "CPU=1.0000000001",
    "CPU=1X",       "Foo=1", "CPU=1,CPU=2", "CPU=1,",  "CPU=1000000001",
    "CPU=1,,Mem=1", "CPU=G", "CPU=1.5.5",   "GRES/=1",
};

static void test_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_weights) / sizeof(bad_weights[0]); i++) {
        struct billing_weights w = {.n = 3};
        struct allot_error err = {0};
        if (billing_weights_parse(bad_weights[i], 0, &w, &err) != -1)
            fail_msg("'%s' accepted", bad_weights[i]);
        assert_int_equal(err.code, ALLOT_EINVAL);
        assert_int_equal(w.n, 3);
    }
    struct billing_weights w;
    struct allot_error err = {0};
    assert_int_equal(billing_weights_parse(NULL, 0, &w, &err), -1);
    char many[2048] = "";
    size_t used = 0;
    for (int i = 0; i <= BILLING_WEIGHTS_MAX; i++)
        used +=
            (size_t)snprintf(many + used, sizeof(many) - used, "%sLicense/l%d=1", i ? "," : "", i);
    assert_int_equal(billing_weights_parse(many, 0, &w, &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
}

static void test_overflow(void **state)
{
    (void)state;
    struct billing_weights w;
    struct tres_list t;
    struct allot_error err = {0};
    int64_t micro = 5;
    assert_int_equal(billing_weights_parse("CPU=1P,GRES/gpu=1000000000", 0, &w, &err), 0);
    assert_int_equal(tres_parse("gres/gpu=9223372036854775807", &t, &err), 0);
    assert_int_equal(billing_compute(&w, &t, &micro, &err), -1);
    assert_int_equal(err.code, ALLOT_EINVAL);
    assert_int_equal(billing_weights_parse("CPU=1000000000", 0, &w, &err), 0);
    assert_int_equal(tres_parse("cpu=9223372036854775807", &t, &err), 0);
    assert_int_equal(billing_compute(&w, &t, &micro, &err), -1);
    assert_int_equal(billing_weights_parse("", 0, &w, &err), 0);
    assert_int_equal(billing_compute(&w, &t, &micro, &err), -1);
    assert_int_equal(micro, 5);
    t.item[0].count = -1;
    assert_int_equal(billing_compute(&w, &t, &micro, &err), -1);
    /* Sum of two huge global terms overflows 128 bits. */
    assert_int_equal(
        billing_weights_parse("CPU=1P,License/a=1000000000,License/b=1000000000", 0, &w, &err), 0);
    assert_int_equal(
        tres_parse("license/a=9223372036854775807,license/b=9223372036854775807", &t, &err), 0);
    assert_int_equal(billing_compute(&w, &t, &micro, &err), -1);
    assert_int_equal(micro, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),  cmocka_unit_test(test_hadm_charges),
        cmocka_unit_test(test_format),   cmocka_unit_test(test_bad),
        cmocka_unit_test(test_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
