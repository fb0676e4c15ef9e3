/* SPDX-License-Identifier: GPL-3.0-or-later */
/* table.c - unit tests of the CLI's output: aligned and parsable tables (table.c) and the
 * cell formatting of JSON replies (cli.c cli_cell: amounts, times, durations, lists). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "cli/table.h"

/* Print t into a string (caller frees). */
static char *render(table_t *t, enum table_mode mode, int header)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    table_print(t, f, mode, header);
    fclose(f);
    return buf;
}

static table_t *sample(void)
{
    static const char *const headers[] = {"Account", "Available", "Comment"};
    static const char *const r1[] = {"chem", "1500h", "a|b"};
    static const char *const r2[] = {"physics-long", "12h30m", "two\nlines"};
    table_t *t = table_create(3, headers);
    table_set_align(t, 1, TABLE_RIGHT);
    table_add_row(t, r1);
    table_add_row(t, r2);
    return t;
}

static void test_aligned(void **state)
{
    (void)state;
    table_t *t = sample();
    char *s = render(t, TABLE_ALIGNED, 1);
    assert_string_equal(s, "Account       Available  Comment\n"
                           "------------  ---------  ---------\n"
                           "chem              1500h  a|b\n"
                           "physics-long     12h30m  two lines\n");
    free(s);
    s = render(t, TABLE_ALIGNED, 0);
    assert_string_equal(s, "chem           1500h  a|b\n"
                           "physics-long  12h30m  two lines\n");
    free(s);
    table_destroy(t);
    table_destroy(NULL);
}

static void test_parsable(void **state)
{
    (void)state;
    table_t *t = sample();
    char *s = render(t, TABLE_PARSABLE, 1);
    /* '|' inside a cell would split the record: it becomes a space. */
    assert_string_equal(s, "Account|Available|Comment\n"
                           "chem|1500h|a b\n"
                           "physics-long|12h30m|two lines\n");
    free(s);
    s = render(t, TABLE_PARSABLE, 0);
    assert_string_equal(s, "chem|1500h|a b\nphysics-long|12h30m|two lines\n");
    free(s);
    table_destroy(t);
}

/* -p: sacctmgr's parsable form, each record ending with '|'. */
static void test_parsable_end(void **state)
{
    (void)state;
    table_t *t = sample();
    char *s = render(t, TABLE_PARSABLE_END, 1);
    assert_string_equal(s, "Account|Available|Comment|\n"
                           "chem|1500h|a b|\n"
                           "physics-long|12h30m|two lines|\n");
    free(s);
    table_destroy(t);
}

/* --csv: RFC 4180 fields; a comma, quote or line break quotes the field, quotes doubled. */
static void test_csv(void **state)
{
    (void)state;
    static const char *const headers[] = {"Account", "Comment"};
    static const char *const r1[] = {"chem", "a,b"};
    static const char *const r2[] = {"say \"hi\"", "two\nlines"};
    table_t *t = table_create(2, headers);
    table_add_row(t, r1);
    table_add_row(t, r2);
    char *s = render(t, TABLE_CSV, 1);
    assert_string_equal(s, "Account,Comment\n"
                           "chem,\"a,b\"\n"
                           "\"say \"\"hi\"\"\",\"two\nlines\"\n");
    free(s);
    s = render(t, TABLE_CSV, 0);
    assert_string_equal(s, "chem,\"a,b\"\n\"say \"\"hi\"\"\",\"two\nlines\"\n");
    free(s);
    table_destroy(t);
}

/* format=Name%W: the column is W wide; a longer cell (or header) is cut to W-1 characters and
 * a '+', counted in characters, not bytes. */
