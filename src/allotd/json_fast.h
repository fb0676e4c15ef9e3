/* SPDX-License-Identifier: GPL-3.0-or-later */
/* json_fast.h - direct JSON for the hot job routes (hold, settle, release, admit bodies):
 * replies encoded without a jansson tree, request bodies read without one.
 *
 * The bank's hot routes answer with {verb, replay, job, balance}.  Building that as a
 * jansson tree (~40 objects and strings) and dumping it cost ~95k instructions per request;
 * this writes the same bytes straight into one buffer.  What the reply holds is described
 * once, by json.c's json_job_reply_members; this file only writes those members, and its
 * output is byte-for-byte what json_dumpb(JSON_COMPACT) of json_object_of gives for them
 * (same key order, same escapes, same time format, null for time 0); test/json_fast.c
 * checks that against jansson.  Strings with a byte >= 0x80 are not encoded here (jansson
 * validates UTF-8 and fails on invalid text, a behaviour this file does not copy): the
 * encoder then returns NULL and the caller builds the reply with json_job_reply.
 * Threads: reentrant.
 */
#ifndef ALLOT_ALLOTD_JSON_FAST_H
#define ALLOT_ALLOTD_JSON_FAST_H

#include <stddef.h>

#include "allot/error.h"
#include "allotd/json.h"
#include "libcore/model.h"

/* Encode {"<verb>":true,"replay":<replay>,"job":<j>,"balance":<a,b>} plus a final '\n'.
 * Returns a malloc'd buffer (owned by the caller, free()) and its length in *len; NULL when
 * a string needs jansson (see above).  Aborts on out of memory (xalloc), like the daemon. */
char *json_fast_job_reply(const char *verb, int replay, const struct job *j,
                          const struct allocation *a, const struct balance *b, size_t *len);

/* Request bodies of the hot routes.  json_fast_read reads body[0..len) per the json.h
 * field table f[0..n) when the body is a flat object in the common shape: keys and string
 * values of printable ASCII without escapes, integers of at most 18 digits, null, true,
 * false; every key known and once; every present field of a type it handles (JF_NAME,
 * JF_TEXT, JF_INT, JF_BOOL, JF_TIME, JF_BILLING) and every required field present.
 * Fields are then converted in table order with json.c's checks.  Returns 1 when it read
 * the body (outputs and f[].seen exactly as json_body + json_read would set them), 0 when
 * the body is not in that shape or a field fails a check (outputs of fields before the
 * failing one, in table order, may be written, as json_read writes them): the caller then
 * runs json_body + json_read, which give the reply and error they always gave.
 * json_fast_body is that sequence for a request (r->in stays NULL when the fast read
 * succeeds).  Threads: reentrant. */
int json_fast_read(const char *body, size_t len, struct jfield *f, size_t n);
int json_fast_body(struct req *r, struct jfield *f, size_t n, struct allot_error *err);

#endif
