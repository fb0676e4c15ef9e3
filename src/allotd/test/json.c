/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/json.c - unit tests of json.c's strict readers: unknown fields, wrong types,
 * missing required fields, amounts, times; outputs untouched on error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "allotd/json.h"

struct target {
    char name[ALLOT_NAME_MAX];
    int64_t n, t, su, sumin, billing, factor;
    int flag;
};

static int read_text(const char *text, struct target *x, struct allot_error *err)
{
    json_error_t je;
    json_t *in = json_loads(text, 0, &je);
    assert_non_null(in);
    struct jfield f[] = {
        {.name = "name", .type = JF_NAME, .required = 1, .dst = x->name},
        {.name = "n", .type = JF_INT, .dst = &x->n, .min = 1},
        {.name = "t", .type = JF_TIME, .dst = &x->t},
        {.name = "su", .type = JF_SU, .dst = &x->su},
        {.name = "amount_sumin", .type = JF_SUMIN, .dst = &x->sumin},
        {.name = "billing", .type = JF_BILLING, .dst = &x->billing},
        {.name = "factor", .type = JF_FACTOR, .dst = &x->factor},
        {.name = "flag", .type = JF_BOOL, .dst = &x->flag},
    };
    int rc = json_read(in, f, sizeof(f) / sizeof(f[0]), err);
    json_decref(in);
    return rc;
}

static void test_good(void **state)
{
    struct target x = {.n = 0};
    struct allot_error err = {0};
    assert_int_equal(read_text("{\"name\":\"chem\",\"n\":3,\"t\":\"2026-01-01\",\"su\":\"1.5h\","
                               "\"amount_sumin\":7,\"billing\":2,\"factor\":\"0.25\","
                               "\"flag\":true}",
                               &x, &err),
                     0);
    assert_string_equal(x.name, "chem");
    assert_int_equal(x.n, 3);
    assert_int_equal(x.t, 1767225600);
    assert_int_equal(x.su, 90);
    assert_int_equal(x.sumin, 7);
    assert_int_equal(x.billing, 2000000);
    assert_int_equal(x.factor, 250000);
    assert_int_equal(x.flag, 1);
    assert_int_equal(read_text("{\"name\":\"a\",\"t\":\"2026-01-01T01:00:00Z\"}", &x, &err), 0);
    assert_int_equal(x.t, 1767229200);
    assert_int_equal(read_text("{\"name\":\"a\",\"t\":5,\"n\":null}", &x, &err), 0);
    assert_int_equal(x.t, 5);
    /* The first and the last second a body may set (0 is "not given" in the bank). */
    assert_int_equal(read_text("{\"name\":\"a\",\"t\":\"1970-01-01T00:00:01Z\"}", &x, &err), 0);
    assert_int_equal(x.t, 1);
    assert_int_equal(read_text("{\"name\":\"a\",\"t\":\"9999-12-31T23:59:59Z\"}", &x, &err), 0);
    assert_int_equal(x.t, 253402300799);
    assert_int_equal(read_text("{\"name\":\"a\",\"t\":253402300799}", &x, &err), 0);
    assert_int_equal(x.t, 253402300799);
}

/* json_parse_time directly (the path of query parameters): no negative time, the field
 * named, the output untouched. */
static void test_parse_time_range(void **state)
{
    static const char *const before[] = {"1969-12-31", "1969-12-31T23:59:59Z", "1960-06-01",
                                         "0001-01-01"};
    for (size_t k = 0; k < sizeof(before) / sizeof(before[0]); k++) {
        int64_t t = 42;
        struct allot_error err = {0};
        assert_int_equal(json_parse_time("since", before[k], &t, &err), -1);
        assert_int_equal(err.code, ALLOT_EINVAL);
        if (strncmp(err.msg, "since: ", 7) != 0 || !strstr(err.msg, "before 1970-01-01"))
            fail_msg("%s: '%s'", before[k], err.msg);
        assert_int_equal(t, 42);
    }
    int64_t t = 42;
    struct allot_error err = {0};
    assert_int_equal(json_parse_time("since", "1970-01-01", &t, &err), 0);
    assert_int_equal(t, 0);
    assert_int_equal(json_parse_time("since", "1970-01-01T00:00:01Z", &t, &err), 0);
    assert_int_equal(t, 1);
    /* Five-digit years are past what a reply can print. */
    t = 42;
    if (json_parse_time("until", "10000-01-01", &t, &err) == 0)
        fail_msg("10000-01-01 read as %lld", (long long)t);
    assert_int_equal(t, 42);
}

