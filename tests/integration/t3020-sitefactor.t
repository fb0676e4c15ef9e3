#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3020-sitefactor.t - the site factor push on a real Slurm 22.05 (priority/multifactor):
# allotd serves HADM's per-allocation factor (power rule) at /v1/sitefactors, the formula is
# checked independently here, and allot-agent --sitefactor-every sets it on pending jobs
# (the node is kept busy), visible as sprio's SITE column and equal to allot's value; a
# change in the books (more usage) is pushed again.
test_description='allot site factor pushed to pending Slurm jobs'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

AGENT=$SLURM_AGENT
test -x "$ALLOTD_BIN" && test -x "$AGENT" || { skip_all="allotd or allot-agent not built"; test_done; }
export ALLOTD_DIR=$PWD/allotd

# sf ACCOUNT: allot's Slurm site factor for ACCOUNT on partition debug.
sf() {
	api GET "/v1/sitefactors?cluster=$SLURM_CLUSTER" | python3 -c '
import json,sys
print([j["site_factor"] for j in json.load(sys.stdin)["jobs"] if j["account"]==sys.argv[1] and j["partition"]=="debug"][0])' "$1"
}
# site JOB: the SITE column of sprio -l for JOB.
site() { sprio -h -j "$1" -o "%S" | tr -d " "; }
site_is() { test "$(site "$1")" = "$2"; }
settle_fake() { # settle_fake JOBID ACCOUNT ELAPSED_S: a finished run never held (billing 1)
	now=$(date +%s) &&
	api POST /v1/jobs/settle "{\"cluster\":\"$SLURM_CLUSTER\",\"job_id\":$1,\"run\":0,\"start\":$((now-$3)),\"end\":$now,\"elapsed_s\":$3,\"state\":\"COMPLETED\",\"billing\":1,\"user\":\"root\",\"account\":\"$2\",\"partition\":\"debug\",\"qos\":\"normal\",\"time_limit_s\":$3}" >/dev/null
}

test_expect_success 'bad site factor parameters are refused at load, naming the key' '
	printf "ListenAddr=127.0.0.1:1\nSiteFactorX0c=2\n" >bad.conf &&
	test_expect_code 2 "$ALLOTD_BIN" --config bad.conf --check-config 2>err &&
	grep "SiteFactorX0c: .2. is not a number in \[0, 1\]" err &&
	printf "ListenAddr=127.0.0.1:1\nSiteFactorRule=sigmoid\nSiteFactorLc=-3.5\n" >ok.conf &&
	"$ALLOTD_BIN" --config ok.conf --check-config
'

test_expect_success 'Slurm (multifactor), allotd with chem (nearly used, ends soon) and phys' '
	slurm_start &&
	for a in chem phys; do sacctmgr -i add account $a cluster=$SLURM_CLUSTER >/dev/null || return 1; done &&
	sacctmgr -i add user root account=chem,phys cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start Operators=root SiteFactorMax=10000 SiteFactorRule=power SiteFactorNc=1 SiteFactorNt=2 &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"default_account\":\"chem\"}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"phys\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"debug\",\"resource\":\"cpu\"}" &&
	end_soon=$(date -u -d "+30 days" +%Y-%m-%d) &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"$end_soon\",\"amount_sumin\":100}" &&
	api POST /v1/allocations "{\"account\":\"phys\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":100000}" &&
	settle_fake 900001 chem 4800
'

test_expect_success '/v1/sitefactors: power rule f_c^1 x f_t^2 scaled to 10000, checked here' '
	api GET "/v1/sitefactors?cluster=$SLURM_CLUSTER" >sf.json &&
	python3 - sf.json <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["enabled"] and d["rule"] == "power" and d["max"] == 10000, d
	al = {a["account"]: a for a in d["allocations"]}
	now = d["time"]
	maxdt = max(a["end"] - now for a in al.values())
	mindt = min(a["end"] - now for a in al.values())
	for a in al.values():
	    fc = max(0.0, min(1.0, 1 - (a["used_sumin"] + a["held_sumin"]) / a["granted_sumin"]))
	    ft = max(0.0, min(1.0, 1 - ((a["end"] - now) - mindt) / maxdt))
	    want = round(fc ** 1 * ft ** 2 * 10000)
	    assert abs(a["f_credit"] - fc) < 1e-9 and abs(a["f_temporal"] - ft) < 1e-9, (a, fc, ft)
	    assert a["site_factor"] == want, (a, want)
	assert al["chem"]["used_sumin"] == 80 and al["chem"]["site_factor"] > 0, al["chem"]
	# chem ends first: f_t = 1.  phys ends last, in 2100: f_t = 30 days / ~74 years,
	# squared and scaled to 10000 it rounds to 0.
	assert al["chem"]["f_temporal"] == 1.0, al["chem"]
	assert 0 < al["phys"]["f_temporal"] < 0.01 and al["phys"]["site_factor"] == 0, al["phys"]
	jobs = {(j["account"], j["partition"]): j["site_factor"] for j in d["jobs"]}
	assert jobs[("chem", "debug")] == al["chem"]["site_factor"], jobs
	print("chem", al["chem"]["site_factor"], "phys", al["phys"]["site_factor"])
	PY
'

test_expect_success 'pending jobs get allot'"'"'s factor from the agent, shown by sprio -l (SITE)' '
	busy=$(sbatch --parsable -A phys -p debug -c $SLURM_NODE_CPUS --mem=100 --time=10 --wrap "sleep 300") &&
	slurm_wait_job $busy RUNNING 60 &&
	pc=$(sbatch --parsable -A chem -p debug -c 1 --mem=100 --time=5 --wrap true) &&
	pp=$(sbatch --parsable -A phys -p debug -c 1 --mem=100 --time=5 --wrap true) &&
	slurm_wait_job $pc PENDING 10 && echo $pc $pp >pending &&
	{ ALLOT_MUNGE_SOCKET=$MUNGE_SOCKET timeout 120 "$AGENT" --url "$ALLOTD_URL" --cluster "$SLURM_CLUSTER" --wait 1 \
		--reconcile-every 0 --sitefactor-every 1 >agent.out 2>agent.log </dev/null & } &&
	echo $! >agent.pid &&
	want=$(sf chem) && echo "allot chem=$want" &&
	# One scontrol update per job: the second job may get its factor after the first.
	wait_for 30 site_is $pc $want &&
	wait_for 30 site_is $pp "$(sf phys)" &&
	# Every pending job, not -j a,b: 24.11.5 refuses a list there ("Invalid job id").  SITE
	# by its header: 24.11 added ACCOUNT before it.
	sprio -l | tee sprio.out &&
	col=$(head -1 sprio.out | awk "{for (i = 1; i <= NF; i++) if (\$i == \"SITE\") print i}") &&
	test -n "$col" &&
	test "$(awk -v j=$pc -v c=$col "\$1 == j {print \$c}" sprio.out)" = "$want" &&
	scontrol show job $pc | grep -q "JobState=PENDING"
'

test_expect_success 'more usage lowers chem'"'"'s factor; the agent pushes the new value' '
	read pc pp <pending &&
	old=$(sf chem) &&
	settle_fake 900002 chem 600 &&
	new=$(sf chem) && echo "chem $old -> $new" &&
	test "$new" -lt "$old" &&
	wait_for 30 site_is $pc $new &&
	grep "site factor: .* updated" agent.log
'

test_expect_success 'stop' '
	kill $(cat agent.pid) && wait $(cat agent.pid);
	allotd_stop && slurm_stop
'
test_done
