/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test/json_fast.c - json_fast.c's direct encoder gives exactly the bytes jansson gives for
 * the tree json.c builds (what allotd sent before), for typical jobs, every ASCII byte in
 * every string field, times at 0 / negative / out of gmtime's range, extreme integers and
 * random values; and declines (NULL) strings with bytes >= 0x80.  json_fast_read takes
 * only bodies json_body + json_read take, with the same outputs (listed cases and 20,000
 * random bodies), and declines escapes, reals, big integers, unknown fields, duplicates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "allotd/json.h"
#include "allotd/json_fast.h"

/* What allotd sent before json_fast: the jansson tree, compact, plus '\n'. */
static char *reference(const char *verb, int replay, const struct job *j,
                       const struct allocation *a, const struct balance *b, size_t *len)
{
    json_t *o = json_pack("{s:b, s:b, s:o, s:o}", verb, 1, "replay", replay, "job", json_job(j),
                          "balance", json_balance(a, b));
    assert_non_null(o);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    assert_non_null(s);
    size_t n = strlen(s);
    char *out = malloc(n + 2);
    assert_non_null(out);
    memcpy(out, s, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    free(s);
    *len = n + 1;
    return out;
}

static void check_same(const char *verb, int replay, const struct job *j,
                       const struct allocation *a, const struct balance *b)
{
    size_t nref = 0, nfast = 0;
    char *ref = reference(verb, replay, j, a, b, &nref);
    char *fast = json_fast_job_reply(verb, replay, j, a, b, &nfast);
    assert_non_null(fast);
    if (nref != nfast || memcmp(ref, fast, nref) != 0) {
        fprintf(stderr, "jansson: %.*s\nfast:    %.*s\n", (int)nref, ref, (int)nfast, fast);
        fail_msg("json_fast differs from jansson");
    }
    free(ref);
    free(fast);
}

static void sample(struct job *j, struct allocation *a, struct balance *b)
{
    memset(j, 0, sizeof(*j));
    memset(a, 0, sizeof(*a));
    memset(b, 0, sizeof(*b));
    strcpy(j->cluster, "bench");
    j->job_id = 4242;
    j->run = 1;
    strcpy(j->user, "alice");
    strcpy(j->account, "acct7");
    strcpy(j->partition, "cpu");
    strcpy(j->qos, "normal");
    j->submit_s = 1767225600;
    j->start_s = 1767225660;
    j->end_s = 0;
    strcpy(j->req_tres, "cpu=4,mem=8G,node=1");
    strcpy(j->alloc_tres, "cpu=4,mem=8G,node=1,billing=4");
    j->billing_micro = 4000000;
    j->time_limit_s = 3600;
    j->elapsed_s = 61;
    strcpy(j->slurm_state, "COMPLETED");
    j->status = JOB_SETTLED;
    j->hold_sumin = 240;
    j->charge_sumin = 5;
    j->alloc_id = 7;
    strcpy(j->payer_account, "acct7");
    strcpy(j->settle_source, "api");
    j->updated_s = 1767229200;
    a->id = 7;
    strcpy(a->account, "acct7");
    strcpy(a->resource, "cpu");
    strcpy(a->category, "");
    a->start_s = 1577836800;
    a->end_s = 4070908800;
    b->granted_sumin = 100000000000;
    b->used_sumin = 12345;
    b->held_sumin = 678;
    b->available_sumin = 100000000000 - 12345 - 678;
}

static void test_typical(void **state)
{
    (void)state;
    struct job j;
    struct allocation a;
    struct balance b;
    sample(&j, &a, &b);
    check_same("held", 0, &j, &a, &b);
    check_same("settled", 1, &j, &a, &b);
    check_same("released", 0, &j, &a, &b);
    j.status = JOB_HELD;
    j.updated_s = 0;
    check_same("held", 1, &j, &a, &b);
}

/* Every byte 0x01..0x7f in every string field, alone and among others. */
static void test_ascii_escapes(void **state)
{
    (void)state;
    struct job j;
    struct allocation a;
    struct balance b;
    sample(&j, &a, &b);
    char *fields[] = {j.cluster,  j.user,       j.account,     j.partition,     j.qos,
                      j.req_tres, j.alloc_tres, j.slurm_state, j.payer_account, j.settle_source,
                      a.account,  a.resource,   a.cluster,     a.category};
    for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
        char saved[ALLOT_NAME_MAX];
        snprintf(saved, sizeof(saved), "%s", fields[f]);
        for (int c = 1; c < 0x80; c++) {
            snprintf(fields[f], 8, "a%cb%c", c, c);
            check_same("held", 0, &j, &a, &b);
        }
        snprintf(fields[f], ALLOT_NAME_MAX, "%s", saved);
    }
    char all[0x80];
    for (int c = 1; c < 0x80; c++)
        all[c - 1] = (char)c;
    all[0x7f] = '\0';
    snprintf(j.req_tres, sizeof(j.req_tres), "%s", all);
    check_same("settled", 1, &j, &a, &b);
}

