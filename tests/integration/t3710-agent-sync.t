#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3710-agent-sync.t - allot-agent keeps allot's copy of a cluster in step with a real Slurm
# (--sync, doc/agent.md "Sync").  slurm.conf's partition big changes TRESBillingWeights to
# CPU=1.5 and MaxTime to 30 (scontrol reconfigure) while allot's copy says CPU=1.0 and
# maxtime=10: a job is charged at exactly 1.5, and sbatch -t 20 is refused by allot's copy
# of MaxTime.  report: both values of every drift shown by `allot sync status` and
# /metrics, allot's copy unchanged.  follow: allot's copy takes Slurm's weights and MaxTime,
# the user and association Slurm has and allot lacked are created, the drifts are gone and
# sbatch -t 20 runs; a new partition gpu and an association naming it are created.
# push: an account, user and association allot has and Slurm lacks are added to Slurm with
# sacctmgr; a partition drift is reported 'unresolvable'.
test_description='allot-agent sync: report, follow, push against real Slurm'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip
AGENT=$SLURM_AGENT
ALLOT=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$AGENT" || { skip_all="allot-agent not built"; test_done; }

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
U=allot_t3710
id -u $U >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $U 2>/dev/null || id -u $U >/dev/null 2>&1 ||
	{ skip_all="cannot create user $U"; test_done; }
ledger_has() {
	test "$(api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1" | python3 -c '
import json,sys
print(sum(1 for e in json.load(sys.stdin)["items"] if e["kind"]==sys.argv[1]))' "$2")" -ge 1
}
# agent MODE: one pass of allot-agent with --sync MODE (as root, a SuperUser of allotd).
agent() {
	ALLOT_MUNGE_SOCKET=$MUNGE_SOCKET run_bounded 120 "$AGENT" --url "$ALLOTD_URL" \
		--cluster "$SLURM_CLUSTER" --once --wait 0 --reconcile-every 0 --sync "$1"
}
cli() { ALLOT_MUNGE_SOCKET=$MUNGE_SOCKET "$ALLOT" --url "$ALLOTD_URL" "$@"; }
# drift KIND OBJECT FIELD: "slurm|allot|status" of that drift in `allot sync status -P`,
# or nothing when there is none.
drift() {
	cli sync status "$SLURM_CLUSTER" -P -n | awk -F"|" -v k="$1" -v o="$2" -v f="$3" \
		'NF >= 8 && $2 == k && $3 == o && $4 == f { print $5 "|" $6 "|" $7 }'
}
part() { api GET "/v1/partitions/$SLURM_CLUSTER/big" | json_get "$1"; }
metric() { curl -s "$ALLOTD_URL/metrics" | sed -n "s/^$1 //p"; }

test_expect_success 'cluster with plugins; allot'"'"'s copy of big: CPU=1.0, maxtime 10 min' '
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PartitionName=big Nodes=ALL MaxTime=10 DefaultTime=5 TRESBillingWeights=CPU=1.0 State=UP
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user $U account=chem defaultaccount=chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start Operators=root "PrEpSpoolDir=$PWD/spool" PluginTimeoutMs=5000 &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0,\"default_account\":\"root\"}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"root\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"big\",\"billing_weights\":\"CPU=1.0\",\"max_time_s\":600,\"default_time_s\":300}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"debug\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":100000}" &&
	wait_for 20 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\"" &&
	agent report 2>agent0.log; cat agent0.log &&
	grep "sync: report pass" agent0.log
'

test_expect_success 'slurm.conf: big bills CPU=1.5 with MaxTime=30, new partition gpu (reconfigure)' '
	sed -i "s/^PartitionName=big .*/PartitionName=big Nodes=ALL MaxTime=30 DefaultTime=5 TRESBillingWeights=CPU=1.5 State=UP/" "$SLURM_CONF" &&
	echo "PartitionName=gpu Nodes=ALL MaxTime=60 TRESBillingWeights=CPU=2.0 State=UP" >>"$SLURM_CONF" &&
	scontrol reconfigure &&
	wait_for 30 sh -c "scontrol show partition gpu -o >/dev/null 2>&1" &&
	sacctmgr -i add user $U account=chem partition=gpu cluster=$SLURM_CLUSTER >/dev/null &&
	wait_for 30 sh -c "scontrol show partition big -o | tr \" \" \"\\n\" | grep -qx TRESBillingWeights=CPU=1.5" &&
	scontrol show partition big -o | tr " " "\n" | grep -x MaxTime=00:30:00
'

test_expect_success 'a job on big is charged at Slurm'"'"'s new weight, exactly 1.5' '
	sleep 3 && # job_submit/allot asks slurmctld for partition changes every 2 s
	job=$(sbatch --parsable -A chem -p big -c 1 --mem=100 --time=5 --wrap "sleep 1") &&
	slurm_wait_job "$job" COMPLETED 60 &&
	wait_for 30 ledger_has $job debit &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$job" >jobrec &&
	test "$(json_get runs.0.billing_micro <jobrec)" = 1500000 &&
	wait_for 30 sh -c "sacct -n -X -P -j $job -o State | grep -qx COMPLETED" &&
	el=$(sacct -n -X -P -j $job -o ElapsedRaw) &&
	test "$(json_get runs.0.charge_sumin <jobrec)" = $(( (1500000 * el + 59999999) / 60000000 ))
'

test_expect_success 'allot'"'"'s MaxTime copy (10) refuses sbatch -t 20, which Slurm (30) allows' '
	test_expect_code 1 sbatch -A chem -p big -c 1 --mem=100 --time=20 --wrap true 2>err &&
	cat err && grep "sbatch: error: allot:" err
