/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sync_view.c - sync_view_slurm against fake scontrol/sacctmgr scripts: partitions,
 * accounts (rows without a user, with their parent), associations and users' default
 * accounts are read and sorted for lookup; a malformed line, a failing tool or output with
 * the wrong number of columns is an error naming the tool and the line, and leaves the
 * view empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/sync_view.h"

static char dir[64];
static char scontrol[128], sacctmgr[128];

static void fake(const char *path, const char *body)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0755), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/agent-sync-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(scontrol, sizeof scontrol, "%s/scontrol", dir);
    snprintf(sacctmgr, sizeof sacctmgr, "%s/sacctmgr", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(scontrol);
    unlink(sacctmgr);
    return rmdir(dir);
}

/* A sacctmgr that answers `show assoc` and `show user` as 22.05 prints them with -P -n. */
static const char *const good_sacctmgr =
    "case \"$*\" in\n"
    "*'show assoc'*) printf 'root|||\\nroot|root||\\nchem|||root\\nchem|alice||\\n"
    "chem|alice|big|\\nbio|||chem\\n' ;;\n"
    "*'show user'*) printf 'alice|chem\\nroot|root\\n' ;;\n"
    "*) exit 1 ;;\n"
    "esac";

static int read_view(struct sync_view *v, char *why, size_t len)
{
    struct agent_tools t = {.sacctmgr = sacctmgr, .scontrol = scontrol, .timeout_s = 10};
    return sync_view_slurm(&t, "c1", v, why, len);
}

static void test_reads_and_sorts(void **state)
{
    (void)state;
    fake(scontrol, "printf 'PartitionName=debug MaxTime=UNLIMITED DefaultTime=NONE\\n"
                   "PartitionName=big MaxTime=00:30:00 DefaultTime=00:05:00 "
                   "TRESBillingWeights=CPU=4.0\\n'");
    fake(sacctmgr, good_sacctmgr);
    struct sync_view v;
    char why[256] = "";
    assert_int_equal(read_view(&v, why, sizeof why), 0);
    assert_int_equal(v.nparts, 2);
    const struct sv_part *p = sv_find_part(&v, "big");
    assert_non_null(p);
    assert_string_equal(p->weights, "CPU=4.0");
    assert_int_equal(p->max_time_s, 1800);
    assert_int_equal(p->default_time_s, 300);
    assert_int_equal(sv_find_part(&v, "debug")->max_time_s, -1);
    assert_null(sv_find_part(&v, "gpu"));
    assert_int_equal(v.naccts, 3);
    assert_string_equal(sv_find_acct(&v, "bio")->parent, "chem");
    assert_string_equal(sv_find_acct(&v, "root")->parent, "");
    assert_int_equal(v.nassocs, 3);
    struct sv_assoc k = {"chem", "alice", "big"};
    assert_non_null(sv_find_assoc(&v, &k));
    struct sv_assoc k2 = {"chem", "alice", ""};
    assert_non_null(sv_find_assoc(&v, &k2));
    struct sv_assoc k3 = {"bio", "alice", ""};
    assert_null(sv_find_assoc(&v, &k3));
    assert_int_equal(v.nusers, 2);
    assert_string_equal(sv_find_user(&v, "alice")->def, "chem");
    sync_view_free(&v);
}

static void test_refused(void **state)
{
    (void)state;
    struct sync_view v;
    char why[256];
    fake(sacctmgr, good_sacctmgr);
    fake(scontrol,
         "printf 'PartitionName=big MaxTime=00:30:00\\nPartitionName=bad MaxTime=soon\\n'");
    assert_int_equal(read_view(&v, why, sizeof why), -1);
    assert_non_null(strstr(why, "scontrol show partition line 2: MaxTime"));
    assert_int_equal(v.nparts, 0);
    assert_null(v.parts);

    fake(scontrol, "echo 'slurm_load_partitions: Unable to contact slurm controller' >&2; exit 1");
    assert_int_equal(read_view(&v, why, sizeof why), -1);
    assert_non_null(strstr(why, "exit 1: slurm_load_partitions: Unable to contact"));

    fake(scontrol, "printf 'PartitionName=big\\n'");
    fake(sacctmgr, "case \"$*\" in *'show assoc'*) printf 'chem|alice\\n' ;; *) exit 0 ;; esac");
    assert_int_equal(read_view(&v, why, sizeof why), -1);
    assert_non_null(strstr(why, "sacctmgr show assoc line 1"));
    assert_int_equal(v.naccts + v.nassocs + v.nparts, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_and_sorts),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
