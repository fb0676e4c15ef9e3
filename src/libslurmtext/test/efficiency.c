/* SPDX-License-Identifier: GPL-3.0-or-later */
/* efficiency.c - seff-style efficiency over the real sacct rows of job 1 on the test
 * cluster (TotalCPU 4.511 s over 8 s x 1 CPU; max step MaxRSS 414264K of ReqMem 500M), and
 * the per-CPU / per-node ReqMem forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/efficiency.h"
#include "data.h"

static void test_real_job1(void **state)
{
    size_t len, flen;
    char *text = data_load("sacct-22.05.8.txt", &len);
    char *fmttext = data_load("sacct-22.05.8.format", &flen);
    fmttext[strcspn(fmttext, "\n")] = '\0';
    struct slt_acct_format fmt;
    assert_int_equal(slt_acct_format_parse(fmttext, &fmt, NULL), 0);
    struct slt_efficiency e;
    slt_efficiency_init(&e, 1);
    size_t pos = 0;
    struct slt_span line;
    while (slt_next_line(text, len, &pos, &line)) {
        struct slt_acct_row r;
        assert_int_equal(slt_acct_row_parse(&fmt, line, &r, NULL), 0);
        assert_int_equal(slt_efficiency_add(&e, &r, NULL), 0);
    }
    slt_efficiency_finish(&e);
    assert_true(e.has_cpu);
    assert_int_equal(e.cpu_used_ms, 4511);
    assert_int_equal(e.core_wall_ms, 8000);
    assert_true(e.cpu_pct > 56.38 && e.cpu_pct < 56.39);
    assert_true(e.has_mem);
    assert_int_equal(e.mem_used_bytes, 414264LL * 1024);
    assert_int_equal(e.mem_req_bytes, 500LL << 20);
    free(text);
    free(fmttext);
}

static void test_scopes(void **state)
{
    struct slt_acct_format fmt;
    assert_int_equal(slt_acct_format_parse("JobID,Elapsed,TotalCPU,AllocCPUS,NNodes,ReqMem,"
                                           "MaxRSS",
                                           &fmt, NULL),
                     0);
    static const struct {
        const char *job, *step;
        int64_t req;
    } v[] = {
        {"5|00:10:00|00:20:00|4|2|1000Mc|", "5.0||||||2000M", 4000LL << 20},
        {"5|00:10:00|00:20:00|4|2|1000Mn|", "5.0||||||2000M", 2000LL << 20},
    };
    for (size_t i = 0; i < 2; i++) {
        struct slt_efficiency e;
        struct slt_acct_row r;
        slt_efficiency_init(&e, 5);
        struct slt_span a = {v[i].job, strlen(v[i].job)}, b = {v[i].step, strlen(v[i].step)};
        assert_int_equal(slt_acct_row_parse(&fmt, a, &r, NULL), 0);
        assert_int_equal(slt_efficiency_add(&e, &r, NULL), 0);
        assert_int_equal(slt_acct_row_parse(&fmt, b, &r, NULL), 0);
        assert_int_equal(slt_efficiency_add(&e, &r, NULL), 0);
        slt_efficiency_finish(&e);
        assert_int_equal(e.mem_req_bytes, v[i].req);
        assert_true(e.cpu_pct > 49.99 && e.cpu_pct < 50.01);
    }
    /* Never ran: no efficiency rather than 0%. */
    struct slt_efficiency e;
    struct slt_acct_row r;
    slt_efficiency_init(&e, 6);
    struct slt_span a = {"6|00:00:00|00:00:00|1|1|500M|", 29};
    assert_int_equal(slt_acct_row_parse(&fmt, a, &r, NULL), 0);
    assert_int_equal(slt_efficiency_add(&e, &r, NULL), 0);
    slt_efficiency_finish(&e);
    assert_false(e.has_cpu);
    assert_false(e.has_mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_job1),
        cmocka_unit_test(test_scopes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
