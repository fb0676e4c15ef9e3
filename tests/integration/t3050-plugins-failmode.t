#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3050-plugins-failmode.t - what prep/allot and job_submit/allot charge and decide when
# allotd is down or hung, and the elapsed time they settle, on a real Slurm 22.05:
# - a job with a slow PrologSlurmctld, and a suspended and resumed one: allot's elapsed
#   equals sacct's ElapsedRaw (22.05 counts configuring time in tot_sus_time);
# - FailMode=closed, allotd stopped: the job cancelled at start is recorded void when
#   allotd returns, and neither the agent's sacct reconciliation nor a later settle
#   charges it (its ledger stays empty);
# - allotd hung (SIGSTOP): five concurrent sbatch each cost at most about one
#   PluginTimeoutMs (the circuit breaker), FailMode refuses them, and after SIGCONT the
#   breaker closes, its probe having asked GET /readyz first, and jobs are admitted again;
# - FailMode=open, allotd stopped: the run is charged exactly once, on sacct's elapsed.
test_description='allot plugins: fail modes, void runs, circuit breaker, elapsed time'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip
AGENT=$SLURM_AGENT
test -x "$AGENT" || { skip_all="allot-agent not built"; test_done; }

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
SPOOL=$PWD/spool
TIMEOUT_MS=2000
# slurm.conf cannot name a path with spaces (the trash directory has one): the prolog and
# its switch live in a directory of their own, removed at the end.
PROLOG_DIR=$(mktemp -d /tmp/allot-t3050.XXXXXX) || exit 1
SLOW=$PROLOG_DIR/slow
ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }
# The plugins' requests are bounded by 2 s here: small enough for the hung-allotd case to
# be measured, and an ASan allotd on a loaded host still answers well within it.
allotd_start_bank() {
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=$TIMEOUT_MS \
		PluginBreakerMs=3000 PrEpMinThreads=1 PrEpMaxThreads=4 "$@"
}
restart_ctld() {
	slurm_kill_ slurmctld &&
	slurm_daemon_ slurmctld "$SLURM_SBIN/slurmctld" -D &&
	wait_for 30 slurm_ctld_up_
}
agent() {
	run_bounded 120 "$AGENT" --url "$ALLOTD_URL" --cluster "$SLURM_CLUSTER" \
		--once --wait 0 --reconcile-every 1 --reconcile-lag 0 --reconcile-lookback 3600 "$@"
}
# ledger_count JOB [KIND]: the job's ledger entries (of that kind).
ledger_count() {
	api GET "/v1/ledger?cluster=$SLURM_CLUSTER&job=$1" | python3 -c '
import json,sys
k = sys.argv[1] if len(sys.argv) > 1 else None
print(sum(1 for e in json.load(sys.stdin)["items"] if k is None or e["kind"] == k))' ${2:+"$2"}
}
sacct_final() {
	sacct -n -X -P -j "$1" -o State | grep -qE "^(COMPLETED|CANCELLED|FAILED|TIMEOUT)"
}
# elapsed_matches JOB: allot's elapsed_s of run 0 equals sacct's ElapsedRaw.
elapsed_matches() {
	want=$(sacct -n -X -P -j "$1" -o ElapsedRaw) &&
	got=$(api GET "/v1/jobs/$SLURM_CLUSTER/$1" | json_get runs.0.elapsed_s) &&
	echo "job $1: sacct ElapsedRaw=$want allot elapsed_s=$got" &&
	test -n "$want" && test "$got" = "$want"
}
# agent_skips_void JOB: one reconcile pass; it says it left JOB unpaid (log in agent.log,
# shown in the TAP stream when it does not).
agent_skips_void() {
	run_bounded 120 "$AGENT" --url "$ALLOTD_URL" --cluster "$SLURM_CLUSTER" --once --wait 0 \
		--reconcile-every 1 --reconcile-lag 0 --reconcile-from $(($(date +%s) - 3600)) 2>agent.log
	grep -q "job $1 run 0: not charged: cancelled by allot before start" agent.log ||
		{ sed "s/^/# /" agent.log >&5; return 1; }
}
run_settled() {
	test "$(api GET "/v1/jobs/$SLURM_CLUSTER/$1" | json_get runs.0.status)" = settled
}

