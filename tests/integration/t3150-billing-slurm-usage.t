#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3150-billing-slurm-usage.t - fractional billing against Slurm's own counters, on a real
# Slurm 22.05 (doc/money.md "Slurm's counters"): a policy's GrpTRESMins=billing=L is pushed
# by allot-agent; two 1-CPU jobs run under TRESBillingWeights=CPU=2.5 through the plugins.
# allot charges each exactly (ceil(2.5 x elapsed / 60)); slurmctld counts the job's billing
# TRES as the truncated integer 2 for every second it ran (scontrol show assoc_mgr's
# GrpTRESMins used, sshare's GrpTRESRaw) and the exact 2.5 only in RawUsage.  Checked here
# against sacct's ElapsedRaw: Slurm's numbers follow that rule exactly, allot's used is at
# least Slurm's GrpTRESMins count (allot is the stricter side: it pauses at L first) and at
# most the documented bound above it, and a job allot admits with what is left is not held
# by Slurm's limit.  A refund raises the pushed limit by its amount: Slurm keeps the usage
# it counted, and would otherwise have less left than allot.
test_description='fractional billing: allot ledger vs slurmctld usage counters'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip
AGENT=$SLURM_AGENT
test -x "$AGENT" || { skip_all="allot-agent not built"; test_done; }

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
debits() {
	test "$(api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1" | python3 -c '
import json,sys
print(sum(1 for e in json.load(sys.stdin)["items"] if e["kind"]=="debit"))')" -ge 1
}
agent_once() {
	ALLOT_MUNGE_SOCKET=$MUNGE_SOCKET timeout 60 "$AGENT" --url "$ALLOTD_URL" \
		--cluster "$SLURM_CLUSTER" --once --wait 0 --reconcile-every 0 2>>agent.log
}
# The account's own association line of slurmctld's cache: GrpTRESMins=...,billing=L(USED),...
# (USED = the billing TRES-seconds it counts, / 60, floored).
assoc_used() {
	scontrol -o show assoc_mgr accounts=chem flags=assoc | grep "UserName= " |
		sed -n "s/.*GrpTRESMins=\\([^ ]*\\).*/\\1/p" | tr , "\n" | sed -n "s/^billing=//p"
}
assoc_used_is() { test "$(assoc_used)" = "$1"; }
assoc_limit_is() { assoc_used | grep -q "^$1("; }
# The account row of sshare has usage (job end applies it; the row may lag a moment).
raw_usage_seen() {
	sshare -A chem -n -P -o Account,User,RawUsage | awk -F"|" '$2 == "" && $3 > 0' | grep -q .
}

test_expect_success 'Slurm bills partition big at CPU=2.5, no decay; a policy with base 1h' '
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PriorityDecayHalfLife=0
	PriorityUsageResetPeriod=QUARTERLY
	PartitionName=big Nodes=ALL MaxTime=30 DefaultTime=5 TRESBillingWeights=CPU=2.5 State=UP
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start Operators=root "PrEpSpoolDir=$PWD/spool" PluginTimeoutMs=5000 &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"big\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=2.5\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"$SLURM_CLUSTER\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\"}" >out &&
	json_get id <out >alloc &&
	api POST /v1/policies "{\"alloc\":$(cat alloc),\"cluster\":\"$SLURM_CLUSTER\",\"period\":\"month\",\"base_su\":\"1h\"}" >out &&
	api POST /v1/policies/tick "{}" >out && test "$(json_get rolled <out)" = 1 &&
	wait_for 20 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\""
'
test_expect_success 'the agent pushes GrpTRESMins=billing=72 (60 x 1.2) and resets RawUsage' '
	agent_once && cat agent.log &&
	api GET "/v1/commands?policy=1" >cmds &&
	python3 -c "import json; c=json.load(open(\"cmds\"))[\"commands\"]; assert c and all(x[\"state\"]==\"confirmed\" for x in c), c" &&
	sacctmgr -P -n show assoc where account=chem cluster=$SLURM_CLUSTER format=user,grptresmins >live &&
	grep -x "|billing=72" live &&
	wait_for 30 assoc_used_is "72(0)" ||
	{ scontrol -o show assoc_mgr accounts=chem flags=assoc; false; }
'
test_expect_success 'two 1-CPU jobs of ~40 s at billing 2.5 run and are settled' '
	j1=$(sbatch --parsable -A chem -p big -c 1 --mem=100 -t 5 --wrap "sleep 40") &&
	j2=$(sbatch --parsable -A chem -p big -c 1 --mem=100 -t 5 --wrap "sleep 40") &&
	echo $j1 $j2 >jobs &&
	slurm_wait_job $j1 COMPLETED 120 && slurm_wait_job $j2 COMPLETED 120 &&
	wait_for 30 debits $j1 && wait_for 30 debits $j2 &&
	wait_for 30 sh -c "test \$(sacct -n -X -P -j $j1,$j2 -o State | grep -cx COMPLETED) = 2"
