#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3030-hold-at-submit-slurm.t - HoldMode=submit through the real plugins on a real Slurm
# 22.05 (doc/slurm.md "Hold at submit"): job_submit/allot makes a submit token, allotd holds
# the job's credit under it at sbatch, and the token rides in the job's AdminComment; a
# pending job's credit is held while it waits; at start prep/allot moves the hold to the
# real job id (one hold, not two) and the job settles at its end; a job cancelled while
# pending (no slurmctld epilog runs for it in 22.05) has its provisional hold released by
# prep/allot's sweep within a bounded wait; a token cannot be forged: a user's --comment
# means nothing, a user cannot set AdminComment at all (Slurm refuses), and an
# administrator's AdminComment update loses any allot_token word (job_modify), so no job
# binds another job's hold.
test_description='hold at submit through the Slurm plugins'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
SPOOL=$PWD/spool
U=allot_hs1 # an ordinary Unix user for the forgery attempts
id -u $U >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $U 2>/dev/null || id -u $U >/dev/null 2>&1 ||
	{ skip_all="cannot create user $U"; test_done; }

ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }
bal() { api GET "/v1/balances?account=chem" | json_get "items.0.$1"; }
held_is() { test "$(bal held_sumin)" = "$1"; }
# token JOB: the submit token in the job's AdminComment ("" when none).
token() { scontrol show job "$1" | sed -n 's/.*AdminComment=.*allot_token=\([0-9]*\).*/\1/p'; }
# status_of ID: allotd's status of run 0 of job (or token) ID.
status_of() { api GET "/v1/jobs?cluster=$SLURM_CLUSTER" |
	python3 -c 'import json,sys; print(*[j["status"] for j in json.load(sys.stdin)["items"] if j["job_id"]==int(sys.argv[1]) and j["run"]==0])' "$1"; }
# held_runs: how many runs allotd holds now.
held_runs() { api GET "/v1/jobs?cluster=$SLURM_CLUSTER" |
	python3 -c 'import json,sys; print(sum(1 for j in json.load(sys.stdin)["items"] if j["status"]=="held"))'; }
ledger_has() {
	test "$(api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1" | python3 -c '
import json,sys
print(sum(1 for e in json.load(sys.stdin)["items"] if e["kind"]==sys.argv[1]))' "$2")" -ge 1
}
# 10 minutes at billing 2 (1 CPU + 2 GB at 0.5/GB) = 20 SU-minutes per job.
JOB="-A chem -p bank -c 1 --mem=2048 --time=10"

test_expect_success 'cluster with both plugins, allotd HoldMode=submit, chem with 200 SU-min' '
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PartitionName=bank Nodes=ALL MaxTime=60 DefaultTime=5 DefMemPerCPU=1024 TRESBillingWeights=CPU=1.0,Mem=0.5G State=UP
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	chmod 0755 "$MUNGE_DIR" && # $U submits too: it must reach munged'"'"'s socket
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root,$U account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=5000 HoldMode=submit &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/users "{\"name\":\"$U\",\"uid\":$(id -u $U)}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"$U\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"bank\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0,Mem=0.5G\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":200}" >alloc &&
	sleep 1.2 &&
	wait_for 20 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\""
'

test_expect_success 'a pending job has its credit held under its token while it waits' '
	a=$(sbatch --parsable --hold $JOB --wrap "$(slurm_gated "$PWD/go_a")") && echo $a >job_a &&
	ta=$(token $a) && echo "job $a token $ta" &&
	test "$ta" -ge 4294967296 &&
	echo $ta >tok_a &&
	test "$(status_of $ta)" = held &&
	test "$(bal held_sumin)" = 20 && test "$(bal available_sumin)" = 180 &&
	test "$(slurm_job_state $a)" = PENDING &&
	ctld_log | grep -q "job_submit/allot: .*HoldMode=submit"
'

