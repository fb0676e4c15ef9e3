#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3720-slurm-prices.t - the plugins price a job with slurmctld's own partition weights,
# whatever allot's copy of the partition holds: Slurm's partition big bills CPU=4.0 while
# allot's copy says CPU=1.0, and the job is held and charged at 4; after slurm.conf says
# CPU=2.5 and `scontrol reconfigure`, a 1-CPU job is charged at exactly 2.5 (sacct's
# billing TRES shows the truncated 2).  A user Slurm knows (DefaultAccount=chem) and allot
# does not is refused with a message that says so and names the commands that fix it
# (FailMode=closed), or admitted (FailMode=open); a user neither knows is told to give
# --account; an association or account Slurm has and allot lacks is named with the command
# that adds it.
test_description='prices follow Slurm partition records; truthful unknown-user message'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
U=allot_t3720
id -u $U >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $U 2>/dev/null || id -u $U >/dev/null 2>&1 ||
	{ skip_all="cannot create user $U"; test_done; }
UID3720=$(id -u $U)
ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }
ledger_has() {
	test "$(api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1" | python3 -c '
import json,sys
print(sum(1 for e in json.load(sys.stdin)["items"] if e["kind"]==sys.argv[1]))' "$2")" -ge 1
}
allotd_start_bank() {
	allotd_start Operators=root "PrEpSpoolDir=$PWD/spool" PluginTimeoutMs=5000 PrEpMinThreads=1 \
		PrEpMaxThreads=4 "$@"
}
# restart_ctld: a new slurmctld, up with job_submit/allot's partitions loaded.
restart_ctld() {
	n=$(grep -c "job_submit/allot: .* partition(s) loaded" "$SLURM_DIR/log/slurmctld.log") &&
	slurm_kill_ slurmctld &&
	slurm_daemon_ slurmctld "$SLURM_SBIN/slurmctld" -D &&
	wait_for 30 slurm_ctld_up_ &&
	wait_for 30 sh -c "[ \$(grep -c \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\") -gt $n ]"
}
# set_big WEIGHTS MAXTIME: rewrite partition big in slurm.conf and reconfigure; wait until
# slurmctld shows the new weights.
set_big() {
	sed -i "s/^PartitionName=big .*/PartitionName=big Nodes=ALL MaxTime=$2 DefaultTime=5 TRESBillingWeights=$1 State=UP/" "$SLURM_CONF" &&
	scontrol reconfigure &&
	wait_for 30 sh -c "scontrol show partition big -o | tr \" \" \"\\n\" | grep -qx \"TRESBillingWeights=$1\"" &&
	wait_for 30 sh -c "scontrol show partition big -o | tr \" \" \"\\n\" | grep -qx \"MaxTime=$(printf %02d:%02d:00 $(($2 / 60)) $(($2 % 60)))\""
}
# run_check JOB_BILLING_MICRO WANT_SLURM_BILLING: a 1-CPU job on big; its hold is priced at
# exactly WANT micro-units, sacct's billing TRES is the truncated integer, and the debit is
# the billing times the real elapsed time, rounded up to the minute.
run_check() {
	job=$(sbatch --parsable -A chem -p big -c 1 --mem=100 --time=5 --wrap "sleep 1") &&
	slurm_wait_job "$job" COMPLETED 60 &&
	wait_for 30 ledger_has $job debit &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$job" >jobrec &&
	echo "allot billing_micro=$(json_get runs.0.billing_micro <jobrec)" &&
	test "$(json_get runs.0.billing_micro <jobrec)" = "$1" &&
	wait_for 30 sh -c "sacct -n -X -P -j $job -o State | grep -qx COMPLETED" &&
	bill=$(sacct -n -X -P -j $job -o AllocTRES | tr , "\n" | sed -n "s/^billing=//p") &&
	el=$(sacct -n -X -P -j $job -o ElapsedRaw) &&
	echo "slurm billing=$bill elapsed=$el" &&
	test "$bill" = "$2" &&
	want=$(( ($1 * el + 59999999) / 60000000 )) &&
	got=$(json_get runs.0.charge_sumin <jobrec) &&
	echo "charge want=$want got=$got" &&
	test "$got" = "$want"
}

test_expect_success 'cluster: Slurm bills big at CPU=4.0, allot'"'"'s copy says CPU=1.0' '
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PartitionName=big Nodes=ALL MaxTime=30 DefaultTime=5 TRESBillingWeights=CPU=4.0 State=UP
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	chmod 0755 "$MUNGE_DIR" && # $U submits too: it must reach munged'"'"'s socket
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user $U account=chem defaultaccount=chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start_bank &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"big\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":100000}" &&
	wait_for 20 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\""