static void test_width(void **state)
{
    (void)state;
    static const char *const headers[] = {"Account", "Available"};
    static const char *const r1[] = {"Müllerstraße", "1500h"};
    static const char *const r2[] = {"ab", "12345678901h"};
    table_t *t = table_create(2, headers);
    table_set_align(t, 1, TABLE_RIGHT);
    table_set_width(t, 0, 5);
    table_set_width(t, 1, 8);
    table_add_row(t, r1);
    table_add_row(t, r2);
    char *s = render(t, TABLE_ALIGNED, 1);
    assert_string_equal(s, "Acco+  Availab+\n"
                           "-----  --------\n"
                           "Müll+     1500h\n"
                           "ab     1234567+\n");
    free(s);
    /* widths are for people: parsable output keeps every character */
    s = render(t, TABLE_PARSABLE, 0);
    assert_string_equal(s, "Müllerstraße|1500h\nab|12345678901h\n");
    free(s);
    table_set_width(t, 0, 1);
    table_set_width(t, 1, 0); /* back to the widest cell */
    s = render(t, TABLE_ALIGNED, 0);
    assert_string_equal(s, "+         1500h\n+  12345678901h\n");
    free(s);
    table_destroy(t);
}

static void test_no_trailing_blanks(void **state)
{
    (void)state;
    static const char *const headers[] = {"User", "UID", "Default", "Comment"};
    static const char *const r1[] = {"alice", "1001", "chem", ""};
    static const char *const r2[] = {"bob", "", "", ""};
    static const char *const r3[] = {"", "", "", ""};
    table_t *t = table_create(4, headers);
    table_set_align(t, 1, TABLE_RIGHT);
    table_add_row(t, r1);
    table_add_row(t, r2);
    table_add_row(t, r3);
    char *s = render(t, TABLE_ALIGNED, 1);
    /* Empty cells at the end of a row leave no blanks at the end of its line. */
    assert_string_equal(s, "User    UID  Default  Comment\n"
                           "-----  ----  -------  -------\n"
                           "alice  1001  chem\n"
                           "bob\n"
                           "\n");
    free(s);
    table_destroy(t);
}

/* Non-ASCII cells pad by characters, not bytes: "Müller" is 7 bytes but 6 wide. */
static void test_utf8_width(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t want;
    } widths[] = {
        {"", 0},
        {"chem", 4},
        {"M\xc3\xbcller", 6},     /* ü: 2 bytes */
        {"\xe2\x82\xac!", 2},     /* euro sign: 3 bytes */
        {"\xf0\x9f\x98\x80!", 2}, /* U+1F600: 4 bytes */
        {"\xc3", 1},              /* a truncated sequence still counts its lead byte */
    };
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
        if (table_width(widths[i].s) != widths[i].want)
            fail_msg("table_width(case %zu) = %zu, want %zu", i, table_width(widths[i].s),
                     widths[i].want);

    static const char *const headers[] = {"Account", "Comment", "Shares"};
    static const char *const r1[] = {"chem", "M\xc3\xbcller", "10"};
    static const char *const r2[] = {"phys", "Smith", "200"};
    table_t *t = table_create(3, headers);
    table_set_align(t, 2, TABLE_RIGHT);
    table_add_row(t, r1);
    table_add_row(t, r2);
    char *s = render(t, TABLE_ALIGNED, 1);
    assert_string_equal(s, "Account  Comment  Shares\n"
                           "-------  -------  ------\n"
                           "chem     M\xc3\xbcller       10\n"
                           "phys     Smith       200\n");
    free(s);
    table_destroy(t);

    /* The widest cell is the non-ASCII one: the dashes and the header follow its width. */
    static const char *const h2[] = {"N", "X"};
    static const char *const r3[] = {"\xc3\xa9t\xc3\xa9", "1"};
    t = table_create(2, h2);
    table_add_row(t, r3);
    s = render(t, TABLE_ALIGNED, 1);
    assert_string_equal(s, "N    X\n---  -\n\xc3\xa9t\xc3\xa9  1\n");
    free(s);
    table_destroy(t);
}

