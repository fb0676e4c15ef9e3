/* SPDX-License-Identifier: GPL-3.0-or-later */
/* limits.c - the limit table, canonical values, resolution and submit check (limits.h). */
#include "libcore/limits.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "libcore/numparse.h"
#include "libutil/text.h"

#define A LIMIT_IN_ASSOC
#define Q LIMIT_IN_QOS
#define P LIMIT_IN_PARTITION

/* Every limit of Slurm's "Resource Limits" page, plus the partition's own. */
static const struct limit_def table[] = {
    {"GrpJobs", "GrpJobs", LIMIT_COUNT, A | Q, 1},
    {"GrpJobsAccrue", "GrpJobsAccrue", LIMIT_COUNT, A | Q, 1},
    {"GrpSubmitJobs", "GrpSubmitJobs", LIMIT_COUNT, A | Q, 1},
    {"GrpTRES", "GrpTRES", LIMIT_TRES, A | Q, 1},
    {"GrpTRESMins", "GrpTRESMins", LIMIT_TRES_MINUTES, A | Q, 1},
    {"GrpTRESRunMins", "GrpTRESRunMins", LIMIT_TRES_MINUTES, A | Q, 1},
    {"GrpWall", "GrpWall", LIMIT_MINUTES, A | Q, 1},
    {"MaxJobs", "MaxJobs", LIMIT_COUNT, A, 0},
    {"MaxJobsAccrue", "MaxJobsAccrue", LIMIT_COUNT, A, 0},
    {"MaxSubmitJobs", "MaxSubmitJobs", LIMIT_COUNT, A, 0},
    {"MaxTRESMinsPerJob", "MaxTRESMinsPerJob", LIMIT_TRES_MINUTES, A | Q, 0},
    {"MaxTRESPerJob", "MaxTRESPerJob", LIMIT_TRES, A | Q, 0},
    {"MaxTRESPerNode", "MaxTRESPerNode", LIMIT_TRES, A | Q, 0},
    {"MaxWallDurationPerJob", "MaxWallDurationPerJob", LIMIT_MINUTES, A | Q, 0},
    {"MinPrioThreshold", "MinPrioThreshold", LIMIT_COUNT, A | Q, 0},
    {"GraceTime", "GraceTime", LIMIT_SECONDS, Q, 0},
    {"LimitFactor", "LimitFactor", LIMIT_FACTOR, Q, 0},
    {"UsageFactor", "UsageFactor", LIMIT_FACTOR, Q, 0},
    {"MaxJobsAccruePerAccount", "MaxJobsAccruePerAccount", LIMIT_COUNT, Q, 0},
    {"MaxJobsAccruePerUser", "MaxJobsAccrue", LIMIT_COUNT, Q, 0},
    {"MaxJobsPerAccount", "MaxJobsPerAccount", LIMIT_COUNT, Q, 0},
    {"MaxJobsPerUser", "MaxJobs", LIMIT_COUNT, Q, 0},
    {"MaxSubmitJobsPerAccount", "MaxSubmitJobsPerAccount", LIMIT_COUNT, Q, 0},
    {"MaxSubmitJobsPerUser", "MaxSubmitJobs", LIMIT_COUNT, Q, 0},
    {"MaxTRESPerAccount", "MaxTRESPerAccount", LIMIT_TRES, Q, 0},
    {"MaxTRESPerUser", "MaxTRESPerUser", LIMIT_TRES, Q, 0},
    {"MinTRESPerJob", "MinTRESPerJob", LIMIT_TRES, Q, 0},
    {"MaxTime", "MaxWallDurationPerJob", LIMIT_MINUTES, P, 0},
    {"MaxNodes", "MaxTRESPerJob", LIMIT_COUNT, P, 0},
    {"MinNodes", "MinTRESPerJob", LIMIT_COUNT, P, 0},
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

static const struct {
    const char *alias;
    unsigned where;
    const char *name;
} aliases[] = {
    {"MaxWall", A | Q, "MaxWallDurationPerJob"},
    {"MaxTRES", A | Q, "MaxTRESPerJob"},
    {"MaxTRESMins", A | Q, "MaxTRESMinsPerJob"},
    {"MaxTRESPN", A | Q, "MaxTRESPerNode"},
    {"MaxSubmit", A, "MaxSubmitJobs"},
    {"MaxSubmit", Q, "MaxSubmitJobsPerUser"},
    {"MaxJobs", Q, "MaxJobsPerUser"},
    {"MaxSubmitJobs", Q, "MaxSubmitJobsPerUser"},
    {"MaxJobsAccrue", Q, "MaxJobsAccruePerUser"},
    {"MaxJobsPU", Q, "MaxJobsPerUser"},
    {"MaxSubmitPU", Q, "MaxSubmitJobsPerUser"},
    {"MaxTRESPU", Q, "MaxTRESPerUser"},
    {"MaxJobsPA", Q, "MaxJobsPerAccount"},
    {"MaxSubmitPA", Q, "MaxSubmitJobsPerAccount"},
    {"MaxTRESPA", Q, "MaxTRESPerAccount"},
    {"MinTRES", Q, "MinTRESPerJob"},
    /* flux-accounting's per-association job limits, as Slurm's: */
    {"max_active_jobs", A, "MaxSubmitJobs"}, /* refused at submit: allot's admission */
    {"max_running_jobs", A, "MaxJobs"},      /* pending until one ends: Slurm enforces */
    {"max_nodes", A, "GrpTRES"},             /* value N means node=N (flux_tres below) */
    {"max_cores", A, "GrpTRES"},             /* value N means cpu=N */
};

/* flux's max_nodes/max_cores are counts over the association's running jobs: Slurm's
 * GrpTRES of that association with one TRES. */
static const struct {
    const char *alias;
    const char *tres;
} flux_tres[] = {{"max_nodes", "node"}, {"max_cores", "cpu"}};

static unsigned scope_bit(enum limit_scope s)
{
    switch (s) {
    case LIMIT_SCOPE_ASSOC:
    case LIMIT_SCOPE_ACCOUNT:
        return A;
    case LIMIT_SCOPE_QOS:
        return Q;
    case LIMIT_SCOPE_PARTITION:
        return P;
    }
    return 0;
}

const struct limit_def *limits_table(size_t *n)
{
    *n = NTABLE;
    return table;
}

static const struct limit_def *find_bits(unsigned bit, const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < NTABLE; i++)
        if ((table[i].where & bit) && strcasecmp(table[i].name, name) == 0)
            return &table[i];
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if ((aliases[i].where & bit) && strcasecmp(aliases[i].alias, name) == 0)
            return find_bits(bit, aliases[i].name);
    return NULL;
}