'

test_expect_success 'report: every drift shown with both values; allot'"'"'s copy unchanged' '
	agent report 2>agent1.log; cat agent1.log &&
	grep "sync: drift partition big billing_weights: slurm '"'"'CPU=1.5'"'"' allot '"'"'CPU=1.0'"'"'" agent1.log &&
	cli sync status "$SLURM_CLUSTER" &&
	test "$(drift partition big billing_weights)" = "CPU=1.5|CPU=1.0|reported" &&
	test "$(drift partition big max_time)" = "00:30:00|00:10:00|reported" &&
	test "$(drift user $U exists)" = "default_account=chem||reported" &&
	test "$(drift assoc chem/$U/ exists)" = "present||reported" &&
	test "$(drift assoc chem/$U/gpu exists)" = "present||reported" &&
	drift partition gpu exists | grep "^TRESBillingWeights=CPU=2.0 MaxTime=01:00:00 DefaultTime=NONE||reported$" &&
	test "$(part billing_weights)" = CPU=1.0 && test "$(part max_time_s)" = 600 &&
	test "$(metric "allot_sync_drifts{cluster=\"$SLURM_CLUSTER\",kind=\"partition\"}")" = 3 &&
	test "$(metric "allot_sync_drifts{cluster=\"$SLURM_CLUSTER\",kind=\"user\"}")" -ge 1 &&
	test "$(metric "allot_sync_drifts_resolved_total{cluster=\"$SLURM_CLUSTER\"}")" = 0 &&
	metric "allot_sync_last_pass_timestamp_seconds{cluster=\"$SLURM_CLUSTER\",mode=\"report\"}" | grep -q "^[0-9]"
'

test_expect_success 'follow: allot takes Slurm'"'"'s weights, MaxTime, user and association' '
	agent follow 2>agent2.log; cat agent2.log &&
	grep "sync: follow pass: .* found, [1-9][0-9]* resolved" agent2.log &&
	cli sync status "$SLURM_CLUSTER" &&
	test "$(part billing_weights)" = CPU=1.5 && test "$(part max_time_s)" = 1800 &&
	test -z "$(drift partition big billing_weights)" &&
	test -z "$(drift partition big max_time)" &&
	test -z "$(drift user $U exists)" &&
	test -z "$(drift assoc chem/$U/ exists)" &&
	test -z "$(drift assoc chem/$U/gpu exists)" && test -z "$(drift partition gpu exists)" &&
	api GET "/v1/partitions/$SLURM_CLUSTER/gpu" >gpu && test "$(json_get billing_weights <gpu)" = CPU=2.0 &&
	test "$(json_get max_time_s <gpu)" = 3600 &&
	api GET /v1/users/$U >u && test "$(json_get default_account <u)" = chem &&
	test "$(json_get uid <u)" = "$(id -u $U)" &&
	test -z "$(metric "allot_sync_drifts{cluster=\"$SLURM_CLUSTER\",kind=\"partition\"}")" &&
	test "$(metric "allot_sync_drifts_resolved_total{cluster=\"$SLURM_CLUSTER\"}")" -ge 4
'

test_expect_success 'follow: sbatch -t 20 now runs (Slurm'"'"'s MaxTime wins)' '
	job=$(sbatch --parsable -A chem -p big -c 1 --mem=100 --time=20 --wrap true) &&
	slurm_wait_job "$job" COMPLETED 60
'

test_expect_success 'push: allot'"'"'s account, user and association are added to Slurm' '
	api POST /v1/accounts "{\"name\":\"bio\"}" &&
	api POST /v1/users "{\"name\":\"allot_t3710b\",\"default_account\":\"bio\"}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"bio\",\"user\":\"allot_t3710b\"}" &&
	api PATCH /v1/partitions/$SLURM_CLUSTER/big "{\"billing_weights\":\"CPU=3.0\"}" &&
	agent push 2>agent3.log; cat agent3.log &&
	sacctmgr -P -n show assoc where cluster=$SLURM_CLUSTER account=bio format=Account,User >bio &&
	cat bio && grep -x "bio|allot_t3710b" bio &&
	sacctmgr -P -n show user allot_t3710b format=User,DefaultAccount | grep -x "allot_t3710b|bio" &&
	cli sync status "$SLURM_CLUSTER" &&
	test -z "$(drift account bio exists)" && test -z "$(drift user allot_t3710b exists)" &&
	drift partition big billing_weights | grep "^CPU=1.5|CPU=3.0|unresolvable$" &&
	cli sync status "$SLURM_CLUSTER" -P -n | grep "|big|billing_weights|" | grep "sacctmgr cannot change a partition"
'

test_expect_success 'bad input: an unknown mode is refused; a bad report changes nothing' '
	test_expect_code 2 "$AGENT" --url "$ALLOTD_URL" --cluster "$SLURM_CLUSTER" --sync mirror 2>err &&
	grep "sync takes report, follow or push" err &&
	cli sync status "$SLURM_CLUSTER" -P -n >before &&
	test_expect_code 1 api PUT /v1/sync/$SLURM_CLUSTER "{\"mode\":\"report\",\"drifts\":[{\"kind\":\"node\",\"object\":\"n\",\"field\":\"f\",\"status\":\"reported\"}]}" &&
	test_expect_code 1 api PUT /v1/sync/$SLURM_CLUSTER "{\"mode\":\"report\"}" &&
	cli sync status "$SLURM_CLUSTER" -P -n >after &&
	test_cmp before after
'

test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