'
test_expect_success 'Slurm counts billing 2 per second for GrpTRESMins, 2.5 in RawUsage; allot 2.5, rounded up per job' '
	read j1 j2 <jobs &&
	for j in $j1 $j2; do
		api GET "/v1/jobs/$SLURM_CLUSTER/$j" >job.$j &&
		sacct -n -X -P -j $j -o ElapsedRaw,AllocTRES >sacct.$j || return 1
	done &&
	wait_for 30 raw_usage_seen &&
	sshare -A chem -n -P -o Account,User,RawUsage,GrpTRESRaw >sshare.out && cat sshare.out &&
	assoc_used >used.out && cat used.out &&
	api GET "/v1/balances?account=chem" >bal.json &&
	python3 - $j1 $j2 <<-\PY
	import json, math, re, sys
	jobs = sys.argv[1:]
	el, charge, a_el = [], [], []
	for j in jobs:
	    e, tres = open("sacct." + j).read().strip().split("|")
	    assert "billing=2" in tres.split(","), tres      # Slurm truncates 2.5
	    el.append(int(e))
	    r = json.load(open("job." + j))["runs"][0]
	    assert r["billing_micro"] == 2500000, r
	    a_el.append(r["elapsed_s"])
	    charge.append(r["charge_sumin"])
	    assert r["charge_sumin"] == math.ceil(2.5 * r["elapsed_s"] / 60), r
	row = [l.split("|") for l in open("sshare.out").read().splitlines() if l.split("|")[1] == ""][0]
	raw = int(row[2])
	grp_raw = int(dict(x.split("=") for x in row[3].split(","))["billing"])
	lim, used = re.fullmatch(r"(\d+)\((\d+)\)", open("used.out").read().strip()).groups()
	lim, used = int(lim), int(used)
	b = json.load(open("bal.json"))["items"][0]
	allot_used = b["used_sumin"]
	slurm_mins = sum(2 * e for e in el) // 60         # what slurmctld counts against the limit
	print("sacct elapsed", el, "allot elapsed", a_el, "charges", charge)
	print("allot used", allot_used, "| Slurm GrpTRESMins used", used, "GrpTRESRaw", grp_raw,
	      "RawUsage", raw, "(%.2f min)" % (raw / 60), "| limit", lim)
	assert lim == 72
	assert allot_used == sum(charge), (allot_used, charge)
	assert used == slurm_mins and grp_raw == slurm_mins, (used, grp_raw, slurm_mins)
	assert raw == int(sum(2.5 * e for e in el)), (raw, el)
	# allot is the stricter side: it has counted at least what Slurm counts against L ...
	assert allot_used >= used, (allot_used, used)
	# ... and at most the bound of doc/money.md over it: per job the fraction of billing
	# Slurm drops (0.5 x t / 60) and allot'"'"'s round-up (< 1), plus Slurm'"'"'s final floor (< 1);
	# allot'"'"'s elapsed may differ from sacct'"'"'s by its own second or two.
	bound = sum(0.5 * max(e, a) / 60 + 1 + 2.5 * abs(e - a) / 60 for e, a in zip(el, a_el)) + 1
	assert allot_used - used <= bound, (allot_used, used, bound)
	# RawUsage (fair-share) has the exact billing: allot'"'"'s used is within the round-up of it.
	assert raw / 60 - 2.5 * sum(abs(e - a) for e, a in zip(el, a_el)) / 60 <= allot_used
	assert allot_used < raw / 60 + len(jobs) + 2.5 * sum(abs(e - a) for e, a in zip(el, a_el)) / 60
	open("numbers", "w").write("%d %d\n" % (allot_used, used))
	PY
'
test_expect_success 'a job allot admits with what is left is not held by Slurm'"'"'s limit' '
	read allot_used slurm_used <numbers &&
	# allot pauses at 72; a job that may cost up to what allot has left before the pause
	# (in billing 2.5 x minutes) must start: Slurm has at least that much left under L.
	left=$((60 - allot_used)) && mins=$((left * 2 / 5)) &&
	echo "allot left $left SU-min before 100 %: a $mins-minute job at 2.5" &&
	test $mins -ge 1 &&
	j=$(sbatch --parsable -A chem -p big -c 1 --mem=100 -t $mins --wrap "sleep 1") &&
	echo $j >job3 &&
	slurm_wait_job $j "RUNNING|COMPLETING|COMPLETED" 60 &&
	! grep -q "AssocGrpBilling" "$SLURM_DIR/log/slurmctld.log"
'
test_expect_success 'a refund raises the pushed limit by itself: Slurm keeps the usage it counted' '
	j=$(cat job3) && slurm_wait_job $j COMPLETED 60 && wait_for 30 debits $j &&
	api GET "/v1/balances?account=chem" >bal.json && used=$(json_get items.0.used_sumin <bal.json) &&
	api POST /v1/allocations/$(cat alloc)/credit "{\"kind\":\"refund\",\"amount_sumin\":$used,\"comment\":\"outage\"}" &&
	agent_once &&
	sacctmgr -P -n show assoc where account=chem cluster=$SLURM_CLUSTER format=user,grptresmins >live &&
	cat live && lim=$(sed -n "s/^|billing=//p" live) &&
	echo "refunded $used: limit $lim" && test "$lim" = $((72 + used)) &&
	wait_for 30 assoc_limit_is $lim &&
	slurm_used=$(assoc_used | sed "s/.*(\(.*\))/\1/") &&
	api GET "/v1/balances?account=chem" >bal.json && now=$(json_get items.0.used_sumin <bal.json) &&
	echo "Slurm left $((lim - slurm_used)), allot left before its pause $((72 - now))" &&
	test $((lim - slurm_used)) -ge $((72 - now))
'
test_expect_success 'stop' '
	allotd_stop && slurm_stop
'
test_done
