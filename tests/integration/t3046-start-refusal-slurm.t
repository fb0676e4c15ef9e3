#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t3046-start-refusal-slurm.t - a job whose hold at start the allocation cannot cover yet
# (doc/slurm.md "When credit is short at start"), through the real plugins on a real Slurm
# 22.05: by default (StartRefusal=wait) a burst of jobs against a small allocation cancels
# none: the ones that could not be held are requeued and held with allot's reason, which
# squeue and scontrol show while they wait, and all of them run and settle as credit frees
# (StartRetryDelay=2 here); a job its allocation can never cover, even once other jobs end,
# is cancelled with a reason saying so; with StartRefusal=cancel a refused job is cancelled
# at once, not requeued, with the reason in scontrol and in sacct's AdminComment.
test_description='start refusal: wait for credit, or cancel'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

slurm_allot_plugins_or_skip

export ALLOTD_DIR=$PWD/allotd ALLOT_CONF=$PWD/allotd/allot.conf
SPOOL=$PWD/spool
ctld_log() { cat "$SLURM_DIR/log/slurmctld.log"; }
ctld_says() { ctld_log | grep -q "$1"; }
# partitions_since_start: job_submit/allot of the running slurmctld has its partitions.
partitions_since_start() {
	ctld_log | awk "/slurmctld version/ { n = 0 } /job_submit\/allot: .* partition\(s\) loaded/ { n++ }
		END { exit !(n > 0) }"
}
bal() { api GET "/v1/balances?account=chem" | json_get "items.0.$1"; }
# 4 minutes at billing 1.5 (1 CPU + 1 GB at 0.5/GB) = 6 SU-min per job; two fit the node
# at once (2 CPUs, 4000 MB), so two start together.
JOB="-A chem -p bank -c 1 --mem=1024 --time=4"
allotd_start_bank() {
	allotd_start Operators=root "PrEpSpoolDir=$SPOOL" PluginTimeoutMs=5000 StartRetryDelay=2 "$@"
}
restart_ctld() {
	slurm_kill_ slurmctld &&
	slurm_daemon_ slurmctld "$SLURM_SBIN/slurmctld" -D &&
	wait_for 30 slurm_ctld_up_
}
# waiting_shown JOB: squeue (REASON; NODELIST(REASON) shows it in brackets) and scontrol
# (its spaces as underscores) show allot's waiting reason for the pending JOB.
waiting_shown() {
	squeue -h -j "$1" -o "%T %r" | grep -q "^PENDING allot: waiting for credit" &&
	squeue -h -j "$1" -o "%T %R" | grep -q "^PENDING (allot: waiting for credit" &&
	scontrol show job "$1" | grep -q "Reason=allot:_waiting_for_credit,_start_retried_every_2_s:_job_$1_run_"
}
# settled_completed JOB: allotd settled a run of JOB as COMPLETED.
settled_completed() {
	api GET "/v1/jobs/$SLURM_CLUSTER/$1" | python3 -c '
import json,sys
sys.exit(0 if any(r["status"]=="settled" and r["state"]=="COMPLETED" for r in json.load(sys.stdin)["runs"]) else 1)'
}
explain() {
	{ squeue -t all -o "%i %T %r %R"; ctld_log | grep -E "prep/allot|Requeu" | tail -n 40; } 2>&1 | sed "s/^/# /" >&5
	return 1
}

test_expect_success 'cluster with both plugins, chem with 10 SU-min, StartRefusal default' '
	slurm_start_allot &&
	allotd_start_bank &&
	allot_bank_chem 10
'

