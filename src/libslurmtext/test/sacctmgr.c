/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacctmgr.c - real 'sacctmgr -P -n show assoc|qos format=...' output from the test
 * cluster: each column by name, empty = no limit, durations and TRES lists readable.  The same
 * checks run on Slurm 22.05.8's and 24.11.5's output (tests/lib/record-slurm-samples.t makes the
 * same associations and QOS on both). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/duration.h"
#include "libslurmtext/sacctmgr.h"
#include "libslurmtext/tres_field.h"
#include "data.h"

/* The span of column col of r (which must have it). */
static struct slt_span col(const struct slt_mgr_row *r, const char *name)
{
    struct slt_span v;
    if (!slt_mgr_get(r, name, &v))
        fail_msg("no column %s", name);
    return v;
}

static void test_assoc(void **state)
{
    size_t len;
    char *text = data_load(*state, &len);
    static const char fmtlist[] = "Cluster,Account,User,Partition,Share,GrpTRES,GrpTRESMins,"
                                  "MaxTRES,MaxJobs,MaxSubmit,MaxWall,QOS,DefaultQOS";
    struct slt_mgr_format fmt;
    assert_int_equal(slt_mgr_format_parse(fmtlist, &fmt, NULL), 0);
    size_t pos = 0, rows = 0;
    struct slt_span line;
    int seen_limits = 0;
    while (slt_next_line(text, len, &pos, &line)) {
        struct slt_mgr_row r;
        struct allot_error err = {0};
        if (slt_mgr_row_parse(&fmt, line, &r, &err) != 0)
            fail_msg("%s", err.msg);
        rows++;
        struct slt_span user, grp = col(&r, "GrpTRES"), wall_text = col(&r, "MaxWall");
        assert_true(slt_mgr_get(&r, "user", &user)); /* names are case-insensitive */
        assert_true(slt_eq(col(&r, "Share"), "1"));
        struct slt_duration wall;
        assert_int_equal(slt_duration_parse(wall_text.p, wall_text.n, "MaxWall", &wall, NULL), 0);
        if (grp.n > 0) {
            struct tres_list tl;
            bool has;
            assert_int_equal(slt_tres_field_parse(grp, "GrpTRES", &has, &tl, NULL), 0);
            assert_int_equal(tres_get(&tl, "cpu"), 8);
            assert_int_equal(tres_get(&tl, "mem"), 16000);
            assert_true(slt_eq(col(&r, "MaxJobs"), "5"));
            assert_int_equal(wall.ms, 12 * 3600000LL);
            seen_limits = 1;
        } else {
            assert_true(slt_eq(col(&r, "MaxJobs"), "")); /* empty: no limit, not zero */
            assert_int_equal(wall.kind, SLT_DUR_NONE);
        }
    }
    assert_int_equal(rows, 4);
    assert_true(seen_limits);
    free(text);
}

static void test_qos(void **state)
{
    size_t len;
    char *text = data_load(*state, &len);
    struct slt_mgr_format fmt;
    assert_int_equal(slt_mgr_format_parse("Name,Priority,Flags,UsageFactor,MaxWall,GrpTRES,"
                                          "MaxTRESPU,GrpTRESMins",
                                          &fmt, NULL),
                     0);
    size_t pos = 0;
    struct slt_span line;
    struct slt_mgr_row r;
    assert_true(slt_next_line(text, len, &pos, &line));
    assert_int_equal(slt_mgr_row_parse(&fmt, line, &r, NULL), 0);
    assert_true(slt_eq(col(&r, "flags"), "DenyOnLimit,NoDecay"));
    struct slt_span wall_text = col(&r, "MaxWall");
    struct slt_duration wall;
    assert_int_equal(slt_duration_parse(wall_text.p, wall_text.n, "MaxWall", &wall, NULL), 0);
    assert_int_equal(wall.ms, 2 * 86400000LL);
    assert_true(slt_next_line(text, len, &pos, &line));
    assert_int_equal(slt_mgr_row_parse(&fmt, line, &r, NULL), 0);
    assert_true(slt_eq(col(&r, "Priority"), "10"));
    assert_true(slt_eq(col(&r, "UsageFactor"), "0.500000"));
    struct slt_span v;
    assert_false(slt_mgr_get(&r, "Nope", &v));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_assoc, "sacctmgr-assoc-22.05.8.txt"),
        cmocka_unit_test_prestate(test_assoc, "sacctmgr-assoc-24.11.5.txt"),
        cmocka_unit_test_prestate(test_qos, "sacctmgr-qos-22.05.8.txt"),
        cmocka_unit_test_prestate(test_qos, "sacctmgr-qos-24.11.5.txt"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
