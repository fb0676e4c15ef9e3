/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fairshare.c - Slurm classic, Slurm Fair Tree and flux weighted-tree fair-share (fairshare.h).
 *
 * All three share one pass for raw usage (reverse pre-order sums) and level shares (sum of
 * sibling shares).  The two rank-based walks are iterative: a stack of frames, each holding a
 * sorted run of siblings in one scratch array used as a stack.  Along any root-to-leaf path
 * the frames hold disjoint sets of associations, so scratch never exceeds n entries and the
 * depth of the tree costs no C stack.
 */
#include "libcore/fairshare.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context shared by the walks. */
struct fs_ctx {
    const usage_tree_t *t;
    struct fairshare_row *rows;
    double *key;          /* LevelFS or flux weight, the sort key */
    uint64_t *sib_shares; /* per parent: sum of its children's shares */
    double *sib_usage;    /* per parent: sum of its children's raw usage (flux) */
};

struct frame {
    size_t base; /* start of this frame's run in scratch */
    size_t len;
    size_t i;     /* next position */
    bool tied_in; /* FAIR_TREE: the parent account was tied with the previous user */
    bool has_prev;
    double prev;
};

/* raw usage of every subtree, sums of sibling shares and usage. */
static void fs_prepare(struct fs_ctx *c)
{
    const usage_tree_t *t = c->t;
    size_t n = usage_tree_count(t);
    const uint32_t *pre = usage_tree_preorder(t);

    for (size_t i = 0; i < n; i++) {
        c->rows[i].raw_usage = usage_tree_own_usage(t, i);
        c->sib_shares[i] = 0;
        c->sib_usage[i] = 0.0;
    }
    for (size_t k = n; k-- > 1;) {
        uint32_t v = pre[k];
        uint32_t p = usage_tree_parent(t, v);
        c->rows[p].raw_usage += c->rows[v].raw_usage;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t p = usage_tree_parent(t, i);
        if (p == USAGE_NONE)
            continue;
        c->sib_shares[p] += usage_tree_shares(t, i);
        c->sib_usage[p] += c->rows[i].raw_usage;
    }
}

static double norm_usage(const struct fs_ctx *c, size_t i)
{
    double root_raw = c->rows[usage_tree_root(c->t)].raw_usage;
    if (root_raw <= 0.0)
        return 0.0;
    double u = c->rows[i].raw_usage / root_raw;
    return u > 1.0 ? 1.0 : u; /* as Slurm: guards a half-life changed on the fly */
}

/* Slurm classic (PriorityFlags=NO_FAIR_TREE), priority_multifactor.c semantics. */
static void fs_classic(struct fs_ctx *c, uint32_t damp)
{
    const usage_tree_t *t = c->t;
    size_t n = usage_tree_count(t);
    const uint32_t *pre = usage_tree_preorder(t);
    size_t root = usage_tree_root(t);

    for (size_t k = 0; k < n; k++) {
        uint32_t v = pre[k];
        struct fairshare_row *r = &c->rows[v];
        r->norm_usage = norm_usage(c, v);
        r->level_fs = NAN;
        r->rank = 0;
        if (v == root) {
            r->norm_shares = 1.0;
            r->effectv_usage = 1.0; /* slurmctld initialises root's effective usage to 1 */
        } else {
            uint32_t p = usage_tree_parent(t, v);
            uint64_t ls = c->sib_shares[p];
            double share = ls ? (double)usage_tree_shares(t, v) / (double)ls : 0.0;
            r->norm_shares = c->rows[p].norm_shares * share;
            if (p == root)
                r->effectv_usage = r->norm_usage;
            else if (ls == 0)
                r->effectv_usage = c->rows[p].effectv_usage;
            else
                r->effectv_usage =
                    r->norm_usage + (c->rows[p].effectv_usage - r->norm_usage) * share;
        }
        if (r->norm_shares <= 0.0)
            r->fairshare = 0.0;
        else
            r->fairshare = exp2(-((r->effectv_usage / r->norm_shares) / (double)damp));
    }
}

/* Sort key for both walks: larger key first, users before accounts on equal keys, then
 * index for a deterministic order (Slurm's qsort leaves equal elements unordered; ranks do
 * not depend on that order). */
static int cmp_key(const void *a, const void *b, void *ctx)
{
    const struct fs_ctx *c = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double kx = c->key[x], ky = c->key[y];
    if (kx != ky)
        return kx > ky ? -1 : 1;
    bool ux = usage_tree_is_user(c->t, x), uy = usage_tree_is_user(c->t, y);
    if (ux != uy)
        return ux ? -1 : 1;
    return x < y ? -1 : (x > y);
}

