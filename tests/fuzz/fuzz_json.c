/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz_json.c - allotd's request-body readers (src/allotd/json.c): json_body on the input,
 * then json_read with a table holding every field type the API uses (names, text, integers,
 * booleans, times, SU strings signed and unsigned, SU-minute integers, billing units).
 * Invariants: a body is accepted only as a JSON object, else EINVAL "body: ..."; a refused
 * field is named first in the message and its output is untouched; accepted outputs,
 * written back as JSON (times as ISO text, SU as money text), read back to the same values;
 * nothing leaks.  json_fast_read (the hot routes' reader) on the same body and table either
 * declines (0) or accepts a body json_body + json_read accept, with the same outputs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allotd/json.h"
#include "allotd/json_fast.h"
#include "libcore/money.h"

#define SENT INT64_C(0x5a5a5a5a5a5a5a5a)

struct out {
    char cluster[ALLOT_NAME_MAX], part[ALLOT_NAME_MAX], comment[64];
    int64_t job_id, start, su, adj, amount, delta, billing;
    int flag;
};

static void out_init(struct out *o)
{
    memset(o, 0x5a, sizeof *o);
}

static size_t table(struct out *o, struct jfield *f)
{
    const struct jfield t[] = {
        {"cluster", JF_NAME, 0, o->cluster, 0, 0, 0, 0},
        {"partition", JF_NAME, 0, o->part, 0, 0, 1, 0},
        {"comment", JF_TEXT, 0, o->comment, sizeof o->comment, 0, 0, 0},
        {"job_id", JF_INT, 0, &o->job_id, 0, 1, 0, 0},
        {"flag", JF_BOOL, 0, &o->flag, 0, 0, 0, 0},
        {"start", JF_TIME, 0, &o->start, 0, 0, 0, 0},
        {"su", JF_SU, 0, &o->su, 0, 0, 0, 0},
        {"adjust_su", JF_SU, 0, &o->adj, 0, -1, 0, 0},
        {"amount_sumin", JF_SUMIN, 0, &o->amount, 0, 0, 0, 0},
        {"delta_sumin", JF_SUMIN, 0, &o->delta, 0, -1, 0, 0},
        {"billing", JF_BILLING, 0, &o->billing, 0, 0, 0, 0},
    };
    memcpy(f, t, sizeof t);
    return sizeof t / sizeof t[0];
}

/* The output bytes of field i (to compare with the sentinel). */
static const void *dst_of(const struct jfield *f, size_t *len)
{
    switch (f->type) {
    case JF_NAME:
        *len = ALLOT_NAME_MAX;
        break;
    case JF_TEXT:
        *len = f->size;
        break;
    case JF_BOOL:
        *len = sizeof(int);
        break;
    default:
        *len = sizeof(int64_t);
    }
    return f->dst;
}

/* Write the outputs of the fields seen back as a JSON object. */
static json_t *write_back(const struct jfield *f, size_t n)
{
    json_t *o = json_object();
    if (!o)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (!f[i].seen)
            continue;
        json_t *v = NULL;
        int64_t x = f[i].type == JF_NAME || f[i].type == JF_TEXT || f[i].type == JF_BOOL
                        ? 0
                        : *(const int64_t *)f[i].dst;
        char buf[MONEY_FORMAT_MAX];
        switch (f[i].type) {
        case JF_NAME:
        case JF_TEXT:
            v = json_string(f[i].dst);
            break;
        case JF_BOOL:
            v = json_boolean(*(const int *)f[i].dst);
            break;
        case JF_TIME:
            v = x == 0 ? json_integer(0) : json_time(x);
            break;
        case JF_SU:
            if (money_format_sumin(x, buf, sizeof buf) < 0)
                abort();
            v = json_string(buf);
            break;
        case JF_BILLING:
            v = json_integer(x / 1000000);
            break;
        default:
            v = json_integer(x);
        }
        if (!v || json_object_set_new(o, f[i].name, v) < 0)
            abort();
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct req r;
    memset(&r, 0, sizeof r);
    r.body = malloc(size ? size : 1);
    if (!r.body)
        return 0;
    memcpy(r.body, data, size);
    r.body_len = size;
    struct allot_error err = {0};
    static struct out o3;
    struct jfield f3[16];
    out_init(&o3);
    size_t n3 = table(&o3, f3);
    int fast = json_fast_read(r.body, r.body_len, f3, n3);
    if (json_body(&r, &err) < 0) {
        if (fast || r.in || err.code != ALLOT_EINVAL || strncmp(err.msg, "body: ", 6) != 0)
            abort();
        free(r.body);
        return 0;
    }
    if (!json_is_object(r.in))
        abort();
    static struct out o, o2;
    struct jfield f[16], f2[16];
    out_init(&o);
    size_t n = table(&o, f);
    if (json_read(r.in, f, n, &err) < 0) {
        if (fast || err.code != ALLOT_EINVAL)
            abort();
        /* The field named first in the message keeps its output. */
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(f[i].name);
            if (strncmp(err.msg, f[i].name, len) == 0 && err.msg[len] == ':') {
                size_t dl;
                const unsigned char *d = dst_of(&f[i], &dl);
                for (size_t k = 0; k < dl; k++)
                    if (d[k] != 0x5a)
                        abort();
            }
        }
    } else {
        if (fast) {
            for (size_t i = 0; i < n; i++)
                if (f3[i].seen != f[i].seen)
                    abort();
            if (memcmp(&o3, &o, sizeof o) != 0)
                abort();
        }
        json_t *back = write_back(f, n);
        out_init(&o2);
        table(&o2, f2);
        if (json_read(back, f2, n, &err) < 0)
            abort();
        for (size_t i = 0; i < n; i++) {
            if (f[i].seen != f2[i].seen)
                abort();
            size_t dl;
            const void *a = dst_of(&f[i], &dl), *b = dst_of(&f2[i], &dl);
            if (!f[i].seen)
                continue;
            if (f[i].type == JF_NAME || f[i].type == JF_TEXT ? strcmp(a, b) != 0
                                                             : memcmp(a, b, dl) != 0)
                abort();
        }
        json_decref(back);
    }
    json_decref(r.in);
    free(r.body);
    return 0;
}
