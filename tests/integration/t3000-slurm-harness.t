#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3000-slurm-harness.t - the real single-node Slurm cluster of tests/sharness.d/30-slurm.sh:
# it comes up with accounting, runs a batch job to completion, records it in slurmdbd, and
# stops without leaving a process behind.
test_description='Slurm test cluster harness'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

test_expect_success 'slurm_start brings up munged, MariaDB, slurmdbd, slurmctld, slurmd' '
	slurm_start &&
	test -n "$SLURM_CONF" &&
	test "$(sinfo -h -o %T)" = idle &&
	sacctmgr -n -P show cluster format=cluster | grep -qx "$SLURM_CLUSTER"
'
test_expect_success 'slurmdbd.conf sits next to slurm.conf with mode 0600' '
	test "$(stat -c %a "$(dirname "$SLURM_CONF")/slurmdbd.conf")" = 600
'
test_expect_success 'a batch job runs to completion' '
	job=$(sbatch --parsable --wrap "sleep 1") &&
	test -n "$job" &&
	slurm_wait_job "$job" COMPLETED 60
'
test_expect_success 'the job is recorded in sacct (records may lag slurmdbd)' '
	wait_for 30 sh -c "sacct -n -X -P -j $job -o JobID,State | grep -qx \"$job|COMPLETED\"" &&
	sacct -n -X -P -j "$job" -o JobID,State,Account,AllocTRES >sacct.out &&
	grep "^$job|COMPLETED|root|.*cpu=1" sacct.out
'
test_expect_success 'slurm_stop leaves no process of this cluster behind' '
	dir=$SLURM_DIR &&
	slurm_stop &&
	SLURM_DIR=$dir &&
	test -z "$(slurm_tagged_pids_)" &&
	! kill -0 "$MARIADB_PID" 2>/dev/null &&
	SLURM_DIR=
'
test_expect_success 'a second cluster starts without accounting (--no-dbd)' '
	slurm_start --no-dbd &&
	job=$(sbatch --parsable --wrap true) &&
	slurm_wait_job "$job" COMPLETED 60 &&
	slurm_stop
'
test_done