const struct limit_def *limits_find(enum limit_scope scope, const char *name)
{
    return find_bits(scope_bit(scope), name);
}

/* ---- values ---------------------------------------------------------------------------- */

static int is_clear(const char *v)
{
    return strcmp(v, "-1") == 0 || strcasecmp(v, "UNLIMITED") == 0 ||
           strcasecmp(v, "INFINITE") == 0;
}

/* Split s at the first c: returns the length before it (or strlen). */
static size_t span_to(const char *s, size_t len, char c)
{
    const char *p = memchr(s, c, len);
    return p ? (size_t)(p - s) : len;
}

/* Up to three ':'-separated integers; *n receives how many. */
static int colon_fields(const char *s, size_t len, int64_t f[3], int *n)
{
    *n = 0;
    size_t pos = 0;
    for (;;) {
        size_t l = span_to(s + pos, len - pos, ':');
        if (*n == 3 || numparse_uint(s + pos, l, &f[*n]) < 0)
            return -1;
        (*n)++;
        pos += l;
        if (pos == len)
            return 0;
        pos++; /* skip ':' */
        if (pos == len)
            return -1;
    }
}

/* Slurm time strings (parse_time.c time_str2secs): min, min:sec, h:m:s, d-h, d-h:m, d-h:m:s. */
static int time_secs(const char *s, int bare_is_secs, int64_t *out)
{
    size_t len = strlen(s), dash = span_to(s, len, '-');
    int64_t f[3], days = 0, secs;
    int n;
    __int128 t;

    if (dash < len) {
        if (numparse_uint(s, dash, &days) < 0 ||
            colon_fields(s + dash + 1, len - dash - 1, f, &n) < 0)
            return -1;
        t = (__int128)days * 86400 + (__int128)f[0] * 3600;
        if (n >= 2)
            t += (__int128)f[1] * 60;
        if (n == 3)
            t += f[2];
    } else {
        if (colon_fields(s, len, f, &n) < 0)
            return -1;
        if (n == 1)
            t = bare_is_secs ? (__int128)f[0] : (__int128)f[0] * 60;
        else if (n == 2)
            t = (__int128)f[0] * 60 + f[1];
        else
            t = (__int128)f[0] * 3600 + (__int128)f[1] * 60 + f[2];
    }
    if (t > INT64_MAX - 59)
        return -1;
    secs = (int64_t)t;
    *out = secs;
    return 0;
}