/* Slurm's names of a job (array task, heterogeneous component, both) are in the direct
 * reply too, in the place and with the value json_job gives them: after "updated", a
 * heterogeneous job's "slurm_job_id" where an array's would stand. */
static void test_slurm_ids(void **state)
{
    (void)state;
    struct job j;
    struct allocation a;
    struct balance b;
    sample(&j, &a, &b);
    j.ids.array_job_id = 54;
    j.ids.array_task_id = 3;
    check_same("held", 0, &j, &a, &b);
    memset(&j.ids, 0, sizeof(j.ids));
    j.ids.het_job_id = 60;
    j.ids.het_job_offset = 1;
    check_same("settled", 1, &j, &a, &b);
    j.ids.array_job_id = 54;
    j.ids.array_task_id = 3;
    check_same("released", 0, &j, &a, &b);
    /* The order jansson gave when json_job set "slurm_job_id" twice. */
    json_t *o = json_job(&j);
    assert_non_null(o);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"updated\":\"2026-01-01T01:00:00Z\",\"array_job_id\":54,"
                                 "\"array_task_id\":3,\"slurm_job_id\":\"60+1\","
                                 "\"het_job_id\":60,\"het_job_offset\":1}"));
    free(text);
}

static void test_times_and_integers(void **state)
{
    (void)state;
    struct job j;
    struct allocation a;
    struct balance b;
    sample(&j, &a, &b);
    const int64_t times[] = {0,
                             1,
                             -1,
                             86399,
                             -86400 * 365,
                             253402300799,
                             253402300800,
                             INT64_MAX,
                             INT64_MIN,
                             (int64_t)1 << 56};
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        j.submit_s = j.start_s = j.end_s = j.updated_s = times[i];
        a.start_s = a.end_s = times[i];
        check_same("held", 0, &j, &a, &b);
    }
    const int64_t ints[] = {0, 1, -1, 9, 10, -10, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        int64_t v = ints[i];
        j.job_id = j.billing_micro = j.time_limit_s = j.elapsed_s = v;
        j.hold_sumin = j.charge_sumin = j.alloc_id = v;
        j.run = (int32_t)v;
        a.id = b.granted_sumin = b.used_sumin = b.held_sumin = b.available_sumin = v;
        check_same("settled", 1, &j, &a, &b);
    }
}

static void test_random(void **state)
{
    (void)state;
    struct job j;
    struct allocation a;
    struct balance b;
    sample(&j, &a, &b);
    srand(12345);
    for (int i = 0; i < 2000; i++) {
        j.job_id = ((int64_t)rand() << 31) ^ rand();
        j.hold_sumin = rand() - RAND_MAX / 2;
        j.start_s = rand() % 2 ? 0 : (int64_t)rand() * 3;
        j.status = (enum job_status)(rand() % 4);
        b.available_sumin = ((int64_t)rand() << 20) - rand();
        int n = rand() % 20;
        for (int k = 0; k < n; k++)
            j.qos[k] = (char)(1 + rand() % 0x7f);
        j.qos[n] = '\0';
        check_same(i % 2 ? "held" : "settled", i % 3 == 0, &j, &a, &b);
    }
}

static void test_non_ascii_declined(void **state)
{
    (void)state;
    struct job j;
    struct allocation a;
    struct balance b;
    sample(&j, &a, &b);
    size_t n = 0;
    strcpy(a.comment, "caf\xc3\xa9"); /* not in the reply: no effect */
    char *s = json_fast_job_reply("held", 0, &j, &a, &b, &n);
    assert_non_null(s);
    free(s);
    strcpy(j.slurm_state, "caf\xc3\xa9");
    assert_null(json_fast_job_reply("held", 0, &j, &a, &b, &n));
    strcpy(j.slurm_state, "\xff");
    assert_null(json_fast_job_reply("held", 0, &j, &a, &b, &n));
}

