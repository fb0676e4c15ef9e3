#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3047-time-limit-slurm.t - changing a job's time limit (scontrol update jobid=J
# timelimit=T) through the real plugins on a real Slurm 22.05 (doc/slurm.md "Changing a
# job's time limit"): a user's lower limit on a pending job is accepted (job_submit/allot
# writes no TimeMin that would refuse it); a raise of a pending job the allocation cannot
# cover is refused; a running job's raise re-prices its hold (one more hold entry) and its
# charge is the time it used, past the old limit, not the old hold; a running job's cut
# releases the excess at once; a raise the allocation cannot cover is refused, the limit
# unchanged, with the failure recorded; a charge capped at its hold says so in the ledger
# (allot job show) and allotd's log, with both numbers; under HoldMode=submit a pending
# job's submit hold is re-priced with its limit.
test_description='time-limit changes re-price the hold'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
SPOOL=$PWD/spool
ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }
bal() { api GET "/v1/balances?account=chem" | json_get "items.0.$1"; }
# billing 2 (1 CPU + 2 GB at 0.5/GB): 2 SU-min per minute of limit
JOB="-A chem -p bank -c 1 --mem=2048"
limit_of() { scontrol show job "$1" | sed -n "s/.*TimeLimit=\([^ ]*\).*/\1/p"; }
# ledger_sum JOB KIND
ledger_sum() {
	api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1" | python3 -c '
import json,sys
print(sum(e["amount_sumin"] for e in json.load(sys.stdin)["items"] if e["kind"]==sys.argv[1]))' "$2"
}
ledger_has() { test "$(ledger_sum "$1" "$2")" -gt 0; }
run0() { api GET "/v1/jobs/$SLURM_CLUSTER/$1" | json_get "runs.0.$2"; }
settled() { test "$(run0 "$1" status)" = settled; }
# run_time_s JOB: seconds the running JOB has run (scontrol RunTime).
run_time_s() {
	scontrol show job "$1" | sed -n "s/.*RunTime=\([0-9:]*\).*/\1/p" |
		awk -F: "{ print (\$1 * 3600) + (\$2 * 60) + \$3 }"
}
ran_past() { test "$(run_time_s "$1")" -ge "$2"; }
# token JOB: the submit token in the job's AdminComment (HoldMode=submit), "" when none.
token() { scontrol show job "$1" | sed -n 's/.*AdminComment=.*allot_token=\([0-9]*\).*/\1/p'; }
# token_hold TOKEN: the hold of the submit token's held run.
token_hold() {
	api GET "/v1/jobs?cluster=$SLURM_CLUSTER&status=held" | python3 -c '
import json,sys
print(*[j["hold_sumin"] for j in json.load(sys.stdin)["items"] if j["job_id"]==int(sys.argv[1])])' "$1"
}
# partitions_since_start: job_submit/allot of the running slurmctld has its partitions.
partitions_since_start() {
	cat "$SLURM_DIR/log/slurmctld.log" |
		awk "/slurmctld version/ { n = 0 } /job_submit\/allot: .* partition\(s\) loaded/ { n++ }
			END { exit !(n > 0) }"
}

test_expect_success 'cluster with both plugins, chem with 100 SU-min' '
	slurm_start_allot 600 &&
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=5000 &&
	allot_bank_chem 100
'

test_expect_success 'a pending job: a lower limit is accepted, an unaffordable raise refused' '
	j=$(sbatch --parsable --hold $JOB --time=3 --wrap true) &&
	scontrol show job $j | grep "TimeMin=N/A" &&
	scontrol update jobid=$j timelimit=2 &&
	test "$(limit_of $j)" = 00:02:00 &&
	# 600 minutes at billing 2 = 1200 SU-min, with 100 available: refused, limit unchanged
	test_must_fail scontrol update jobid=$j timelimit=600 2>err &&
	cat err && grep "accounting/QOS policy" err &&
	test "$(limit_of $j)" = 00:02:00 &&
	ctld_log | grep "JobId=$j time limit 2 -> 600 min refused: .*may cost up to" &&
	scancel $j
'

