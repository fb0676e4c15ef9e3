#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3010-plugins-e2e.t - job_submit/allot and prep/allot end to end on a real Slurm 22.05
# with a real allotd (MUNGE auth, slurmctld as root = Operator): an affordable job runs and
# its hold and debit (real elapsed time rounded up to the minute) are in the ledger, with
# allot's billing equal to Slurm's billing TRES; an unaffordable job is refused at sbatch
# with allot's message and exit 1; two jobs that together exceed the balance: the second
# is cancelled at start (StartRefusal=cancel) with a failure recorded and is not requeued; NODE_FAIL settles at
# 0; allotd stopped: fail-closed admission refuses; settles pending while slurmctld
# restarts are all delivered afterwards; FailMode=open admits and reconciles.
test_description='allot Slurm plugins end to end'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
SPOOL=$PWD/spool
ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }
# ledger_sum JOB KIND: sum of the job's ledger amounts of that kind.
ledger_sum() {
	api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1" | python3 -c '
import json,sys
print(sum(e["amount_sumin"] for e in json.load(sys.stdin)["items"] if e["kind"]==sys.argv[1]))' "$2"
}
ledger_has() {
	test "$(api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1" | python3 -c '
import json,sys
print(sum(1 for e in json.load(sys.stdin)["items"] if e["kind"]==sys.argv[1]))' "$2")" -ge 1
}
# balance ACCOUNT FIELD
balance() {
	api GET "/v1/balances?account=$1" | python3 -c '
import json,sys
print(json.load(sys.stdin)["items"][0][sys.argv[1]])' "$2"
}
# ctld_requeued N: the running slurmctld re-queued N spooled settles when prep/allot started.
ctld_requeued() {
	ctld_log | sed -n "/slurmctld version/h; /prep\/allot: re-queued/H; \${x;p}" |
		grep -q "prep/allot: re-queued $1 pending settle"
}
# spool_explain: the spool and prep/allot's account of it, into the TAP stream (what ctest
# shows of a failure), then false: for a check of settles that failed.
spool_explain() {
	{ echo "spool:"; ls -l "$SPOOL"; ctld_log | grep -E "prep/allot|slurmctld version" | tail -n 40
	  tail -n 20 "$ALLOTD_LOG"; } 2>&1 | sed "s/^/# /" >&5
	return 1
}
# allotd_start_bank [KEY=VALUE...]: allotd as the plugins here use it.  Their bound on a
# request is 5 s, not the default 1 s: an ASan allotd on a host that stalls it for
# hundreds of ms at a time must not be taken for one that is down (which is refused at
# connect, whatever the bound).  StartRefusal=cancel: the start refusal checked here is the
# cancel (waiting for credit is t3046's).
allotd_start_bank() {
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=5000 PrEpMinThreads=1 \
		PrEpMaxThreads=4 StartRefusal=cancel "$@"
}
restart_ctld() {
	slurm_kill_ slurmctld &&
	slurm_daemon_ slurmctld "$SLURM_SBIN/slurmctld" -D &&
	wait_for 30 slurm_ctld_up_
}

test_expect_success 'cluster with both plugins, allotd with account chem (100 SU-min)' '
	slurm_start_allot &&
	allotd_start_bank &&
	allot_bank_chem 100
'

test_expect_success 'an affordable job runs; hold and debit in the ledger, charged on real elapsed time' '
	job=$(sbatch --parsable -A chem -p bank -c 1 --mem=2048 --time=10 --wrap "sleep 2") &&
	slurm_wait_job "$job" COMPLETED 60 &&
	echo $job >job1 &&
	wait_for 20 ledger_has $job debit &&
	ledger_has $job hold &&
	test "$(ledger_sum $job hold)" -eq -20 -o "$(ledger_sum $job hold)" -eq 20 &&
	# slurmdbd may record the job end after allotd had its settle.
	wait_for 30 sh -c "sacct -n -X -P -j $job -o State | grep -qx COMPLETED" &&
	el=$(sacct -n -X -P -j $job -o ElapsedRaw) &&
	bill=$(sacct -n -X -P -j $job -o AllocTRES | tr , "\n" | sed -n "s/^billing=//p") &&
	echo "slurm billing=$bill elapsed=$el" &&
	test "$bill" = 2 &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$job" >jobrec &&
	test "$(json_get runs.0.billing_micro <jobrec)" = 2000000 &&
	want=$(( (bill * el + 59) / 60 )) &&
	got=$(json_get runs.0.charge_sumin <jobrec) &&
	echo "charge want=$want got=$got" &&
	test "$got" = "$want" &&
	ctld_log | grep "prep/allot: JobId=$job run=0 settled COMPLETED"
