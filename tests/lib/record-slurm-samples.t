#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# record-slurm-samples.t - record the unit test vectors of src/libslurmtext/test/data from a
# real cluster of the Slurm under test: sacct, sstat, squeue --steps, sacctmgr and
# `scontrol show partition -o` output in the formats allot reads, named
# <command>-<Slurm version>.txt.  Not part of the suite: run it once per new Slurm release,
# then check the files into test/data and add the version to the unit tests that read them
# (src/libslurmtext/test/*.c).
#
#   ALLOT_BUILD_DIR=build ALLOT_SRC_DIR=$PWD [ALLOT_SLURM_PREFIX=/var/cache/allot/slurm-X/prefix] \
#       SAMPLES_OUT=/tmp/samples prove -v tests/lib/record-slurm-samples.t
#
# The jobs mirror the 22.05.8 vectors: a batch job with three named steps (one killed by
# timeout(1), exit 124), a failing job (exit 3), a job and a heterogeneous job cancelled while
# pending, and a running
# job with a step (s_tmo) that sstat samples and squeue lists.
test_description='record Slurm output samples for libslurmtext'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

out=${SAMPLES_OUT:?set SAMPLES_OUT to the directory for the samples}
fmt=$(cat "$ALLOT_SRC_DIR/src/libslurmtext/test/data/sacct-22.05.8.format")

test_expect_success 'cluster with the accounts and QOS of the samples' '
	mkdir -p "$out" &&
	cat >extra.conf <<-EOF &&
	PartitionName=big Nodes=ALL DefaultTime=00:05:00 MaxTime=00:30:00 TRESBillingWeights=CPU=4.0,Mem=0.25G State=UP
	EOF
	SLURM_CLUSTER=steptest slurm_start --conf-extra extra.conf &&
	ver=$(sinfo -V | sed -n "s/^slurm[-a-z]* \([0-9.]*\).*/\1/p") && test -n "$ver" &&
	echo "$ver" >version &&
	sacctmgr -i add account acct1 cluster=steptest >/dev/null &&
	sacctmgr -i add user root account=acct1 cluster=steptest >/dev/null &&
	sacctmgr -i modify user root where account=acct1 set GrpTRES=cpu=8,mem=16000M \
		GrpTRESMins=cpu=6000 MaxJobs=5 MaxSubmit=10 MaxWall=12:00:00 >/dev/null &&
	sacctmgr -i modify qos normal set Flags=DenyOnLimit,NoDecay MaxWall=2-00:00:00 \
		GrpTRES=cpu=10,mem=20G >/dev/null &&
	sacctmgr -i add qos slow Priority=10 UsageFactor=0.5 MaxTRESPU=cpu=4 >/dev/null
'

test_expect_success 'finished jobs: steps, a timeout(1) step, a failure, pending cancels' '
	cat >steps.sh <<-\EOF &&
	#!/bin/bash
	srun -J stepa true
	srun -J stepb perl -e "my \$x = q(x) x 400_000_000; sleep 4"
	srun -J busy timeout 3 perl -e "1 while 1"
	exit 0
	EOF
	chmod +x steps.sh &&
	j1=$(sbatch --parsable -J ok -t 5 --mem=500M steps.sh) &&
	slurm_wait_job "$j1" RUNNING 60 &&
	j2=$(sbatch --parsable -J fail -t 1 --wrap "exit 3") &&
	slurm_wait_job "$j2" FAILED 60 &&
	# Pending for resources (eligible: sacct lists it), then cancelled.
	j3=$(sbatch --parsable -J canc -c 2 --wrap true) &&
	printf "#!/bin/bash\n#SBATCH -J het -c 1\n#SBATCH hetjob\n#SBATCH -c 1\ntrue\n" >het.sh &&
	j4=$(sbatch --parsable het.sh) &&
	scancel "$j3" "${j4%%+*}" &&
	slurm_wait_job "$j1" COMPLETED 120 &&
	slurm_wait_job "$j2" FAILED 60
'

test_expect_success 'a running job: sstat of its step, squeue --steps' '
	cat >tjob.sh <<-EOF &&
	#!/bin/bash
	srun -J s_tmo perl -e "my \\\$x = q(x) x 4_000_000; my \\\$t = time + 60; 1 while time < \\\$t && ! -e q($PWD/done)"
	EOF
	chmod +x tjob.sh &&
	j=$(sbatch --parsable -J tjob.sh -t 2 --mem=200M tjob.sh) &&
	wait_for 60 sh -c "squeue --steps -h -j $j -o \"%i|%j\" | grep -q s_tmo" &&
	squeue --steps -h -j "$j" -o "%i|%j" >"$out/squeue-steps-$(cat version).txt" &&
	: >sstat.txt &&
	for i in 1 2 3 4 5 6; do
		sstat -P -n -j "$j.0" --format=JobID,AveCPU,MaxRSS,MaxVMSize,AveRSS,NTasks,MaxDiskRead \
			>>sstat.txt && sleep 1 || return 1
	done &&
	grep "^$j\.0|" sstat.txt >"$out/sstat-$(cat version).txt" &&
	sacct -X -P -n -j "$j" --format=JobID >/dev/null &&
	sacct -P -n -a --format="$fmt" >"$out/sacct-$(cat version).txt" &&
	cp "$ALLOT_SRC_DIR/src/libslurmtext/test/data/sacct-22.05.8.format" \
		"$out/sacct-$(cat version).format" &&
	touch done &&
	slurm_wait_job "$j" "COMPLETED|FAILED" 120
'

test_expect_success 'sacctmgr: associations and QOS; scontrol: a partition with weights' '
	v=$(cat version) &&
	sacctmgr -P -n show assoc where cluster=steptest \
		format=Cluster,Account,User,Partition,Share,GrpTRES,GrpTRESMins,MaxTRES,MaxJobs,MaxSubmit,MaxWall,QOS,DefaultQOS \
		>"$out/sacctmgr-assoc-$v.txt" &&
	sacctmgr -P -n show qos format=Name,Priority,Flags,UsageFactor,MaxWall,GrpTRES,MaxTRESPU,GrpTRESMins \
		>"$out/sacctmgr-qos-$v.txt" &&
	sacctmgr -P show qos >"$out/sacctmgr-show-qos-$v.txt" &&
	sacctmgr dump steptest file="$PWD/dump.cfg" >/dev/null &&
	scontrol show partition -o big >"$out/scontrol-partition-$v.txt" &&
	cp dump.cfg "$out/sacctmgr-dump-$v.txt" &&
	ls -l "$out"
'

test_expect_success 'slurm_stop' '
	slurm_stop
'
test_done
