/* SPDX-License-Identifier: GPL-3.0-or-later */
/* partition.c - `scontrol show partition -o` lines (partition.h). */
#include "libslurmtext/partition.h"

#include <string.h>
#include <strings.h>

#include "libslurmtext/duration.h"

static int span_is(struct slt_span s, const char *word)
{
    return s.n == strlen(word) && strncasecmp(s.p, word, s.n) == 0;
}

/* A time value: -1 for the word NONE_WORD (or UNLIMITED/INFINITE), else whole seconds. */
static int read_time(const char *key, struct slt_span v, const char *none_word, int64_t *out,
                     struct allot_error *err)
{
    struct slt_duration d;
    if (span_is(v, none_word)) {
        *out = -1;
        return 0;
    }
    if (slt_duration_parse(v.p, v.n, key, &d, err) < 0)
        return -1;
    if (d.kind == SLT_DUR_UNLIMITED) {
        *out = -1;
        return 0;
    }
    if (d.kind != SLT_DUR_VALUE)
        return allot_errorf(err, ALLOT_EINVAL, "%s: '%.*s' is not a time", key, (int)v.n, v.p);
    *out = slt_duration_s(&d);
    return 0;
}

static int copy_value(const char *key, struct slt_span v, char *dst, size_t size,
                      struct allot_error *err)
{
    if (v.n >= size)
        return allot_errorf(err, ALLOT_EINVAL, "%s: longer than %zu characters", key, size - 1);
    memcpy(dst, v.p, v.n);
    dst[v.n] = '\0';
    return 0;
}

int slt_partition_parse(struct slt_span line, struct slt_partition *out, struct allot_error *err)
{
    struct slt_partition p;
    memset(&p, 0, sizeof p);
    p.max_time_s = -1;
    p.default_time_s = -1;
    size_t i = 0;
    while (i < line.n) {
        while (i < line.n && line.p[i] == ' ')
            i++;
        size_t start = i;
        while (i < line.n && line.p[i] != ' ')
            i++;
        if (i == start)
            break;
        struct slt_span w = {line.p + start, i - start};
        const char *eq = memchr(w.p, '=', w.n);
        if (!eq)
            return allot_errorf(err, ALLOT_EINVAL, "partition: '%.*s' is not Key=Value",
                                (int)(w.n > SLT_ERRTEXT_MAX ? SLT_ERRTEXT_MAX : w.n), w.p);
        struct slt_span k = {w.p, (size_t)(eq - w.p)};
        struct slt_span v = {eq + 1, w.n - k.n - 1};
        int rc = 0;
        if (span_is(k, "PartitionName"))
            rc = copy_value("PartitionName", v, p.name, sizeof p.name, err);
        else if (span_is(k, "TRESBillingWeights"))
            rc = copy_value("TRESBillingWeights", v, p.billing_weights, sizeof p.billing_weights,
                            err);
        else if (span_is(k, "MaxTime"))
            rc = read_time("MaxTime", v, "UNLIMITED", &p.max_time_s, err);
        else if (span_is(k, "DefaultTime"))
            rc = read_time("DefaultTime", v, "NONE", &p.default_time_s, err);
        else if (span_is(k, "QoS") && !span_is(v, "N/A"))
            rc = copy_value("QoS", v, p.qos, sizeof p.qos, err);
        if (rc < 0)
            return -1;
    }
    if (!p.name[0])
        return allot_errorf(err, ALLOT_EINVAL, "partition: no PartitionName in the line");
    *out = p;
    return 0;
}
