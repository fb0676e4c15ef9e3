/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * submit_req.c - job_desc_msg_t -> submit_req_t (see submit_req.h for the rules).
 *
 * Each rule is a stage that either fills the local copy or refuses with a message; *out
 * is written once, at the end, so a refusal leaves it untouched.
 */
#include "plugins/job_submit/allot/submit_req.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm_errno.h>

static int refuse(int code, char *msg, size_t msg_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int refuse(int code, char *msg, size_t msg_size, const char *fmt, ...)
{
    va_list ap;

    if (msg && msg_size > 0) {
        va_start(ap, fmt);
        vsnprintf(msg, msg_size, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* copy_name: bounded copy; false when SRC does not fit. */
static bool copy_name(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);

    if (n >= size)
        return false;
    memcpy(dst, src, n + 1);
    return true;
}

static bool is_set(const char *s)
{
    return s && s[0] != '\0';
}

static uint32_t or_one(uint32_t v)
{
    return v == NO_VAL || v == 0 ? 1 : v;
}

int submit_req_from_desc(const job_desc_msg_t *desc, uint32_t submit_uid, const submit_env_t *env,
                         submit_req_t *out, char *msg, size_t msg_size)
{
    submit_req_t r;
    submit_partition_info_t part;
    uint32_t tasks, cpt;

    memset(&r, 0, sizeof(r));
    if (msg && msg_size > 0)
        msg[0] = '\0';
    r.uid = desc->user_id != NO_VAL ? desc->user_id : submit_uid;

    /* Account: the one given, else the user's default. */
    if (is_set(desc->account)) {
        if (!copy_name(r.account, sizeof(r.account), desc->account))
            return refuse(ESLURM_INVALID_ACCOUNT, msg, msg_size,
                          "account name is longer than %d characters", SUBMIT_NAME_MAX - 1);
    } else if (env->default_account(r.uid, r.account, sizeof(r.account), env->arg) != 0 ||
               r.account[0] == '\0') {
        return refuse(ESLURM_INVALID_ACCOUNT, msg, msg_size,
                      "user %u has no default account: submit with --account=NAME", r.uid);
    }

    /* Partition: exactly one; the default one when none is given. */
    if (is_set(desc->partition)) {
        if (strchr(desc->partition, ','))
            return refuse(ESLURM_INVALID_PARTITION_NAME, msg, msg_size,
                          "partitions \"%s\": allot bills one partition per job, give exactly "
                          "one with --partition",
                          desc->partition);
        if (!copy_name(r.partition, sizeof(r.partition), desc->partition))
            return refuse(ESLURM_INVALID_PARTITION_NAME, msg, msg_size,
                          "partition name is longer than %d characters", SUBMIT_NAME_MAX - 1);
    } else if (env->default_partition(r.partition, sizeof(r.partition), env->arg) != 0 ||
               r.partition[0] == '\0') {
        return refuse(ESLURM_INVALID_PARTITION_NAME, msg, msg_size,
                      "no partition given and the cluster has no default partition: submit "
                      "with --partition=NAME");
    }
    if (env->partition_info(r.partition, &part, env->arg) != 0)
        return refuse(ESLURM_INVALID_PARTITION_NAME, msg, msg_size,
                      "partition \"%s\" does not exist", r.partition);

    /* Time limit: the job's, else the partition's DefaultTime, else its finite MaxTime. */
    if (desc->time_limit == INFINITE)
        return refuse(ESLURM_INVALID_TIME_LIMIT, msg, msg_size,
                      "an unlimited time limit cannot be priced: submit with --time");
    if (desc->time_limit != NO_VAL)
        r.time_limit_min = desc->time_limit;
    else if (part.default_time_min != SUBMIT_TIME_UNSET &&
             part.default_time_min != SUBMIT_TIME_UNLIMITED)
        r.time_limit_min = part.default_time_min;
    else if (part.max_time_min != SUBMIT_TIME_UNLIMITED && part.max_time_min != SUBMIT_TIME_UNSET)
        r.time_limit_min = part.max_time_min;
    else
        return refuse(ESLURM_MISSING_TIME_LIMIT, msg, msg_size,
                      "no time limit given and partition \"%s\" has neither a DefaultTime nor "
                      "a finite MaxTime: submit with --time",
                      r.partition);
    if (r.time_limit_min == 0)
        return refuse(ESLURM_INVALID_TIME_LIMIT, msg, msg_size,
                      "time limit 0 cannot run: submit with --time of at least 1 minute");

    /* time_min: what the user asked (at most the limit), else the limit, as Slurm reads an
     * unset one. */
    if (desc->time_min == NO_VAL || desc->time_min == 0) {
        r.time_min_min = r.time_limit_min;
    } else if (desc->time_min > r.time_limit_min) {
        return refuse(ESLURM_INVALID_TIME_MIN_LIMIT, msg, msg_size,
                      "--time-min (%u min) exceeds the time limit (%u min)", desc->time_min,
                      r.time_limit_min);
    } else {
        r.time_min_min = desc->time_min;
    }

    /* Size: at least one node and tasks x cpus-per-task CPUs. */
    r.min_nodes = or_one(desc->min_nodes);
    tasks = or_one(desc->num_tasks);
    cpt = desc->cpus_per_task == NO_VAL16 || desc->cpus_per_task == 0 ? 1 : desc->cpus_per_task;
    r.min_cpus = or_one(desc->min_cpus);
    if ((uint64_t)tasks * cpt > r.min_cpus)
        r.min_cpus = (uint64_t)tasks * cpt > UINT32_MAX ? UINT32_MAX : tasks * cpt;

    /* Memory: the user's request, else a per-CPU default (none with --mem-per-gpu). */
    if (desc->pn_min_memory != NO_VAL64) {
        r.mem_per_cpu = (desc->pn_min_memory & MEM_PER_CPU) != 0;
        r.mem_mb = desc->pn_min_memory & ~MEM_PER_CPU;
    } else if (!is_set(desc->mem_per_tres)) {
        r.mem_mb = part.def_mem_per_cpu_mb ? part.def_mem_per_cpu_mb : env->site_mem_per_cpu_mb;
        r.mem_per_cpu = r.mem_mb != 0;
        r.mem_defaulted = r.mem_mb != 0;
    }

    if (is_set(desc->qos) && !copy_name(r.qos, sizeof(r.qos), desc->qos))
        return refuse(ESLURM_INVALID_QOS, msg, msg_size, "qos name is longer than %d characters",
                      SUBMIT_NAME_MAX - 1);
    if ((is_set(desc->tres_per_job) &&
         !copy_name(r.tres_per_job, sizeof(r.tres_per_job), desc->tres_per_job)) ||
        (is_set(desc->tres_per_node) &&
         !copy_name(r.tres_per_node, sizeof(r.tres_per_node), desc->tres_per_node)) ||
        (is_set(desc->tres_per_task) &&
         !copy_name(r.tres_per_task, sizeof(r.tres_per_task), desc->tres_per_task)))
        return refuse(ESLURM_INVALID_TRES, msg, msg_size,
                      "TRES request is longer than %d characters", SUBMIT_TRES_MAX - 1);

    *out = r;
    return SLURM_SUCCESS;
}

void submit_req_apply(const submit_req_t *req, job_desc_msg_t *desc)
{
    /* time_min stays unset: Slurm then schedules the whole time limit (backfill shortens a
     * job only towards a time_min it was given), and a user may still lower the limit with
     * scontrol update, which Slurm refuses below a job's time_min. */
    if (req->mem_defaulted && desc->pn_min_memory == NO_VAL64)
        desc->pn_min_memory = req->mem_mb | MEM_PER_CPU;
}

/* Append "fmt" to buf at *off; false when it does not fit. */
static bool append(char *buf, size_t size, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool append(char *buf, size_t size, size_t *off, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf + *off, size - *off, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size - *off)
        return false;
    *off += (size_t)n;
    return true;
}

/* Add each "gres[:/]NAME[:TYPE]:COUNT" entry of LIST (comma-separated) times MULT. */
static bool append_gres(char *buf, size_t size, size_t *off, const char *list, uint64_t mult)
{
    char copy[SUBMIT_TRES_MAX], *save = NULL;

    if (!copy_name(copy, sizeof(copy), list))
        return false;
    for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        char *name, *last, *end;
        unsigned long long count = 1;

        if (strncmp(e, "gres:", 5) == 0 || strncmp(e, "gres/", 5) == 0)
            e += 5;
        else
            continue; /* licenses and other TRES are not priced at admission */
        name = e;
        last = strrchr(e, ':');
        if (!last)
            last = strrchr(e, '=');
        if (last) {
            count = strtoull(last + 1, &end, 10);
            if (end == last + 1 || *end)
                return false;
            *last = '\0';
        }
        char *colon = strchr(name, ':');
        if (colon)
            *colon = '\0'; /* drop the type */
        if (!name[0])
            return false;
        if (!append(buf, size, off, ",gres/%s=%llu", name, count * mult))
            return false;
    }
    return true;
}

int submit_req_tres(const submit_req_t *req, char *buf, size_t size)
{
    size_t off = 0;
    uint64_t mem = req->mem_per_cpu ? req->mem_mb * req->min_cpus : req->mem_mb * req->min_nodes;

    if (size == 0)
        return -1;
    buf[0] = '\0';
    if (!append(buf, size, &off, "cpu=%u", req->min_cpus) ||
        (mem && !append(buf, size, &off, ",mem=%lluM", (unsigned long long)mem)) ||
        !append(buf, size, &off, ",node=%u", req->min_nodes) ||
        (req->tres_per_job[0] && !append_gres(buf, size, &off, req->tres_per_job, 1)) ||
        (req->tres_per_node[0] &&
         !append_gres(buf, size, &off, req->tres_per_node, req->min_nodes)) ||
        (req->tres_per_task[0] &&
         !append_gres(buf, size, &off, req->tres_per_task, req->min_nodes))) {
        buf[0] = '\0';
        return -1;
    }
    return 0;
}