test_expect_success 'a running job raised past its old limit is charged the time it used' '
	test_when_finished "touch go_raise" &&
	j=$(sbatch --parsable $JOB --time=1 --wrap "$(slurm_gated "$PWD/go_raise")") &&
	echo $j >job_raise &&
	slurm_wait_job $j RUNNING 60 &&
	wait_for 20 ledger_has $j hold &&
	test "$(ledger_sum $j hold)" = 2 &&
	scontrol update jobid=$j timelimit=3 &&
	test "$(limit_of $j)" = 00:03:00 &&
	# one more hold of the difference, appended: 2 + 4
	test "$(ledger_sum $j hold)" = 6 &&
	test "$(run0 $j hold_sumin)" = 6 &&
	test "$(bal held_sumin)" = 6 &&
	wait_for 120 ran_past $j 65 &&
	touch go_raise &&
	slurm_wait_job $j COMPLETED 60 &&
	wait_for 30 settled $j &&
	el=$(run0 $j elapsed_s) && charge=$(run0 $j charge_sumin) &&
	echo "elapsed $el charge $charge" &&
	test "$charge" = $(( (2 * el + 59) / 60 )) &&
	test "$charge" -gt 2 &&
	test "$(ledger_sum $j release)" = 6 &&
	test "$(bal held_sumin)" = 0
'

test_expect_success 'a running job whose limit is cut releases the excess at once' '
	test_when_finished "touch go_cut" &&
	j=$(sbatch --parsable $JOB --time=5 --wrap "$(slurm_gated "$PWD/go_cut")") &&
	slurm_wait_job $j RUNNING 60 &&
	wait_for 20 ledger_has $j hold &&
	test "$(bal held_sumin)" = 10 &&
	scontrol update jobid=$j timelimit=2 &&
	test "$(limit_of $j)" = 00:02:00 &&
	test "$(ledger_sum $j release)" = 6 &&
	api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$j" | grep "time limit 5 -> 2 min" &&
	test "$(bal held_sumin)" = 4 &&
	touch go_cut &&
	slurm_wait_job $j COMPLETED 60 &&
	wait_for 30 settled $j &&
	test "$(bal held_sumin)" = 0
'

test_expect_success 'a raise the allocation cannot cover is refused, with the reason' '
	test_when_finished "touch go_no" &&
	j=$(sbatch --parsable $JOB --time=1 --wrap "$(slurm_gated "$PWD/go_no")") &&
	slurm_wait_job $j RUNNING 60 &&
	wait_for 20 ledger_has $j hold &&
	test_must_fail scontrol update jobid=$j timelimit=600 2>err &&
	cat err && grep "accounting/QOS policy" err &&
	test "$(limit_of $j)" = 00:01:00 &&
	test "$(run0 $j hold_sumin)" = 2 &&
	test "$(bal held_sumin)" = 2 &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$j" >rec &&
	grep "time limit not raised: job $j run 0: account chem" rec &&
	grep "may cost up to 20h" rec &&
	ctld_log | grep "JobId=$j time limit 1 -> 600 min refused" &&
	touch go_no &&
	slurm_wait_job $j COMPLETED 60
'

test_expect_success 'a charge capped at its hold says so, with both numbers' '
	api POST /v1/jobs/hold "{\"cluster\":\"$SLURM_CLUSTER\",\"job_id\":900001,\"run\":0,\"user\":\"root\",\"account\":\"chem\",\"partition\":\"bank\",\"time_limit_s\":60,\"billing\":2}" &&
	api POST /v1/jobs/settle "{\"cluster\":\"$SLURM_CLUSTER\",\"job_id\":900001,\"run\":0,\"elapsed_s\":600,\"state\":\"TIMEOUT\"}" &&
	test "$(run0 900001 charge_sumin)" = 2 &&
	ALLOT_URL=$ALLOTD_URL "$ALLOT_BUILD_DIR/src/cli/allot" job show $SLURM_CLUSTER:900001 >show &&
	cat show &&
	grep "capped at the hold: used 20 SU-min, held 2" show &&
	grep "charge capped at the hold.*job=900001 .*used_sumin=20 hold_sumin=2" "$ALLOTD_LOG"
'

test_expect_success 'HoldMode=submit: a pending job'"'"'s submit hold is re-priced with its limit' '
	allotd_stop &&
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=5000 HoldMode=submit &&
	slurm_kill_ slurmctld &&
	slurm_daemon_ slurmctld "$SLURM_SBIN/slurmctld" -D &&
	wait_for 30 slurm_ctld_up_ &&
	wait_for 30 partitions_since_start &&
	held0=$(bal held_sumin) &&
	j=$(sbatch --parsable --hold $JOB --time=3 --wrap true) &&
	t=$(token $j) && echo "job $j token $t" && test -n "$t" &&
	test "$(token_hold $t)" = 6 &&
	scontrol update jobid=$j timelimit=2 &&
	test "$(limit_of $j)" = 00:02:00 &&
	test "$(token_hold $t)" = 4 &&
	test "$(bal held_sumin)" = $((held0 + 4)) &&
	api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$t" | grep "time limit 3 -> 2 min" &&
	scancel $j
'

test_expect_success 'stop' '
	slurm_stop &&
	allotd_stop
'

test_done