/* Append children of v to scratch at *top. */
static void push_children(const usage_tree_t *t, uint32_t v, uint32_t *scratch, size_t *top)
{
    size_t cnt;
    const uint32_t *ch = usage_tree_children(t, v, &cnt);
    memcpy(scratch + *top, ch, cnt * sizeof(*ch));
    *top += cnt;
}

/* FAIR_TREE per-association values: NormShares, EffectvUsage, LevelFS (fair_tree.c). */
static void ft_levels(struct fs_ctx *c)
{
    const usage_tree_t *t = c->t;
    size_t n = usage_tree_count(t);
    size_t root = usage_tree_root(t);
    for (size_t v = 0; v < n; v++) {
        struct fairshare_row *r = &c->rows[v];
        r->norm_usage = norm_usage(c, v);
        r->fairshare = NAN;
        r->rank = 0;
        if (v == root) {
            r->norm_shares = 0.0; /* root has no level shares */
            r->effectv_usage = 1.0;
            r->level_fs = NAN;
            c->key[v] = 0.0;
            continue;
        }
        uint32_t p = usage_tree_parent(t, v);
        uint64_t ls = c->sib_shares[p];
        double praw = c->rows[p].raw_usage;
        r->norm_shares = ls ? (double)usage_tree_shares(t, v) / (double)ls : 0.0;
        r->effectv_usage = praw > 0.0 ? r->raw_usage / praw : 0.0;
        if (r->norm_shares == 0.0)
            r->level_fs = 0.0;
        else if (r->effectv_usage == 0.0)
            r->level_fs = INFINITY;
        else
            r->level_fs = r->norm_shares / r->effectv_usage;
        c->key[v] = r->level_fs;
    }
}

/* flux weights: computed for every node from its siblings' sums (weighted_tree.cpp). */
static void flux_levels(struct fs_ctx *c)
{
    const usage_tree_t *t = c->t;
    size_t n = usage_tree_count(t);
    size_t root = usage_tree_root(t);
    for (size_t v = 0; v < n; v++) {
        struct fairshare_row *r = &c->rows[v];
        r->norm_usage = norm_usage(c, v);
        r->fairshare = NAN;
        r->rank = 0;
        if (v == root) {
            r->norm_shares = 1.0;
            r->effectv_usage = 1.0;
            r->level_fs = NAN;
            c->key[v] = 0.0;
            continue;
        }
        uint32_t p = usage_tree_parent(t, v);
        uint64_t ss = c->sib_shares[p];
        double su = c->sib_usage[p];
        uint32_t sh = usage_tree_shares(t, v);
        r->norm_shares = ss ? (double)sh / (double)ss : 0.0;
        r->effectv_usage = su > 0.0 ? r->raw_usage / su : 0.0;
        double w;
        if (sh == 0)
            w = 0.0;
        else if (r->raw_usage == 0.0)
            w = FAIRSHARE_LEVEL_MAX;
        else
            w = r->norm_shares / r->effectv_usage;
        r->level_fs = w;
        c->key[v] = w;
    }
}

/* flux's tolerant equality (weighted_tree.cpp is_equal). */
static bool flux_equal(double a, double b)
{
    double m = fmax(fabs(a), fmax(fabs(b), 1.0));
    return fabs(a - b) < DBL_EPSILON * m;
}

/* After a strict sort, move users ahead of accounts inside runs of flux-equal weights. */
static void flux_users_first(const struct fs_ctx *c, uint32_t *a, size_t len)
{
    size_t s = 0;
    while (s < len) {
        size_t e = s + 1;
        while (e < len && flux_equal(c->key[a[e - 1]], c->key[a[e]]))
            e++;
        if (e - s > 1) {
            /* stable partition, users first: insertion moves (runs are short in practice) */
            for (size_t i = s + 1; i < e; i++) {
                uint32_t x = a[i];
                if (!usage_tree_is_user(c->t, x))
                    continue;
                size_t j = i;
                while (j > s && !usage_tree_is_user(c->t, a[j - 1])) {
                    a[j] = a[j - 1];
                    j--;
                }
                a[j] = x;
            }
        }
        s = e;
    }
}

static bool equal_key(const struct fs_ctx *c, bool flux, uint32_t x, uint32_t y)
{
    return flux ? flux_equal(c->key[x], c->key[y]) : c->key[x] == c->key[y];
}

