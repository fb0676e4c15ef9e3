/* SPDX-License-Identifier: GPL-3.0-or-later */
/* acct_recorded.c - sacct and sstat output of the jobs tests/lib/record-slurm-samples.t runs,
 * as Slurm 24.11.5 printed it (test/data/sacct-24.11.5.txt, sstat-24.11.5.txt): every line
 * parses, and each kind of row reads as that job ended.  The jobs: 1 (ok) with steps stepa,
 * stepb and busy (timeout(1), exit 124), 2 (fail, exit 3), 3 (canc) and a heterogeneous job
 * (het) cancelled pending, 6 (tjob.sh) running with step 0 (s_tmo). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/acct.h"
#include "libslurmtext/tres_field.h"
#include "data.h"

static void test_sacct(void **state)
{
    (void)state;
    size_t len, flen;
    char *text = data_load("sacct-24.11.5.txt", &len);
    char *fmttext = data_load("sacct-24.11.5.format", &flen);
    fmttext[strcspn(fmttext, "\n")] = '\0';
    struct slt_acct_format fmt;
    struct allot_error err = {0};
    assert_int_equal(slt_acct_format_parse(fmttext, &fmt, &err), 0);
    size_t pos = 0, lines = 0;
    struct slt_span line;
    int seen = 0;
    while (slt_next_line(text, len, &pos, &line)) {
        struct slt_acct_row r;
        if (slt_acct_row_parse(&fmt, line, &r, &err) != 0)
            fail_msg("line %zu: %s", lines + 1, err.msg);
        lines++;
        if (r.alloc_tres.n > 0) {
            bool has;
            struct tres_list tl;
            if (slt_tres_field_parse(r.alloc_tres, "AllocTRES", &has, &tl, &err) != 0)
                fail_msg("line %zu: %s", lines, err.msg);
            assert_true(tres_get(&tl, "cpu") >= 1);
        }
        if (r.id.job == 1 && r.id.step_kind == SLT_STEP_NONE) {
            assert_int_equal(r.state.state, SLT_STATE_COMPLETED);
            assert_int_equal(r.timelimit.ms, 300000);
            assert_int_equal(r.req_mem.bytes, 500LL << 20);
            assert_true(r.elapsed.ms >= 3000);
            assert_int_equal(r.ave_cpu.kind, SLT_DUR_NONE); /* empty, not zero */
            seen |= 1;
        }
        if (r.id.job == 1 && r.id.step_kind == SLT_STEP_NUMBERED && r.id.step == 2) {
            assert_int_equal(r.state.state, SLT_STATE_FAILED);
            assert_int_equal(r.exit_code.status, 124);
            seen |= 2;
        }
        if (r.id.job == 2 && r.id.step_kind == SLT_STEP_NONE) {
            assert_int_equal(r.state.state, SLT_STATE_FAILED);
            assert_int_equal(r.exit_code.status, 3);
            seen |= 4;
        }
        if (r.id.job == 3) {
            assert_int_equal(r.state.state, SLT_STATE_CANCELLED);
            assert_true(r.state.has_by_uid);
            assert_int_equal(r.alloc_tres.n, 0); /* never ran */
            seen |= 8;
        }
        /* A heterogeneous job cancelled pending: 22.05 printed its components as 4+0 and
         * 4+1, 24.11 prints each under its own job id (4 and 5), with no "+N". */
        if (r.id.job == 4 || r.id.job == 5) {
            assert_false(r.id.has_het);
            assert_int_equal(r.state.state, SLT_STATE_CANCELLED);
            seen |= r.id.job == 4 ? 16 : 64;
        }
        if (r.id.job == 6) {
            assert_int_equal(r.state.state, SLT_STATE_RUNNING);
            assert_int_equal(r.end.kind, SLT_TIME_UNKNOWN);
            seen |= 32;
        }
    }
    assert_int_equal(seen, 127);
    free(text);
    free(fmttext);
}

static void test_sstat(void **state)
{
    (void)state;
    size_t len;
    char *text = data_load("sstat-24.11.5.txt", &len);
    struct slt_acct_format fmt;
    assert_int_equal(slt_acct_format_parse("JobID,AveCPU,MaxRSS,MaxVMSize,AveRSS,NTasks,"
                                           "MaxDiskRead",
                                           &fmt, NULL),
                     0);
    size_t pos = 0, lines = 0;
    struct slt_span line;
    int64_t prev = -1;
    while (slt_next_line(text, len, &pos, &line)) {
        struct slt_acct_row r;
        struct allot_error err = {0};
        if (slt_acct_row_parse(&fmt, line, &r, &err) != 0)
            fail_msg("line %zu: %s", lines + 1, err.msg);
        lines++;
        assert_int_equal(r.id.job, 6);
        assert_int_equal(r.id.step_kind, SLT_STEP_NUMBERED);
        assert_true(r.max_rss.has && r.max_rss.bytes > 0);
        assert_int_equal(r.ntasks, 1);
        assert_true(r.ave_cpu.ms >= prev); /* cumulative */
        prev = r.ave_cpu.ms;
    }
    assert_true(lines >= 5);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sacct),
        cmocka_unit_test(test_sstat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