/* ---- request bodies: json_fast_read against json_body + json_read ---- */

struct body_out {
    char cluster[ALLOT_NAME_MAX], qos[ALLOT_NAME_MAX], tres[ALLOT_TRES_MAX];
    int64_t job_id, run, start, limit, billing;
    int flag;
};

static size_t body_table(struct body_out *o, struct jfield *f)
{
    const struct jfield t[] = {
        {.name = "cluster", .type = JF_NAME, .required = 1, .dst = o->cluster},
        {.name = "job_id", .type = JF_INT, .required = 1, .dst = &o->job_id, .min = 1},
        {.name = "run", .type = JF_INT, .dst = &o->run},
        {.name = "qos", .type = JF_NAME, .dst = o->qos, .allow_empty = 1},
        {.name = "start", .type = JF_TIME, .dst = &o->start},
        {.name = "time_limit_s", .type = JF_INT, .dst = &o->limit, .min = 1},
        {.name = "tres", .type = JF_TEXT, .dst = o->tres, .size = sizeof(o->tres)},
        {.name = "billing", .type = JF_BILLING, .dst = &o->billing},
        {.name = "billing_micro", .type = JF_INT, .dst = &o->billing},
        {.name = "flag", .type = JF_BOOL, .dst = &o->flag},
        {.name = "amount_sumin", .type = JF_SUMIN, .dst = &o->limit},
    };
    memcpy(f, t, sizeof(t));
    return sizeof(t) / sizeof(t[0]);
}

/* 1 when the fast reader took the body; fails the test when it took one jansson refuses or
 * read other values than jansson. */
static int compare_body(const char *body)
{
    struct body_out fo, so;
    struct jfield ff[16], sf[16];
    memset(&fo, 0x5a, sizeof(fo));
    memset(&so, 0x5a, sizeof(so));
    size_t n = body_table(&fo, ff);
    body_table(&so, sf);
    int fast = json_fast_read(body, strlen(body), ff, n);
    struct req r;
    memset(&r, 0, sizeof(r));
    r.body = (char *)body;
    r.body_len = strlen(body);
    struct allot_error err = {0};
    int slow = json_body(&r, &err) == 0 && json_read(r.in, sf, n, &err) == 0;
    json_decref(r.in);
    if (fast) {
        if (!slow)
            fail_msg("fast reader accepted what jansson refuses (%s): %s", err.msg, body);
        for (size_t i = 0; i < n; i++)
            if (ff[i].seen != sf[i].seen)
                fail_msg("seen differs for %s: %s", ff[i].name, body);
        if (memcmp(&fo, &so, sizeof(fo)) != 0)
            fail_msg("outputs differ: %s", body);
    }
    return fast;
}