/* The depth-first ranked walk shared by FAIR_TREE (flux == false) and FLUX. */
static int fs_walk(struct fs_ctx *c, bool flux, struct allot_error *err)
{
    const usage_tree_t *t = c->t;
    size_t n = usage_tree_count(t);
    size_t users = usage_tree_user_count(t);
    uint32_t *scratch = malloc(n * sizeof(*scratch));
    struct frame *st = malloc((n + 1) * sizeof(*st));
    if (!scratch || !st) {
        free(scratch);
        free(st);
        return allot_errorf(err, ALLOT_ENOMEM, "fair-share: out of memory for %zu", n);
    }
    size_t top = 0, sp = 0;
    uint32_t rank = (uint32_t)users, rnt = (uint32_t)users, stride = 0;

    push_children(t, (uint32_t)usage_tree_root(t), scratch, &top);
    st[sp++] = (struct frame){.base = 0, .len = top, .i = 0};
    qsort_r(scratch, top, sizeof(*scratch), cmp_key, c);
    if (flux)
        flux_users_first(c, scratch, top);

    while (sp > 0) {
        struct frame *f = &st[sp - 1];
        if (f->i >= f->len) {
            top = f->base;
            sp--;
            continue;
        }
        uint32_t *run = scratch + f->base;
        uint32_t a = run[f->i];
        bool is_user = usage_tree_is_user(t, a);

        if (is_user) {
            struct fairshare_row *r = &c->rows[a];
            if (!flux) {
                /* fair_tree.c: tied users share a rank; the next untied one takes rnt */
                bool tied = (f->i == 0 && f->tied_in) || (f->has_prev && f->prev == c->key[a]);
                if (!tied)
                    rank = rnt;
                r->rank = rank;
                rnt--;
            } else {
                /* weighted_walk.cpp: a user tied with the next user keeps the rank */
                bool tie_next = f->i + 1 < f->len && usage_tree_is_user(t, run[f->i + 1]) &&
                                flux_equal(c->key[a], c->key[run[f->i + 1]]);
                r->rank = rank;
                if (tie_next) {
                    stride++;
                } else {
                    rank = rank - 1 - stride;
                    stride = 0;
                }
            }
            r->fairshare = users ? (double)r->rank / (double)users : 0.0;
            f->prev = c->key[a];
            f->has_prev = true;
            f->i++;
            continue;
        }

        /* Account: merge it with the following accounts of equal key, descend. */
        bool tied = !flux && ((f->i == 0 && f->tied_in) || (f->has_prev && f->prev == c->key[a]));
        size_t j = f->i;
        while (j + 1 < f->len && !usage_tree_is_user(t, run[j + 1]) &&
               equal_key(c, flux, run[j], run[j + 1]))
            j++;
        size_t base = top;
        for (size_t k = f->i; k <= j; k++)
            push_children(t, run[k], scratch, &top);
        f->prev = c->key[a];
        f->has_prev = true;
        f->i = j + 1;
        if (top == base)
            continue; /* childless account(s): nothing to rank */
        qsort_r(scratch + base, top - base, sizeof(*scratch), cmp_key, c);
        if (flux)
            flux_users_first(c, scratch + base, top - base);
        st[sp++] = (struct frame){.base = base, .len = top - base, .i = 0, .tied_in = tied};
    }
    free(scratch);
    free(st);
    return 0;
}

int fairshare_compute(const usage_tree_t *t, const struct fairshare_opts *o,
                      struct fairshare_row *rows, struct allot_error *err)
{
    size_t n = usage_tree_count(t);
    int rc = -1;
    struct fs_ctx c = {.t = t, .rows = rows};

    if ((int)o->algo < (int)FAIRSHARE_CLASSIC || (int)o->algo > (int)FAIRSHARE_FLUX)
        return allot_errorf(err, ALLOT_EINVAL, "algorithm: unknown value %d", (int)o->algo);
    c.key = malloc(n * sizeof(*c.key));
    c.sib_shares = malloc(n * sizeof(*c.sib_shares));
    c.sib_usage = malloc(n * sizeof(*c.sib_usage));
    if (!c.key || !c.sib_shares || !c.sib_usage) {
        allot_errorf(err, ALLOT_ENOMEM, "fair-share: out of memory for %zu", n);
        goto out;
    }
    fs_prepare(&c);
    switch (o->algo) {
    case FAIRSHARE_CLASSIC:
        fs_classic(&c, o->dampening ? o->dampening : 1);
        rc = 0;
        break;
    case FAIRSHARE_FAIR_TREE:
        ft_levels(&c);
        rc = fs_walk(&c, false, err);
        break;
    case FAIRSHARE_FLUX:
        flux_levels(&c);
        rc = fs_walk(&c, true, err);
        break;
    }
out:
    free(c.key);
    free(c.sib_shares);
    free(c.sib_usage);
    return rc;
}

/* ---- formatting ---- */

struct out {
    char *buf;
    size_t len, pos;
    bool overflow;
};

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(struct out *o, const char *fmt, ...)
{
    va_list ap;
    size_t room = o->pos < o->len ? o->len - o->pos : 0;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + (o->pos < o->len ? o->pos : o->len - 1), room ? room : 1, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= room)
        o->overflow = true;
    o->pos += k > 0 ? (size_t)k : 0;
}