/* A TRES limit list: name=count items, count -1 clears that TRES. */
static int tres_limit_parse(const char *s, struct tres_list *set, struct tres_list *cleared,
                            struct allot_error *err)
{
    char setbuf[ALLOT_TRES_MAX] = "";
    size_t used = 0;
    const char *p = s;

    cleared->n = 0;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t ilen = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', ilen);
        if (eq && (size_t)(eq - p) + 3 == ilen && strncmp(eq, "=-1", 3) == 0) {
            char canon[TRES_NAME_MAX];
            if (tres_name_canon(p, (size_t)(eq - p), canon, err) < 0 ||
                tres_set(cleared, canon, 0, err) < 0)
                return -1;
        } else {
            int n = snprintf(setbuf + used, sizeof(setbuf) - used, "%s%.*s", used ? "," : "",
                             (int)ilen, p);
            if (n < 0 || (size_t)n >= sizeof(setbuf) - used)
                return allot_errorf(err, ALLOT_ETOOBIG, "TRES list too long");
            used += (size_t)n;
        }
        if (!end)
            break;
        p = end + 1;
        if (!*p)
            return allot_errorf(err, ALLOT_EINVAL, "tres: trailing ','");
    }
    if (tres_parse(setbuf, set, err) < 0)
        return -1;
    for (int i = 0; i < cleared->n; i++)
        if (tres_get(set, cleared->item[i].name) >= 0)
            return allot_errorf(err, ALLOT_EINVAL, "tres: %s both set and cleared",
                                cleared->item[i].name);
    return 0;
}

/* Canonical text of a value (the value is assumed already trimmed). */
static int canon_value(const struct limit_def *d, const char *v, char *out, size_t len,
                       struct allot_error *err)
{
    char tmp[ALLOT_TRES_MAX];
    int64_t x;

    if (is_clear(v)) {
        snprintf(tmp, sizeof(tmp), "-1");
    } else {
        switch (d->type) {
        case LIMIT_COUNT:
            if (numparse_uint(v, strlen(v), &x) < 0)
                return allot_errorf(err, ALLOT_EINVAL, "%s: '%.64s' is not a count >= 0", d->name,
                                    v);
            snprintf(tmp, sizeof(tmp), "%lld", (long long)x);
            break;
        case LIMIT_MINUTES:
        case LIMIT_SECONDS:
            if (time_secs(v, d->type == LIMIT_SECONDS, &x) < 0)
                return allot_errorf(err, ALLOT_EINVAL,
                                    "%s: '%.64s' is not a time (min, min:sec, h:m:s, d-h, "
                                    "d-h:m, d-h:m:s)",
                                    d->name, v);
            if (d->type == LIMIT_MINUTES)
                x = (x + 59) / 60; /* Slurm rounds up to whole minutes */
            snprintf(tmp, sizeof(tmp), "%lld", (long long)x);
            break;
        case LIMIT_TRES:
        case LIMIT_TRES_MINUTES: {
            struct tres_list set, cleared;
            size_t l;
            if (tres_limit_parse(v, &set, &cleared, err) < 0)
                return allot_error_prefix(err, "%s", d->name);
            if (set.n + cleared.n == 0)
                return allot_errorf(err, ALLOT_EINVAL, "%s: empty TRES list", d->name);
            if (tres_format(&set, tmp, sizeof(tmp), err) < 0)
                return allot_error_prefix(err, "%s", d->name);
            l = strlen(tmp);
            for (int i = 0; i < cleared.n; i++) {
                int n = snprintf(tmp + l, sizeof(tmp) - l, "%s%s=-1", l ? "," : "",
                                 cleared.item[i].name);
                if (n < 0 || (size_t)n >= sizeof(tmp) - l)
                    return allot_errorf(err, ALLOT_ETOOBIG, "%s: TRES list too long", d->name);
                l += (size_t)n;
            }
            break;
        }
        case LIMIT_FACTOR:
            if (numparse_fixed(v, strlen(v), 6, &x) < 0 ||
                numparse_format_fixed(x, 6, tmp, sizeof(tmp)) < 0)
                return allot_errorf(err, ALLOT_EINVAL,
                                    "%s: '%.64s' is not a factor >= 0 with at most 6 decimals",
                                    d->name, v);
            break;
        }
    }
    if (strlen(tmp) + 1 > len)
        return allot_errorf(err, ALLOT_ETOOBIG, "%s: value buffer too small", d->name);
    memcpy(out, tmp, strlen(tmp) + 1);
    return 0;
}

