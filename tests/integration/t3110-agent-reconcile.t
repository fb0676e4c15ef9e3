#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3110-agent-reconcile.t - allot-agent reconciles finished jobs from sacct on a real Slurm
# with slurmdbd and no allot plugins (post-paid): each job is settled exactly once with the
# charge ceil(billing x elapsed / 60); a job the epilog already settled is untouched; a job
# of an account without allocation is reported; the window marker lives in allotd, so a
# second agent run resumes after it, and a replayed window changes nothing in the ledger;
# a failing sacct leaves the marker where it was; a job with more runs than the agent once
# read settles the run whose start sacct gives; a job array's tasks reconciled from sacct
# are found under Slurm's names (their array ids come with the settle).
test_description='allot-agent reconciles sacct records exactly once'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
AGENT=$SLURM_AGENT
test -x "$ALLOTD_BIN" && test -x "$AGENT" || { skip_all="allotd or allot-agent not built"; test_done; }

agent() {
	ALLOT_TEST_USER=slurm run_bounded 120 "$AGENT" --url "$ALLOTD_URL" --cluster "$SLURM_CLUSTER" \
		--once --wait 0 --reconcile-every 1 --reconcile-lag 0 "$@"
}
# ledger_count KIND: entries of that kind on chem's allocation.
ledger_count() {
	api GET "/v1/ledger?alloc=$(cat alloc)" |
		python3 -c 'import json,sys; k=sys.argv[1]; print(sum(1 for e in json.load(sys.stdin)["items"] if e["kind"]==k))' "$1"
}
sacct_has_all() {
	test "$(sacct -n -X -P -S now-1hour -o JobIDRaw,State | grep -c "|COMPLETED$")" -ge 4
}

test_expect_success 'Slurm without allot plugins; allotd with chem (allocation) and ghost (none)' '
	slurm_start &&
	sacctmgr -i add account chem,ghost cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem,ghost cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"ghost\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"debug\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"$SLURM_CLUSTER\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"100h\"}" >out &&
	json_get id <out >alloc
'
test_expect_success 'four jobs run and finish (three chem, one ghost)' '
	for i in 1 2 3; do
		sbatch -A chem -n 2 -t 5 -o /dev/null --wrap "sleep 2" | awk "{print \$4}" >>jobs || return 1
	done &&
	sbatch -A ghost -n 1 -t 5 -o /dev/null --wrap "sleep 1" | awk "{print \$4}" >ghost &&
	for j in $(cat jobs ghost); do slurm_wait_job $j COMPLETED 90 || return 1; done &&
	wait_for 30 sacct_has_all
'
test_expect_success 'the epilog settled the first job before the agent runs' '
	j=$(sed -n 1p jobs) &&
	sacct -n -X -P -j $j -o Start,End,Elapsed >rec && cat rec &&
	api POST /v1/jobs/settle "{\"cluster\":\"$SLURM_CLUSTER\",\"job_id\":$j,\"run\":0,\"elapsed_s\":7,\"state\":\"COMPLETED\",\"source\":\"epilog\",\"start\":\"$(cut -d"|" -f1 <rec)Z\",\"user\":\"root\",\"account\":\"chem\",\"partition\":\"debug\",\"billing\":2}" >out &&
	test "$(json_get job.charge_sumin <out)" = 1
'
test_expect_success 'a failing sacct (slurmdbd lag) is retried, then the marker stays' '
	printf "#!/bin/sh\necho \"sacct: error: Problem talking to the database: Connection refused\" >&2\nexit 1\n" >badsacct &&
	chmod +x badsacct &&
	ALLOT_SACCT=$PWD/badsacct agent --reconcile-lookback 3600 2>bad.log;
	cat bad.log &&
	grep -q "attempt 3 of 3" bad.log &&
	grep -q "Connection refused" bad.log &&
	api GET /v1/agents/$SLURM_CLUSTER >out && test "$(json_get reconcile.until_s <out)" = 0
'
test_expect_success 'the agent settles each unsettled job once, reports the ghost job' '
	agent --reconcile-lookback 3600 2>agent.log; cat agent.log &&
	grep -q "settled=2 already=1 unknown=1" agent.log &&
	for j in $(sed -n 2,3p jobs); do
		api GET /v1/jobs/$SLURM_CLUSTER/$j >job &&
		python3 - "$j" <<-\EOF || return 1
		import json, sys, math
		d = json.load(open("job"))
		runs = d["runs"]
		assert len(runs) == 1, runs
		r = runs[0]
		assert r["settle_source"] == "sacct" and r["status"] == "settled", r
		assert r["account"] == "chem" and r["user"] == "root" and r["partition"] == "debug", r
		assert r["charge_sumin"] == math.ceil(2 * r["elapsed_s"] / 60) and r["charge_sumin"] >= 1, r
		assert r["time_limit_s"] == 300, r
		assert sum(1 for e in d["ledger"] if e["kind"] == "debit") == 1, d["ledger"]
		EOF
	done &&
	api GET /v1/jobs/$SLURM_CLUSTER/$(sed -n 1p jobs) >job &&
	test "$(json_get runs.0.settle_source <job)" = epilog &&
	test_expect_code 1 api GET /v1/jobs/$SLURM_CLUSTER/$(cat ghost) &&
	api GET /v1/agents/$SLURM_CLUSTER >out &&
	test "$(json_get reconcile.settled <out)" = 2 &&
	test "$(json_get reconcile.unknown <out)" = 1 &&
	json_get reconcile.report <out | grep "job $(cat ghost) (account ghost" &&
	test "$(ledger_count debit)" = 3