test_expect_success 'a burst against a small allocation: none cancelled, the reason shown, all run' '
	test_when_finished "touch go_burst" &&
	for i in 1 2 3 4; do
		sbatch --parsable --hold $JOB --wrap "$(slurm_gated "$PWD/go_burst")" || return 1
	done >burst &&
	scontrol release "$(paste -sd, burst)" &&
	# one holds 6 of the 10 SU-min; the next cannot be held (4 left) and waits, held by allot
	wait_for 60 sh -c "for j in \$(cat burst); do squeue -h -j \$j -o \"%T %r\" | grep -q \"^PENDING allot: waiting\" && echo \$j >waiter && exit 0; done; exit 1" ||
		explain &&
	w=$(cat waiter) &&
	wait_for 10 waiting_shown $w &&
	scontrol show job $w >show && cat show &&
	grep "AdminComment=allot: waiting for credit" show &&
	test "$(bal held_sumin)" = 6 &&
	api GET "/v1/failures?account=chem" | grep -q "\"job_id\": *$w" &&
	touch go_burst &&
	for j in $(cat burst); do
		slurm_wait_job $j COMPLETED 120 || { explain; return 1; }
	done &&
	for j in $(cat burst); do
		wait_for 30 settled_completed $j || return 1
	done &&
	! sacct -n -X -P -j "$(paste -sd, burst)" -o State | grep CANCELLED &&
	test "$(bal held_sumin)" = 0 &&
	# each ran a second or two at most (1 SU-min), or none at all once the gate was open
	test "$(bal used_sumin)" -le 4
'

test_expect_success 'a job its allocation can never cover, once others end, is cancelled saying so' '
	test_when_finished "touch go_x" &&
	# 6 left (an adjustment takes away what the burst did not use): X holds them all; Y
	# waits for X (6 available + held in all), but X uses 1.
	avail=$(bal available_sumin) && id=$(json_get id <alloc) &&
	if test "$avail" -gt 6; then
		api POST /v1/allocations/$id/credit "{\"kind\":\"adjustment\",\"amount_sumin\":$((6 - avail)),\"comment\":\"t3046\"}" || return 1
	fi &&
	test "$(bal available_sumin)" = 6 &&
	# Both are admitted at sbatch while the 6 are free (admission holds nothing).
	x=$(sbatch --parsable --hold $JOB --wrap "$(slurm_gated "$PWD/go_x")") &&
	y=$(sbatch --parsable --hold $JOB --wrap true) &&
	scontrol release $x &&
	slurm_wait_job $x RUNNING 60 &&
	scontrol release $y &&
	wait_for 60 waiting_shown $y || explain &&
	touch go_x &&
	slurm_wait_job $x COMPLETED 60 &&
	slurm_wait_job $y CANCELLED 60 &&
	scontrol show job $y | grep "Reason=allot:_cancelled,_its_allocation_cannot_cover_it_even_when_other_jobs_end" &&
	test "$(bal held_sumin)" = 0
'

test_expect_success 'StartRefusal=cancel: a refused job is cancelled at once, reason in scontrol and sacct' '
	test_when_finished "touch go_c" &&
	allotd_stop &&
	allotd_start_bank StartRefusal=cancel &&
	restart_ctld &&
	wait_for 30 ctld_says "StartRefusal=cancel" &&
	# job_submit/allot admits nothing before the restarted slurmctld gave it its partitions
	wait_for 30 partitions_since_start &&
	avail=$(bal available_sumin) && echo "available $avail" &&
	# 3 SU-min each (2 minutes at 1.5) against the 5 left: the second start finds 2
	a=$(sbatch --parsable --hold -A chem -p bank -c 1 --mem=1024 --time=2 --wrap "$(slurm_gated "$PWD/go_c")") &&
	b=$(sbatch --parsable --hold -A chem -p bank -c 1 --mem=1024 --time=2 --wrap true) &&
	scontrol release $a,$b &&
	wait_for 60 sh -c "squeue -h -t all -j $a,$b -o %T | grep -q CANCELLED" || explain &&
	squeue -h -t all -j $a,$b -o "%i %T" >states && cat states &&
	test "$(grep -c CANCELLED states)" = 1 &&
	loser=$(awk "/CANCELLED/{print \$1}" states) &&
	scontrol show job $loser | grep "Reason=allot:_cancelled_at_start_(StartRefusal=cancel)" &&
	test "$(scontrol show job $loser | sed -n "s/.*Restarts=\([0-9]*\).*/\1/p")" = 0 &&
	wait_for 30 sh -c "sacct -n -X -P -j $loser -o AdminComment | grep -q \"allot: cancelled at start\"" &&
	touch go_c &&
	winner=$(awk "!/CANCELLED/{print \$1}" states) &&
	slurm_wait_job $winner COMPLETED 60
'

test_expect_success 'stop' '
	slurm_stop &&
	allotd_stop
'

test_done
