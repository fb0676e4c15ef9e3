/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json.h - strict jansson helpers for request bodies and replies.
 *
 * Readers are driven by a table of expected fields: an unknown field, a wrong type or a
 * missing required field is EINVAL naming the field, and outputs are only written for
 * fields present (callers pre-fill defaults).  Amounts: `<x>_sumin` integers (>= 0) or
 * `<x>_su`/`su` strings with units (money_parse_sumin).  Times: ISO-8601 UTC
 * ("2026-01-01T00:00:00Z"), a date ("2026-01-01" = midnight UTC) or epoch seconds.
 * Threads: reentrant.  Returned json_t are new references owned by the caller.
 */
#ifndef ALLOT_ALLOTD_JSON_H
#define ALLOT_ALLOTD_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "allot/error.h"
#include "allotd/request.h"

enum jf_type {
    JF_NAME,    /* model name into char[ALLOT_NAME_MAX]; "" allowed when allow_empty */
    JF_TEXT,    /* free text into char[size] */
    JF_INT,     /* int64 >= min */
    JF_BOOL,    /* int 0/1 */
    JF_TIME,    /* int64 epoch seconds */
    JF_SU,      /* string with units -> int64 SU-minutes (> 0 unless allow_empty) */
    JF_SUMIN,   /* integer SU-minutes (> 0 unless allow_empty); signed when min < 0 */
    JF_BILLING, /* integer billing units -> int64 micro-units */
    JF_FACTOR,  /* decimal string ("1.5") -> int64 parts per million, >= 0 */
};

struct jfield {
    const char *name;
    enum jf_type type;
    int required;
    void *dst;
    size_t size;     /* JF_TEXT: dst size */
    int64_t min;     /* JF_INT */
    int allow_empty; /* JF_NAME: "" allowed; JF_SU/JF_SUMIN: zero allowed */
    int seen;        /* output: 1 when the field was present */
};

/* Parse r->body into r->in (an object).  Empty body = {}.  EINVAL "body: ..." otherwise. */
int json_body(struct req *r, struct allot_error *err);
/* Read obj's fields per table f[0..n).  See the top of this file. */
int json_read(json_t *obj, struct jfield *f, size_t n, struct allot_error *err);

/* Format epoch seconds as ISO-8601 UTC (into a json string; 0 -> null). */
json_t *json_time(int64_t t_s);
/* The last time a request may carry: 9999-12-31T23:59:59Z (four-digit years, as every reply
 * prints them). */
#define JSON_TIME_MAX INT64_C(253402300799)
/* Parse a time text (ISO, date); -1 with err naming field, also for a date or time that
 * does not exist on the calendar ("2026-02-30", "2026-04-31", "...T23:59:60Z") and for one
 * before 1970-01-01 (a negative time) or after JSON_TIME_MAX.  A query's bound may be
 * 1970-01-01 itself (0). */
int json_parse_time(const char *field, const char *s, int64_t *out, struct allot_error *err);
/* A time in a request body (JF_TIME): 0 when epoch seconds t are in [1, JSON_TIME_MAX] (0
 * stands for "not given" in the bank's records, so it is no time a body may set); else -1
 * with err naming field and the range. */
int json_check_time(const char *field, int64_t t, struct allot_error *err);
/* Parse a query argument: integer >= min, or time; -1 with err naming name. */
int json_query_int(struct req *r, const char *name, int64_t min, int64_t *out,
                   struct allot_error *err);
int json_query_time(struct req *r, const char *name, int64_t *out, struct allot_error *err);
/* Validate an optional query name argument (NULL when absent). */
int json_query_name(struct req *r, const char *name, const char **out, struct allot_error *err);

/* Encoders of model objects. */
json_t *json_qos(const struct qos *q);
json_t *json_account(const struct account *a);
json_t *json_user(const struct user *u);
json_t *json_assoc(const struct assoc *a);
json_t *json_partition(const struct partition *p);
json_t *json_allocation(const struct allocation *a, const struct balance *b);
json_t *json_balance(const struct allocation *a, const struct balance *b);
json_t *json_ledger(const struct ledger_entry *e);
json_t *json_job(const struct job *j);
json_t *json_failure(const struct failure *f);

/* The members of a reply object, described once and written by both encoders: jansson
 * (json_object_of) and json_fast.c's direct writer (the hot job replies).  A member added to
 * a *_members function below reaches both, in the same place. */
enum jm_type {
    JM_STR,    /* s */
    JM_INT,    /* i */
    JM_BOOL,   /* i: 0 false, else true */
    JM_TIME,   /* i: epoch seconds, as json_time writes them (0 -> null) */
    JM_OBJECT, /* obj[0..n) */
};

struct jmember {
    const char *key;
    enum jm_type type;
    int64_t i;
    const char *s;
    const struct jmember *obj;
    size_t n;
};

#define JSON_JOB_MEMBERS 32
#define JSON_BALANCE_MEMBERS 11
#define JSON_SLURM_ID_MAX 48

/* A job's members into m[JSON_JOB_MEMBERS]; slurm_id[JSON_SLURM_ID_MAX] holds the text of
 * its "slurm_job_id" member.  Returns how many.  m borrows from j and slurm_id. */
size_t json_job_members(const struct job *j, struct jmember *m, char *slurm_id);
/* An allocation's balance members into m[JSON_BALANCE_MEMBERS]; returns how many. */
size_t json_balance_members(const struct allocation *a, const struct balance *b, struct jmember *m);
/* The object of m[0..n), keys in that order; NULL when a string is not UTF-8 (as json_pack
 * fails on one). */
json_t *json_object_of(const struct jmember *m, size_t n);

/* The hot job replies: {"<verb>":true,"replay":<replay>,"job":<j>,"balance":<a,b>}. */
struct json_job_reply {
    struct jmember top[4], job[JSON_JOB_MEMBERS], balance[JSON_BALANCE_MEMBERS];
    char slurm_id[JSON_SLURM_ID_MAX];
};
/* Fills *m (which the members borrow from, with j, a and b); returns how many of top. */
size_t json_job_reply_members(struct json_job_reply *m, const char *verb, int replay,
                              const struct job *j, const struct allocation *a,
                              const struct balance *b);
/* That reply as a jansson object (the writer for text json_fast.c declines). */
json_t *json_job_reply(const char *verb, int replay, const struct job *j,
                       const struct allocation *a, const struct balance *b);

#endif