static const struct {
    const char *text, *field;
} bad[] = {
    {"{}", "name: required"},
    {"{\"name\":\"a\",\"x\":1}", "x: unknown field"},
    {"{\"name\":7}", "name: must be a string"},
    {"{\"name\":\"a b\"}", "name"},
    {"{\"name\":\"a\",\"n\":0}", "n: must be >= 1"},
    {"{\"name\":\"a\",\"n\":\"3\"}", "n: must be an integer"},
    {"{\"name\":\"a\",\"t\":\"yesterday\"}", "t: 'yesterday' is not a time"},
    {"{\"name\":\"a\",\"t\":-1}", "t: must be after 1970-01-01T00:00:00Z"},
    {"{\"name\":\"a\",\"t\":0}", "t: must be after 1970-01-01T00:00:00Z"},
    {"{\"name\":\"a\",\"t\":\"1970-01-01\"}", "t: must be after 1970-01-01T00:00:00Z"},
    {"{\"name\":\"a\",\"t\":253402300800}", "t: must be after 1970-01-01T00:00:00Z and no"},
    {"{\"name\":\"a\",\"t\":99999999999999}", "t: must be after"},
    {"{\"name\":\"a\",\"t\":9223372036854775807}", "t: must be after"},
    {"{\"name\":\"a\",\"t\":\"1969-12-31\"}", "t: '1969-12-31' is before 1970-01-01"},
    {"{\"name\":\"a\",\"t\":\"1969-12-31T23:59:59Z\"}", "t: '1969-12-31T23:59:59Z' is before"},
    {"{\"name\":\"a\",\"t\":\"1900-01-01T00:00:00Z\"}", "t: '1900-01-01T00:00:00Z' is before"},
    {"{\"name\":\"a\",\"su\":\"-1h\"}", "su"},
    {"{\"name\":\"a\",\"su\":\"0h\"}", "su: must be positive"},
    {"{\"name\":\"a\",\"su\":60}", "su: must be a string with units"},
    {"{\"name\":\"a\",\"amount_sumin\":-3}", "amount_sumin: must be positive"},
    {"{\"name\":\"a\",\"billing\":-1}", "billing: must be 0.."},
    {"{\"name\":\"a\",\"billing\":9223372036854775807}", "billing: must be 0.."},
    {"{\"name\":\"a\",\"factor\":\"x\"}", "factor: 'x' is not a decimal"},
    {"{\"name\":\"a\",\"flag\":1}", "flag: must be true or false"},
};

static void test_bad(void **state)
{
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        struct target x;
        memset(&x, 0x5a, sizeof(x));
        struct target before = x;
        struct allot_error err = {0};
        assert_int_equal(read_text(bad[k].text, &x, &err), -1);
        assert_int_equal(err.code, ALLOT_EINVAL);
        if (strncmp(err.msg, bad[k].field, strlen(bad[k].field)) != 0)
            fail_msg("%s: want '%s', got '%s'", bad[k].text, bad[k].field, err.msg);
        /* The failing field is never written (earlier valid fields may be). */
        if (strstr(bad[k].field, "unknown"))
            assert_memory_equal(&x, &before, sizeof(x));
    }
}

static void test_time_format(void **state)
{
    json_t *t = json_time(1767225600);
    assert_string_equal(json_string_value(t), "2026-01-01T00:00:00Z");
    json_decref(t);
    t = json_time(0);
    assert_true(json_is_null(t));
    json_decref(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_parse_time_range),
        cmocka_unit_test(test_time_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