test_expect_success 'at start the hold moves to the real job id: one hold, not two' '
	a=$(cat job_a) && ta=$(cat tok_a) &&
	scontrol release $a &&
	slurm_wait_job $a RUNNING 60 &&
	wait_for 20 ledger_has $a hold &&
	echo "job $a: $(status_of $a), token $ta: $(status_of $ta), held runs $(held_runs), held $(bal held_sumin)" &&
	test "$(status_of $a)" = held &&
	test "$(status_of $ta)" = released &&
	test "$(held_runs)" = 1 &&
	test "$(bal held_sumin)" = 20 &&
	ctld_log | grep "prep/allot: JobId=$a run=0 held 20 SU-min.*with its submit token"
'

test_expect_success 'when it ends it settles' '
	a=$(cat job_a) &&
	touch go_a &&
	slurm_wait_job $a COMPLETED 60 &&
	# The release marks the settle (a debit too only if Slurm counted a whole second).
	wait_for 20 ledger_has $a release &&
	test "$(status_of $a)" = settled &&
	test "$(bal held_sumin)" = 0 &&
	test "$(held_runs)" = 0
'

test_expect_success 'a job cancelled while pending has its provisional hold released' '
	b=$(sbatch --parsable --hold $JOB --wrap "sleep 3") &&
	tb=$(token $b) && test -n "$tb" &&
	test "$(status_of $tb)" = held && test "$(bal held_sumin)" = 20 &&
	scancel $b &&
	slurm_wait_job $b CANCELLED 30 &&
	wait_for 30 held_is 0 &&
	test "$(status_of $tb)" = released &&
	ctld_log | grep "prep/allot: JobId=$b ended without starting: submit hold $tb released"
'

test_expect_success 'a user cannot set AdminComment (Slurm refuses it) nor forge a token by --comment' '
	d=$(sbatch --parsable --hold $JOB --wrap "sleep 3") && td=$(token $d) && echo $d >job_d &&
	test -n "$td" && echo $td >tok_d &&
	n=$(runuser -u $U -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable --hold $JOB \
		--chdir=/tmp -o /dev/null -e /dev/null --comment "allot_token=$td" --wrap "sleep 3") &&
	echo $n >job_n &&
	tn=$(token $n) && test -n "$tn" && test "$tn" != "$td" &&
	test_must_fail runuser -u $U -- env SLURM_CONF="$SLURM_CONF" \
		scontrol update jobid=$n AdminComment="allot_token=$td" 2>err &&
	cat err &&
	test "$(token $n)" = "$tn" &&
	test "$(bal held_sumin)" = 40
'

test_expect_success 'an administrator'"'"'s AdminComment update cannot put a token in (job_modify drops it)' '
	d=$(cat job_d) && td=$(cat tok_d) && n=$(cat job_n) &&
	c=$(sbatch --parsable --hold $JOB --wrap "sleep 3") && tc=$(token $c) && echo $c >job_c &&
	test -n "$tc" && test "$(bal held_sumin)" = 60 &&
	scontrol update jobid=$c AdminComment="allot_token=$td" &&
	ctld_log | grep "job_submit/allot: removed a submit token allot did not write" &&
	test "$(token $c)" = "$tc" &&
	test "$(bal held_sumin)" = 60
'

test_expect_success 'jobs start: none binds another job'"'"'s hold; the forged-at token stays held' '
	d=$(cat job_d) && td=$(cat tok_d) && n=$(cat job_n) && c=$(cat job_c) &&
	scontrol release $n &&
	slurm_wait_job $n RUNNING 60 && wait_for 20 ledger_has $n hold &&
	test "$(status_of $td)" = held &&
	slurm_wait_job $n COMPLETED 60 && wait_for 20 ledger_has $n debit &&
	scontrol release $c &&
	slurm_wait_job $c RUNNING 60 && wait_for 20 ledger_has $c hold &&
	test "$(status_of $td)" = held &&
	slurm_wait_job $c COMPLETED 60 && wait_for 20 ledger_has $c debit &&
	test "$(status_of $td)" = held &&
	test "$(bal held_sumin)" -ge 20 &&
	scancel $d && slurm_wait_job $d CANCELLED 30 &&
	wait_for 30 held_is 0 &&
	test "$(held_runs)" = 0
'

test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