'
test_expect_success 'a second run resumes after the marker: nothing to do' '
	api GET /v1/agents/$SLURM_CLUSTER >out && json_get reconcile.until_s <out >until1 &&
	agent --reconcile-lookback 3600 2>agent2.log; cat agent2.log &&
	grep -q "rows=0 settled=0" agent2.log &&
	test "$(ledger_count debit)" = 3
'
test_expect_success 'a replayed window changes nothing and does not move the marker back' '
	agent --reconcile-from $(($(cat until1) - 3600)) 2>agent3.log; cat agent3.log &&
	grep -q "settled=0 already=3 unknown=1" agent3.log &&
	test "$(ledger_count debit)" = 3 &&
	api GET /v1/agents/$SLURM_CLUSTER >out &&
	test "$(json_get reconcile.until_s <out)" -ge "$(cat until1)" &&
	test "$(json_get reconcile.settled <out)" = 2 &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
# The agent used to read only the first 16 of a job's runs (allotd lists them most recently
# updated first).  Runs 0-19 held, then 0-15 settled a second later: the first 16 were runs
# 15..0, so a sacct record of run 18 (its start) settled run 16 instead, and run 18 stayed
# held for good.
test_expect_success 'a job with 20 runs: the sacct record of run 18 settles run 18' '
	j=990001 && t0=1767225600 &&
	for r in $(seq 0 19); do
		api POST /v1/jobs/hold "{\"cluster\":\"$SLURM_CLUSTER\",\"job_id\":$j,\"run\":$r,\"user\":\"root\",\"account\":\"chem\",\"partition\":\"debug\",\"start\":$((t0 + 3600 * r)),\"time_limit_s\":300,\"billing\":1}" >/dev/null || return 1
	done &&
	sleep 1.1 &&
	for r in $(seq 0 15); do
		api POST /v1/jobs/settle "{\"cluster\":\"$SLURM_CLUSTER\",\"job_id\":$j,\"run\":$r,\"elapsed_s\":60,\"state\":\"REQUEUED\",\"source\":\"epilog\"}" >/dev/null || return 1
	done &&
	now=$(date +%s) &&
	start=$(date -u -d @$((t0 + 3600 * 18)) +%Y-%m-%dT%H:%M:%S) &&
	end=$(date -u -d @$((now - 540)) +%Y-%m-%dT%H:%M:%S) &&
	printf "#!/bin/sh\necho \"$j|COMPLETED|root|chem|debug|normal|$start|$end|120|00:05:00|billing=1,cpu=1,node=1|1|$j\"\n" >manyruns &&
	chmod +x manyruns &&
	ALLOT_SACCT=$PWD/manyruns agent --reconcile-from $((now - 3600)) 2>many.log; cat many.log &&
	grep -q "settled=1 " many.log &&
	api GET /v1/jobs/$SLURM_CLUSTER/$j >job &&
	python3 - <<-\EOF
	import json
	runs = {r["run"]: r for r in json.load(open("job"))["runs"]}
	assert len(runs) == 20, sorted(runs)
	r18 = runs[18]
	assert r18["status"] == "settled" and r18["settle_source"] == "sacct", r18
	assert r18["charge_sumin"] == 2 and r18["state"] == "COMPLETED", r18
	for n in (16, 17, 19):
	    assert runs[n]["status"] == "held", runs[n]
	EOF
'
test_expect_success 'a job array reconciled from sacct is found under Slurm'"'"'s names (J_T, J)' '
	a=$(sbatch --parsable -A chem -n 1 -t 5 -o /dev/null --array=1-2 --wrap "sleep 1") &&
	wait_for 90 sh -c "test \"\$(sacct -n -X -P -j $a -o State | grep -c ^COMPLETED)\" = 2" &&
	r2=$(sacct -n -X -P -j ${a}_2 -o JobIDRaw) && echo "task 2 is job $r2" &&
	# The agent'"'"'s window ends at now (lag 0) and takes jobs that ended before it.
	last=$(TZ=UTC0 sacct -n -X -P -j $a -o End | sort | tail -n 1) &&
	wait_for 10 sh -c "test \$(date +%s) -gt \$(TZ=UTC0 date -d $last +%s)" &&
	agent --reconcile-from $(( $(date +%s) - 3600 )) 2>arr.log; cat arr.log &&
	api GET "/v1/jobs/$SLURM_CLUSTER/${a}_2" >t2 &&
	test "$(json_get runs.0.job_id <t2)" = "$r2" &&
	test "$(json_get runs.0.slurm_job_id <t2)" = "${a}_2" &&
	test "$(json_get runs.0.settle_source <t2)" = sacct &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$a" >all &&
	test "$(json_get total.jobs <all)" = 2
'
test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
