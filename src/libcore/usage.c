/* SPDX-License-Identifier: GPL-3.0-or-later */
/* usage.c - flat-array association tree with per-association decay accumulators (usage.h). */
#include "libcore/usage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct usage_tree {
    size_t n;
    size_t users;
    uint32_t root;
    uint32_t *parent; /* USAGE_NONE for the root */
    uint32_t *shares;
    uint8_t *is_user;
    uint32_t *depth;
    uint32_t *child_start; /* n + 1 entries: children of i are child_idx[start[i]..start[i+1]) */
    uint32_t *child_idx;   /* n - 1 entries, input order within each parent */
    uint32_t *preorder;    /* n entries */
    double *own;           /* own usage */
    decay_acc_t *acc;
    char *names; /* arena of NUL-terminated names */
    uint32_t *acct_off;
    uint32_t *user_off; /* USAGE_NONE for accounts */
};

void usage_tree_destroy(usage_tree_t *t)
{
    if (!t)
        return;
    free(t->parent);
    free(t->shares);
    free(t->is_user);
    free(t->depth);
    free(t->child_start);
    free(t->child_idx);
    free(t->preorder);
    free(t->own);
    free(t->acc);
    free(t->names);
    free(t->acct_off);
    free(t->user_off);
    free(t);
}

/* First pass: check each spec on its own; sums the name arena size. */
static int check_specs(const struct usage_assoc_spec *spec, size_t n, size_t *arena, size_t *root,
                       struct allot_error *err)
{
    size_t roots = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const struct usage_assoc_spec *s = &spec[i];
        if (s->parent == -1) {
            roots++;
            *root = i;
        } else if (s->parent < 0 || (uint64_t)s->parent >= n || (size_t)s->parent == i) {
            return allot_errorf(err, ALLOT_EINVAL, "association %zu: parent %lld out of range", i,
                                (long long)s->parent);
        } else if (spec[s->parent].user) {
            return allot_errorf(err, ALLOT_EINVAL,
                                "association %zu: parent %lld is a user association", i,
                                (long long)s->parent);
        }
        if (!s->account || !s->account[0])
            return allot_errorf(err, ALLOT_EINVAL, "association %zu: account name is empty", i);
        if (s->user && !s->user[0])
            return allot_errorf(err, ALLOT_EINVAL, "association %zu: user name is empty", i);
        if (!isfinite(s->usage) || s->usage < 0.0)
            return allot_errorf(err, ALLOT_EINVAL, "association %zu: usage must be finite and >= 0",
                                i);
        bytes += strlen(s->account) + 1 + (s->user ? strlen(s->user) + 1 : 0);
        if (bytes >= UINT32_MAX)
            return allot_errorf(err, ALLOT_ETOOBIG, "association names exceed 4 GiB");
    }
    if (roots != 1)
        return allot_errorf(err, ALLOT_EINVAL, "tree: %zu roots (parent -1), need exactly one",
                            roots);
    if (spec[*root].user)
        return allot_errorf(err, ALLOT_EINVAL, "association %zu: the root cannot be a user", *root);
    *arena = bytes;
    return 0;
}

/* Iterative pre-order from the root over a CSR child list; also sets depths.  Returns the
 * number of nodes reached (< n means a cycle detached some nodes from the root). */
static size_t walk_preorder(size_t n, uint32_t root, const uint32_t *start, const uint32_t *idx,
                            uint32_t *order, uint32_t *depth, uint32_t *stack)
{
    size_t sp = 0, k = 0;
    stack[sp++] = root;
    if (depth)
        depth[root] = 0;
    while (sp > 0 && k < n) {
        uint32_t v = stack[--sp];
        order[k++] = v;
        /* push in reverse so the first child is visited first */
        for (uint32_t j = start[v + 1]; j > start[v]; j--) {
            uint32_t c = idx[j - 1];
            if (depth)
                depth[c] = depth[v] + 1;
            stack[sp++] = c;
        }
    }
    return k;
}

