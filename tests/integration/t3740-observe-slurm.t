#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3740-observe-slurm.t - EnforceMode=observe on a real Slurm 22.05 with both plugins
# (doc/adopt.md): a burst that enforcement would partly refuse -- two jobs whose maximum
# cost exceeds the allocation (refused at sbatch) and one that finds the credit held by a
# running job (cancelled at start) -- runs completely in observe mode; the same burst on a
# fresh bank in enforce mode refuses exactly the jobs `allot report observe` named, and
# every job that ran in both is charged the same; a SIGHUP from observe to enforce takes
# effect at the next sbatch without a restart and changes no recorded money.  Then
# `allot import sacct start= end=` (sacct run by the CLI) brings the first burst into the
# second bank, each job priced as the plugins' settle priced it.
test_description='observe mode end to end: burst, report, replay in enforce, SIGHUP'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
SPOOL=$PWD/spool
ALLOT=$ALLOT_BUILD_DIR/src/cli/allot
ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }
# StartRefusal=cancel: the job that finds the credit taken at start is refused there (the
# default, wait, would requeue it until credit frees, and the burst's replay would then
# differ by timing, not by rule).
allotd_start_bank() {
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=5000 PrEpMinThreads=1 \
		PrEpMaxThreads=4 StartRefusal=cancel "$@"
}
# bank: the allot side of a fresh bank, chem with 100 SU-minutes.
bank() {
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"bank\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":100}" >/dev/null
}
money() { api GET "/v1/balances?account=chem" | python3 -c '
import json,sys
b=json.load(sys.stdin)["items"][0]
print(b["granted_sumin"], b["used_sumin"], b["held_sumin"], b["available_sumin"])'; }
held() { test "$(api GET "/v1/balances?account=chem" | json_get items.0.held_sumin)" = "$1"; }
# run_status ID: "<status> <charge>" of the job's run 0, or nothing while it has no record.
run_status() {
	api GET "/v1/jobs/$SLURM_CLUSTER/$1" 2>/dev/null | python3 -c '
import json,sys
r=json.load(sys.stdin)["runs"][0]
print(r["status"], r["charge_sumin"])' 2>/dev/null
}
settled() { run_status "$1" | grep -q "^settled "; }
# burst DIR: the burst; DIR/NAME holds each job id, DIR/refused the names sbatch refused.
# s1..s4 cost 5 SU at most, b1 and b2 200 (more than chem has), m1 and m2 60 each: m2 is
# released only once m1 runs, so its hold finds 40 SU left.
burst() {
	mkdir -p "$1" && : >"$1/refused" &&
	for n in s1 b1 s2 s3 b2 s4; do
		case $n in s*) t=5 ;; b*) t=200 ;; esac
		sbatch --parsable -J $n -A chem -p bank -c 1 --mem=500 --time=$t --wrap "sleep 1" >"$1/$n" 2>"$1/$n.err" ||
			echo $n >>"$1/refused" || return 1
	done &&
	sbatch --parsable --hold -J m1 -A chem -p bank -c 1 --mem=500 --time=60 --wrap "sleep 8" >"$1/m1" &&
	sbatch --parsable --hold -J m2 -A chem -p bank -c 1 --mem=500 --time=60 --wrap "sleep 1" >"$1/m2" &&
	for n in s1 s2 s3 s4 b1 b2; do
		! test -s "$1/$n" || slurm_wait_job "$(cat "$1/$n")" "COMPLETED|CANCELLED" 90 || return 1
	done &&
	scontrol release "$(cat "$1/m1")" &&
	slurm_wait_job "$(cat "$1/m1")" RUNNING 60 &&
	wait_for 20 held 60 &&
	scontrol release "$(cat "$1/m2")" &&
	slurm_wait_job "$(cat "$1/m2")" "COMPLETED|CANCELLED" 90 &&
	slurm_wait_job "$(cat "$1/m1")" COMPLETED 90 &&
	for n in s1 b1 s2 s3 b2 s4 m1 m2; do
		test -s "$1/$n" || continue
		id=$(cat "$1/$n") &&
		slurm_job_state "$id" >"$1/$n.state" &&
		if grep -q COMPLETED "$1/$n.state"; then
			wait_for 30 settled "$id" && run_status "$id" >"$1/$n.run" || return 1
		else
			echo $n >>"$1/refused"
		fi || return 1
	done &&
	sort -o "$1/refused" "$1/refused"
}

