#!/bin/bash
# t3511-step-timeout-slurm.t - allot-step's timeout verdict in a real Slurm 22.05 allocation
# (tests/sharness.d/30-slurm.sh).  A step over its one-minute --time-limit must be reported
# as timeout with return code 152, Slurm's own accounting agreeing (TIMEOUT).  Takes 60-95 s:
# Slurm's step limits are whole minutes, and slurmctld ends a step over its limit only at its
# periodic time-limit check (about every 30 s).  Apart from t3510, which runs alone.
test_description='allot-step: a step over its time limit in a real Slurm allocation'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

test_expect_success 'cluster with accounting comes up' '
	slurm_start
'

test_expect_success 'a batch job runs a monitored step over its time limit' '
	cat >job.sh <<-EOF &&
	#!/bin/bash
	"$STEP" run $STEP_OPTS --name tmo --time-limit 1 --output "$PWD/tmo.json" \
		-- "$PROG" --sleep 600
	echo "tmo=\$?"
	EOF
	slurm_batch job.sh "$PWD/job.out" -t 10 --mem=1000M
'

test_expect_success 'step over its time is reported as timeout with exit 152' '
	step_verdict tmo timeout 152 &&
	jq -e ".result.timeout == true and .result.oom == false and .time_limit_minutes == 1 and
	       .slurm_stats.state == \"TIMEOUT\"" tmo.json
'

test_expect_success 'cluster stops' '
	slurm_stop
'

test_done