usage_tree_t *usage_tree_create(const struct usage_assoc_spec *spec, size_t n,
                                struct allot_error *err)
{
    size_t arena = 0, root = 0;
    uint32_t *stack = NULL;

    if (n == 0 || n > USAGE_TREE_MAX) {
        allot_errorf(err, ALLOT_EINVAL, "tree: %zu associations, need 1..%zu", n,
                     (size_t)USAGE_TREE_MAX);
        return NULL;
    }
    if (check_specs(spec, n, &arena, &root, err) < 0)
        return NULL;

    usage_tree_t *t = calloc(1, sizeof(*t));
    if (!t)
        goto nomem;
    t->n = n;
    t->root = (uint32_t)root;
    t->parent = malloc(n * sizeof(*t->parent));
    t->shares = malloc(n * sizeof(*t->shares));
    t->is_user = malloc(n);
    t->depth = malloc(n * sizeof(*t->depth));
    t->child_start = calloc(n + 1, sizeof(*t->child_start));
    t->child_idx = malloc((n > 1 ? n - 1 : 1) * sizeof(*t->child_idx));
    t->preorder = malloc(n * sizeof(*t->preorder));
    t->own = malloc(n * sizeof(*t->own));
    t->acc = malloc(n * sizeof(*t->acc));
    t->names = malloc(arena ? arena : 1);
    t->acct_off = malloc(n * sizeof(*t->acct_off));
    t->user_off = malloc(n * sizeof(*t->user_off));
    stack = malloc(n * sizeof(*stack));
    if (!t->parent || !t->shares || !t->is_user || !t->depth || !t->child_start || !t->child_idx ||
        !t->preorder || !t->own || !t->acc || !t->names || !t->acct_off || !t->user_off || !stack)
        goto nomem;

    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const struct usage_assoc_spec *s = &spec[i];
        t->parent[i] = s->parent < 0 ? USAGE_NONE : (uint32_t)s->parent;
        t->shares[i] = s->shares;
        t->is_user[i] = s->user != NULL;
        t->users += s->user != NULL;
        t->own[i] = s->usage;
        decay_acc_init(&t->acc[i]);
        size_t len = strlen(s->account) + 1;
        memcpy(t->names + off, s->account, len);
        t->acct_off[i] = (uint32_t)off;
        off += len;
        if (s->user) {
            len = strlen(s->user) + 1;
            memcpy(t->names + off, s->user, len);
            t->user_off[i] = (uint32_t)off;
            off += len;
        } else {
            t->user_off[i] = USAGE_NONE;
        }
    }

    /* CSR children by counting sort: stable, so siblings keep their input order. */
    for (size_t i = 0; i < n; i++)
        if (t->parent[i] != USAGE_NONE)
            t->child_start[t->parent[i] + 1]++;
    for (size_t i = 0; i < n; i++)
        t->child_start[i + 1] += t->child_start[i];
    for (size_t i = 0; i < n; i++)
        stack[i] = t->child_start[i]; /* fill cursor per parent */
    for (size_t i = 0; i < n; i++)
        if (t->parent[i] != USAGE_NONE)
            t->child_idx[stack[t->parent[i]]++] = (uint32_t)i;

    size_t reached =
        walk_preorder(n, t->root, t->child_start, t->child_idx, t->preorder, t->depth, stack);
    free(stack);
    stack = NULL;
    if (reached != n) {
        allot_errorf(err, ALLOT_EINVAL,
                     "tree: %zu associations are not reachable from the root (parent cycle)",
                     n - reached);
        usage_tree_destroy(t);
        return NULL;
    }
    return t;

nomem:
    free(stack);
    usage_tree_destroy(t);
    allot_errorf(err, ALLOT_ENOMEM, "tree: out of memory for %zu associations", n);
    return NULL;
}

size_t usage_tree_count(const usage_tree_t *t)
{
    return t->n;
}

size_t usage_tree_user_count(const usage_tree_t *t)
{
    return t->users;
}