int limits_validate(enum limit_scope scope, const char *name, const char *value, char *canon,
                    size_t len, struct allot_error *err)
{
    const struct limit_def *d = limits_find(scope, name);

    if (!d)
        return allot_errorf(err, ALLOT_EINVAL, "limit '%.64s' does not exist for %s",
                            name ? name : "(null)", model_limit_scope_name(scope));
    if (!value || !*value)
        return allot_errorf(err, ALLOT_EINVAL, "%s: missing value", d->name);
    for (size_t i = 0; i < sizeof(flux_tres) / sizeof(flux_tres[0]); i++) {
        if (strcasecmp(name, flux_tres[i].alias) != 0)
            continue;
        /* A count (or a clear) for one TRES: check it as a count, then as GrpTRES. */
        char count[32], item[64];
        size_t tl = strlen(flux_tres[i].tres);
        if (strncasecmp(value, flux_tres[i].tres, tl) == 0 && value[tl] == '=')
            value += tl + 1; /* its canonical text "node=N" again */
        const struct limit_def count_def = {flux_tres[i].alias, d->key, LIMIT_COUNT, 0, 0};
        if (canon_value(&count_def, value, count, sizeof count, err) < 0)
            return -1;
        snprintf(item, sizeof item, "%s=%s", flux_tres[i].tres, count);
        return canon_value(d, item, canon, len, err);
    }
    return canon_value(d, value, canon, len, err);
}

unsigned limits_qos_flags(const char *flags)
{
    static const struct {
        const char *name;
        unsigned bit;
    } known[] = {{"DenyOnLimit", LIMIT_QOS_DENY_ON_LIMIT},
                 {"OverPartQOS", LIMIT_QOS_OVER_PART_QOS},
                 {"PartitionTimeLimit", LIMIT_QOS_PART_TIME_LIMIT},
                 {"PartitionMinNodes", LIMIT_QOS_PART_MIN_NODE},
                 {"PartitionMaxNodes", LIMIT_QOS_PART_MAX_NODE}};
    unsigned out = 0;
    const char *p = flags;

    while (p && *p) {
        size_t l = strcspn(p, ",");
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            if (strlen(known[i].name) == l && strncasecmp(known[i].name, p, l) == 0)
                out |= known[i].bit;
        p += l;
        if (*p == ',')
            p++;
    }
    return out;
}

const char *limits_level_kind_name(enum limit_level_kind k)
{
    static const char *const names[] = {"partition QOS",    "job QOS",
                                        "user association", "account association",
                                        "root association", "partition"};
    return (k >= LIMIT_LEVEL_PARTITION_QOS && k <= LIMIT_LEVEL_PARTITION) ? names[k] : "?";
}

/* ---- resolution ------------------------------------------------------------------------ */

static enum limit_scope level_scope(enum limit_level_kind k)
{
    switch (k) {
    case LIMIT_LEVEL_PARTITION_QOS:
    case LIMIT_LEVEL_JOB_QOS:
        return LIMIT_SCOPE_QOS;
    case LIMIT_LEVEL_PARTITION:
        return LIMIT_SCOPE_PARTITION;
    default:
        return LIMIT_SCOPE_ASSOC;
    }
}

static int is_assoc(enum limit_level_kind k)
{
    return k == LIMIT_LEVEL_USER_ASSOC || k == LIMIT_LEVEL_ACCOUNT_ASSOC ||
           k == LIMIT_LEVEL_ROOT_ASSOC;
}

static struct limit_resolved *entry(struct limit_effective *out, const char *key,
                                    enum limit_type type, int grp)
{
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->r[i].name, key) == 0)
            return &out->r[i];
    if (out->n >= LIMIT_EFFECTIVE_MAX)
        return NULL;
    struct limit_resolved *r = &out->r[out->n++];
    memset(r, 0, sizeof(*r));
    r->name = key;
    r->type = type;
    r->grp = grp;
    r->value = -1;
    r->src.level = -1;
    for (int i = 0; i < LIMIT_CHAIN_MAX; i++)
        r->level_value[i] = -1;
    return r;
}