'

test_expect_success 'a job on big is priced at Slurm'"'"'s CPU=4.0, not allot'"'"'s copy' '
	run_check 4000000 4
'

test_expect_success 'slurm.conf says CPU=2.5 after reconfigure: charged exactly 2.5, sacct shows 2' '
	set_big CPU=2.5 40 &&
	run_check 2500000 2
'

test_expect_success 'admission is priced with Slurm'"'"'s weights too' '
	# 40 min x 1 CPU: 40 SU-min by allot'"'"'s copy (CPU=1.0), 100 by Slurm'"'"'s CPU=2.5: with
	# 60 available, the copy would admit it, Slurm'"'"'s price refuses it.
	sacctmgr -i add account phys cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=phys cluster=$SLURM_CLUSTER >/dev/null &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"phys\",\"user\":\"root\"}" &&
	api POST /v1/allocations "{\"account\":\"phys\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":60}" &&
	test_expect_code 1 sbatch -A phys -p big -c 1 --mem=100 --time=40 --wrap true 2>err &&
	cat err && grep "may cost up to 1h40m SU (billing 2.5 x time limit 40 min)" err
'

test_expect_success 'a user Slurm knows (DefaultAccount=chem) and allot does not: the truth, and the fix' '
	test_expect_code 1 runuser -u $U -- env SLURM_CONF="$SLURM_CONF" sbatch -p big -t 5 --wrap true 2>err &&
	cat err &&
	grep "sbatch: error: allot: user $U (uid $UID3720) is known to Slurm (DefaultAccount=chem) but not to allot" err &&
	grep "allot user add $U uid=$UID3720 defaultaccount=chem" err &&
	grep "allot assoc add cluster=$SLURM_CLUSTER account=chem user=$U" err &&
	! grep "has no default account: submit with --account" err
'

test_expect_success 'known to allot without a default account: Slurm'"'"'s default is named' '
	api POST /v1/users "{\"name\":\"$U\",\"uid\":$UID3720}" &&
	restart_ctld &&  # job_submit/allot remembers users for a minute
	test_expect_code 1 runuser -u $U -- env SLURM_CONF="$SLURM_CONF" sbatch -p big -t 5 --wrap true 2>err2 &&
	cat err2 && grep "has DefaultAccount=chem in Slurm but no default account in allot" err2 &&
	grep "submit with --account=chem" err2 &&
	grep "allot user modify $U defaultaccount=chem" err2
'

test_expect_success 'a user neither Slurm nor allot gives a default account: told to give --account' '
	api POST /v1/users "{\"name\":\"nobody\",\"uid\":$(id -u nobody)}" &&
	test_expect_code 1 runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" sbatch -p big -t 5 --wrap true 2>err3 &&
	cat err3 &&
	grep "no default account in Slurm or in allot: submit with --account=NAME" err3
'

test_expect_success 'an association Slurm has and allot lacks: said so, with the command that adds it' '
	test_expect_code 1 runuser -u $U -- env SLURM_CONF="$SLURM_CONF" sbatch -A chem -p big -t 5 --wrap true 2>err4 &&
	cat err4 &&
	grep "allot: user $U (uid $UID3720) has an association with account chem on cluster $SLURM_CLUSTER in Slurm but not in allot" err4 &&
	grep "allot assoc add cluster=$SLURM_CLUSTER account=chem user=$U" err4
'

test_expect_success 'an account Slurm has and allot lacks: said so too' '
	sacctmgr -i add account bio cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=bio cluster=$SLURM_CLUSTER >/dev/null &&
	test_expect_code 1 sbatch -A bio -p big -t 5 --wrap true 2>err5 &&
	cat err5 &&
	grep "allot: user root (uid 0) has an association with account bio on cluster $SLURM_CLUSTER in Slurm but not in allot" err5 &&
	grep "allot account add bio" err5
'

test_expect_success 'FailMode=open: the user Slurm knows and allot does not is admitted, logged' '
	api DELETE /v1/users/$U &&
	echo FailMode=open >>"$ALLOT_CONF" &&
	restart_ctld &&
	wait_for 20 sh -c "grep -q \"FailMode=open\" \"$SLURM_DIR/log/slurmctld.log\"" &&
	job=$(runuser -u $U -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -p big -t 5 -o /dev/null --wrap true) &&
	echo "admitted $job" &&
	ctld_log | grep "fail-open: uid $UID3720 admitted: user $U (uid $UID3720) is known to Slurm"
'

test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