'

test_expect_success 'allot ledger (CLI) shows the job' '
	ALLOT_URL=$ALLOTD_URL "$ALLOT_BUILD_DIR/src/cli/allot" ledger chem >ledger.out 2>&1 || cat ledger.out;
	grep -q "$(cat job1)" ledger.out
'

test_expect_success 'an unaffordable job is refused at sbatch with allot'"'"'s message, exit 1' '
	test_expect_code 1 sbatch -A chem -p bank -c 2 --mem=1024 --time=60 --wrap true 2>err &&
	cat err &&
	grep "sbatch: error: allot: account chem" err &&
	grep "may cost up to" err
'

test_expect_success 'two jobs exceeding the balance together: the second is cancelled at start, not requeued' '
	avail=$(balance chem available_sumin) && echo "available $avail" &&
	a=$(sbatch --parsable --hold -A chem -p bank -c 1 --mem=1024 --time=60 --wrap "sleep 5") &&
	b=$(sbatch --parsable --hold -A chem -p bank -c 1 --mem=1024 --time=60 --wrap "sleep 5") &&
	scontrol release $a,$b &&
	wait_for 60 sh -c "squeue -h -t all -j $a,$b -o %T | grep -q CANCELLED" &&
	squeue -h -t all -j $a,$b -o "%i %T %r" >states && cat states &&
	test "$(grep -c CANCELLED states)" = 1 &&
	loser=$(awk "/CANCELLED/{print \$1}" states) &&
	scontrol show job $loser | grep "Reason=.*allot" &&
	test "$(scontrol show job $loser | sed -n "s/.*Restarts=\([0-9]*\).*/\1/p")" = 0 &&
	api GET "/v1/failures?account=chem" >fails &&
	grep -q "\"job_id\": *$loser\|\"job_id\":$loser" fails &&
	winner=$(awk "!/CANCELLED/{print \$1}" states) &&
	slurm_wait_job $winner COMPLETED 60 &&
	sleep 3 && test "$(slurm_job_state $loser)" = CANCELLED
'

test_expect_success 'a node failure during a running job settles at 0' '
	api POST /v1/allocations/$(json_get id <alloc)/credit "{\"kind\":\"credit\",\"amount_sumin\":1000}" >/dev/null &&
	job=$(sbatch --parsable --no-requeue -A chem -p bank -c 1 --mem=1024 --time=10 --wrap "sleep 60") &&
	slurm_wait_job $job RUNNING 60 &&
	wait_for 20 ledger_has $job hold &&
	sleep 2 &&
	scontrol update nodename=$SLURM_NODE state=down reason=allot-test &&
	slurm_wait_job $job NODE_FAIL 60 &&
	wait_for 20 ledger_has $job release &&
	test "$(ledger_sum $job debit)" = 0 &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$job" >jobrec && test "$(json_get runs.0.charge_sumin <jobrec)" = 0 &&
	# ReturnToService=2 may have brought the node back already: resume is then refused.
	{ scontrol update nodename=$SLURM_NODE state=resume 2>/dev/null || :; } &&
	wait_for 30 slurm_node_idle_
'