static void test_body_cases(void **state)
{
    (void)state;
    assert_int_equal(compare_body("{\"cluster\":\"c1\",\"job_id\":5}"), 1);
    assert_int_equal(compare_body(" {\n\"cluster\" : \"c1\" , \"job_id\":7,\"run\":3,"
                                  "\"qos\":\"\",\"start\":\"2026-01-01T00:00:00Z\","
                                  "\"tres\":\"cpu=4,mem=1G\",\"billing\":2,\"flag\":true,"
                                  "\"time_limit_s\":null}\r\n"),
                     1);
    /* billing then billing_micro share a destination: the later in the table wins. */
    assert_int_equal(
        compare_body("{\"billing_micro\":5,\"billing\":2,\"cluster\":\"c\",\"job_id\":1}"), 1);
    /* Declined: jansson decides (errors, escapes, reals, big numbers, unknown types). */
    const char *declined[] = {
        "",
        "{}",
        "[]",
        "{\"cluster\":\"c1\"}",
        "{\"cluster\":\"c1\",\"job_id\":0}",
        "{\"cluster\":\"c1\",\"job_id\":5,\"x\":1}",
        "{\"cluster\":\"c1\",\"cluster\":\"c2\",\"job_id\":5}",
        "{\"cluster\":\"c\\u0031\",\"job_id\":5}",
        "{\"cluster\":\"c1\",\"job_id\":5.0}",
        "{\"cluster\":\"c1\",\"job_id\":5e0}",
        "{\"cluster\":\"c1\",\"job_id\":05}",
        "{\"cluster\":\"c1\",\"job_id\":1234567890123456789}",
        "{\"cluster\":\"c1\",\"job_id\":5,\"amount_sumin\":3}",
        "{\"cluster\":\"c1\",\"job_id\":5,}",
        "{\"cluster\":\"c1\",\"job_id\":5} x",
        "{\"cluster\":\"bad name\",\"job_id\":5}",
        "{\"cluster\":\"c1\",\"job_id\":5,\"start\":-1}",
        "{\"cluster\":\"c1\",\"job_id\":5,\"start\":\"yesterday\"}",
        "{\"cluster\":\"caf\xc3\xa9\",\"job_id\":5}",
        "{\"cluster\":\"c1\",\"job_id\":\"5\"}",
        "{\"cluster\":\"c1\",\"job_id\":5,\"flag\":1}",
        "{\"cluster\":\"c1\",\"job_id\":5,\"billing\":-1}",
        "{\"cluster\":\"c1\",\"job_id\":5",
        "{\"cluster\":\"c1\",\"job_id\":tru}",
    };
    for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++)
        if (compare_body(declined[i]) != 0)
            fail_msg("fast reader took: %s", declined[i]);
}

/* Random bodies built from pieces of valid and invalid JSON: whatever the fast reader
 * takes, jansson takes with the same values. */
static void test_body_random(void **state)
{
    (void)state;
    static const char *keys[] = {"cluster",      "job_id", "run",     "qos",           "start",
                                 "time_limit_s", "tres",   "billing", "billing_micro", "flag",
                                 "amount_sumin", "x",      "clust",   "cluster2",      ""};
    static const char *vals[] = {"\"c1\"",
                                 "\"\"",
                                 "5",
                                 "0",
                                 "-1",
                                 "-0",
                                 "1",
                                 "17",
                                 "null",
                                 "true",
                                 "false",
                                 "\"2026-01-01\"",
                                 "\"cpu=2\"",
                                 "1.5",
                                 "1e3",
                                 "\"a b\"",
                                 "\"x\\ny\"",
                                 "[]",
                                 "{}",
                                 "999999999999999999",
                                 "9999999999999999999",
                                 "00",
                                 "\"\xc3\xa9\"",
                                 "\"a/b\"",
                                 "9223372036854"};
    static const char *seps[] = {",", ",", ",", ",",   ",",   ",",  ",", ",", ",",
                                 ",", ",", ",", " , ", ",\n", ",,", ":", ""};
    char body[1024];
    int taken = 0;
    srand(777);
    for (int it = 0; it < 20000; it++) {
        size_t len = 0;
        body[len++] = rand() % 50 ? '{' : '[';
        int nf = rand() % 5;
        for (int k = 0; k < nf; k++) {
            const char *key = keys[rand() % (sizeof(keys) / sizeof(keys[0]))];
            const char *val = vals[rand() % (sizeof(vals) / sizeof(vals[0]))];
            if (k < 2 && rand() % 8) { /* mostly give the required fields */
                key = k == 0 ? "cluster" : "job_id";
                val = k == 0 ? "\"c1\"" : "42";
            }
            const char *sep = k + 1 < nf ? seps[rand() % (sizeof(seps) / sizeof(seps[0]))] : "";
            len += (size_t)snprintf(body + len, sizeof(body) - len, "%s\"%s\"%s%s%s",
                                    rand() % 5 ? "" : " ", key, rand() % 4 ? ":" : " : ", val, sep);
        }
        if (rand() % 30)
            body[len++] = '}';
        body[len] = '\0';
        taken += compare_body(body);
    }
    /* The generator must reach the fast path often, or the test proves little. */
    fprintf(stderr, "json_fast_read took %d of 20000 random bodies\n", taken);
    assert_true(taken > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_typical),       cmocka_unit_test(test_slurm_ids),
        cmocka_unit_test(test_ascii_escapes), cmocka_unit_test(test_times_and_integers),
        cmocka_unit_test(test_random),        cmocka_unit_test(test_non_ascii_declined),
        cmocka_unit_test(test_body_cases),    cmocka_unit_test(test_body_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
