/* SPDX-License-Identifier: GPL-3.0-or-later */
/* model.c - enum names and input validation for the objects of model.h. */
#include "libcore/model.h"

#include <string.h>

#include "libcore/money.h"

static const char *const ledger_kind_names[LEDGER_KIND_MAX] = {
    "credit", "hold", "release", "debit", "refund", "carryover", "expiry", "adjustment",
};
static const char *const job_status_names[JOB_STATUS_MAX] = {
    "held",
    "settled",
    "released",
    "refused",
};
static const char *const limit_scope_names[] = {"assoc", "account", "qos", "partition"};

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

const char *model_ledger_kind_name(enum ledger_kind k)
{
    return (k >= 0 && k < LEDGER_KIND_MAX) ? ledger_kind_names[k] : "?";
}

int model_ledger_kind_parse(const char *s, enum ledger_kind *out)
{
    int i = lookup(ledger_kind_names, LEDGER_KIND_MAX, s);
    if (i < 0)
        return -1;
    *out = (enum ledger_kind)i;
    return 0;
}

int model_ledger_deltas(const struct ledger_entry *e, int64_t *dg, int64_t *du, int64_t *dh,
                        struct allot_error *err)
{
    int64_t *sum = NULL;
    int sub = 0;
    /* No default: a kind added to the enum without a case here is a compiler warning. */
    switch (e->kind) {
    case LEDGER_CREDIT:
    case LEDGER_CARRYOVER:
    case LEDGER_ADJUSTMENT:
        sum = dg;
        break;
    case LEDGER_EXPIRY:
        sum = dg;
        sub = 1;
        break;
    case LEDGER_DEBIT:
        sum = du;
        break;
    case LEDGER_REFUND:
        sum = du;
        sub = 1;
        break;
    case LEDGER_HOLD:
        sum = dh;
        break;
    case LEDGER_RELEASE:
        sum = dh;
        sub = 1;
        break;
    case LEDGER_KIND_MAX:
        break;
    }
    if (!sum)
        return allot_errorf(err, ALLOT_EINTERNAL, "ledger: unknown kind %d", (int)e->kind);
    int64_t v;
    if ((sub ? money_sub(*sum, e->amount_sumin, &v) : money_add(*sum, e->amount_sumin, &v)) < 0)
        return allot_errorf(err, ALLOT_EINVAL, "ledger: %s of %lld SU-minutes overflows the total",
                            model_ledger_kind_name(e->kind), (long long)e->amount_sumin);
    *sum = v;
    return 0;
}

const char *model_job_status_name(enum job_status s)
{
    return (s >= 0 && s < JOB_STATUS_MAX) ? job_status_names[s] : "?";
}

int model_job_status_parse(const char *s, enum job_status *out)
{
    int i = lookup(job_status_names, JOB_STATUS_MAX, s);
    if (i < 0)
        return -1;
    *out = (enum job_status)i;
    return 0;
}

const char *model_limit_scope_name(enum limit_scope s)
{
    return (s >= 0 && s <= LIMIT_SCOPE_PARTITION) ? limit_scope_names[s] : "?";
}

int model_limit_scope_parse(const char *s, enum limit_scope *out)
{
    int i = lookup(limit_scope_names, 4, s);
    if (i < 0)
        return -1;
    *out = (enum limit_scope)i;
    return 0;
}

int model_check_name(const char *field, const char *s, int allow_empty, struct allot_error *err)
{
    if (!s)
        return allot_errorf(err, ALLOT_EINVAL, "%s: missing", field);
    size_t n = strlen(s);
    if (n == 0) {
        if (allow_empty)
            return 0;
        return allot_errorf(err, ALLOT_EINVAL, "%s: must not be empty", field);
    }
    if (n >= ALLOT_NAME_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "%s: longer than %d characters", field,
                            ALLOT_NAME_MAX - 1);
    if (s[0] == '-')
        return allot_errorf(err, ALLOT_EINVAL, "%s: must not start with '-'", field);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '.' || c == '-';
        if (!ok)
            return allot_errorf(err, ALLOT_EINVAL,
                                "%s: character %zu is not a letter, digit, '_', '.' or '-'", field,
                                i + 1);
    }
    return 0;
}

int model_copy_name(char *dst, const char *field, const char *src, int allow_empty,
                    struct allot_error *err)
{
    if (model_check_name(field, src, allow_empty, err) < 0)
        return -1;
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

int model_copy_text(char *dst, size_t size, const char *field, const char *src,
                    struct allot_error *err)
{
    if (!src)
        return allot_errorf(err, ALLOT_EINVAL, "%s: missing", field);
    size_t n = strlen(src);
    if (n >= size)
        return allot_errorf(err, ALLOT_EINVAL, "%s: longer than %zu characters", field, size - 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return allot_errorf(err, ALLOT_EINVAL, "%s: contains a control character", field);
    }
    memcpy(dst, src, n + 1);
    return 0;
}