size_t usage_tree_root(const usage_tree_t *t)
{
    return t->root;
}

uint32_t usage_tree_parent(const usage_tree_t *t, size_t i)
{
    return t->parent[i];
}

bool usage_tree_is_user(const usage_tree_t *t, size_t i)
{
    return t->is_user[i] != 0;
}

uint32_t usage_tree_shares(const usage_tree_t *t, size_t i)
{
    return t->shares[i];
}

uint32_t usage_tree_depth(const usage_tree_t *t, size_t i)
{
    return t->depth[i];
}

const char *usage_tree_account(const usage_tree_t *t, size_t i)
{
    return t->names + t->acct_off[i];
}

const char *usage_tree_user(const usage_tree_t *t, size_t i)
{
    return t->user_off[i] == USAGE_NONE ? NULL : t->names + t->user_off[i];
}

const uint32_t *usage_tree_children(const usage_tree_t *t, size_t i, size_t *count)
{
    *count = t->child_start[i + 1] - t->child_start[i];
    return t->child_idx + t->child_start[i];
}

const uint32_t *usage_tree_preorder(const usage_tree_t *t)
{
    return t->preorder;
}

double usage_tree_own_usage(const usage_tree_t *t, size_t i)
{
    return t->own[i];
}

int usage_tree_set_usage(usage_tree_t *t, size_t i, double usage, struct allot_error *err)
{
    if (i >= t->n)
        return allot_errorf(err, ALLOT_EINVAL, "association %zu: no such index", i);
    if (!isfinite(usage) || usage < 0.0)
        return allot_errorf(err, ALLOT_EINVAL, "association %zu: usage must be finite and >= 0", i);
    t->own[i] = usage;
    return 0;
}

int usage_tree_charge(usage_tree_t *t, size_t i, const struct decay_params *p, int64_t end_s,
                      double usage, double usage_factor, bool nodecay, struct allot_error *err)
{
    if (i >= t->n)
        return allot_errorf(err, ALLOT_EINVAL, "association %zu: no such index", i);
    if (decay_acc_add(&t->acc[i], p, end_s, usage, usage_factor, nodecay, err) < 0)
        return allot_error_prefix(err, "association %zu", i);
    return 0;
}

void usage_tree_evaluate(usage_tree_t *t, const struct decay_params *p, int64_t now_s)
{
    for (size_t i = 0; i < t->n; i++)
        t->own[i] = decay_acc_value(&t->acc[i], p, now_s);
}

/* Sibling order of sshare: users first (by user name), then accounts (by account name). */
static int cmp_display(const void *a, const void *b, void *ctx)
{
    const usage_tree_t *t = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (t->is_user[x] != t->is_user[y])
        return t->is_user[x] ? -1 : 1;
    int c = t->is_user[x] ? strcmp(usage_tree_user(t, x), usage_tree_user(t, y))
                          : strcmp(usage_tree_account(t, x), usage_tree_account(t, y));
    if (c != 0)
        return c;
    return x < y ? -1 : (x > y); /* stable for equal names */
}

int usage_tree_display_order(const usage_tree_t *t, uint32_t *order, struct allot_error *err)
{
    size_t n = t->n;
    uint32_t *idx = malloc((n > 1 ? n - 1 : 1) * sizeof(*idx));
    uint32_t *stack = malloc(n * sizeof(*stack));
    if (!idx || !stack) {
        free(idx);
        free(stack);
        return allot_errorf(err, ALLOT_ENOMEM, "display order: out of memory");
    }
    if (n > 1)
        memcpy(idx, t->child_idx, (n - 1) * sizeof(*idx));
    for (size_t i = 0; i < n; i++) {
        size_t cnt = t->child_start[i + 1] - t->child_start[i];
        if (cnt > 1)
            qsort_r(idx + t->child_start[i], cnt, sizeof(*idx), cmp_display, (void *)t);
    }
    walk_preorder(n, t->root, t->child_start, idx, order, NULL, stack);
    free(idx);
    free(stack);
    return 0;
}