/* floor(v x ppm / 1e6); overflow means unlimited, as Slurm's _apply_limit_factor. */
static int64_t apply_factor(int64_t v, int64_t ppm)
{
    __int128 x = (__int128)v * ppm / 1000000;
    return x > INT64_MAX ? INT64_MAX : (int64_t)x;
}

static void set_tres(struct limit_resolved *r, const char *name, int64_t v,
                     const struct limit_source *src)
{
    int64_t cur = tres_get(&r->tres, name);
    if (cur >= 0 && !(r->grp && v < cur))
        return; /* first level wins; Grp: only a smaller value replaces */
    if (tres_set(&r->tres, name, v, NULL) < 0)
        return; /* cannot happen: at most TRES_LIST_MAX names per list */
    for (int i = 0; i < r->tres.n; i++)
        if (strcmp(r->tres.item[i].name, name) == 0)
            r->tres_src[i] = *src;
}

/* tres_set keeps the list sorted, which moves items: keep tres_src in step by rebuilding
 * sources by name around each insertion. */
static void set_tres_tracked(struct limit_resolved *r, const char *name, int64_t v,
                             const struct limit_source *src)
{
    struct limit_source saved[TRES_LIST_MAX];
    char names[TRES_LIST_MAX][TRES_NAME_MAX];
    int n = r->tres.n;
    for (int i = 0; i < n; i++) {
        saved[i] = r->tres_src[i];
        memcpy(names[i], r->tres.item[i].name, TRES_NAME_MAX);
    }
    set_tres(r, name, v, src);
    for (int i = 0; i < r->tres.n; i++) {
        if (strcmp(r->tres.item[i].name, name) == 0)
            continue;
        for (int j = 0; j < n; j++)
            if (strcmp(names[j], r->tres.item[i].name) == 0)
                r->tres_src[i] = saved[j];
    }
}

static int resolve_pair(struct limit_effective *out, const struct limit_level *lv, int idx,
                        const struct limit_pair *pr, int64_t factor_ppm,
                        struct limit_resolved **part_nodes, struct allot_error *err)
{
    const struct limit_def *d = limits_find(level_scope(lv->kind), pr->name);
    struct limit_source src = {idx, lv->kind, lv->owner};
    int64_t x;

    if (!d)
        return allot_errorf(err, ALLOT_EINVAL, "%s %s: limit '%.64s' is not valid there",
                            limits_level_kind_name(lv->kind), lv->owner ? lv->owner : "",
                            pr->name ? pr->name : "(null)");
    if (!pr->value || is_clear(pr->value))
        return 0;
    /* Partition node counts resolve as node= in the job-size TRES limits, last in order;
     * they are applied after the walk (see limits_resolve). */
    int part_node = lv->kind == LIMIT_LEVEL_PARTITION && d->type == LIMIT_COUNT;
    enum limit_type type = part_node ? LIMIT_TRES : d->type;
    struct limit_resolved *r = entry(out, d->key, type, d->grp);
    if (!r)
        return allot_errorf(err, ALLOT_EINVAL, "too many distinct limits");

    switch (d->type) {
    case LIMIT_TRES:
    case LIMIT_TRES_MINUTES: {
        struct tres_list set, cleared;
        if (tres_limit_parse(pr->value, &set, &cleared, err) < 0)
            return allot_error_prefix(err, "%s %s: %s", limits_level_kind_name(lv->kind),
                                      lv->owner ? lv->owner : "", d->name);
        int scaled = factor_ppm > 0 && is_assoc(lv->kind) &&
                     (strcmp(d->key, "GrpTRES") == 0 || strcmp(d->key, "MaxTRESPerJob") == 0);
        for (int i = 0; i < set.n; i++) {
            int64_t v = scaled ? apply_factor(set.item[i].count, factor_ppm) : set.item[i].count;
            set_tres_tracked(r, set.item[i].name, v, &src);
        }
        return 0;
    }
    case LIMIT_FACTOR:
        if (numparse_fixed(pr->value, strlen(pr->value), 6, &x) < 0)
            goto bad;
        break;
    default:
        if (numparse_uint(pr->value, strlen(pr->value), &x) < 0)
            goto bad;
        break;
    }
    if (part_node) {
        part_nodes[strcmp(d->name, "MaxNodes") == 0 ? 1 : 0] = r;
        r->level_value[idx] = x; /* remembered until the partition bounds are applied */
        return 0;
    }
    if (lv->kind == LIMIT_LEVEL_PARTITION) {
        r->level_value[idx] = x; /* MaxTime: applied after the walk */
        return 0;
    }
    if (d->grp) {
        r->level_value[idx] = x;
        if (r->src.level < 0 || x < r->value) {
            r->value = x;
            r->src = src;
        }
    } else if (r->src.level < 0) {
        r->value = x;
        r->src = src;
    }
    return 0;
bad:
    return allot_errorf(err, ALLOT_EINVAL, "%s %s: %s: '%.64s' is not canonical",
                        limits_level_kind_name(lv->kind), lv->owner ? lv->owner : "", d->name,
                        pr->value);
}

