#!/bin/bash
# t3530-efficiency-slurm.t - `allot job efficiency` on a real Slurm 22.05 (tests/sharness.d/
# 30-slurm.sh) and a real allotd: a busy-loop job and a sleeping job give CPU efficiency
# high and near 0%; the busy job's efficiency equals the CPU time the job measured for
# itself (bash `times`) over its elapsed time -- on this shared 2-core machine a busy loop
# gets what the other tenants leave, often 60-95%, so "near 100%" is checked as "what the
# job really got"; the busy job's memory efficiency matches the 200 MiB it touched of
# its 400 MiB request; and the charge column equals the bank's ledger debit after the jobs
# are settled through the API from their sacct records (the allot plugins are not loaded
# here, so the test settles them itself as the agent would).  About a minute.
test_description='allot job efficiency from sacct, beside the bank charge'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$PROG" || { skip_all="allot-step-testprog not built"; test_done; }
allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }

# Sample memory every second, so a 15 s job has a MaxRSS.
cat >extra.conf <<'EOF2'
JobAcctGatherFrequency=task=1
EOF2

test_expect_success 'Slurm with accounting, allotd, a bank for cluster test' '
	slurm_start --conf-extra "$PWD/extra.conf" &&
	allotd_start &&
	allot cluster add "$SLURM_CLUSTER" &&
	allot user add root &&
	allot assoc add cluster="$SLURM_CLUSTER" account=root user=root &&
	allot partition add debug cluster="$SLURM_CLUSTER" resource=cpu &&
	allot alloc add root resource=cpu su=1000h start=2020-01-01 end=2040-01-01
'

test_expect_success 'a busy-loop job and a sleeping job run to completion' '
	busy=$(sbatch --parsable -n1 --mem=400M -t 5 -o /dev/null \
		--wrap "$PROG --mem 200 --busy 15; times >\"$PWD/busy.times\"") &&
	idle=$(sbatch --parsable -n1 --mem=400M -t 5 -o /dev/null --wrap "$PROG --sleep 15") &&
	echo "$busy" >busy_id && echo "$idle" >idle_id &&
	slurm_wait_job "$busy" COMPLETED 120 &&
	slurm_wait_job "$idle" COMPLETED 120
'

busy=$(cat busy_id 2>/dev/null)
idle=$(cat idle_id 2>/dev/null)

# eff_ready: slurmdbd has both jobs as COMPLETED, with CPU and memory efficiency.  It may
# lag the job end: a record still RUNNING has its elapsed counted to now and its CPU so
# far (a ci run read the busy job RUNNING, 16 s and 54.5%, then COMPLETED, 15 s and 58.1%).
eff_ready() {
	allot --json job efficiency "$busy" "$idle" 2>/dev/null >eff.json &&
		jq -e "(.items | length) == 2 and
		       all(.items[]; .state == \"COMPLETED\" and
		                     .cpu_efficiency_percent != null and
		                     .mem_efficiency_percent != null)" eff.json >/dev/null
}

# self_cpu_s: the busy job's children CPU time (user + sys) as bash `times` printed it.
self_cpu_s() {
	sed -n 2p busy.times | tr -d "s" | tr "m" " " |
		awk "{ printf \"%.3f\", \$1 * 60 + \$2 + \$3 * 60 + \$4 }"
}

test_expect_success 'CPU efficiency: what the busy job got (its own measure), ~0% for the sleeper' '
	wait_for 60 eff_ready &&
	jq . eff.json &&
	cat busy.times &&
	cpu=$(self_cpu_s) && echo "busy job measured $cpu s CPU" &&
	jq -e --argjson cpu "$cpu" ".items[] | select(.job_id == \"$busy\") |
	       (.cpu_efficiency_percent - 100 * \$cpu / .elapsed_s) as \$d |
	       \$d > -8 and \$d < 8 and .cpu_efficiency_percent >= 40 and
	       .cpu_efficiency_percent <= 105" eff.json &&
	jq -e ".items[] | select(.job_id == \"$idle\") |
	       .cpu_efficiency_percent >= 0 and .cpu_efficiency_percent < 10" eff.json &&
	jq -e ".items[] | select(.job_id == \"$busy\") |
	       .alloc_cpus == 1 and .elapsed_s >= 15" eff.json
'

