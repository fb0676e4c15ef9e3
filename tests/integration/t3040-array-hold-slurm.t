#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3040-array-hold-slurm.t - job arrays and het jobs under HoldMode=submit on a real Slurm
# 22.05 (doc/slurm.md "Hold at submit"): job_submit/allot prices an array as all its tasks
# (--array ranges, steps and lists; a %N throttle limits how many run at once, not how
# many run) and refuses at sbatch what the allocation cannot pay, naming tasks x cost;
# the submit hold covers every task, each task's start takes one share, a task cancelled
# pending gives back its share and the array's end the rest, all checked on the balance and
# the ledger to the SU-minute; a het job is held as the sum of its components, and when a
# later component is refused the earlier ones' submit holds are given back; without a hold
# at submit the admission checks the same wholes; `allot job show`
# and `allot job efficiency` name array tasks as Slurm does (J_T, J_[LIST], J summed).
test_description='job arrays and het jobs held at submit through the Slurm plugins'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
SPOOL=$PWD/spool

ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }
# prep/allot logs an array's release after allotd has answered it, so a test that has just
# seen the hold change waits for the line rather than reading the log once.
ctld_log_has() { grep -q "$1" "$SLURM_DIR/log/slurmctld.log"; }
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
bal() { api GET "/v1/balances?account=chem" | json_get "items.0.$1"; }
held_is() { test "$(bal held_sumin)" = "$1"; }
token() { scontrol show job "$1" | sed -n 's/.*AdminComment=.*allot_token=\([0-9]*\).*/\1/p' | head -n 1; }
# jobs_py EXPR: evaluate EXPR over allotd's job list of the cluster (as list J).
jobs_py() { api GET "/v1/jobs?cluster=$SLURM_CLUSTER&limit=1000" |
	python3 -c 'import json,sys; J=json.load(sys.stdin)["items"]; print(eval(sys.argv[1]))' "$1"; }
