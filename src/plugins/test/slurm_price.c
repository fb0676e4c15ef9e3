/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * slurm_price.c - tests of pricing under Slurm's own weights (plugins/common/slurm_price.h):
 * a fractional weight keeps its fraction (Slurm's billing TRES would truncate it), no
 * weights bill the CPU count as Slurm does, MAX_TRES takes the largest node-level TRES, and
 * weights or TRES allot cannot read are an error that leaves the output untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "plugins/common/slurm_price.h"

static void test_fraction_kept(void **state)
{
    (void)state;
    struct allot_error err;
    int64_t b = 0;
    assert_int_equal(slurm_price_billing("CPU=2.5", 0, "cpu=1,mem=1G,node=1,billing=2", &b, &err),
                     0);
    assert_int_equal(b, 2500000);
    assert_int_equal(slurm_price_billing("CPU=1.0,Mem=0.5G", 0, "cpu=1,mem=2048M,node=1", &b, &err),
                     0);
    assert_int_equal(b, 2000000);
}

static void test_no_weights_bill_cpus(void **state)
{
    (void)state;
    struct allot_error err;
    int64_t b = 0;
    assert_int_equal(slurm_price_billing(NULL, 0, "cpu=3,mem=100M,node=1", &b, &err), 0);
    assert_int_equal(b, 3000000);
    assert_int_equal(slurm_price_billing("", 0, "cpu=2,node=1", &b, &err), 0);
    assert_int_equal(b, 2000000);
}

static void test_max_tres(void **state)
{
    (void)state;
    struct allot_error err;
    int64_t b = 0;
    assert_int_equal(slurm_price_billing("CPU=1.0,Mem=1G", 1, "cpu=2,mem=4G,node=1", &b, &err), 0);
    assert_int_equal(b, 4000000);
    assert_int_equal(slurm_price_billing("CPU=1.0,Mem=1G", 0, "cpu=2,mem=4G,node=1", &b, &err), 0);
    assert_int_equal(b, 6000000);
}

static void test_unreadable(void **state)
{
    (void)state;
    struct allot_error err;
    int64_t b = 77;
    assert_int_equal(slurm_price_billing("CPU=-1", 0, "cpu=1", &b, &err), -1);
    assert_non_null(strstr(err.msg, "TRESBillingWeights \"CPU=-1\""));
    assert_int_equal(slurm_price_billing("CPU=1", 0, "cpu=x", &b, &err), -1);
    assert_non_null(strstr(err.msg, "TRES \"cpu=x\""));
    assert_int_equal(b, 77);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fraction_kept),
        cmocka_unit_test(test_no_weights_bill_cpus),
        cmocka_unit_test(test_max_tres),
        cmocka_unit_test(test_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
