/* SPDX-License-Identifier: GPL-3.0-or-later */
/* reply.c - mapping allotd's error replies back to struct allot_error.
 *
 * allotd answers every failure with `{"error":{"code":"EINVAL","message":..,"field":..}}`
 * and an HTTP status from the shared table (doc/api.md); the client restores the code from
 * its name so exit statuses are the daemon's verdict.  A reply that is not that shape (a
 * proxy page, a crash) still yields an error whose code follows the HTTP status.
 */
#include "liballot/client_int.h"

#include <jansson.h>
#include <string.h>

enum allot_errnum client_status_errnum(int http_status)
{
    switch (http_status) {
    case 400:
        return ALLOT_EINVAL;
    case 401:
        return ALLOT_EAUTH;
    case 402:
        return ALLOT_EFUNDS;
    case 403:
        return ALLOT_EPERM;
    case 404:
        return ALLOT_ENOENT;
    case 409:
        return ALLOT_ECONFLICT;
    case 413:
        return ALLOT_ETOOBIG;
    case 503:
        return ALLOT_EUNAVAIL;
    case 500:
        return ALLOT_EINTERNAL;
    default:
        return ALLOT_EPROTO;
    }
}

/* Printable start of a body for a message: control characters become spaces. */
static void quote_body(const char *body, char *out, size_t size)
{
    size_t i = 0;
    for (; body && body[i] && i + 1 < size; i++)
        out[i] = ((unsigned char)body[i] < ' ') ? ' ' : body[i];
    out[i] = '\0';
}

int client_reply_error(int http_status, const char *body, struct allot_error *err)
{
    json_error_t jerr;
    json_t *root = NULL, *e;
    const char *code = NULL, *msg = NULL, *field = NULL;
    enum allot_errnum num = client_status_errnum(http_status);
    char quoted[160];

    if (body && *body)
        root = json_loads(body, JSON_REJECT_DUPLICATES, &jerr);
    e = root ? json_object_get(root, "error") : NULL;
    if (e && json_is_object(e)) {
        code = json_string_value(json_object_get(e, "code"));
        msg = json_string_value(json_object_get(e, "message"));
        field = json_string_value(json_object_get(e, "field"));
    }
    if (code) {
        enum allot_errnum n = allot_errnum_from_name(code);
        /* An unknown name from a newer daemon: trust the status rather than claim EPROTO. */
        num = (n == ALLOT_EPROTO && strcmp(code, "EPROTO") != 0) ? num : n;
        if (num == ALLOT_OK)
            num = ALLOT_EPROTO;
    }
    if (msg && *msg) {
        size_t flen = field ? strlen(field) : 0;
        if (flen > 0 && strncmp(msg, field, flen) != 0)
            allot_errorf(err, num, "%s: %s", field, msg);
        else
            allot_errorf(err, num, "%s", msg);
    } else {
        quote_body(body, quoted, sizeof(quoted));
        if (quoted[0])
            allot_errorf(err, num, "allotd answered HTTP %d: %s", http_status, quoted);
        else
            allot_errorf(err, num, "allotd answered HTTP %d with no body", http_status);
    }
    json_decref(root);
    return -1;
}

int client_retry_safe(const char *body)
{
    json_t *root = body && *body ? json_loads(body, 0, NULL) : NULL;
    json_t *e = json_object_get(root, "error");
    int safe = json_is_true(json_object_get(e, "retry_safe"));
    json_decref(root);
    return safe;
}
