#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# slurm_bench.sh - cost of allot's Slurm plugins, measured on a real single-node Slurm 22.05:
# sbatch submissions per second without and with job_submit/allot + prep/allot (allotd on
# the same machine, MUNGE auth), in the same run; and the time from a job's end (prep/allot's
# epilog) to allotd's acknowledged settle, from slurmctld's millisecond log timestamps.
# Prints numbers, asserts nothing.  Usage (from a build tree):
#   ALLOT_BUILD_DIR=build ALLOT_SRC_DIR=. bash bench/slurm_bench.sh [-v]   (N=$BENCH_JOBS, 100)
# BENCH_ORDER=plugins-first runs the phase with the plugins first (default plain-first).
# BENCH_HOLD_MODE=submit runs allotd (and so the plugins) with HoldMode=submit.
# BENCH_PEER_AUTH=no runs allotd and the plugins with SocketPeerAuth=no (a MUNGE credential
# per plugin request, as before that key existed); default: the key's default (yes).
# Also prints slurmctld's own time per submit RPC (its log's usec=), which excludes sbatch's
# process start, so the plugins' share of it is visible apart from sbatch's noise.
# Then, with allotd stopped by SIGSTOP (hung: it accepts connections and never answers),
# BENCH_HUNG_N (5) sbatch calls at once, each one's wall time: the plugins' circuit breaker
# (PluginBreakerMs) should hold each to about one PluginTimeoutMs, not one per queued call.
# BENCH_TIMEOUT_MS (1000) and BENCH_BREAKER_MS (5000) set those two keys for the phase.
# Jobs are submitted held (sbatch -H), so no prolog, epilog or settle of a job that started
# early shares the cores with the submissions being timed; after the loop the plugins' jobs
# are released (their settles give the latency) and the others cancelled.  Released jobs
# run about one a second on the test node.  slurmctld's own submit time still drifts from
# run to run (312-1,117 us without plugins on 2026-11-27, 40249da), and the phase run second is
# usually the slower: compare runs of both orders (bench/results/slurm.md).
test_description='allot Slurm plugin benchmark'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
N=${BENCH_JOBS:-100}
plugins=$ALLOT_BUILD_DIR/plugins
export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
. "$ALLOT_SRC_DIR/bench/host_conditions.sh"
host_conditions "$ALLOT_BUILD_DIR" "$PWD" | tee -a results

# submit_rate LABEL: N sbatch calls back to back, each job held; prints jobs/s.
submit_rate() {
	local t0 t1
	t0=$(date +%s%N)
	for i in $(seq "$N"); do
		sbatch -Q -H -A chem -p bank -c 1 --mem=100 --time=5 --wrap true >/dev/null || return 1
	done
	t1=$(date +%s%N)
	python3 -c "import sys; n,ns=int(sys.argv[1]),int(sys.argv[2]); print('%s: %d sbatch in %.3f s = %.1f jobs/s' % (sys.argv[3], n, ns/1e9, n/(ns/1e9)))" "$N" $((t1 - t0)) "$1" | tee -a results
}

