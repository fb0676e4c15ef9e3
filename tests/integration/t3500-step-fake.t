#!/bin/bash
# t3500-step-fake.t - allot-step against fake srun/squeue/sstat/sacct (ALLOT_SRUN ... env
# overrides): the exact srun argv, and each failure it must survive — sacct lag (empty
# for the first tries), sacct never answering, sstat failing, the step id not discoverable,
# sacct zeros — plus OOM (137) and timeout (152) reporting and the bounds on every wait.
test_description='allot-step with fake Slurm commands'
. /usr/share/sharness/sharness.sh
if [ -f "$ALLOT_SRC_DIR/tests/sharness.d/00-common.sh" ]; then
    . "$ALLOT_SRC_DIR/tests/sharness.d/00-common.sh"
fi
: "${ALLOT_BUILD_DIR:=$ALLOT_SRC_DIR/build}"
STEP="$ALLOT_BUILD_DIR/src/step/allot-step"
PROG="$ALLOT_BUILD_DIR/src/step/allot-step-testprog"
FAKE="$PWD/fake"
mkdir -p "$FAKE"

# fake srun: log argv, then run the command after the options (first word not "--...").
cat >"$FAKE/srun" <<'EOS'
#!/bin/bash
printf '%s\n' "$@" >"$FAKE_DIR/srun.args"
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do shift; done
exec "$@"
EOS
# fake squeue: "%L" gives the time left; --steps lists step 3 of job 42 under the srun's name
# unless FAKE_SQUEUE=none (never listed) or fail (exit 1).  FAKE_ARRAY=1: job 42 is task 3
# of array 40, printed "40_3.<step>" as squeue prints an array task's steps, after a step
# of that name still pending ("40_3.TDB").
cat >"$FAKE/squeue" <<'EOS'
#!/bin/bash
case " $* " in *" %L "*) echo "${FAKE_TIMELEFT:-10:00}"; exit 0;; esac
echo x >>"$FAKE_DIR/squeue.calls"
case "${FAKE_SQUEUE:-ok}" in
none) exit 0;; fail) echo "squeue: error: boom" >&2; exit 1;; esac
name=$(sed -n 's/^--job-name=//p' "$FAKE_DIR/srun.args" 2>/dev/null)
[ -n "$name" ] || exit 0
id=42
if [ "${FAKE_ARRAY:-0}" = 1 ]; then id=40_3; echo "$id.TDB|$name"; fi
echo "$id.batch|batch"; echo "$id.3|$name"
EOS
# fake sstat: AveCPU grows 1 s per call, MaxRSS 2048K; FAKE_SSTAT=fail exits 1.
cat >"$FAKE/sstat" <<'EOS'
#!/bin/bash
echo x >>"$FAKE_DIR/sstat.calls"
if [ "${FAKE_SSTAT:-ok}" = fail ]; then echo "sstat: error: no steps" >&2; exit 1; fi
n=$(wc -l <"$FAKE_DIR/sstat.calls")
printf '42.3|00:00:%02d|2048K|2048K\n' "$n"
EOS
# fake sacct: empty for the first FAKE_SACCT_EMPTY calls (slurmdbd lag), then the rows;
# FAKE_STATE, FAKE_RSS, FAKE_AVECPU, FAKE_EXIT shape the step row; FAKE_SACCT_HANG=1 hangs;
# FAKE_ARRAY=1 prints the ids as "40_3[.<step>]" (sacct's array notation); FAKE_ALLOC_STATE
# is the allocation row's state.
cat >"$FAKE/sacct" <<'EOS'
#!/bin/bash
echo x >>"$FAKE_DIR/sacct.calls"
[ "${FAKE_SACCT_HANG:-0}" = 1 ] && exec sleep 60
n=$(wc -l <"$FAKE_DIR/sacct.calls")
[ "$n" -le "${FAKE_SACCT_EMPTY:-0}" ] && exit 0
name=$(sed -n 's/^--job-name=//p' "$FAKE_DIR/srun.args")
id=42
[ "${FAKE_ARRAY:-0}" = 1 ] && id=40_3
echo "$id|job|${FAKE_ALLOC_STATE:-RUNNING}|0:0|00:01:00|||||00:00:00|00:00.100|node1"
echo "$id.batch|batch|RUNNING|0:0|00:01:00|1000K|||||00:00.050|node1"
echo "$id.2|$name|COMPLETED|0:0|00:00:10|999999K|||||00:00.050|node1"
echo "$id.3|$name|${FAKE_STATE:-COMPLETED}|${FAKE_EXIT:-0:0}|00:00:02|${FAKE_RSS-4096K}|8192K|1.50M|0.50M|${FAKE_AVECPU-00:00:01}|00:01.500|node1"
EOS
# gate FILE N: the step's command for checks that count calls: it runs until FILE has N
# lines (each fake call appends one), at most 60 s; a fixed sleep ends the step before the
# calls are made on a slow or busy machine.
cat >"$FAKE/gate" <<'EOS'
#!/bin/sh
i=0
while [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ]; do
    i=$((i + 1)); [ $i -le 1200 ] || { echo "gate: $1 never reached $2 lines" >&2; exit 1; }
    sleep 0.05