test_expect_success 'cluster with both plugins and a PrologSlurmctld that can be slow' '
	printf "#!/bin/sh\n[ -e \"%s\" ] && sleep 3\nexit 0\n" "$SLOW" >"$PROLOG_DIR/prolog.sh" &&
	chmod +x "$PROLOG_DIR/prolog.sh" &&
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PrologSlurmctld=$PROLOG_DIR/prolog.sh
	PartitionName=bank Nodes=ALL MaxTime=60 DefaultTime=5 DefMemPerCPU=1024 State=UP
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start_bank &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"bank\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":10000}" >alloc &&
	wait_for 20 sh -c "grep -q \"job_submit/allot: .* partition(s) loaded\" \"$SLURM_DIR/log/slurmctld.log\""
'

test_expect_success 'slow prolog: the settled elapsed is sacct'"'"'s ElapsedRaw' '
	touch "$SLOW" &&
	job=$(sbatch --parsable -A chem -p bank -c 1 --time=5 --wrap "sleep 2") &&
	slurm_wait_job $job COMPLETED 90 &&
	wait_for 30 run_settled $job &&
	wait_for 30 sacct_final $job &&
	ctld_log | grep "prep/allot: JobId=$job run=0 settled COMPLETED" &&
	# the configuring time is part of ElapsedRaw: 2 s of sleep plus a 3 s prolog
	test "$(sacct -n -X -P -j $job -o ElapsedRaw)" -ge 5 &&
	elapsed_matches $job
'

test_expect_success 'suspended and resumed: the settled elapsed is sacct'"'"'s ElapsedRaw' '
	job=$(sbatch --parsable -A chem -p bank -c 1 --time=5 --wrap "sleep 6") &&
	slurm_wait_job $job RUNNING 90 &&
	sleep 1 && scontrol suspend $job &&
	slurm_wait_job $job SUSPENDED 30 && sleep 4 &&
	scontrol resume $job &&
	slurm_wait_job $job COMPLETED 90 &&
	wait_for 30 run_settled $job &&
	wait_for 30 sacct_final $job &&
	sacct -n -X -P -j $job -o Start,End,ElapsedRaw &&
	elapsed_matches $job &&
	rm -f "$SLOW"
'

test_expect_success 'FailMode=closed, allotd stopped at start: cancelled, recorded void, never charged' '
	job=$(sbatch --parsable --hold -A chem -p bank -c 1 --time=5 --wrap "sleep 1") &&
	echo $job >voidjob &&
	allotd_stop &&
	scontrol release $job &&
	wait_for 60 grep -q "fail-closed: JobId=$job run=0 cancelled" "$SLURM_DIR/log/slurmctld.log" &&
	slurm_wait_job $job CANCELLED 60 &&
	wait_for 30 sacct_final $job &&
	allotd_start_bank &&
	wait_for 30 grep -q "JobId=$job run=0 recorded in allotd as cancelled before start" "$SLURM_DIR/log/slurmctld.log" &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$job" >jobrec && cat jobrec &&
	test "$(json_get runs.0.status <jobrec)" = released &&
	test "$(json_get runs.0.settle_source <jobrec)" = void &&
	test "$(json_get runs.0.charge_sumin <jobrec)" = 0 &&
	api GET "/v1/failures?account=chem" | grep -q "cancelled by allot before start"
'

