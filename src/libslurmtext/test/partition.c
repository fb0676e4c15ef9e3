/* SPDX-License-Identifier: GPL-3.0-or-later */
/* partition.c - tests of `scontrol show partition -o` lines (libslurmtext/partition.h):
 * a real 22.05.8 line with weights, the same partition as 24.11.5 prints it
 * (test/data/scontrol-partition-24.11.5.txt), one without weights (UNLIMITED, NONE),
 * D-HH:MM:SS times, and lines that are refused with the output untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "libslurmtext/partition.h"
#include "data.h"

static struct slt_span span(const char *s)
{
    return (struct slt_span){s, strlen(s)};
}

static void test_real_line(void **state)
{
    (void)state;
    struct slt_partition p;
    struct allot_error err;
    const char *line =
        "PartitionName=big AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
        "Default=NO QoS=N/A DefaultTime=00:05:00 DisableRootJobs=NO ExclusiveUser=NO "
        "GraceTime=0 Hidden=NO MaxNodes=UNLIMITED MaxTime=00:30:00 MinNodes=0 LLN=NO "
        "MaxCPUsPerNode=UNLIMITED Nodes=vm PriorityJobFactor=1 PriorityTier=1 RootOnly=NO "
        "ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP TotalCPUs=2 "
        "TotalNodes=1 SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED "
        "MaxMemPerNode=UNLIMITED TRES=cpu=2,mem=4000M,node=1,billing=8 "
        "TRESBillingWeights=CPU=4.0,Mem=0.25G";
    assert_int_equal(slt_partition_parse(span(line), &p, &err), 0);
    assert_string_equal(p.name, "big");
    assert_string_equal(p.billing_weights, "CPU=4.0,Mem=0.25G");
    assert_int_equal(p.max_time_s, 1800);
    assert_int_equal(p.default_time_s, 300);
    assert_string_equal(p.qos, ""); /* QoS=N/A */
}

static void test_recorded_line(void **state)
{
    (void)state;
    size_t len;
    char *text = data_load("scontrol-partition-24.11.5.txt", &len);
    struct slt_partition p;
    struct allot_error err;
    text[strcspn(text, "\n")] = '\0';
    assert_int_equal(slt_partition_parse(span(text), &p, &err), 0);
    assert_string_equal(p.name, "big");
    assert_string_equal(p.billing_weights, "CPU=4.0,Mem=0.25G");
    assert_int_equal(p.max_time_s, 1800);
    assert_int_equal(p.default_time_s, 300);
    assert_string_equal(p.qos, ""); /* QoS=N/A */
    free(text);
}

static void test_unlimited_none(void **state)
{
    (void)state;
    struct slt_partition p;
    struct allot_error err;
    assert_int_equal(slt_partition_parse(span("PartitionName=debug DefaultTime=NONE "
                                              "MaxTime=UNLIMITED State=UP TRES=cpu=2"),
                                         &p, &err),
                     0);
    assert_string_equal(p.name, "debug");
    assert_string_equal(p.billing_weights, "");
    assert_int_equal(p.max_time_s, -1);
    assert_int_equal(p.default_time_s, -1);
    assert_int_equal(
        slt_partition_parse(span("  PartitionName=long MaxTime=2-00:00:00 "), &p, &err), 0);
    assert_int_equal(p.max_time_s, 2 * 86400);
    assert_int_equal(slt_partition_parse(span("PartitionName=gpu QoS=gpuq MaxTime=60"), &p, &err),
                     0);
    assert_string_equal(p.qos, "gpuq");
}

static void test_refused(void **state)
{
    (void)state;
    struct slt_partition p = {.name = "keep"};
    struct allot_error err;
    assert_int_equal(slt_partition_parse(span("MaxTime=00:30:00"), &p, &err), -1);
    assert_non_null(strstr(err.msg, "no PartitionName"));
    assert_int_equal(slt_partition_parse(span("PartitionName=a MaxTime=soon"), &p, &err), -1);
    assert_non_null(strstr(err.msg, "MaxTime"));
    assert_int_equal(slt_partition_parse(span("PartitionName=a junk"), &p, &err), -1);
    assert_non_null(strstr(err.msg, "'junk' is not Key=Value"));
    char longname[200] = "PartitionName=";
    memset(longname + 14, 'x', 100);
    assert_int_equal(slt_partition_parse(span(longname), &p, &err), -1);
    assert_string_equal(p.name, "keep");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_line),
        cmocka_unit_test(test_recorded_line),
        cmocka_unit_test(test_unlimited_none),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
