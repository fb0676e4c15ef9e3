/* SPDX-License-Identifier: GPL-3.0-or-later */
/* billing.c - TRESBillingWeights parsing/formatting and exact job billing (see billing.h). */
#include "libcore/billing.h"

#include <stdio.h>
#include <string.h>

#include "libcore/numparse.h"

typedef unsigned __int128 u128;

static const struct {
    const char *canon; /* canonical prefix or name */
    const char *slurm; /* Slurm's spelling */
    int is_prefix;
} spelling[] = {
    {"cpu", "CPU", 0},       {"mem", "Mem", 0},         {"node", "Node", 0},
    {"energy", "Energy", 0}, {"billing", "Billing", 0}, {"vmem", "VMem", 0},
    {"pages", "Pages", 0},   {"gres/", "GRES/", 1},     {"license/", "License/", 1},
    {"fs/", "FS/", 1},       {"bb/", "BB/", 1},         {"ic/", "IC/", 1},
};

static int unit_index(char c)
{
    static const char units[] = "KMGTP";
    for (int i = 0; units[i]; i++)
        if (c == units[i] || c == units[i] - 'A' + 'a')
            return i + 1;
    return 0;
}

/* Slurm's base unit is MiB for mem and burst buffers (slurmdb_get_tres_base_unit). */
static int base_unit(const char *canon)
{
    return (strcmp(canon, "mem") == 0 || strncmp(canon, "bb/", 3) == 0) ? 2 : 0;
}

/* MAX_TRES groups cpu, mem, node and every gres as node-level TRES (assoc_mgr.c). */
static int node_level(const char *canon)
{
    return strcmp(canon, "cpu") == 0 || strcmp(canon, "mem") == 0 || strcmp(canon, "node") == 0 ||
           strncmp(canon, "gres/", 5) == 0;
}

static int parse_item(const char *p, size_t ilen, struct billing_weight *bw,
                      struct allot_error *err)
{
    const char *eq = memchr(p, '=', ilen);
    if (!eq)
        return allot_errorf(err, ALLOT_EINVAL, "billing weights: item '%.*s' is not TRES=weight",
                            (int)(ilen > 64 ? 64 : ilen), p);
    if (tres_name_canon(p, (size_t)(eq - p), bw->name, err) < 0)
        return allot_error_prefix(err, "billing weights");
    const char *v = eq + 1;
    size_t vlen = ilen - (size_t)(v - p);
    if (vlen > 0 && v[0] == '-')
        return allot_errorf(err, ALLOT_EINVAL,
                            "billing weights: %s: negative weights are not supported", bw->name);
    bw->suffix = 0;
    bw->div_exp = 0;
    int u = vlen > 0 ? unit_index(v[vlen - 1]) : 0;
    if (u) {
        bw->suffix = "KMGTP"[u - 1];
        vlen--;
        int d = u - base_unit(bw->name);
        bw->div_exp = d > 0 ? d : 0;
    }
    if (numparse_fixed(v, vlen, 9, &bw->weight_nano) < 0)
        return allot_errorf(err, ALLOT_EINVAL,
                            "billing weights: %s: '%.*s' is not a decimal weight with at most 9 "
                            "fraction digits and an optional K/M/G/T/P unit",
                            bw->name, (int)(ilen - (size_t)(v - p)), v);
    if (bw->weight_nano > BILLING_WEIGHT_MAX_NANO)
        return allot_errorf(err, ALLOT_EINVAL, "billing weights: %s: weight above 1e9", bw->name);
    return 0;
}

int billing_weights_parse(const char *s, int max_tres, struct billing_weights *out,
                          struct allot_error *err)
{
    struct billing_weights tmp;
    const char *p = s;

    if (!s)
        return allot_errorf(err, ALLOT_EINVAL, "billing weights: missing");
    tmp.n = 0;
    tmp.max_tres = max_tres != 0;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t ilen = end ? (size_t)(end - p) : strlen(p);
        struct billing_weight bw;

        if (tmp.n >= BILLING_WEIGHTS_MAX)
            return allot_errorf(err, ALLOT_ETOOBIG, "billing weights: more than %d items",
                                BILLING_WEIGHTS_MAX);
        if (parse_item(p, ilen, &bw, err) < 0)
            return -1;
        for (int i = 0; i < tmp.n; i++)
            if (strcmp(tmp.w[i].name, bw.name) == 0)
                return allot_errorf(err, ALLOT_EINVAL, "billing weights: %s given twice", bw.name);
        tmp.w[tmp.n++] = bw;
        if (!end)
            break;
        p = end + 1;
        if (!*p)
            return allot_errorf(err, ALLOT_EINVAL, "billing weights: trailing ','");
    }
    *out = tmp;
    return 0;
}

