/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tres.c - parse, format and edit Slurm TRES lists (see tres.h for the canonical order). */
#include "libcore/tres.h"

#include <stdio.h>
#include <string.h>

#include "libcore/numparse.h"

/* Plain TRES names and prefixed types, ranked as Slurm numbers its TRES (cpu=1, mem=2,
 * energy=3, node=4, billing=5, fs/disk=6, vmem=7, pages=8, then dynamic gres/license/bb/ic). */
static const char *const plain_names[] = {"cpu",     "mem", "energy", "node",
                                          "billing", NULL,  "vmem",   "pages"};
static const struct {
    const char *prefix;
    int rank;
} typed[] = {{"fs/", 5}, {"gres/", 8}, {"license/", 9}, {"bb/", 10}, {"ic/", 11}};

#define NTYPED (sizeof(typed) / sizeof(typed[0]))
#define NPLAIN (sizeof(plain_names) / sizeof(plain_names[0]))

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static int name_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
           c == '-';
}

int tres_rank(const char *name)
{
    for (size_t i = 0; i < NPLAIN; i++)
        if (plain_names[i] && strcmp(name, plain_names[i]) == 0)
            return (int)i;
    for (size_t i = 0; i < NTYPED; i++)
        if (strncmp(name, typed[i].prefix, strlen(typed[i].prefix)) == 0)
            return typed[i].rank;
    return 100;
}

int tres_name_canon(const char *name, size_t len, char out[TRES_NAME_MAX], struct allot_error *err)
{
    char tmp[TRES_NAME_MAX];

    if (len == 0)
        return allot_errorf(err, ALLOT_EINVAL, "tres: empty TRES name");
    if (len >= TRES_NAME_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "tres: name '%.*s' longer than %d characters",
                            (int)(len > 64 ? 64 : len), name, TRES_NAME_MAX - 1);
    for (size_t i = 0; i < len; i++)
        tmp[i] = lower(name[i]);
    tmp[len] = '\0';
    for (size_t i = 0; i < NPLAIN; i++) {
        if (plain_names[i] && strcmp(tmp, plain_names[i]) == 0) {
            memcpy(out, tmp, len + 1);
            return 0;
        }
    }
    for (size_t i = 0; i < NTYPED; i++) {
        size_t pl = strlen(typed[i].prefix);
        if (len > pl && strncmp(tmp, typed[i].prefix, pl) == 0) {
            for (size_t j = pl; j < len; j++)
                if (!name_char_ok(tmp[j]))
                    goto bad;
            memcpy(out, tmp, len + 1);
            return 0;
        }
    }
bad:
    return allot_errorf(err, ALLOT_EINVAL,
                        "tres: unknown TRES name '%s' (expected cpu, mem, energy, node, "
                        "billing, vmem, pages, or fs/, gres/, license/, bb/, ic/<name>)",
                        tmp);
}

/* Canonical order: rank, then name. */
static int cmp_names(const char *a, const char *b)
{
    int ra = tres_rank(a), rb = tres_rank(b);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return strcmp(a, b);
}

/* Insert into a list known to have room and not to hold name. */
static void insert_sorted(struct tres_list *l, const char *name, int64_t count)
{
    int pos = l->n;
    while (pos > 0 && cmp_names(l->item[pos - 1].name, name) > 0) {
        l->item[pos] = l->item[pos - 1];
        pos--;
    }
    snprintf(l->item[pos].name, TRES_NAME_MAX, "%s", name);
    l->item[pos].count = count;
    l->n++;
}

static int find(const struct tres_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->item[i].name, name) == 0)
            return i;
    return -1;
}

/* Memory: digits then an optional K/M/G/T suffix, converted to MiB (K rounds up). */
static int parse_mem(const char *v, size_t len, int64_t *out)
{
    int shift = 0; /* power of 1024 relative to MiB; -1 for KiB */
    if (len > 0) {
        switch (lower(v[len - 1])) {
        case 'k':
            shift = -1;
            len--;
            break;
        case 'm':
            len--;
            break;
        case 'g':
            shift = 1;
            len--;
            break;
        case 't':
            shift = 2;
            len--;
            break;
        default:
            break;
        }
    }
    int64_t n;
    if (numparse_uint(v, len, &n) < 0)
        return -1;
    if (shift < 0) {
        n = n / 1024 + (n % 1024 != 0);
    } else {
        for (int i = 0; i < shift; i++)
            if (__builtin_mul_overflow(n, 1024, &n))
                return -1;
    }
    *out = n;
    return 0;
}