# runs_settled JOB: "run:status:state" of each run of the job, in run order.
runs_settled() {
	api GET "/v1/jobs/$SLURM_CLUSTER/$1" | python3 -c '
import json,sys
print(" ".join("%d:%s:%s" % (r["run"], r["status"], r["state"])
               for r in sorted(json.load(sys.stdin)["runs"], key=lambda r: r["run"])))'
}
runs_are() { test "$(runs_settled "$1")" = "$2"; }
test_expect_success 'a job requeued while it runs: run 0 settles REQUEUED, run 1 is held and settled' '
	job=$(sbatch --parsable --requeue -A chem -p bank -c 1 --mem=1024 --time=10 --wrap "$(slurm_gated "$PWD/go_rq")") &&
	slurm_wait_job $job RUNNING 60 &&
	wait_for 20 ledger_has $job hold &&
	scontrol requeue $job && requeued_at=$(date +%s) &&
	slurm_wait_job $job PENDING 60 &&
	# Slurm delays a requeued job (begin time +121 s); start it now, but in a later second
	# than the requeue: slurmd revoked the credential of run 0 with the requeue time in whole
	# seconds, and a launch credential made in that same second is refused as revoked
	# ("Killing non-startable batch JobId=N: Job credential revoked": run 1 then FAILED).
	wait_for 5 sh -c "[ \$(date +%s) -gt $requeued_at ]" &&
	scontrol update jobid=$job starttime=now &&
	slurm_wait_job $job RUNNING 60 && touch go_rq &&
	slurm_wait_job $job COMPLETED 120 &&
	wait_for 30 runs_are $job "0:settled:REQUEUED 1:settled:COMPLETED" ||
	{ runs_settled $job; ctld_log | grep "JobId=$job"; false; } &&
	# one hold, one release and at most one debit per run: nothing left held
	api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$job" | python3 -c "
import json,sys,collections
n = collections.Counter((e[\"run\"], e[\"kind\"]) for e in json.load(sys.stdin)[\"items\"])
assert all(n[(r, k)] == 1 for r in (0, 1) for k in (\"hold\", \"release\")), n
assert all(n[(r, \"debit\")] <= 1 for r in (0, 1)), n" &&
	test "$(balance chem held_sumin)" = 0
'

test_expect_success 'allotd stopped: fail-closed admission refuses with a clear message' '
	allotd_stop &&
	test_expect_code 1 sbatch -A chem -p bank -c 1 --time=5 --wrap true 2>err &&
	cat err && grep "allot: the allocation bank cannot be reached" err
'

test_expect_success 'settles pending across a slurmctld restart are all delivered' '
	allotd_start_bank &&
	j1=$(sbatch --parsable -A chem -p bank -c 1 --mem=1024 --time=5 --wrap "$(slurm_gated "$PWD/go_j12")") &&
	j2=$(sbatch --parsable -A chem -p bank -c 1 --mem=1024 --time=5 --wrap "$(slurm_gated "$PWD/go_j12")") &&
	slurm_wait_job $j1 RUNNING 60 && slurm_wait_job $j2 RUNNING 60 &&
	wait_for 20 ledger_has $j1 hold && wait_for 20 ledger_has $j2 hold &&
	allotd_stop &&
	touch go_j12 &&
	slurm_wait_job $j1 COMPLETED 60 && slurm_wait_job $j2 COMPLETED 60 &&
	{ wait_for 10 test -f "$SPOOL/settle.$j1.0" && wait_for 10 test -f "$SPOOL/settle.$j2.0" ||
	  spool_explain; } &&
	restart_ctld &&
	{ wait_for 10 ctld_requeued 2 || spool_explain; } &&
	allotd_start_bank &&
	# Delivered: each run settled (a debit only if Slurm counted a whole second of run).
	{ wait_for 30 runs_are $j1 "0:settled:COMPLETED" &&
	  wait_for 30 runs_are $j2 "0:settled:COMPLETED" &&
	  wait_for 10 sh -c "! ls \"$SPOOL\"/settle.* 2>/dev/null" || spool_explain; }
'

test_expect_success 'FailMode=open: admitted and started without allotd, reconciled by its settle' '
	allotd_stop &&
	echo FailMode=open >>"$ALLOT_CONF" &&
	restart_ctld &&
	job=$(sbatch --parsable -A chem -p bank -c 1 --mem=1024 --time=5 --wrap "sleep 3") &&
	slurm_wait_job $job COMPLETED 60 &&
	ctld_log | grep "job_submit/allot: fail-open" &&
	ctld_log | grep "prep/allot: fail-open: JobId=$job" &&
	allotd_start_bank FailMode=open &&
	wait_for 30 ledger_has $job debit &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$job" >jobrec && test "$(json_get runs.0.charge_sumin <jobrec)" -ge 1
'

test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