# hold_names DIR <report: the names (DIR/NAME holds each job id) of the jobs whose hold the
# report lists; checks that it also lists the two admissions of 200 SU, without job ids.
hold_names() {
	python3 -c '
import json, os, sys
d = sys.argv[1]
ids = {open(os.path.join(d, n)).read().strip(): n for n in os.listdir(d)
       if "." not in n and n != "refused"}
(acct,) = json.load(sys.stdin)["accounts"]
admits = [f for f in acct["items"] if f["stage"] == "admit"]
assert len(admits) == 2, admits
assert all(f["job_id"] == 0 and "may cost up to 3h20m SU" in f["message"] for f in admits), admits
for f in acct["items"]:
    if f["stage"] == "hold":
        print(ids[str(f["job_id"])])' "$1"
}

test_expect_success 'cluster with both plugins; allotd in observe mode, chem 100 SU-minutes' '
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PartitionName=bank Nodes=ALL MaxTime=300 DefaultTime=5 TRESBillingWeights=CPU=1.0 State=UP
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start_bank EnforceMode=observe &&
	bank &&
	wait_for 20 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\""
'

test_expect_success 'observe: the whole burst runs' '
	burst obs &&
	cat obs/*.state &&
	test_must_be_empty obs/refused &&
	ctld_log | grep "job_submit/allot: observe: uid 0 account chem admitted; enforcement would refuse" &&
	ctld_log | grep "prep/allot: observe: JobId=$(cat obs/m2) run=0 starts without a hold"
'

test_expect_success 'observe: allot report observe names b1, b2 and m2, with their messages' '
	api GET "/v1/reports/observe?since=2020-01-01" >rep &&
	hold_names obs <rep >named &&
	sort -o named named && cat named &&
	printf "b1\nb2\nm2\n" >expect && test_cmp expect named &&
	"$ALLOT" --url "$ALLOTD_URL" report observe >cli.out && cat cli.out &&
	grep -q "job $(cat obs/m2) run 0: account chem" cli.out
'

test_expect_success 'SIGHUP observe -> enforce: no money moves, the next sbatch is refused' '
	money >pre && api GET "/v1/ledger?account=chem" >ledger.pre &&
	sed -i "s/^EnforceMode=observe/EnforceMode=enforce/" "$ALLOTD_CONF" &&
	kill -HUP $ALLOTD_PID &&
	wait_for 10 grep -q "reloaded\" key=EnforceMode" "$ALLOTD_LOG" &&
	wait_for 10 grep -q "configuration reloaded" "$ALLOTD_LOG" &&
	money >post && test_cmp pre post &&
	api GET "/v1/ledger?account=chem" >ledger.post && test_cmp ledger.pre ledger.post &&
	test_expect_code 1 sbatch -A chem -p bank -c 1 --time=200 --wrap true 2>err &&
	grep "sbatch: error: allot: account chem" err
'

test_expect_success 'enforce on a fresh bank: the same burst refuses exactly b1, b2 and m2' '
	allotd_stop &&
	rm -f "$ALLOTD_DIR"/allot.db* &&
	allotd_start_bank EnforceMode=enforce &&
	bank &&
	burst enf &&
	cat enf/*.state &&
	test_cmp expect enf/refused &&
	grep -l "sbatch: error: allot: account chem" enf/*.err >errs && test "$(wc -l <errs)" = 2
'

test_expect_success 'every job that ran in both modes is charged the same' '
	for n in s1 s2 s3 s4 m1; do
		echo "$n observe=$(cat obs/$n.run) enforce=$(cat enf/$n.run)" &&
		test_cmp obs/$n.run enf/$n.run || return 1
	done &&
	for n in b1 b2 m2; do
		c=$(cut -d" " -f2 obs/$n.run) && test "$c" -ge 1 || return 1
	done
'

# The enforce bank knows the second burst's jobs (settled or refused by the plugins), not the
# first's: importing the cluster's sacct history brings exactly those, as usage, each priced
# as the plugins' settle priced it in the observe bank.
test_expect_success 'allot import sacct start= end= on the live cluster: the first burst' '
	for n in s1 b1 s2 s3 b2 s4 m1 m2; do
		wait_for 30 sh -c "sacct -n -X -P -j $(cat obs/$n) -o State | grep -q COMPLETED" || return 1
	done &&
	"$ALLOT" --url "$ALLOTD_URL" import sacct start=2020-01-01 \
		end="$(date -u -d "+1 min" +%Y-%m-%dT%H:%M:%SZ)" cluster=$SLURM_CLUSTER >imp.out 2>imp.err &&
	cat imp.out && test_must_be_empty imp.err &&
	grep -Eq " 8 imported, [56] already in the bank" imp.out &&
	for n in s1 b1 s2 s3 b2 s4 m1 m2; do
		run_status "$(cat obs/$n)" >imp.$n &&
		echo "$n observe=$(cat obs/$n.run) import=$(cat imp.$n)" &&
		test_cmp obs/$n.run imp.$n || return 1
	done &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$(cat obs/s1)" | json_get runs.0.settle_source | grep -qx import
'

test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