int tres_parse(const char *s, struct tres_list *out, struct allot_error *err)
{
    struct tres_list tmp = {.n = 0};
    const char *p = s;

    if (!s)
        return allot_errorf(err, ALLOT_EINVAL, "tres: missing TRES string");
    while (*p) {
        const char *end = strchr(p, ',');
        size_t ilen = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', ilen);
        char name[TRES_NAME_MAX];
        int64_t count;

        if (!eq)
            return allot_errorf(err, ALLOT_EINVAL, "tres: item '%.*s' is not name=count",
                                (int)(ilen > 64 ? 64 : ilen), p);
        if (tres_name_canon(p, (size_t)(eq - p), name, err) < 0)
            return -1;
        const char *v = eq + 1;
        size_t vlen = ilen - (size_t)(v - p);
        int rc =
            strcmp(name, "mem") == 0 ? parse_mem(v, vlen, &count) : numparse_uint(v, vlen, &count);
        if (rc < 0)
            return allot_errorf(err, ALLOT_EINVAL, "tres: %s: '%.*s' is not a non-negative count%s",
                                name, (int)(vlen > 32 ? 32 : vlen), v,
                                strcmp(name, "mem") == 0 ? " (K/M/G/T suffix allowed)" : "");
        if (find(&tmp, name) >= 0)
            return allot_errorf(err, ALLOT_EINVAL, "tres: %s given twice", name);
        if (tmp.n >= TRES_LIST_MAX)
            return allot_errorf(err, ALLOT_ETOOBIG, "tres: more than %d TRES", TRES_LIST_MAX);
        insert_sorted(&tmp, name, count);
        if (!end)
            break;
        p = end + 1;
        if (!*p)
            return allot_errorf(err, ALLOT_EINVAL, "tres: trailing ','");
    }
    *out = tmp;
    return 0;
}

int tres_format(const struct tres_list *l, char *buf, size_t len, struct allot_error *err)
{
    char tmp[TRES_LIST_MAX * (TRES_NAME_MAX + 24) + 1];
    size_t used = 0;

    if (l->n < 0 || l->n > TRES_LIST_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "tres: list has %d items", l->n);
    tmp[0] = '\0';
    for (int i = 0; i < l->n; i++) {
        const struct tres_item *it = &l->item[i];
        int is_mem = strcmp(it->name, "mem") == 0;
        int n = snprintf(tmp + used, sizeof(tmp) - used, "%s%s=%lld%s", i ? "," : "", it->name,
                         (long long)it->count, is_mem ? "M" : "");
        if (n < 0 || (size_t)n >= sizeof(tmp) - used)
            return allot_errorf(err, ALLOT_EINVAL, "tres: item %d too long", i);
        used += (size_t)n;
    }
    if (used + 1 > len)
        return allot_errorf(err, ALLOT_ETOOBIG, "tres: %zu bytes needed, buffer holds %zu",
                            used + 1, len);
    memcpy(buf, tmp, used + 1);
    return 0;
}

int64_t tres_get(const struct tres_list *l, const char *name)
{
    int i = find(l, name);
    return i < 0 ? -1 : l->item[i].count;
}

int tres_set(struct tres_list *l, const char *name, int64_t count, struct allot_error *err)
{
    char canon[TRES_NAME_MAX];

    if (!name || tres_name_canon(name, strlen(name), canon, err) < 0)
        return name ? -1 : allot_errorf(err, ALLOT_EINVAL, "tres: missing name");
    if (count < 0)
        return allot_errorf(err, ALLOT_EINVAL, "tres: %s: count %lld is negative", canon,
                            (long long)count);
    int i = find(l, canon);
    if (i >= 0) {
        l->item[i].count = count;
        return 0;
    }
    if (l->n >= TRES_LIST_MAX)
        return allot_errorf(err, ALLOT_ETOOBIG, "tres: more than %d TRES", TRES_LIST_MAX);
    insert_sorted(l, canon, count);
    return 0;
}
