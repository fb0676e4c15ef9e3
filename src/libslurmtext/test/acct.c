/* SPDX-License-Identifier: GPL-3.0-or-later */
/* acct.c - sacct and sstat rows: every line of real output captured from Slurm 22.05.8 on
 * the test cluster (test/data/sacct-22.05.8.txt, sstat-22.05.8.txt) parses, with spot
 * checks of the values the step monitor and efficiency helper rely on; malformed lines
 * fail naming the column and leave the row untouched. */
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

static char *strip(char *s)
{
    s[strcspn(s, "\n")] = '\0';
    return s;
}

static void test_real_sacct(void **state)
{
    size_t len, flen;
    char *text = data_load("sacct-22.05.8.txt", &len);
    char *fmttext = strip(data_load("sacct-22.05.8.format", &flen));
    struct slt_acct_format fmt;
    struct allot_error err = {0};
    assert_int_equal(slt_acct_format_parse(fmttext, &fmt, &err), 0);
    assert_int_equal(fmt.n, 21);
    size_t pos = 0, lines = 0;
    struct slt_span line;
    int seen_oom_step = 0, seen_partlimit = 0, seen_het = 0, seen_tres = 0;
    while (slt_next_line(text, len, &pos, &line)) {
        struct slt_acct_row r;
        if (slt_acct_row_parse(&fmt, line, &r, &err) != 0)
            fail_msg("line %zu: %s", lines + 1, err.msg);
        lines++;
        if (r.id.job == 3 && r.id.step_kind == SLT_STEP_NUMBERED) {
            /* OverMemoryKill: the step is cancelled by root with SIGKILL, MaxRSS > --mem. */
            assert_int_equal(r.state.state, SLT_STATE_CANCELLED);
            assert_true(r.state.has_by_uid);
            assert_int_equal(r.exit_code.signal, 9);
            assert_true(r.max_rss.bytes > (100LL << 20));
            seen_oom_step = 1;
        }
        if (r.timelimit.kind == SLT_DUR_PARTITION_LIMIT)
            seen_partlimit = 1;
        if (r.id.has_het)
            seen_het = 1;
        if (r.alloc_tres.n > 0) {
            bool has;
            struct tres_list tl;
            if (slt_tres_field_parse(r.alloc_tres, "AllocTRES", &has, &tl, &err) != 0)
                fail_msg("line %zu: %s", lines, err.msg);
            assert_true(has);
            assert_true(tres_get(&tl, "cpu") >= 1);
            seen_tres = 1;
        }
        if (r.id.job == 1 && r.id.step_kind == SLT_STEP_NONE) {
            assert_int_equal(r.elapsed.ms, 8000);
            assert_int_equal(r.timelimit.ms, 300000);
            assert_int_equal(r.total_cpu.ms, 4511);
            assert_int_equal(r.req_mem.bytes, 500LL << 20);
            assert_int_equal(r.ave_cpu.kind, SLT_DUR_NONE); /* empty, not zero */
            assert_false(r.max_rss.has);
            assert_int_equal(r.start.kind, SLT_TIME_VALUE);
        }
        if (r.end.kind == SLT_TIME_UNKNOWN)
            assert_true(r.state.state == SLT_STATE_RUNNING || r.state.state == SLT_STATE_PENDING);
    }
    assert_true(lines >= 20);
    assert_true(seen_oom_step && seen_partlimit && seen_het && seen_tres);
    free(text);
    free(fmttext);
}

static void test_real_sstat(void **state)
{
    size_t len;
    char *text = data_load("sstat-22.05.8.txt", &len);
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
        assert_int_equal(r.id.step_kind, SLT_STEP_NUMBERED);
        assert_int_equal(r.max_rss.bytes, 4512LL * 1024);
        assert_int_equal(r.max_disk_read.bytes, 14937);
        assert_int_equal(r.ntasks, 1);
        assert_true(r.ave_cpu.ms >= prev); /* cumulative */
        prev = r.ave_cpu.ms;
    }
    assert_true(lines >= 5);
    free(text);
}

static void test_bad_lines(void **state)
{
    struct slt_acct_format fmt;
    assert_int_equal(slt_acct_format_parse("JobID,State,MaxRSS,Elapsed%20,Foo", &fmt, NULL), 0);
    assert_int_equal(fmt.col[3], SLT_COL_ELAPSED);
    assert_int_equal(fmt.col[4], SLT_COL_OTHER);
    struct slt_acct_row r;
    memset(&r, 0x33, sizeof(r));
    static const struct {
        const char *line, *needle;
    } bad[] = {
        {"1|COMPLETED|12Q|00:00:01|x", "MaxRSS: invalid memory size '12Q'"},
        {"1|DONE|1K|00:00:01|x", "State: unknown state 'DONE'"},
        {"1|COMPLETED|1K|00:99:01|x", "Elapsed: invalid duration"},
        {"|COMPLETED|1K|00:00:01|x", "JobID"},
        {"1|COMPLETED|1K", "3 fields, 5 columns"},
        {"1|COMPLETED|1K|00:00:01|x|y|z", "7 fields"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct allot_error err = {0};
        struct slt_span line = {bad[i].line, strlen(bad[i].line)};
        assert_int_equal(slt_acct_row_parse(&fmt, line, &r, &err), -1);
        if (!strstr(err.msg, bad[i].needle))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].line, err.msg, bad[i].needle);
        assert_int_equal(r.id.job, 0x33333333); /* untouched */
    }
    /* -p's trailing separator is accepted. */
    struct slt_span ok = {"1|COMPLETED|1K|00:00:01|x|", 26};
    assert_int_equal(slt_acct_row_parse(&fmt, ok, &r, NULL), 0);
    assert_int_equal(r.max_rss.bytes, 1024);
}

static void test_split(void **state)
{
    struct slt_span f[3];
    size_t n;
    struct slt_span line = {"a||b", 4};
    assert_int_equal(slt_split(line, '|', f, 3, &n, NULL), 0);
    assert_int_equal(n, 3);
    assert_int_equal(f[1].n, 0);
    struct slt_span many = {"a|b|c|d", 7};
    struct allot_error err = {0};
    assert_int_equal(slt_split(many, '|', f, 3, &n, &err), -1);
    assert_int_equal(err.code, ALLOT_ETOOBIG);
    const char *buf = "x\r\ny\n\nz";
    size_t pos = 0, count = 0;
    struct slt_span l;
    while (slt_next_line(buf, strlen(buf), &pos, &l))
        count++;
    assert_int_equal(count, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_sacct),
        cmocka_unit_test(test_real_sstat),
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
