/* SPDX-License-Identifier: GPL-3.0-or-later */
/* api_import_part.c - the partitions of `scontrol show partition -o` created or updated by
 * `allot import slurm`, with MAX_TRES from slurm.conf's PriorityFlags (api_import_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "allotd/api.h"
#include "allotd/api_import_int.h"
#include "libslurmtext/partition.h"
#include "libutil/text.h"
#include "libutil/xalloc.h"

/* ---- partitions (`scontrol show partition -o`, one a line) ------------------------------ */

static void fmt_time(int64_t s, char *buf, size_t n)
{
    if (s < 0)
        snprintf(buf, n, "none");
    else
        snprintf(buf, n, "%llds", (long long)s);
}

/* Create or update the cluster's partitions: weights, MaxTime, DefaultTime, QOS, and MAX_TRES
 * from PriorityFlags; a new partition bills resource "cpu", an existing one keeps its own. */
int import_partitions(struct walk *w, struct allot_error *err)
{
    const char *text = w->in->partitions;
    size_t len = w->in->partitions_len, pos = 0;
    struct slt_span line;
    long ln = 0;
    int max_tres = 0;
    if (w->in->priority_flags) {
        char flags[ALLOT_TEXT_MAX], *save = NULL;
        text_copy(flags, sizeof flags, w->in->priority_flags);
        for (char *f = strtok_r(flags, ", ", &save); f; f = strtok_r(NULL, ", ", &save))
            max_tres |= strcasecmp(f, "MAX_TRES") == 0;
    }
    while (slt_next_line(text, len, &pos, &line)) {
        ln++;
        if (line.n == 0)
            continue;
        struct slt_partition sp;
        struct partition cur, p = {0};
        struct allot_error e;
        if (slt_partition_parse(line, &sp, err) < 0 ||
            model_check_name("PartitionName", sp.name, 0, err) < 0 ||
            (sp.qos[0] && import_qos_known(w, sp.qos, err) < 0))
            return allot_error_prefix(err, "partition line %ld", ln);
        int exists = store_partition_get(w->st, w->cluster, sp.name, &cur, &e) == 0;
        if (!exists && e.code != ALLOT_ENOENT) {
            *err = e;
            return -1;
        }
        if (exists)
            p = cur;
        else
            text_copy(p.resource, sizeof p.resource, "cpu");
        text_copy(p.cluster, sizeof p.cluster, w->cluster);
        text_copy(p.name, sizeof p.name, sp.name);
        text_copy(p.billing_weights, sizeof p.billing_weights, sp.billing_weights);
        text_copy(p.qos, sizeof p.qos, sp.qos);
        if (w->in->priority_flags) /* without them, an existing partition keeps its own */
            p.max_tres = max_tres;
        p.max_time_s = sp.max_time_s;
        p.default_time_s = sp.default_time_s;
        char mt[32], dt[32], omt[32], odt[32];
        fmt_time(p.max_time_s, mt, sizeof mt);
        fmt_time(p.default_time_s, dt, sizeof dt);
        int rc = 0;
        if (!exists) {
            import_change(
                w,
                "+ partition %s:%s: resource=%s billing_weights='%s' max_tres=%d qos='%s' "
                "max_time=%s default_time=%s",
                w->cluster, p.name, p.resource, p.billing_weights, p.max_tres, p.qos, mt, dt);
            if (w->apply)
                rc = store_partition_add(w->st, &p, err);
        } else {
            fmt_time(cur.max_time_s, omt, sizeof omt);
            fmt_time(cur.default_time_s, odt, sizeof odt);
            char diff[1024] = "", otr[8], ntr[8];
            size_t l = 0;
            snprintf(otr, sizeof otr, "%d", cur.max_tres);
            snprintf(ntr, sizeof ntr, "%d", p.max_tres);
#define PDIFF(field, old, new)                                                                     \
    if (strcmp(old, new) != 0 && l < sizeof diff)                                                  \
        l += (size_t)snprintf(diff + l, sizeof diff - l, " %s '%s' -> '%s'", field, old, new);
            PDIFF("billing_weights", cur.billing_weights, p.billing_weights)
            PDIFF("max_tres", otr, ntr)
            PDIFF("qos", cur.qos, p.qos)
            PDIFF("max_time", omt, mt)
            PDIFF("default_time", odt, dt)
#undef PDIFF
            if (l) {
                import_change(w, "~ partition %s:%s:%s", w->cluster, p.name, diff);
                if (w->apply)
                    rc = store_partition_modify(w->st, &p, err);
            }
        }
        if (rc < 0)
            return allot_error_prefix(err, "partition line %ld", ln);
        if (w->npart == w->cappart) {
            w->cappart = w->cappart ? w->cappart * 2 : 16;
            w->part_names = xrealloc(w->part_names, w->cappart * sizeof *w->part_names);
        }
        text_copy(w->part_names[w->npart++], ALLOT_NAME_MAX, p.name);
        w->counts[4]++;
    }
    return 0;
}