/* Partition bounds (Slurm job_mgr.c): the partition value applies if no other level set
 * the limit, or bounds it (upper for max, lower for min) unless the job QOS flag lifts it. */
static void apply_partition(struct limit_effective *out, const struct limit_chain *chain, int pidx,
                            struct limit_resolved **part_nodes, unsigned flags)
{
    const struct limit_level *pl = &chain->level[pidx];
    struct limit_source src = {pidx, pl->kind, pl->owner};

    for (int i = 0; i < out->n; i++) {
        struct limit_resolved *r = &out->r[i];
        int64_t pv = r->level_value[pidx];
        if (pv < 0)
            continue;
        if (r == part_nodes[0] || r == part_nodes[1]) {
            int is_max = r == part_nodes[1];
            unsigned lift = is_max ? LIMIT_QOS_PART_MAX_NODE : LIMIT_QOS_PART_MIN_NODE;
            int64_t cur = tres_get(&r->tres, "node");
            int bound = !(flags & lift) && (is_max ? pv < cur : pv > cur);
            if (cur < 0) {
                set_tres_tracked(r, "node", pv, &src);
            } else if (bound) {
                for (int k = 0; k < r->tres.n; k++)
                    if (strcmp(r->tres.item[k].name, "node") == 0) {
                        r->tres.item[k].count = pv;
                        r->tres_src[k] = src;
                    }
            }
        } else if (strcmp(r->name, "MaxWallDurationPerJob") == 0) {
            if (r->src.level < 0 || (!(flags & LIMIT_QOS_PART_TIME_LIMIT) && pv < r->value)) {
                r->value = pv;
                r->src = src;
            }
        }
        r->level_value[pidx] = -1;
    }
}

int limits_resolve(const struct limit_chain *chain, struct limit_effective *out,
                   struct allot_error *err)
{
    int order[LIMIT_CHAIN_MAX], pq = -1, jq = -1, part = -1;
    struct limit_resolved *part_nodes[2] = {NULL, NULL};

    if (chain->n < 0 || chain->n > LIMIT_CHAIN_MAX)
        return allot_errorf(err, ALLOT_EINVAL, "limits: chain of %d levels", chain->n);
    out->n = 0;
    out->job_qos_flags = 0;
    out->n_levels = chain->n;
    for (int i = 0; i < chain->n; i++) {
        order[i] = i;
        out->levels[i] = (struct limit_source){i, chain->level[i].kind, chain->level[i].owner};
        if (chain->level[i].kind == LIMIT_LEVEL_PARTITION_QOS && pq < 0)
            pq = i;
        if (chain->level[i].kind == LIMIT_LEVEL_JOB_QOS && jq < 0)
            jq = i;
        if (chain->level[i].kind == LIMIT_LEVEL_PARTITION)
            part = i;
    }
    if (jq >= 0)
        out->job_qos_flags = chain->level[jq].qos_flags;
    /* OverPartQOS on the job QOS: its limits come before the partition QOS's. */
    if (pq >= 0 && jq >= 0 && (out->job_qos_flags & LIMIT_QOS_OVER_PART_QOS)) {
        order[pq] = jq;
        order[jq] = pq;
    }
    /* LimitFactor: the first QOS in this order that sets one (acct_policy.c). */
    int64_t factor_ppm = -1;
    for (int k = 0; k < chain->n && factor_ppm < 0; k++) {
        const struct limit_level *lv = &chain->level[order[k]];
        if (level_scope(lv->kind) != LIMIT_SCOPE_QOS)
            continue;
        for (int j = 0; j < lv->n; j++) {
            const struct limit_def *d = limits_find(LIMIT_SCOPE_QOS, lv->pairs[j].name);
            int64_t x;
            if (d && strcmp(d->name, "LimitFactor") == 0 && lv->pairs[j].value &&
                !is_clear(lv->pairs[j].value) &&
                numparse_fixed(lv->pairs[j].value, strlen(lv->pairs[j].value), 6, &x) == 0)
                factor_ppm = x;
        }
    }
    for (int k = 0; k < chain->n; k++) {
        const struct limit_level *lv = &chain->level[order[k]];
        for (int j = 0; j < lv->n; j++)
            if (resolve_pair(out, lv, order[k], &lv->pairs[j], factor_ppm, part_nodes, err) < 0)
                return -1;
    }
    if (part >= 0)
        apply_partition(out, chain, part, part_nodes, out->job_qos_flags);
    return 0;
}

