/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sacctmgr_dump.c - a real `sacctmgr dump` of the test cluster (22.05.8) read record by
 * record, and hand-made lines: quoting, options, and each structural error with its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libslurmtext/sacctmgr_dump.h"
#include "data.h"

static struct slt_span S(const char *s) {
    return (struct slt_span){s, strlen(s)};
}

static void
assert_span(struct slt_span s, const char *want)
{
    if (!slt_eq(s, want))
        fail_msg("'%.*s' != '%s'", (int)s.n, s.p, want);
}

/* The value of r's option key, by any case of its name, as a reader of the dump finds it. */
static bool opt_get(const struct slt_dump_record *r, const char *key, struct slt_span *out)
{
    for (size_t i = 0; i < r->n; i++)
        if (slt_eq_nocase(r->opt[i].key, key)) {
            *out = r->opt[i].value;
            return true;
        }
    return false;
}

static void test_real_dump(void **state)
{
    size_t len;
    char *text = data_load("sacctmgr-dump-22.05.8.txt", &len);
    struct slt_dump_cursor c;
    slt_dump_cursor_init(&c, text, len);
    struct slt_dump_record r;
    struct slt_span parent, v;
    long line;
    int n[4] = {0}, rc;
    struct allot_error err = {0};
    while ((rc = slt_dump_next(&c, &r, &line, &parent, &err)) == 1) {
        n[r.kind]++;
        if (r.kind == SLT_DUMP_CLUSTER) {
            assert_int_equal(line, 13); /* after the 12 comment lines */
            assert_span(r.name, "test");
            assert_true(opt_get(&r, "qos", &v));
            assert_span(v, "high,long,low,normal");
            assert_true(opt_get(&r, "DefaultQOS", &v));
            assert_span(v, "normal");
        }
        if (r.kind == SLT_DUMP_ACCOUNT && slt_eq(r.name, "d1")) {
            assert_span(parent, "root");
            assert_true(opt_get(&r, "Description", &v));
            assert_span(v, "division 1 of science"); /* stored lowercased by Slurm */
            assert_true(opt_get(&r, "GrpTRES", &v));
            assert_span(v, "cpu=100,mem=64G");
        }
        if (r.kind == SLT_DUMP_ACCOUNT && slt_eq(r.name, "d1g3")) {
            assert_true(opt_get(&r, "Fairshare", &v));
            assert_span(v, "2147483647"); /* Fairshare=parent */
        }
        if (r.kind == SLT_DUMP_USER && slt_eq(r.name, "u091")) {
            assert_span(parent, "d1g1p1");
            assert_int_equal(line, 34);
            assert_true(opt_get(&r, "QOS", &v));
            assert_span(v, "+low");
            assert_true(opt_get(&r, "GrpTRESMins", &v));
            assert_span(v, "cpu=91000,mem=455000M");
            assert_true(opt_get(&r, "GrpWall", &v));
            assert_span(v, "691");
        }
    }
    if (rc < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(n[SLT_DUMP_CLUSTER], 1);
    assert_int_equal(n[SLT_DUMP_PARENT], 4);
    assert_int_equal(n[SLT_DUMP_ACCOUNT], 11);
    assert_int_equal(n[SLT_DUMP_USER], 24);
    free(text);
}

/* Slurm 24.11.5's dump of the cluster tests/lib/record-slurm-samples.t sets up: account
 * acct1 under root, root in it with limits. */
static void test_recorded_dump(void **state)
{
    (void)state;
    size_t len;
    char *text = data_load("sacctmgr-dump-24.11.5.txt", &len);
    struct slt_dump_cursor c;
    slt_dump_cursor_init(&c, text, len);
    struct slt_dump_record r;
    struct slt_span parent, v;
    long line;
    int n[4] = {0}, rc, seen = 0;
    struct allot_error err = {0};
    while ((rc = slt_dump_next(&c, &r, &line, &parent, &err)) == 1) {
        n[r.kind]++;
        if (r.kind == SLT_DUMP_CLUSTER)
            assert_span(r.name, "steptest");
        if (r.kind == SLT_DUMP_ACCOUNT && slt_eq(r.name, "acct1")) {
            assert_span(parent, "root");
            seen |= 1;
        }
        if (r.kind == SLT_DUMP_USER && slt_eq(r.name, "root") && slt_eq(parent, "acct1")) {
            assert_true(opt_get(&r, "GrpTRES", &v));
            assert_span(v, "cpu=8,mem=16000M");
            assert_true(opt_get(&r, "GrpTRESMins", &v));
            assert_span(v, "cpu=6000");
            assert_true(opt_get(&r, "MaxJobs", &v));
            assert_span(v, "5");
            assert_true(opt_get(&r, "MaxWallDurationPerJob", &v));
            assert_span(v, "720");
            seen |= 2;
        }
    }
    if (rc < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(n[SLT_DUMP_CLUSTER], 1);
    assert_int_equal(n[SLT_DUMP_USER], 2);
    assert_int_equal(seen, 3);
    free(text);
}

static void test_line(void **state)
{
    struct slt_dump_record r;
    struct slt_span v;
    assert_int_equal(slt_dump_line_parse(S("# comment"), &r, NULL), 0);
    assert_int_equal(slt_dump_line_parse(S("   "), &r, NULL), 0);
    assert_int_equal(
        slt_dump_line_parse(S("Account - 'a':Description='x: y':MaxJobs=4 "), &r, NULL), 1);
    assert_int_equal(r.kind, SLT_DUMP_ACCOUNT);
    assert_int_equal(r.n, 2);
    assert_span(r.opt[0].key, "Description"); /* keys as written, in order */
    assert_span(r.opt[0].value, "x: y");      /* a quoted value keeps its ':' */
    assert_span(r.opt[1].key, "MaxJobs");
    assert_span(r.opt[1].value, "4");
    assert_int_equal(slt_dump_line_parse(S("User - \"bob\":QOS=\"a,b\":Fairshare="), &r, NULL), 1);
    assert_span(r.name, "bob");
    assert_true(opt_get(&r, "Fairshare", &v));
    assert_int_equal(v.n, 0);
    assert_int_equal(slt_dump_line_parse(S("Parent - 'root'"), &r, NULL), 1);
    assert_int_equal(r.kind, SLT_DUMP_PARENT);
}

static void bad_line(const char *line, const char *want)
{
    struct slt_dump_record r;
    memset(&r, 0x5a, sizeof r);
    struct allot_error err = {0};
    assert_int_equal(slt_dump_line_parse(S(line), &r, &err), -1);
    if (!strstr(err.msg, want))
        fail_msg("'%s': '%s' lacks '%s'", line, err.msg, want);
    assert_int_equal(((unsigned char *)&r)[0], 0x5a); /* untouched */
}

static void test_bad_lines(void **state)
{
    bad_line("Acount - 'a'", "not Cluster, Parent, Account or User");
    bad_line("Account 'a'", "'-' expected");
    bad_line("Account - a", "quoted name expected");
    bad_line("Account - 'a", "unterminated quote");
    bad_line("Account - ''", "empty name");
    bad_line("Account - 'a':Description='x", "unterminated quote");
    bad_line("Account - 'a':MaxJobs", "without '='");
    bad_line("Account - 'a':=4", "empty option name");
    bad_line("Account - 'a' MaxJobs=4", "':' expected");
    bad_line("Account - 'a':MaxJobs=4:maxjobs=5", "given twice");
    bad_line("Parent - 'a':MaxJobs=4", "takes no options");
}

static void bad_dump_n(const char *text, size_t len, const char *want)
{
    struct slt_dump_cursor c;
    slt_dump_cursor_init(&c, text, len);
    struct slt_dump_record r;
    struct slt_span parent;
    long line;
    struct allot_error err = {0};
    int rc;
    while ((rc = slt_dump_next(&c, &r, &line, &parent, &err)) == 1)
        ;
    assert_int_equal(rc, -1);
    if (!strstr(err.msg, want))
        fail_msg("'%s' lacks '%s'", err.msg, want);
}

static void bad_dump(const char *text, const char *want)
{
    bad_dump_n(text, strlen(text), want);
}

static void test_bad_dumps(void **state)
{
    bad_dump("# nothing\n", "no Cluster line in the dump (1 lines read)");
    bad_dump("", "no Cluster line in the dump (0 lines read)");
    bad_dump("Parent - 'root'\n", "line 1: Parent line before the Cluster line");
    bad_dump("Cluster - 'c'\nAccount - 'a'\n", "line 2: Account line before any Parent");
    bad_dump("Cluster - 'c'\nParent - 'root'\nCluster - 'd'\n", "line 3: a second Cluster");
    bad_dump("Cluster - 'c'\n\n# x\nParent - 'root'\nUser - 'u':MaxJobs\n",
             "line 5: User: option without '='");
    static const char nul[] = "Cluster - 'c'\nParent - 'root'\nUser - 'u'\0:x\n";
    bad_dump_n(nul, sizeof nul - 1, "line 3: contains a NUL");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_dump), cmocka_unit_test(test_recorded_dump),
        cmocka_unit_test(test_line),      cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_bad_dumps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
