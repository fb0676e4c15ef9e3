/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json_fast.c - the direct encoder of json_fast.h.
 *
 * A growable buffer (xrealloc) and one writer per JSON type.  Invariant: the bytes equal
 * jansson 2.14's compact dump of json_object_of for the same members (json.h): keys in
 * insertion order, "," and ":" without spaces, integers in decimal, '"' '\\' and control
 * characters escaped as jansson does (\b \f \n \r \t, else \u00XX in upper-case hex), '/'
 * and DEL as they are.  A byte >= 0x80 sets `bad` and the whole reply falls back to jansson.
 */
#include "allotd/json_fast.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libcore/civil.h"
#include "libutil/xalloc.h"

struct jbuf {
    char *p;
    size_t len, cap;
    int bad; /* a string needs jansson */
};

static void jb_reserve(struct jbuf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap * 2;
    while (cap < b->len + more)
        cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

static void jb_raw(struct jbuf *b, const char *s, size_t n)
{
    jb_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void jb_str(struct jbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    jb_reserve(b, 6 * n + 2); /* worst case: every byte as \u00XX */
    char *o = b->p + b->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            b->bad = 1;
            return;
        }
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *o++ = (char)c;
            break;
        case '\b':
            *o++ = 'b';
            break;
        case '\f':
            *o++ = 'f';
            break;
        case '\n':
            *o++ = 'n';
            break;
        case '\r':
            *o++ = 'r';
            break;
        case '\t':
            *o++ = 't';
            break;
        default:
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->p);
}

static void jb_int(struct jbuf *b, int64_t v)
{
    char tmp[24];
    int i = (int)sizeof(tmp);
    /* Negate in unsigned arithmetic so INT64_MIN is exact. */
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--i] = '-';
    jb_raw(b, tmp + i, sizeof(tmp) - (size_t)i);
}

/* ,"key": (the comma unless first) */
static void jb_key(struct jbuf *b, const char *key, int first)
{
    size_t n = strlen(key);
    jb_reserve(b, n + 4);
    if (!first)
        b->p[b->len++] = ',';
    b->p[b->len++] = '"';
    memcpy(b->p + b->len, key, n);
    b->len += n;
    b->p[b->len++] = '"';
    b->p[b->len++] = ':';
}

/* json.c json_time: 0 -> null, else ISO-8601 UTC, or the integer when it has no date. */
static void jb_time(struct jbuf *b, int64_t t_s)
{
    if (t_s == 0) {
        jb_raw(b, "null", 4);
        return;
    }
    jb_reserve(b, CIVIL_UTC_LEN + 3);
    b->p[b->len] = '"';
    size_t n = civil_format_utc(t_s, b->p + b->len + 1); /* writes its NUL: reserved */
    if (!n) {
        jb_int(b, t_s); /* beyond year 9999: as json_time */
        return;
    }
    b->len += n + 1;
    b->p[b->len++] = '"';
}

/* The object of m[0..n), as json_object_of builds it and jansson dumps it. */
static void jb_object(struct jbuf *b, const struct jmember *m, size_t n)
{
    jb_raw(b, "{", 1);
    for (size_t k = 0; k < n; k++) {
        jb_key(b, m[k].key, k == 0);
        switch (m[k].type) {
        case JM_STR:
            jb_str(b, m[k].s);
            break;
        case JM_INT:
            jb_int(b, m[k].i);
            break;
        case JM_BOOL:
            if (m[k].i)
                jb_raw(b, "true", 4);
            else
                jb_raw(b, "false", 5);
            break;
        case JM_TIME:
            jb_time(b, m[k].i);
            break;
        case JM_OBJECT:
            jb_object(b, m[k].obj, m[k].n);
            break;
        }
    }
    jb_raw(b, "}", 1);
}

char *json_fast_job_reply(const char *verb, int replay, const struct job *j,
                          const struct allocation *a, const struct balance *b, size_t *len)
{
    struct json_job_reply m;
    size_t n = json_job_reply_members(&m, verb, replay, j, a, b);
    struct jbuf jb = {.p = xmalloc(2048), .cap = 2048};
    jb_object(&jb, m.top, n);
    jb_raw(&jb, "\n", 1);
    if (jb.bad) {
        free(jb.p);
        return NULL;
    }
    *len = jb.len;
    return jb.p;
}

/* ---- request bodies ---- */

/* One value as found in the body: a span of the input and its JSON kind. */
enum jv_kind { JV_STRING, JV_INT, JV_NULL, JV_TRUE, JV_FALSE };

struct jv {
    const char *p; /* string: first byte inside the quotes */
    size_t len;
    enum jv_kind kind;
    int64_t i; /* JV_INT */
};

/* Longest string value read here; json.h's longest field (ALLOT_TEXT_MAX-sized text) fits,
 * a longer one goes to jansson (and fails there with its usual message). */
#define JF_FAST_STR_MAX 1024
#define JF_FAST_FIELDS 32

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && is_ws(*p))
        p++;
    return p;
}

/* A string of printable ASCII without escapes; p at the opening quote.  NULL otherwise. */
static const char *scan_str(const char *p, const char *end, const char **s, size_t *n)
{
    p++;
    const char *start = p;
    while (p < end && *p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c >= 0x7f || c == '\\')
            return NULL;
        p++;
    }
    if (p >= end)
        return NULL;
    *s = start;
    *n = (size_t)(p - start);
    return p + 1;
}