const struct limit_resolved *limits_get(const struct limit_effective *eff, const char *name)
{
    for (int i = 0; i < eff->n; i++)
        if (strcasecmp(eff->r[i].name, name) == 0)
            return &eff->r[i];
    return NULL;
}

/* ---- submit check ---------------------------------------------------------------------- */

struct checker {
    enum limit_check result;
    struct limit_violation first_pend;
    struct limit_violation *v;
};

/* Record a violation; returns 1 when it is a denial (stop checking). */
static int report(struct checker *c, const char *limit, const char *tres, int64_t lim, int64_t req,
                  const struct limit_source *src, int deny)
{
    struct limit_violation x = {
        .limit = limit, .limit_value = lim, .requested = req, .src = *src, .deny = deny};
    text_copy(x.tres, sizeof(x.tres), tres ? tres : "");
    if (deny) {
        *c->v = x;
        c->result = LIMIT_CHECK_DENY;
        return 1;
    }
    if (c->result == LIMIT_CHECK_OK) {
        c->first_pend = x;
        c->result = LIMIT_CHECK_PEND;
    }
    return 0;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* Job-size TRES checks; kind: 0 max per job, 1 min per job, 2 max per node, 3 TRES-minutes
 * per job, 4 Grp TRES (the job alone). */
static int check_tres(struct checker *c, const struct limit_effective *eff, const char *name,
                      int kind, const struct job_request *job)
{
    const struct limit_resolved *r = limits_get(eff, name);
    int64_t nodes = tres_get(&job->tres, "node");
    int64_t mins = job->time_limit_s < 0 ? -1 : ceil_div(job->time_limit_s, 60);

    if (!r)
        return 0;
    for (int i = 0; i < r->tres.n; i++) {
        const struct tres_item *lim = &r->tres.item[i];
        int64_t req = tres_get(&job->tres, lim->name);
        int bad;
        if (req < 0)
            req = 0;
        if (kind == 2) {
            if (nodes < 1)
                continue;
            req = ceil_div(req, nodes);
        } else if (kind == 3) {
            if (mins < 0)
                continue;
            __int128 tm = (__int128)req * mins;
            req = tm > INT64_MAX ? INT64_MAX : (int64_t)tm;
        }
        bad = kind == 1 ? req < lim->count : req > lim->count;
        if (!bad)
            continue;
        int deny = (eff->job_qos_flags & LIMIT_QOS_DENY_ON_LIMIT) ||
                   r->tres_src[i].kind == LIMIT_LEVEL_PARTITION;
        if (report(c, r->name, lim->name, lim->count, req, &r->tres_src[i], deny))
            return 1;
    }
    return 0;
}

enum limit_check limits_check_submit(const struct limit_effective *eff,
                                     const struct job_request *job,
                                     const struct submit_counts *counts, struct limit_violation *v)
{
    struct checker c = {.result = LIMIT_CHECK_OK, .v = v};
    const struct limit_resolved *r;

    if ((r = limits_get(eff, "MaxSubmitJobs")) && r->src.level >= 0 &&
        counts->user_jobs >= r->value &&
        report(&c, r->name, NULL, r->value, counts->user_jobs + 1, &r->src, 1))
        return c.result;
    if ((r = limits_get(eff, "MaxSubmitJobsPerAccount")) && r->src.level >= 0 &&
        counts->account_jobs >= r->value &&
        report(&c, r->name, NULL, r->value, counts->account_jobs + 1, &r->src, 1))
        return c.result;
    if ((r = limits_get(eff, "GrpSubmitJobs"))) {
        for (int i = 0; i < LIMIT_CHAIN_MAX; i++) {
            if (r->level_value[i] < 0 || counts->level_jobs[i] < r->level_value[i])
                continue;
            /* Every level's group limit binds, not only the smallest. */
            report(&c, r->name, NULL, r->level_value[i], counts->level_jobs[i] + 1, &eff->levels[i],
                   1);
            return c.result;
        }
    }
    /* Slurm documents only the association's MaxWallDurationPerJob as "denied at
     * submission"; a QOS MaxWall pends unless DenyOnLimit; the partition's MaxTime bounds
     * the job as its node counts do (refused). */
    if ((r = limits_get(eff, "MaxWallDurationPerJob")) && r->src.level >= 0 &&
        job->time_limit_s >= 0 && ceil_div(job->time_limit_s, 60) > r->value &&
        report(&c, r->name, NULL, r->value, ceil_div(job->time_limit_s, 60), &r->src,
               is_assoc(r->src.kind) || r->src.kind == LIMIT_LEVEL_PARTITION ||
                   (eff->job_qos_flags & LIMIT_QOS_DENY_ON_LIMIT)))
        return c.result;
    if (check_tres(&c, eff, "MaxTRESPerJob", 0, job) ||
        check_tres(&c, eff, "MinTRESPerJob", 1, job) ||
        check_tres(&c, eff, "MaxTRESPerNode", 2, job) ||
        check_tres(&c, eff, "MaxTRESMinsPerJob", 3, job) || check_tres(&c, eff, "GrpTRES", 4, job))
        return c.result;
    if (c.result == LIMIT_CHECK_PEND)
        *v = c.first_pend;
    return c.result;
}

/* What the job asked for and what would let it through, for limits_violation_format. */
static int advice(const struct limit_violation *v, char *buf, size_t len)
{
    const char *n = v->limit;
    long long lim = (long long)v->limit_value, req = (long long)v->requested;

    if (strstr(n, "SubmitJobs"))
        return snprintf(buf, len,
                        "the job would be submitted job %lld; wait until a job ends or ask an "
                        "admin",
                        req);
    if (strcmp(n, "MaxWallDurationPerJob") == 0)
        return snprintf(buf, len,
                        "job asks %lld min; lower --time to at most %lld min or ask an admin", req,
                        lim);
    if (strcmp(n, "MinTRESPerJob") == 0)
        return snprintf(buf, len, "job asks %s=%lld; raise it to at least %lld or ask an admin",
                        v->tres, req, lim);
    if (strcmp(n, "MaxTRESPerNode") == 0)
        return snprintf(buf, len,
                        "job asks %s=%lld per node; lower it to at most %lld per node or ask "
                        "an admin",
                        v->tres, req, lim);
    if (strcmp(n, "MaxTRESMinsPerJob") == 0)
        return snprintf(buf, len,
                        "job asks %s=%lld TRES-minutes (count x time limit); lower the count "
                        "or --time to at most %lld or ask an admin",
                        v->tres, req, lim);
    if (v->tres[0])
        return snprintf(buf, len, "job asks %s=%lld; lower it to at most %lld or ask an admin",
                        v->tres, req, lim);
    return snprintf(buf, len, "job asks %lld; lower it to at most %lld or ask an admin", req, lim);
}

int limits_violation_format(const struct limit_violation *v, char *buf, size_t len)
{
    char tail[256];
    advice(v, tail, sizeof(tail));
    int n =
        snprintf(buf, len, "%s=%s%s%lld from %s%s%s: %s", v->limit, v->tres, v->tres[0] ? "=" : "",
                 (long long)v->limit_value, limits_level_kind_name(v->src.kind),
                 v->src.owner ? " " : "", v->src.owner ? v->src.owner : "", tail);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

int limits_format_row(const struct limit_resolved *r, int item, char *buf, size_t len)
{
    const struct limit_source *src;
    char value[TRES_NAME_MAX + 32];

    if (r->type == LIMIT_TRES || r->type == LIMIT_TRES_MINUTES) {
        if (item < 0 || item >= r->tres.n)
            return -1;
        src = &r->tres_src[item];
        snprintf(value, sizeof(value), "%s=%lld", r->tres.item[item].name,
                 (long long)r->tres.item[item].count);
    } else if (r->type == LIMIT_FACTOR) {
        src = &r->src;
        if (numparse_format_fixed(r->value, 6, value, sizeof(value)) < 0)
            return -1;
    } else {
        src = &r->src;
        snprintf(value, sizeof(value), "%lld", (long long)r->value);
    }
    int n = snprintf(buf, len, "%s\t%s\t%s\t%s", r->name, value, limits_level_kind_name(src->kind),
                     src->owner ? src->owner : "");
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}