done
EOS
chmod +x "$FAKE"/*
export ALLOT_SRUN="$FAKE/srun" ALLOT_SQUEUE="$FAKE/squeue" ALLOT_SSTAT="$FAKE/sstat" \
       ALLOT_SACCT="$FAKE/sacct" FAKE_DIR="$FAKE"
FAST="--interval-ms 200 --stepid-delay-ms 50 --sacct-delay-ms 50"

reset_fake() { rm -f "$FAKE"/*.calls "$FAKE/srun.args"; }
j() { jq -r "$1" out.json; }

test_expect_success 'outside an allocation the command runs directly' '
	reset_fake &&
	(unset SLURM_JOB_ID; test_expect_code 3 "$STEP" run --output out.json -- "$PROG" --exit 3) &&
	test "$(j .mode)" = direct &&
	test "$(j .result.return_code)" = 3 &&
	test "$(j .result.status)" = failed &&
	test "$(j .slurm_stats)" = null &&
	test ! -e "$FAKE/srun.args"
'

test_expect_success 'inside an allocation: the exact srun argv' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_TIMELEFT=9:30 "$STEP" run $FAST --name wf1_j2_r1_a1 --cpus 2 \
		--mem 100M --signal TERM@30 --output out.json -- "$PROG" --sleep 0.5 &&
	printf "%s\n" --jobid=42 --ntasks=1 --exact --cpu-bind=none --job-name=wf1_j2_r1_a1 \
		--nodes=1 --cpus-per-task=2 --mem=100M --time=9 --signal=TERM@30 \
		"$PROG" --sleep 0.5 >expect &&
	test_cmp expect "$FAKE/srun.args" &&
	test "$(j .mode)" = slurm &&
	test "$(j .slurm_job_id)" = 42 &&
	test "$(j .time_limit_minutes)" = 9 &&
	test "$(j .monitor.step_id)" = 3 &&
	test "$(j .slurm_stats.slurm_step_id)" = 42.3 &&
	test "$(j .slurm_stats.max_rss_bytes)" = $((4096 * 1024)) &&
	test "$(j .slurm_stats.max_disk_read_bytes)" = $((1536 * 1024)) &&
	test "$(j .result.return_code)" = 0
'

# CPU and memory limits reach srun only when given (doc/step.md "Limits and choices").
test_expect_success 'inside an allocation: no --cpus-per-task, --mem or --signal unless given' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_TIMELEFT=9:30 "$STEP" run $FAST --name plain --output out.json \
		-- "$PROG" --sleep 0.1 &&
	printf "%s\n" --jobid=42 --ntasks=1 --exact --cpu-bind=none --job-name=plain --nodes=1 \
		--time=9 "$PROG" --sleep 0.1 >expect &&
	test_cmp expect "$FAKE/srun.args"
'

# Outside Slurm, --limit-mem is RLIMIT_AS: an allocation past it fails inside the command,
# which exits as it chooses (the test program: 3); nothing kills it, so it is no OOM verdict.
# A sanitizer build's programs reserve terabytes of address space and cannot start under it.
grep -q '^ALLOT_SANITIZE:BOOL=ON' "$ALLOT_BUILD_DIR/CMakeCache.txt" 2>/dev/null ||
	test_set_prereq NOSAN
test_expect_success NOSAN 'outside Slurm, --limit-mem is an allocation failure, not an OOM verdict' '
	reset_fake &&
	(unset SLURM_JOB_ID; test_expect_code 3 "$STEP" run --limit-mem --mem 64M \
		--output out.json -- "$PROG" --mem 256 2>err) &&
	grep "cannot allocate 256 MiB" err &&
	test "$(j .mode)" = direct &&
	test "$(j .result.return_code)" = 3 &&
	test "$(j .result.status)" = failed &&
	test "$(j .result.oom)" = false &&
	(unset SLURM_JOB_ID; "$STEP" run --limit-mem --mem 512M --output out.json \
		-- "$PROG" --mem 64) &&
	test "$(j .result.status)" = completed
'

# squeue and sacct print an array task's rows under the array's id ("40_3.3"), sstat
# under the task's own ("42.3"): allot-step reads SLURM_ARRAY_JOB_ID/SLURM_ARRAY_TASK_ID.
test_expect_success 'in an array task: its step found, sampled and read from sacct; a pending step passed over' '
	reset_fake &&
	SLURM_JOB_ID=42 SLURM_ARRAY_JOB_ID=40 SLURM_ARRAY_TASK_ID=3 FAKE_ARRAY=1 "$STEP" run $FAST \
		--name arr --output out.json -- "$PROG" --sleep 1 &&
	test "$(j .slurm_job_id)" = 42 &&
	test "$(j .monitor.step_id_found)" = true &&
	test "$(j .monitor.step_id)" = 3 &&
	test "$(j .monitor.samples)" -ge 1 &&
	test "$(j .slurm_stats.slurm_step_id)" = 42.3 &&
	test "$(j .slurm_stats.max_rss_bytes)" = $((4096 * 1024)) &&
	test "$(j .result.return_code)" = 0
'
test_expect_success 'in an array task: the allocation row read for the verdict is the task'"'"'s' '
	reset_fake &&
	SLURM_JOB_ID=42 SLURM_ARRAY_JOB_ID=40 SLURM_ARRAY_TASK_ID=3 FAKE_ARRAY=1 \
		FAKE_STATE="CANCELLED by 0" FAKE_ALLOC_STATE=TIMEOUT test_expect_code 152 \
		"$STEP" run $FAST --name arrtmo --output out.json -- true &&
	test "$(j .result.status)" = timeout
'
test_expect_success 'SLURM_ARRAY_JOB_ID without a valid SLURM_ARRAY_TASK_ID is a usage error' '
	reset_fake &&
	SLURM_JOB_ID=42 SLURM_ARRAY_JOB_ID=40 test_expect_code 2 "$STEP" run $FAST --name x \
		--output out.json -- true 2>err &&
	grep "SLURM_ARRAY_TASK_ID is not" err &&
	SLURM_JOB_ID=42 SLURM_ARRAY_JOB_ID=40 SLURM_ARRAY_TASK_ID=3x test_expect_code 2 "$STEP" run \
		$FAST --name x --output out.json -- true 2>err &&
	grep "SLURM_ARRAY_TASK_ID: invalid id" err &&
	test ! -e "$FAKE/srun.args"
'

test_expect_success '--cpu-bind keeps binding; UNLIMITED time left passes no --time' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_TIMELEFT=UNLIMITED "$STEP" run $FAST --cpu-bind --name s \
		--output out.json -- true &&
	! grep -e "--cpu-bind" "$FAKE/srun.args" &&
	! grep -e "--time" "$FAKE/srun.args" &&
	test "$(j .time_limit_minutes)" = 0
'

test_expect_success '--time-limit caps --time below the time left, never above it' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_TIMELEFT=9:30 "$STEP" run $FAST --time-limit 3 --name cap \
		--output out.json -- true &&
	grep -x -e "--time=3" "$FAKE/srun.args" &&
	SLURM_JOB_ID=42 FAKE_TIMELEFT=9:30 "$STEP" run $FAST --time-limit 30 --name cap \
		--output out.json -- true &&
	grep -x -e "--time=9" "$FAKE/srun.args"
'

# A CPU rate needs a window of about 5 s (monitor.h: AveCPU is in whole seconds), so the
# step runs 9 s.  The fake AveCPU grows 1 s per 0.2 s sample: far above the 11% that
# sacct's AveCPU (1 s) over the run would give, so a peak over 50% came from live deltas.
test_expect_success 'live sstat: first sample is only a baseline, CPU from deltas, peak RSS' '
	reset_fake &&
	SLURM_JOB_ID=42 "$STEP" run $FAST --name live --output out.json -- "$PROG" --sleep 9 &&
	test "$(j .monitor.step_id_found)" = true &&
	samples=$(j .monitor.samples) && test "$samples" -ge 3 &&
	test "$(j .result.avg_memory_bytes)" = $((2048 * 1024)) &&
	test "$(j .result.peak_memory_bytes)" = $((4096 * 1024)) &&
	peak=$(j ".result.peak_cpu_percent | floor") && echo "peak $peak" && test "$peak" -gt 50
'

test_expect_success 'sacct lag: empty for the first tries, found on the third' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_SACCT_EMPTY=2 "$STEP" run $FAST --name lag --output out.json -- true &&
	test "$(j .monitor.sacct_attempts)" = 3 &&
	test "$(wc -l <"$FAKE/sacct.calls")" = 3 &&
	test "$(j .slurm_stats.max_rss_bytes)" = $((4096 * 1024))
'

test_expect_success 'sacct returns no data: bounded tries, null stats, command status kept' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_SACCT_EMPTY=100 test_expect_code 4 "$STEP" run $FAST --sacct-tries 4 \
		--name never --output out.json -- "$PROG" --exit 4 &&
	test "$(wc -l <"$FAKE/sacct.calls")" = 4 &&
	test "$(j .slurm_stats)" = null &&
	test "$(j .result.return_code)" = 4
'

test_expect_success 'sacct row without MaxRSS and AveCPU counts as not there yet' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_STATE=RUNNING FAKE_RSS= FAKE_AVECPU= "$STEP" run $FAST \
		--sacct-tries 3 --name nodata --output out.json -- true &&
	test "$(wc -l <"$FAKE/sacct.calls")" = 3 &&
	test "$(j .slurm_stats)" = null
'

test_expect_success 'a finished row without data (too short to sample) is taken on its second read' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_RSS= FAKE_AVECPU= "$STEP" run $FAST --sacct-tries 6 --name short \
		--output out.json -- true &&
	test "$(wc -l <"$FAKE/sacct.calls")" = 2 &&
	test "$(j .slurm_stats.state)" = COMPLETED &&
	test "$(j .slurm_stats.max_rss_bytes)" = null
'

test_expect_success 'sstat unavailable: no live metrics, sacct still fills the result' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_SSTAT=fail "$STEP" run $FAST --name nosstat --output out.json \
		-- "$FAKE/gate" "$FAKE/sstat.calls" 1 &&
	test "$(j .monitor.samples)" = 0 &&
	fails=$(j .monitor.sstat_failures) && test "$fails" -ge 1 &&
	test "$(j .result.peak_memory_bytes)" = $((4096 * 1024)) &&
	test "$(j .result.avg_memory_bytes)" = null &&
	test "$(j .result.avg_cpu_percent)" != null
'

test_expect_success 'step id not discoverable: bounded squeue tries, no sstat, sacct by name' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_SQUEUE=none "$STEP" run $FAST --stepid-tries 5 --name hidden \
		--output out.json -- "$FAKE/gate" "$FAKE/squeue.calls" 5 &&
	test "$(j .monitor.step_id_found)" = false &&
	test "$(j .monitor.step_id_attempts)" = 5 &&
	test "$(j .monitor.sstat_calls)" = 0 &&
	test ! -e "$FAKE/sstat.calls" &&
	test "$(j .slurm_stats.slurm_step_id)" = 42.3
'

test_expect_success 'sacct zeros are ignored: live peak memory kept' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_RSS=0 FAKE_AVECPU=00:00:00 "$STEP" run $FAST --name zeros \
		--output out.json -- "$FAKE/gate" "$FAKE/sstat.calls" 2 &&
	test "$(j .slurm_stats.max_rss_bytes)" = 0 &&
	test "$(j .result.peak_memory_bytes)" = $((2048 * 1024))
'

test_expect_success 'OUT_OF_MEMORY is reported as OOM with exit 137' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_STATE=OUT_OF_MEMORY FAKE_EXIT=0:125 test_expect_code 137 \
		"$STEP" run $FAST --mem 1M --name oom --output out.json -- "$PROG" --exit 1 2>err &&
	test "$(j .result.status)" = oom &&
	test "$(j .result.oom)" = true &&
	grep "ran out of memory" err
'

test_expect_success 'OverMemoryKill (CANCELLED by 0, signal 9, RSS over --mem) is OOM too' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_STATE="CANCELLED by 0" FAKE_EXIT=0:9 test_expect_code 137 \
		"$STEP" run $FAST --mem 2M --name oom2 --output out.json -- "$PROG" --exit 1 &&
	test "$(j .result.status)" = oom
'

test_expect_success 'TIMEOUT is reported with exit 152' '
	reset_fake &&
	SLURM_JOB_ID=42 FAKE_STATE=TIMEOUT test_expect_code 152 "$STEP" run $FAST --name tmo \
		--output out.json -- "$PROG" --exit 15 2>err &&
	test "$(j .result.status)" = timeout &&
	grep "hit its time limit" err
'

test_expect_success 'a hung sacct is killed at the helper timeout; total wait is bounded' '
	reset_fake &&
	start=$(date +%s) &&
	SLURM_JOB_ID=42 FAKE_SACCT_HANG=1 "$STEP" run $FAST --sacct-tries 2 \
		--helper-timeout-ms 500 --name hang --output out.json -- true &&
	test $(( $(date +%s) - start )) -le 10 &&
	test "$(j .slurm_stats)" = null
'

test_expect_success 'bad options and a bad SLURM_JOB_ID are usage errors' '
	test_expect_code 2 "$STEP" run --mem 12Q -- true 2>err &&
	grep "mem" err &&
	test_expect_code 2 "$STEP" run --signal -- 2>/dev/null &&
	SLURM_JOB_ID=abc test_expect_code 2 "$STEP" run -- true 2>err &&
	grep SLURM_JOB_ID err &&
	test_expect_code 2 "$STEP" run --name x
'

test_expect_success 'stdout gets the JSON record when --output is not given' '
	(unset SLURM_JOB_ID; "$STEP" run -- true >stdout.json) &&
	jq -e ".result.return_code == 0" stdout.json
'

test_done