# rpc_usec LABEL: slurmctld's own time per submit RPC (job_submit plugins included, sbatch's
# process start and MUNGE encode excluded), from "_slurm_rpc_submit_batch_job: ... usec=N".
rpc_usec() {
	python3 - "$SLURM_DIR/log/slurmctld.log" "$1" <<-\PY | tee -a results
	import re, sys
	u = sorted(int(m[1]) for m in (re.search(r"_slurm_rpc_submit_batch_job: .* usec=(\d+)", l) for l in open(sys.argv[1])) if m)
	if u:
	    print("%s: slurmctld submit RPC n=%d median=%d us p90=%d us mean=%.0f us" % (sys.argv[2], len(u), u[len(u)//2], u[int(len(u)*0.9)], sum(u)/len(u)))
	PY
}

# hung_latency: BENCH_HUNG_N concurrent sbatch against a SIGSTOPped allotd; prints each
# call's wall time (ms, sorted).  FailMode (closed by default) refuses them: exit codes are
# not checked, the time is what is measured.
hung_latency() {
	local n=${BENCH_HUNG_N:-5} pids= i p
	kill -STOP "$ALLOTD_PID" || return 1
	for i in $(seq "$n"); do
		(
			t0=$(date +%s%N)
			sbatch -Q -H -A chem -p bank -c 1 --mem=100 --time=5 --wrap true >/dev/null 2>&1
			echo $((($(date +%s%N) - t0) / 1000000)) >"hung.$i"
		) &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p"; done
	kill -CONT "$ALLOTD_PID" &&
	echo "allotd hung (SIGSTOP): $n concurrent sbatch, ms each: $(cat hung.* | sort -n | paste -sd' ')" \
		"(PluginTimeoutMs=$(sed -n 's/^PluginTimeoutMs=//p' "$ALLOT_CONF"), PluginBreakerMs=$(sed -n 's/^PluginBreakerMs=//p' "$ALLOT_CONF"))" |
		tee -a results
}

# release_all: let the held jobs run (the plugins' holds and settles happen now).
release_all() { scontrol release "$(squeue -h -t pending -o %i | paste -sd, -)"; }
wait_idle() { wait_for 300 sh -c 'test -z "$(squeue -h -t pending,running,configuring,completing)"'; }

# The two phases, in the order BENCH_ORDER says: plain-first (default) or plugins-first, so
# that a drift over the run's minutes can be told from the plugins' cost.
plain_phase='
	echo "PartitionName=bank Nodes=ALL MaxTime=60 DefaultTime=5 TRESBillingWeights=CPU=1.0,Mem=0.5G State=UP" >plain.conf &&
	slurm_start --conf-extra plain.conf &&
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	submit_rate "no plugins  " && rpc_usec "no plugins  " && scancel -A chem && wait_idle &&
	slurm_stop
'
plugins_phase='
	cat >extra.conf <<-EOF &&
	JobSubmitPlugins=allot
	PrEpPlugins=prep/script,prep/allot
	PartitionName=bank Nodes=ALL MaxTime=60 DefaultTime=5 TRESBillingWeights=CPU=1.0,Mem=0.5G State=UP
	EOF
	slurm_start --plugin-dir "$plugins" --conf-extra extra.conf &&
	sacctmgr -i add account chem cluster=$SLURM_CLUSTER >/dev/null &&
	sacctmgr -i add user root account=chem cluster=$SLURM_CLUSTER >/dev/null &&
	allotd_start Operators=root "PrEpSpoolDir=$PWD/spool" ${BENCH_HOLD_MODE:+HoldMode=$BENCH_HOLD_MODE} \
		${BENCH_PEER_AUTH:+SocketPeerAuth=$BENCH_PEER_AUTH} PluginTimeoutMs=${BENCH_TIMEOUT_MS:-1000} \
		PluginBreakerMs=${BENCH_BREAKER_MS:-5000} &&
	api POST /v1/clusters "{\"name\":\"$SLURM_CLUSTER\"}" >/dev/null &&
	api POST /v1/accounts "{\"name\":\"chem\"}" >/dev/null &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" >/dev/null &&
	api POST /v1/assocs "{\"cluster\":\"$SLURM_CLUSTER\",\"account\":\"chem\",\"user\":\"root\"}" >/dev/null &&
	api POST /v1/partitions "{\"cluster\":\"$SLURM_CLUSTER\",\"name\":\"bank\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0,Mem=0.5G\"}" >/dev/null &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":100000000}" >/dev/null &&
	sleep 1.5 &&
	submit_rate "with plugins" && rpc_usec "with plugins" && release_all && wait_idle &&
	sleep 2 &&
	python3 - "$SLURM_DIR/log/slurmctld.log" <<-PY | tee -a results &&
	import re, sys, datetime
	ep, st = {}, {}
	ts = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%f").timestamp()
	for line in open(sys.argv[1]):
	    m = re.match(r"\[([^]]+)\] prep/allot: epilog JobId=(\d+) ", line)
	    if m: ep[m[2]] = ts(m[1])
	    m = re.match(r"\[([^]]+)\] prep/allot: JobId=(\d+) run=\d+ settled ", line)
	    if m: st[m[2]] = ts(m[1])
	d = sorted((st[j] - ep[j]) * 1000 for j in ep if j in st)
	if d:
	    print("job end -> settle acknowledged: n=%d median=%.1f ms p95=%.1f ms max=%.1f ms" % (len(d), d[len(d)//2], d[int(len(d)*0.95)], d[-1]))
	else:
	    print("no settles found")
	PY
	hung_latency &&
	allotd_stop && slurm_stop
'
case ${BENCH_ORDER:-plain-first} in
plain-first)
	test_expect_success 'without plugins' "$plain_phase"
	test_expect_success 'with job_submit/allot and prep/allot' "$plugins_phase" ;;
plugins-first)
	test_expect_success 'with job_submit/allot and prep/allot' "$plugins_phase"
	test_expect_success 'without plugins' "$plain_phase" ;;
*) echo "slurm_bench: BENCH_ORDER is plain-first or plugins-first" >&2; exit 2 ;;
esac

test_expect_success 'summary' '
	cat results &&
	python3 -c "
import re
r={l[:12]: float(re.search(r\"= ([0-9.]+) jobs/s\",l).group(1)) for l in open(\"results\") if \"jobs/s\" in l}
p, w = r[\"no plugins  \"], r[\"with plugins\"]
print(\"submission cost of the plugins: %.1f%% (ratio %.3f)\" % ((p/w-1)*100, w/p))"
'
test_done