test_expect_success 'the agent'"'"'s sacct reconciliation and a later settle charge the void run nothing' '
	job=$(cat voidjob) &&
	# Replayed from an hour back until a window holds the job (slurmdbd may lag): a pass
	# that charged it would show in the ledger, checked below.
	wait_for 30 agent_skips_void $job &&
	api POST /v1/jobs/settle "{\"cluster\":\"$SLURM_CLUSTER\",\"job_id\":$job,\"run\":0,\"elapsed_s\":2,\"state\":\"CANCELLED\",\"source\":\"api\",\"user\":\"root\",\"account\":\"chem\",\"partition\":\"bank\",\"billing\":1}" >out &&
	{ sed "s/^/# /" out >&5; :; } &&
	test "$(json_get message <out)" = "not charged: cancelled by allot before start" &&
	test "$(json_get replay <out)" = true &&
	test "$(ledger_count $job)" = 0 &&
	api GET "/v1/jobs/$SLURM_CLUSTER/$job" >jobrec &&
	test "$(json_get runs.0.charge_sumin <jobrec)" = 0
'

# submit_timed I: one sbatch, its exit code and its wall time (ms) into sb.I.
submit_timed() {
	local t0 t1 rc
	t0=$(date +%s%N)
	sbatch --parsable -A chem -p bank -c 1 --time=5 --wrap true >sb.$1.out 2>sb.$1.err
	rc=$?
	t1=$(date +%s%N)
	echo "$rc $(( (t1 - t0) / 1000000 ))" >sb.$1
}
admitted_again() {
	sbatch --parsable -A chem -p bank -c 1 --time=5 --wrap true >admitted 2>/dev/null
}
test_expect_success 'allotd hung: five concurrent sbatch each cost at most one timeout, FailMode refuses them' '
	kill -STOP $ALLOTD_PID &&
	pids= &&
	for i in 1 2 3 4 5; do submit_timed $i & pids="$pids $!"; done &&
	# only these: a bare wait would also wait for allotd and Slurm, started in background
	for p in $pids; do wait $p; done &&
	kill -CONT $ALLOTD_PID &&
	cat sb.1 sb.2 sb.3 sb.4 sb.5 &&
	for i in 1 2 3 4 5; do
		read rc ms <sb.$i &&
		test "$rc" = 1 &&
		grep -q "allot: the allocation bank cannot be reached" sb.$i.err &&
		# no submission took more than the timeout + 1 s ...
		test "$ms" -le $((TIMEOUT_MS + 1000)) || return 1
	done &&
	# ... and they did not queue one behind another (that is 5 timeouts for the last)
	slowest=$(cat sb.? | awk "{print \$2}" | sort -n | tail -n 1) &&
	test "$slowest" -lt $((2 * TIMEOUT_MS)) &&
	test "$(ctld_log | grep -c "job_submit/allot: circuit breaker open")" = 1
'

test_expect_success 'after SIGCONT the breaker closes and jobs are admitted again' '
	wait_for 30 admitted_again &&
	job=$(cat admitted) &&
	slurm_wait_job $job COMPLETED 90 &&
	wait_for 30 run_settled $job &&
	ctld_log | grep "job_submit/allot: circuit breaker closed: allotd answers again after" &&
	# the probe asked readiness before a job'"'"'s request went (doc/slurm.md "A hung allotd")
	curl -sf "$ALLOTD_URL/metrics" >metrics &&
	grep "allot_requests_total{route=\"GET /readyz\",status=\"200\"}" metrics
'

test_expect_success 'FailMode=open, allotd stopped: the run is charged exactly once, on sacct'"'"'s elapsed' '
	allotd_stop &&
	allotd_start_bank FailMode=open && allotd_stop &&
	restart_ctld &&
	touch "$SLOW" &&
	job=$(sbatch --parsable -A chem -p bank -c 1 --time=5 --wrap "sleep 2") &&
	slurm_wait_job $job COMPLETED 90 &&
	ctld_log | grep "prep/allot: fail-open: JobId=$job" &&
	wait_for 30 sacct_final $job &&
	allotd_start_bank FailMode=open &&
	wait_for 60 run_settled $job &&
	agent 2>agent2.log; cat agent2.log &&
	test "$(ledger_count $job debit)" = 1 &&
	test "$(ledger_count $job hold)" = 0 &&
	elapsed_matches $job &&
	rm -f "$SLOW"
'

test_expect_success 'stop' '
	allotd_stop && slurm_stop && rm -rf "$PROLOG_DIR"
'
test_done