# ledger_of ID: the ledger entries of job (or token) ID as "kind:amount run" lines, oldest first.
ledger_of() { api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1&limit=1000" | python3 -c '
import json,sys
for e in sorted(json.load(sys.stdin)["items"], key=lambda e: e["id"]):
    print("%s:%d run%d" % (e["kind"], e["amount_sumin"], e["run"]))'; }
# raw_ids ARRAY: the raw job ids of an array's tasks (sacct), one a line.
raw_ids() { sacct -n -X -P -j "$1" -o JobIDRaw 2>/dev/null | sort -n; }
settled_once() { # every task of array $1 ($2 of them) settled once, charged once
	test "$(raw_ids "$1" | wc -l)" = "$2" || return 1
	for r in $(raw_ids "$1"); do
		test "$(jobs_py "[j[\"status\"] for j in J if j[\"job_id\"]==$r]")" = "['settled']" || return 1
		test "$(ledger_of $r | grep -c "^hold:5 ")" = 1 || return 1
		test "$(ledger_of $r | grep -c "^debit:")" -le 1 || return 1
	done
}
# tasks_in ARRAY STATE N: slurmctld shows N tasks of ARRAY, all in STATE.
tasks_in() { test "$(squeue -h -t all -j "$1" -o %T | sort | uniq -c | awk '{print $1 " " $2}')" = "$3 $2"; }
# Billing 1 (one CPU) x 5 minutes = 5 SU-minutes a task.
JOB="-A chem -p bank -c 1 --mem=1000 --time=5"

test_expect_success 'cluster with both plugins, allotd HoldMode=submit, chem with 50 SU-min' '
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PartitionName=bank Nodes=ALL MaxTime=60 DefaultTime=5 DefMemPerCPU=1000 TRESBillingWeights=CPU=1.0 State=UP
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=5000 HoldMode=submit &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"bank\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":50}" >alloc &&
	sleep 1.2 &&
	wait_for 20 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\""
'

test_expect_success 'an array the allocation cannot pay is refused at sbatch: tasks x cost' '
	test_must_fail sbatch --parsable --hold --array=1-11 $JOB --wrap "sleep 1" 2>err &&
	cat err &&
	grep "11 tasks x 5" err &&
	grep "available 50" err &&
	test_must_fail sbatch --parsable --hold --array=0-20:2%3 $JOB --wrap "sleep 1" 2>err2 &&
	cat err2 && grep "11 tasks x 5" err2 &&
	test_must_fail sbatch --parsable --hold --array=1,3,5-13 $JOB --wrap "sleep 1" 2>err3 &&
	cat err3 && grep "11 tasks x 5" err3 &&
	test "$(bal held_sumin)" = 0
'

test_expect_success 'steps, lists and throttles are counted right: the hold covers every task' '
	a=$(sbatch --parsable --hold --array=1-19:2%2 $JOB --wrap "sleep 1") &&
	echo "array $a token $(token $a) held $(bal held_sumin)" &&
	held_is 50 &&
	scancel $a && wait_for 30 tasks_in $a CANCELLED 1 &&
	wait_for 30 held_is 0 &&
	b=$(sbatch --parsable --hold --array=1,4,9%1 $JOB --wrap "sleep 1") &&
	held_is 15 &&
	scancel $b && wait_for 30 tasks_in $b CANCELLED 1 &&
	wait_for 30 held_is 0 &&
	test "$(bal used_sumin)" = 0
'

test_expect_success 'cancelling pending tasks gives back their shares, cancelling the array the rest' '
	a=$(sbatch --parsable --hold --array=1-4 $JOB --wrap "sleep 1") && t=$(token $a) &&
	held_is 20 &&
	scancel ${a}_2 &&
	wait_for 30 held_is 15 &&
	wait_for 10 ctld_log_has "job array of submit hold $t: 3 task(s) may still start" &&
	scancel ${a}_4 &&
	wait_for 30 held_is 10 &&
	scancel $a &&
	wait_for 30 held_is 0 &&
	ledger_of $t >lt && cat lt &&
	printf "hold:20 run0\nrelease:20 run0\nhold:15 run1\nrelease:15 run1\nhold:10 run2\nrelease:10 run2\n" >expectt &&
	test_cmp expectt lt &&
	test "$(bal used_sumin)" = 0 && test "$(bal available_sumin)" = 50 &&
	wait_for 10 ctld_log_has "job array of submit hold $t: 0 task(s) may still start"
'

test_expect_success 'an array it can pay runs every task, each charged once, nothing left held' '
	a=$(sbatch --parsable --array=1-3%2 $JOB --wrap "sleep 1") && echo $a >arr &&
	wait_for 120 tasks_in $a COMPLETED 3 &&
	wait_for 60 settled_once $a 3 &&
	wait_for 30 held_is 0 &&
	used=$(bal used_sumin) &&
	charged=$(jobs_py "sum(j[\"charge_sumin\"] for j in J if j[\"status\"]==\"settled\")") &&
	echo "used $used charged $charged" &&
	test "$used" = "$charged" &&
	test "$(jobs_py "sum(1 for j in J if j[\"status\"]==\"refused\")")" = 0 &&
	t=$(token $a) && ledger_of $t
'

test_expect_success 'allot job show names array tasks as Slurm does: J_T, J_[LIST], J (summed)' '
	a=$(cat arr) &&
	r2=$(sacct -n -X -P -j ${a}_2 -o JobIDRaw) && echo "task 2 is job $r2" &&
	allot job show ${a}_2 >t2 && cat t2 &&
	grep "settled .* ${a}_2\$" t2 &&
	allot --json job show ${a}_2 >t2.json &&
	test "$(json_get runs.0.job_id <t2.json)" = $r2 &&
	test "$(json_get runs.0.array_job_id <t2.json)" = $a &&
	test "$(json_get runs.0.array_task_id <t2.json)" = 2 &&
	test "$(json_get runs <t2.json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")" = 1 &&
	allot --json job show "${a}_[1-2]" >t12.json &&
	test "$(json_get runs <t12.json | python3 -c "import json,sys; print(*sorted(r[\"slurm_job_id\"] for r in json.load(sys.stdin)))")" = "${a}_1 ${a}_2" &&
	allot --json job show $a >all.json &&
	python3 - "$a" <<-\EOF &&
	import json, sys
	d = json.load(open("all.json")); a = sys.argv[1]
	names = sorted(r["slurm_job_id"] for r in d["runs"])
	assert names == ["%s_%d" % (a, t) for t in (1, 2, 3)], names
	assert d["total"]["jobs"] == 3, d["total"]
	assert d["total"]["charge_sumin"] == sum(r["charge_sumin"] for r in d["runs"]), d
	assert d["total"]["hold_sumin"] == 0, d["total"]
	EOF
	allot job show $a >all.txt && cat all.txt && grep "^Total:" all.txt &&
	api GET "/v1/jobs?cluster=$SLURM_CLUSTER&job=${a}_3" >j3 &&
	test "$(json_get items.0.slurm_job_id <j3)" = "${a}_3" &&
	test_expect_code 2 allot job show ${a}.batch 2>err && grep "is not a job" err
'

test_expect_success 'allot job efficiency J shows each task with the charge the bank made' '
	a=$(cat arr) &&
	allot --json job efficiency $a >eff.json && cat eff.json &&
	allot --json job show $a >all.json &&
	python3 - "$a" <<-\EOF
	import json, sys
	a = sys.argv[1]
	eff = {r["job_id"]: r for r in json.load(open("eff.json"))["items"]}
	bank = {r["slurm_job_id"]: r["charge_sumin"] for r in json.load(open("all.json"))["runs"]}
	assert sorted(eff) == sorted(bank), (sorted(eff), sorted(bank))
	for k, c in bank.items():
	    assert eff[k]["charged"] and eff[k]["charge_sumin"] == c, (k, eff[k], c)
	EOF
'

test_expect_success 'pending tasks cancelled while others run: the running keep their holds' '
	before=$(bal used_sumin) &&
	a=$(sbatch --parsable --array=1-4%1 $JOB --wrap "$(slurm_gated "$PWD/go_t")") &&
	slurm_wait_job "${a}_1" RUNNING 60 &&
	wait_for 30 held_is 20 &&
	scancel --state=PENDING $a &&
	wait_for 30 held_is 5 &&
	touch go_t &&
	slurm_wait_job "${a}_1" COMPLETED 60 &&
	wait_for 30 held_is 0 &&
	test "$(bal available_sumin)" = $((50 - $(bal used_sumin)))
'

test_expect_success 'a het job is held as the sum of its components' '
	cat >het.sh <<-EOF &&
	#!/bin/sh
	#SBATCH -A chem -p bank -c 1 --mem=1000 --time=5
	#SBATCH hetjob
	#SBATCH -A chem -p bank -c 1 --mem=1000 --time=3
	sleep 1
	EOF
	h=$(sbatch --parsable --hold het.sh) && echo "het $h" &&
	held_is 8 &&
	# (Slurm'"'"'s scheduler starts a het job with one node per component: this cluster has
	# one node, so it is cancelled pending, which gives back both components'"'"' holds.)
	scancel $h &&
	wait_for 30 held_is 0
'

test_expect_success 'a het job whose sum the allocation cannot pay is refused, nothing stays held' '
	avail=$(bal available_sumin) && echo "available $avail" &&
	half=$(( (avail / 2 + 5) )) &&
	cat >het2.sh <<-EOF &&
	#!/bin/sh
	#SBATCH -A chem -p bank -c 1 --mem=1000 --time=$half
	#SBATCH hetjob
	#SBATCH -A chem -p bank -c 1 --mem=1000 --time=$half
	sleep 1
	EOF
	test_must_fail sbatch --parsable --hold het2.sh 2>err &&
	cat err && grep "available" err &&
	held_is 0 &&
	ctld_log | grep "job_submit/allot: .*refused"
'

test_expect_success 'without a hold at submit, admission still checks an array'"'"'s and a het job'"'"'s whole cost' '
	# allotd restarted with HoldMode=start: job_submit/allot'"'"'s tokens are refused and it
	# admits without one, as a site without HoldMode=submit does.
	allotd_stop &&
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=5000 &&
	avail=$(bal available_sumin) && n=$((avail / 5)) && echo "available $avail: $n tasks fit" &&
	test_must_fail sbatch --parsable --hold --array=1-$((n + 1)) $JOB --wrap "sleep 1" 2>err &&
	cat err && grep "$((n + 1)) tasks x 5m SU" err &&
	a=$(sbatch --parsable --hold --array=1-$n $JOB --wrap "sleep 1") &&
	held_is 0 && scancel $a &&
	half=$((avail / 2 + 1)) &&
	sed "s/--time=5/--time=$half/; s/--time=3/--time=$half/" het.sh >het3.sh &&
	test_must_fail sbatch --parsable --hold het3.sh 2>err3 &&
	cat err3 && grep "this heterogeneous job may cost up to $((2 * half))m SU" err3 &&
	ctld_log | grep "admitting with the hold at start"
'

test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