static void test_empty(void **state)
{
    (void)state;
    static const char *const headers[] = {"ID", "Name"};
    table_t *t = table_create(2, headers);
    char *s = render(t, TABLE_ALIGNED, 1);
    assert_string_equal(s, "ID  Name\n--  ----\n");
    free(s);
    s = render(t, TABLE_PARSABLE, 0);
    assert_string_equal(s, "");
    free(s);
    table_destroy(t);
}

static void test_cells(void **state)
{
    (void)state;
    json_t *row = json_loads("{\"granted_sumin\":6000000,\"used_sumin\":750,\"neg\":-3,"
                             "\"start\":\"2026-01-01T00:00:00Z\",\"t\":1767225600,"
                             "\"d\":90061,\"d2\":5400,\"unl\":-1,\"b\":true,"
                             "\"balance\":{\"available_sumin\":60},\"qos\":[\"a\",\"b\"],"
                             "\"n\":null,\"obj\":{\"x\":1}}",
                             0, NULL);
    char buf[128];
    static const struct {
        struct column col;
        const char *want;
    } cases[] = {
        {{"G", "granted_sumin", C_SUMIN}, "100000h"},
        {{"U", "used_sumin", C_SUMIN}, "12h30m"},
        {{"N", "neg", C_SUMIN}, "-3m"},
        {{"S", "start", C_TIME}, "2026-01-01T00:00:00Z"},
        {{"T", "t", C_TIME}, "2026-01-01T00:00:00Z"},
        {{"D", "d", C_DURATION}, "1-01:01:01"},
        {{"D2", "d2", C_DURATION}, "01:30:00"},
        {{"U", "unl", C_DURATION}, "UNLIMITED"},
        {{"DT", "unl", C_DEFTIME}, "NONE"}, /* Slurm shows an unset DefaultTime as NONE */
        {{"DT2", "d2", C_DEFTIME}, "01:30:00"},
        {{"B", "b", C_BOOL}, "yes"},
        {{"A", "balance.available_sumin", C_SUMIN}, "1h"},
        {{"A2", "other.granted_sumin", C_SUMIN}, "100000h"}, /* falls back to top level */
        {{"Q", "qos", C_STR}, "a,b"},
        {{"M", "missing", C_STR}, ""},
        {{"Nu", "n", C_STR}, ""},
        {{"O", "obj", C_JSON}, "{\"x\":1}"},
        {{"I", "granted_sumin", C_INT}, "6000000"},
        {{"Mi", "granted_sumin", C_MICRO}, "6"},
        {{"Mi2", "d", C_MICRO}, "0.090061"},
        {{"Oi", "unl", C_OPTINT}, ""}, /* uid -1, fairshare -1: not set */
        {{"Oi2", "d2", C_OPTINT}, "5400"},
    };
    assert_non_null(row);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = cli_cell(row, &cases[i].col, buf, sizeof(buf));
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("column %s: got '%s', want '%s'", cases[i].col.json, got, cases[i].want);
    }
    json_decref(row);
}

static void test_rows(void **state)
{
    (void)state;
    json_t *a = json_loads("{\"items\":[{\"x\":1},{\"x\":2}],\"next_after\":5}", 0, NULL);
    json_t *b = json_loads("[{\"x\":1}]", 0, NULL);
    json_t *c = json_loads("{\"x\":1}", 0, NULL);
    assert_int_equal(json_array_size(cli_rows(a)), 2);
    assert_int_equal(json_array_size(cli_rows(b)), 1);
    assert_null(cli_rows(c));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aligned),    cmocka_unit_test(test_parsable),
        cmocka_unit_test(test_empty),      cmocka_unit_test(test_cells),
        cmocka_unit_test(test_rows),       cmocka_unit_test(test_no_trailing_blanks),
        cmocka_unit_test(test_utf8_width), cmocka_unit_test(test_parsable_end),
        cmocka_unit_test(test_csv),        cmocka_unit_test(test_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
