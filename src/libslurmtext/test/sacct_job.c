/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacct_job.c - `allot import sacct` rows: a header in any column order, job rows read as
 * UTC, steps / running / never-started rows passed over, and each kind of bad row refused
 * naming its column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/sacct_job.h"

#define HDR "JobIDRaw|State|User|Account|Partition|Start|End|Elapsed|AllocTRES|QOS|Timelimit"

static struct slt_span sp(const char *s)
{
    return (struct slt_span){s, strlen(s)};
}

static int row(const char *hdr, const char *line, struct slt_sacct_job *j, struct allot_error *e)
{
    struct slt_sacct_header h;
    assert_int_equal(slt_sacct_header_parse(sp(hdr), &h, NULL), 0);
    return slt_sacct_job_parse(&h, sp(line), j, e);
}

static void test_job_row(void **state)
{
    (void)state;
    struct slt_sacct_job j;
    assert_int_equal(row(HDR,
                         "42|CANCELLED by 1001|alice|chem|batch|2026-01-01T00:00:00|"
                         "2026-01-01T01:00:05|01:00:05|billing=4,cpu=4,mem=8G,node=1|normal|"
                         "1-00:00:00",
                         &j, NULL),
                     1);
    assert_int_equal(j.job_id, 42);
    assert_string_equal(j.state, "CANCELLED by 1001");
    assert_int_equal(j.start_s, 1767225600); /* 2026-01-01T00:00:00Z */
    assert_int_equal(j.end_s, 1767225600 + 3605);
    assert_int_equal(j.elapsed_s, 3605);
    assert_int_equal(j.time_limit_s, 86400);
    assert_int_equal(j.account.n, 4);
    assert_memory_equal(j.account.p, "chem", 4);
    /* Another column order, sacct -p's trailing '|', no QOS or Timelimit. */
    assert_int_equal(row("State|JobIDRaw|Elapsed|User|Account|Partition|AllocTRES|Start|End|",
                         "COMPLETED|7|00:00:01|bob|phys|p|cpu=1|2026-02-01T00:00:00|"
                         "2026-02-01T00:00:01|",
                         &j, NULL),
                     1);
    assert_int_equal(j.job_id, 7);
    assert_int_equal(j.time_limit_s, 0);
    assert_int_equal(j.qos.n, 0);
}

static void test_passed_over(void **state)
{
    (void)state;
    struct slt_sacct_job j;
    /* a step; a running job; a job cancelled while pending (no start) */
    assert_int_equal(row(HDR,
                         "42.batch|COMPLETED|||batch|2026-01-01T00:00:00|2026-01-01T01:00:00|"
                         "01:00:00|cpu=4||",
                         &j, NULL),
                     0);
    assert_int_equal(row(HDR,
                         "43|RUNNING|alice|chem|batch|2026-01-01T00:00:00|Unknown|01:00:00|"
                         "cpu=4|normal|02:00:00",
                         &j, NULL),
                     0);
    assert_int_equal(
        row(HDR,
            "44|CANCELLED by 0|alice|chem|batch|None|2026-01-01T00:00:00|00:00:00||normal|"
            "02:00:00",
            &j, NULL),
        0);
}

static void test_refused(void **state)
{
    (void)state;
    struct slt_sacct_job j;
    struct allot_error e = {0};
    struct slt_sacct_header h;
    assert_int_equal(slt_sacct_header_parse(sp("JobID|State|User"), &h, &e), -1);
    assert_non_null(strstr(e.msg, "no JobIDRaw column"));
    assert_int_equal(slt_sacct_header_parse(
                         sp("JobIDRaw|State|User|Account|Partition|Start|End|AllocTRES"), &h, &e),
                     -1);
    assert_non_null(strstr(e.msg, "no Elapsed column"));
    assert_int_equal(row(HDR,
                         "45|COMPLETED|alice|chem|batch|2026-01-01T00:00:00|2026-01-01T01:00:00|"
                         "1:xx:00|cpu=4|normal|02:00:00",
                         &j, &e),
                     -1);
    assert_non_null(strstr(e.msg, "Elapsed"));
    assert_int_equal(row(HDR,
                         "45_3|COMPLETED|alice|chem|batch|2026-01-01T00:00:00|"
                         "2026-01-01T01:00:00|01:00:00|cpu=4|normal|02:00:00",
                         &j, &e),
                     -1);
    assert_non_null(strstr(e.msg, "JobIDRaw"));
    assert_int_equal(row(HDR,
                         "46|COMPLETED|alice|chem|batch|2026-01-01T02:00:00|2026-01-01T01:00:00|"
                         "01:00:00|cpu=4|normal|02:00:00",
                         &j, &e),
                     -1);
    assert_non_null(strstr(e.msg, "End: before Start"));
    assert_int_equal(row(HDR, "47|COMPLETED|alice|chem", &j, &e), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_row),
        cmocka_unit_test(test_passed_over),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