static int out_finish(struct out *o, struct allot_error *err)
{
    if (o->overflow)
        return allot_errorf(err, ALLOT_ETOOBIG, "line longer than the %zu-byte buffer", o->len);
    return (int)o->pos;
}

const char *fairshare_sshare_header(enum fairshare_algo algo)
{
    if (algo == FAIRSHARE_CLASSIC)
        return "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|"
               "GrpTRESMins|TRESRunMins";
    return "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|"
           "LevelFS|GrpTRESMins|TRESRunMins";
}

/* print_fields_double: "%f", blank for unset (NAN here). */
static void out_f(struct out *o, double v)
{
    if (isnan(v))
        out_printf(o, "|");
    else
        out_printf(o, "%f|", v);
}

int fairshare_format_sshare(const usage_tree_t *t, const struct fairshare_row *rows,
                            enum fairshare_algo algo, size_t i, const char *grp_tres_mins,
                            const char *tres_run_mins, char *buf, size_t len,
                            struct allot_error *err)
{
    struct out o = {.buf = buf, .len = len};
    const struct fairshare_row *r = &rows[i];
    const char *user = usage_tree_user(t, i);
    bool root = i == usage_tree_root(t);

    if (len == 0)
        return allot_errorf(err, ALLOT_ETOOBIG, "empty output buffer");
    out_printf(&o, "%*s%s|%s|", (int)usage_tree_depth(t, i), "", usage_tree_account(t, i),
               user ? user : "");
    if (root)
        out_printf(&o, "|"); /* root's RawShares is NO_VAL: blank */
    else
        out_printf(&o, "%u|", usage_tree_shares(t, i));
    out_f(&o, r->norm_shares);
    /* sshare truncates RawUsage to an unsigned integer */
    out_printf(&o, "%llu|", (unsigned long long)(r->raw_usage < 1.8e19 ? r->raw_usage : 1.8e19));
    /* sshare leaves root's NormUsage blank, with or without usage (seen on 22.05.8) */
    out_f(&o, root ? NAN : r->norm_usage);
    out_f(&o, r->effectv_usage);
    out_f(&o, r->fairshare);
    if (algo != FAIRSHARE_CLASSIC)
        out_f(&o, r->level_fs); /* "%f" prints +inf as "inf" */
    out_printf(&o, "%s|%s", grp_tres_mins ? grp_tres_mins : "", tres_run_mins ? tres_run_mins : "");
    return out_finish(&o, err);
}

int fairshare_format_pyfloat(double v, char *buf, size_t len)
{
    char digits[40];
    if (isnan(v))
        return snprintf(buf, len, "nan");
    if (isinf(v))
        return snprintf(buf, len, v > 0 ? "inf" : "-inf");
    if (v == 0.0)
        return snprintf(buf, len, signbit(v) ? "-0.0" : "0.0");
    /* shortest round-tripping significand, as Python's repr */
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(digits, sizeof(digits), "%.*e", p - 1, v);
        if (strtod(digits, NULL) == v)
            break;
    }
    if (p > 17)
        p = 17;
    char *e = strchr(digits, 'e');
    int exp10 = atoi(e + 1);
    if (exp10 < -4 || exp10 >= 16) {
        /* scientific: mantissa without trailing zeros, exponent at least two digits */
        *e = '\0';
        return snprintf(buf, len, "%se%c%02d", digits, exp10 < 0 ? '-' : '+', abs(exp10));
    }
    int decimals = p - 1 - exp10;
    if (decimals < 1)
        decimals = 1;
    return snprintf(buf, len, "%.*f", decimals, v);
}

const char *fairshare_flux_header(void)
{
    return "Account                         Username           RawShares            RawUsage"
           "           Fairshare";
}

int fairshare_format_flux(const usage_tree_t *t, const struct fairshare_row *rows, size_t i,
                          char *buf, size_t len, struct allot_error *err)
{
    struct out o = {.buf = buf, .len = len};
    char acct[512], num[64];
    const char *user = usage_tree_user(t, i);

    if (len == 0)
        return allot_errorf(err, ALLOT_ETOOBIG, "empty output buffer");
    snprintf(acct, sizeof(acct), "%*s%s", (int)usage_tree_depth(t, i), "",
             usage_tree_account(t, i));
    out_printf(&o, "%-20s%20s%20u", acct, user ? user : "", usage_tree_shares(t, i));
    fairshare_format_pyfloat(rows[i].raw_usage, num, sizeof(num));
    out_printf(&o, "%20s", num);
    if (user && !isnan(rows[i].fairshare)) {
        fairshare_format_pyfloat(rows[i].fairshare, num, sizeof(num));
        out_printf(&o, "%20s", num);
    }
    return out_finish(&o, err);
}