test_expect_success 'memory efficiency: 200 MiB touched of 400 MiB requested' '
	jq -e ".items[] | select(.job_id == \"$busy\") |
	       .mem_req_bytes == 400*1048576 and
	       .mem_used_bytes >= 200*1048576 and .mem_used_bytes < 260*1048576 and
	       .mem_efficiency_percent >= 50 and .mem_efficiency_percent < 65" eff.json &&
	jq -e ".items[] | select(.job_id == \"$idle\") |
	       .mem_efficiency_percent >= 0 and .mem_efficiency_percent < 10" eff.json
'

test_expect_success 'before settling, the charge column is empty (the bank has no record)' '
	jq -e "all(.items[]; .charge_sumin == null and .charged == false)" eff.json
'

# settle_from_sacct JOB: what the agent does for a job whose epilog never reached allotd.
settle_from_sacct() {
	local row billing elapsed state start end
	row=$(sacct -n -P -X -j "$1" --format=ElapsedRaw,State,AllocTRES,Start,End) &&
	elapsed=$(echo "$row" | cut -d"|" -f1) &&
	state=$(echo "$row" | cut -d"|" -f2) &&
	billing=$(echo "$row" | cut -d"|" -f3 | tr , "\n" | sed -n "s/^billing=//p") &&
	start=$(date -u -d "$(echo "$row" | cut -d"|" -f4)" +%s) &&
	end=$(date -u -d "$(echo "$row" | cut -d"|" -f5)" +%s) &&
	api POST /v1/jobs/settle "{\"cluster\": \"$SLURM_CLUSTER\", \"job_id\": $1,
		\"elapsed_s\": $elapsed, \"state\": \"$state\", \"billing\": $billing,
		\"start\": $start, \"end\": $end, \"source\": \"sacct\", \"user\": \"root\",
		\"account\": \"root\", \"partition\": \"debug\", \"time_limit_s\": 300}"
}

test_expect_success 'settle both jobs from sacct through the API' '
	settle_from_sacct "$busy" >s1 && jq -e ".settled == true" s1 &&
	settle_from_sacct "$idle" >s2 && jq -e ".settled == true" s2
'

# debit JOB: the ledger's debit for the job (SU-minutes).
debit() {
	api GET "/v1/jobs/$SLURM_CLUSTER/$1" | jq "[.ledger[] | select(.kind == \"debit\") |
		.amount_sumin] | add"
}

test_expect_success 'the charge column equals the ledger debit of each job' '
	allot --json job efficiency "$busy" "$idle" >eff2.json &&
	jq . eff2.json &&
	d1=$(debit "$busy") && d2=$(debit "$idle") &&
	test "$d1" -ge 1 && test "$d2" -ge 1 &&
	jq -e ".items[] | select(.job_id == \"$busy\") | .charge_sumin == $d1 and .charged" eff2.json &&
	jq -e ".items[] | select(.job_id == \"$idle\") | .charge_sumin == $d2" eff2.json &&
	allot -P job efficiency "$busy" >p &&
	cat p &&
	head -1 p | grep -x "Cluster|JobID|User|Account|State|Elapsed|CPUs|CPUEff|MemUsed|MemReq|MemEff|Charge" &&
	test "$(sed -n 2p p | cut -d"|" -f1,2,4,5,7)" = "$SLURM_CLUSTER|$busy|root|COMPLETED|1" &&
	sed -n 2p p | cut -d"|" -f12 | grep -E "^[0-9]+h([0-9]+m)?$|^[0-9]+m$"
'

test_expect_success 'account mode: both jobs of account root since today, table form' '
	allot job efficiency account=root since=$(date -u +%Y-%m-%d) >t &&
	cat t &&
	grep "^$SLURM_CLUSTER  *$busy  *root  *root  *COMPLETED " t &&
	grep "^$SLURM_CLUSTER  *$idle  *root  *root  *COMPLETED " t
'

test_expect_success 'allotd down: efficiency still printed, charges empty, a warning' '
	allotd_stop &&
	allot --json job efficiency "$busy" >eff3.json 2>err &&
	grep "warning: no charges from allotd" err &&
	jq -e --slurpfile e eff.json ".items[0].cpu_efficiency_percent ==
	       (\$e[0].items[] | select(.job_id == \"$busy\") | .cpu_efficiency_percent) and
	       .items[0].charge_sumin == null" eff3.json
'

test_expect_success 'unknown job: not found (3); bad arguments: 2' '
	test_expect_code 3 allot job efficiency 999999 &&
	test_expect_code 2 allot job efficiency &&
	test_expect_code 2 allot job efficiency 12 account=root &&
	test_expect_code 2 allot job efficiency bogus=1
'

test_expect_success 'stop Slurm' '
	slurm_stop
'

test_done