static const char *slurm_name(const char *canon, const char **rest)
{
    for (size_t i = 0; i < sizeof(spelling) / sizeof(spelling[0]); i++) {
        size_t l = strlen(spelling[i].canon);
        if (spelling[i].is_prefix ? strncmp(canon, spelling[i].canon, l) == 0
                                  : strcmp(canon, spelling[i].canon) == 0) {
            *rest = canon + l;
            return spelling[i].slurm;
        }
    }
    *rest = "";
    return canon; /* unreachable for canonical names */
}

int billing_weights_format(const struct billing_weights *w, char *buf, size_t len,
                           struct allot_error *err)
{
    char tmp[BILLING_WEIGHTS_MAX * (TRES_NAME_MAX + 48) + 1];
    size_t used = 0;

    tmp[0] = '\0';
    for (int i = 0; i < w->n && i < BILLING_WEIGHTS_MAX; i++) {
        const struct billing_weight *bw = &w->w[i];
        char num[32];
        const char *rest;
        const char *sname = slurm_name(bw->name, &rest);
        if (numparse_format_fixed(bw->weight_nano, 9, num, sizeof(num)) < 0)
            return allot_errorf(err, ALLOT_EINVAL, "billing weights: %s: bad weight", bw->name);
        int n = snprintf(tmp + used, sizeof(tmp) - used, "%s%s%s=%s%s%s", i ? "," : "", sname, rest,
                         num, strchr(num, '.') || bw->suffix ? "" : ".0",
                         bw->suffix ? (char[]){bw->suffix, 0} : "");
        if (n < 0 || (size_t)n >= sizeof(tmp) - used)
            return allot_errorf(err, ALLOT_EINVAL, "billing weights: item %d too long", i);
        used += (size_t)n;
    }
    if (used + 1 > len)
        return allot_errorf(err, ALLOT_ETOOBIG,
                            "billing weights: %zu bytes needed, buffer holds %zu", used + 1, len);
    memcpy(buf, tmp, used + 1);
    return 0;
}

static const struct billing_weight *find_weight(const struct billing_weights *w, const char *name)
{
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->w[i].name, name) == 0)
            return &w->w[i];
    return NULL;
}

int billing_compute(const struct billing_weights *w, const struct tres_list *tres,
                    int64_t *billing_micro, struct allot_error *err)
{
    for (int i = 0; i < tres->n; i++)
        if (tres->item[i].count < 0)
            return allot_errorf(err, ALLOT_EINVAL, "billing: %s count is negative",
                                tres->item[i].name);
    if (w->n == 0) {
        /* No weights: Slurm bills the allocated CPUs (calc_job_billable_tres). */
        int64_t cpu = tres_get(tres, "cpu"), v;
        if (cpu < 0)
            cpu = 0;
        if (__builtin_mul_overflow(cpu, 1000000, &v))
            return allot_errorf(err, ALLOT_EINVAL, "billing: cpu count overflows");
        *billing_micro = v;
        return 0;
    }

    /* Common denominator 1e9 * 1024^E, E the largest unit divisor in use. */
    int e = 0;
    for (int i = 0; i < w->n; i++)
        if (w->w[i].div_exp > e)
            e = w->w[i].div_exp;
    u128 node_max = 0, global_sum = 0;
    for (int i = 0; i < tres->n; i++) {
        const struct tres_item *it = &tres->item[i];
        const struct billing_weight *bw;
        if (strcmp(it->name, "billing") == 0 || !(bw = find_weight(w, it->name)))
            continue;
        u128 term;
        u128 scale = (u128)1 << (10 * (e - bw->div_exp));
        if (__builtin_mul_overflow((u128)it->count, (u128)bw->weight_nano, &term) ||
            __builtin_mul_overflow(term, scale, &term))
            return allot_errorf(err, ALLOT_EINVAL, "billing: %s x weight overflows", it->name);
        if (w->max_tres && node_level(it->name)) {
            if (term > node_max)
                node_max = term;
        } else if (__builtin_add_overflow(global_sum, term, &global_sum)) {
            return allot_errorf(err, ALLOT_EINVAL, "billing: sum overflows");
        }
    }
    u128 total;
    if (__builtin_add_overflow(node_max, global_sum, &total))
        return allot_errorf(err, ALLOT_EINVAL, "billing: sum overflows");
    /* micro-units = total / (1e3 * 1024^E), rounded up (never under-bill). */
    u128 den = (u128)1000 << (10 * e);
    u128 q = total / den + (total % den != 0);
    if (q > (u128)INT64_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "billing: result overflows");
    *billing_micro = (int64_t)q;
    return 0;
}

int64_t billing_slurm_units(int64_t billing_micro)
{
    return billing_micro / 1000000;
}