/* A JSON integer (jansson reads it as one): -?(0|[1-9][0-9]*), not followed by a fraction or
 * exponent; at most 18 digits so it cannot overflow.  NULL otherwise. */
static const char *scan_int(const char *p, const char *end, int64_t *out)
{
    int neg = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    const char *d = p;
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (p - d >= 18) /* a 19th digit: leave it to jansson (and never overflow here) */
            return NULL;
        v = v * 10 + (*p - '0');
        p++;
    }
    if (p == d || (*d == '0' && p - d > 1))
        return NULL;
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
        return NULL;
    *out = neg ? -v : v;
    return p;
}

static int lit(const char *p, const char *end, const char *word, size_t n)
{
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

/* Can this field take this value without jansson (null counts as absent, as in json_read)? */
static int handled(const struct jfield *f, const struct jv *v)
{
    if (v->kind == JV_NULL)
        return 1;
    switch (f->type) {
    case JF_NAME:
    case JF_TEXT:
        return v->kind == JV_STRING && v->len < JF_FAST_STR_MAX;
    case JF_INT:
    case JF_BILLING:
        return v->kind == JV_INT;
    case JF_BOOL:
        return v->kind == JV_TRUE || v->kind == JV_FALSE;
    case JF_TIME:
        return v->kind == JV_INT || (v->kind == JV_STRING && v->len < JF_FAST_STR_MAX);
    default:
        return 0;
    }
}

/* json.c read_one for the kinds handled(); -1 when the value fails json.c's check. */
static int convert(struct jfield *f, const struct jv *v)
{
    struct allot_error err;
    char text[JF_FAST_STR_MAX];
    if (v->kind == JV_STRING) {
        memcpy(text, v->p, v->len);
        text[v->len] = '\0';
    }
    switch (f->type) {
    case JF_NAME:
        return model_copy_name(f->dst, f->name, text, f->allow_empty, &err);
    case JF_TEXT:
        return model_copy_text(f->dst, f->size, f->name, text, &err);
    case JF_INT:
        if (v->i < f->min)
            return -1;
        *(int64_t *)f->dst = v->i;
        return 0;
    case JF_BOOL:
        *(int *)f->dst = v->kind == JV_TRUE;
        return 0;
    case JF_TIME:
        if (v->kind == JV_STRING)
            return json_parse_time(f->name, text, f->dst, &err) < 0
                       ? -1
                       : json_check_time(f->name, *(int64_t *)f->dst, &err);
        if (json_check_time(f->name, v->i, &err) < 0)
            return -1;
        *(int64_t *)f->dst = v->i;
        return 0;
    case JF_BILLING:
        if (v->i < 0 || v->i > INT64_MAX / 1000000)
            return -1;
        *(int64_t *)f->dst = v->i * 1000000;
        return 0;
    default:
        return -1;
    }
}

int json_fast_read(const char *body, size_t len, struct jfield *f, size_t n)
{
    struct jv vals[JF_FAST_FIELDS];
    int present[JF_FAST_FIELDS] = {0};
    if (!body || len == 0 || n > JF_FAST_FIELDS)
        return 0;
    const char *p = body, *end = body + len;
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return 0;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') {
        p++;
    } else {
        for (;;) {
            const char *key;
            size_t klen;
            if (p >= end || *p != '"' || !(p = scan_str(p, end, &key, &klen)))
                return 0;
            size_t i = 0;
            while (i < n && !(strncmp(f[i].name, key, klen) == 0 && f[i].name[klen] == '\0'))
                i++;
            if (i == n || present[i]) /* unknown or duplicate: jansson's error */
                return 0;
            p = skip_ws(p, end);
            if (p >= end || *p != ':')
                return 0;
            p = skip_ws(p + 1, end);
            if (p >= end)
                return 0;
            struct jv *v = &vals[i];
            if (*p == '"') {
                v->kind = JV_STRING;
                p = scan_str(p, end, &v->p, &v->len);
            } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
                v->kind = JV_INT;
                p = scan_int(p, end, &v->i);
            } else if (lit(p, end, "null", 4)) {
                v->kind = JV_NULL;
                p += 4;
            } else if (lit(p, end, "true", 4)) {
                v->kind = JV_TRUE;
                p += 4;
            } else if (lit(p, end, "false", 5)) {
                v->kind = JV_FALSE;
                p += 5;
            } else {
                return 0;
            }
            if (!p || !handled(&f[i], v))
                return 0;
            present[i] = 1;
            p = skip_ws(p, end);
            if (p < end && *p == ',') {
                p = skip_ws(p + 1, end);
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            return 0;
        }
    }
    if (skip_ws(p, end) != end)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int given = present[i] && vals[i].kind != JV_NULL;
        if (!given && f[i].required)
            return 0;
    }
    /* Table order, as json_read: when two fields share a destination the later one wins. */
    for (size_t i = 0; i < n; i++) {
        f[i].seen = 0;
        if (!present[i] || vals[i].kind == JV_NULL)
            continue;
        if (convert(&f[i], &vals[i]) < 0)
            return 0;
        f[i].seen = 1;
    }
    return 1;
}

int json_fast_body(struct req *r, struct jfield *f, size_t n, struct allot_error *err)
{
    if (!r->in && json_fast_read(r->body, r->body_len, f, n))
        return 0;
    if (json_body(r, err) < 0 || json_read(r->in, f, n, err) < 0)
        return -1;
    return 0;
}
