#!/bin/bash
# t3520-step-record.t - step records in the bank (doc/step.md "Recording in allotd"): allot-step with fake
# srun/squeue/sstat/sacct (ALLOT_* overrides) files its record in a real allotd (private
# munged, SQLite) as the job's own user; the record is stored once per (cluster, job, step,
# attempt); an identical replay is 200 "replay", a different record 409; `allot step list`
# shows it; who may record and read; and a failure to record never changes the exit code.
test_description='allot-step records steps in allotd'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$STEP" || { skip_all="allot-step not built"; test_done; }

for u in allot_alice allot_bob; do
	id -u $u >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $u
done

# The fakes and the step outputs live in a directory the test users can write.
FAKE="$PWD/fake"
OUT="$PWD/out"
mkdir -p "$FAKE" "$OUT" && chmod 0777 "$FAKE" "$OUT"
cat >"$FAKE/srun" <<'EOS'
#!/bin/bash
printf '%s\n' "$@" >"$FAKE_DIR/srun.args"
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do shift; done
exec "$@"
EOS
cat >"$FAKE/squeue" <<'EOS'
#!/bin/bash
case " $* " in *" %L "*) echo "10:00"; exit 0;; esac
name=$(sed -n 's/^--job-name=//p' "$FAKE_DIR/srun.args" 2>/dev/null)
[ -n "$name" ] || exit 0
echo "42.batch|batch"; echo "42.3|$name"
EOS
cat >"$FAKE/sstat" <<'EOS'
#!/bin/bash
echo "42.3|00:00:01|2048K|2048K"
EOS
cat >"$FAKE/sacct" <<'EOS'
#!/bin/bash
name=$(sed -n 's/^--job-name=//p' "$FAKE_DIR/srun.args")
echo "42|job|RUNNING|0:0|00:01:00|||||00:00:00|00:00.100|node1"
echo "42.3|$name|COMPLETED|0:0|00:00:02|4096K|8192K|1.50M|0.50M|00:00:01|00:01.500|node1"
EOS
chmod 0755 "$FAKE"/*
FAST="--interval-ms 200 --stepid-delay-ms 50 --sacct-delay-ms 50 --sacct-tries 2"

# step USER ARGS...: run allot-step as USER inside fake job 42 of cluster "fake", with
# ALLOT_URL pointing at the test allotd (unless the caller's STEP_URL says otherwise).
step() {
	local user=$1
	shift
	rm -f "$FAKE/srun.args"
	runuser -u "$user" -- env ALLOT_URL="${STEP_URL-$ALLOTD_URL}" \
		ALLOT_MUNGE_SOCKET="$MUNGE_SOCKET" SLURM_JOB_ID=42 SLURM_CLUSTER_NAME=fake \
		ALLOT_SRUN="$FAKE/srun" ALLOT_SQUEUE="$FAKE/squeue" ALLOT_SSTAT="$FAKE/sstat" \
		ALLOT_SACCT="$FAKE/sacct" FAKE_DIR="$FAKE" "$STEP" run $FAST "$@"
}
allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
nsteps() { api GET "/v1/steps?cluster=fake&job=$1" | jq ".items | length"; }

test_expect_success 'munged, allotd, a bank with job 42 of allot_alice held' '
	munged_start "$PWD/munge" &&
	chmod 0755 "$MUNGE_DIR" &&
	allotd_start &&
	allot cluster add fake &&
	allot account add chem &&
	allot user add allot_alice &&
	allot user add allot_bob &&
	allot assoc add cluster=fake account=chem user=allot_alice &&
	allot assoc add cluster=fake account=chem user=allot_bob &&
	allot partition add standard cluster=fake resource=cpu &&
	allot alloc add chem resource=cpu su=100h start=2020-01-01 end=2040-01-01 &&
	allot job hold cluster=fake jobid=42 user=allot_alice account=chem partition=standard \
		timelimit=60 tres=cpu=1
'

test_expect_success 'allot-step run by the job user records the step once (ALLOT_URL set)' '
	step allot_alice --name prep --output "$OUT/prep.json" -- "$PROG" --sleep 0.3 2>err &&
	cat err &&
	! grep "not recorded" err &&
	test "$(nsteps 42)" = 1 &&
	api GET "/v1/steps?cluster=fake&job=42" >list.json &&
	test "$(jq -r ".items[0].step_name" list.json)" = prep &&
	test "$(jq -r ".items[0].attempt" list.json)" = 1 &&
	test "$(jq -r ".items[0].user" list.json)" = allot_alice &&
	test "$(jq -r ".items[0].actor" list.json)" = allot_alice &&
	test "$(jq -r ".items[0].status" list.json)" = completed &&
	test "$(jq -r ".items[0].return_code" list.json)" = 0 &&
	jq -S .items[0].record list.json >stored &&
	jq -S . "$OUT/prep.json" >printed &&
	test_cmp printed stored &&
	test "$(jq -r ".items[0].record.slurm_stats.max_rss_bytes" list.json)" = $((4096 * 1024))
'

test_expect_success 'an identical replay (other spacing and key order) is 200 replay, stored once' '
	jq -S --indent 4 "{record: ., attempt: 1, step_name: \"prep\", job_id: 42, cluster: \"fake\"}" \
		"$OUT/prep.json" >body &&
	api POST /v1/steps "$(cat body)" >reply &&
	test "$(api_status)" = 200 &&
	test "$(jq -r .replay reply)" = true &&
	test "$(jq -r .step.actor reply)" = allot_alice &&
	test "$(nsteps 42)" = 1
'

test_expect_success 'the same key with a different record is 409 and changes nothing' '
	jq -c "{cluster: \"fake\", job_id: 42, step_name: \"prep\", attempt: 1,
		record: (.result.return_code = 1)}" "$OUT/prep.json" >body &&
	test_must_fail api POST /v1/steps "$(cat body)" >reply &&
	test "$(api_status)" = 409 &&
	jq -r .error.code reply | grep -x ECONFLICT &&
	api GET "/v1/steps?cluster=fake&job=42" >list.json &&
	test "$(jq -r ".items[0].return_code" list.json)" = 0 &&
	test "$(nsteps 42)" = 1
'

test_expect_success 'rerunning the step under the same attempt warns (409) and keeps the exit code' '
	test_expect_code 3 step allot_alice --name prep --output "$OUT/prep2.json" \
		-- "$PROG" --exit 3 2>err &&
	grep "step prep: not recorded in allotd" err &&
	test "$(nsteps 42)" = 1 &&
	test_expect_code 3 step allot_alice --name prep --attempt 2 --output "$OUT/prep2.json" \
		-- "$PROG" --exit 3 2>err &&
	! grep "not recorded" err &&
	test "$(nsteps 42)" = 2 &&
	api GET "/v1/steps?cluster=fake&job=42" >list.json &&
	test "$(jq -r ".items[1].attempt" list.json)" = 2 &&
	test "$(jq -r ".items[1].status" list.json)" = failed &&
	test "$(jq -r ".items[1].return_code" list.json)" = 3
'

test_expect_success 'allot step list: table, -P and --json' '
	allot step list fake:42 >table &&
	cat table &&
	grep "^Cluster  *JobID  *Step  *Attempt" table &&
	grep "^fake  *42  *prep  *1  *allot_alice  *completed  *0 " table &&
	allot step list 42 cluster=fake -P -n >p &&
	test $(wc -l <p) = 2 &&
	test "$(head -1 p | cut -d"|" -f1-7,9,11)" = "fake|42|prep|1|allot_alice|completed|0|4.0M|42.3" &&
	allot -P step list 42 >p2 &&
	head -1 p2 | grep "^Cluster|JobID|Step|Attempt|User|Status|RC|Elapsed|PeakMem|AvgCPU|" &&
	allot step list 42 --json | jq -e ".items | length == 2" &&
	test_expect_code 2 allot step list &&
	test_expect_code 2 allot step list notanumber
'

test_expect_success 'users see the steps of their own jobs only' '
	runuser -u allot_alice -- "$ALLOT_BIN" --url "$ALLOTD_URL" step list 42 -P -n >a &&
	test $(wc -l <a) = 2 &&
	runuser -u allot_bob -- "$ALLOT_BIN" --url "$ALLOTD_URL" step list 42 -P -n >b &&
	test $(wc -l <b) = 0 &&
	API_RUNAS=allot_bob test_must_fail api GET "/v1/steps?user=allot_alice" &&
	test "$(api_status)" = 403
'

test_expect_success 'another user may not record steps of the job; unknown jobs need an operator' '
	jq -c "{cluster: \"fake\", job_id: 42, step_name: \"evil\", record: .}" "$OUT/prep.json" |
		jq -c ".record.step_name = \"evil\"" >body &&
	API_RUNAS=allot_bob test_must_fail api POST /v1/steps "$(cat body)" &&
	test "$(api_status)" = 403 &&
	jq -c ".job_id = 99 | .record.slurm_job_id = 99" body >body99 &&
	API_RUNAS=allot_alice test_must_fail api POST /v1/steps "$(cat body99)" &&
	test "$(api_status)" = 404 &&
	api POST /v1/steps "$(cat body99)" >reply &&
	test "$(api_status)" = 201 &&
	test "$(jq -r .step.user reply)" = "" &&
	test "$(nsteps 42)" = 2 &&
	test "$(nsteps 99)" = 1
'

test_expect_success 'records that do not describe their step are refused (400)' '
	jq -c ".record.step_name = \"other\"" body >bad &&
	test_must_fail api POST /v1/steps "$(cat bad)" &&
	test "$(api_status)" = 400 &&
	jq -c ".record.slurm_job_id = 7" body >bad &&
	test_must_fail api POST /v1/steps "$(cat bad)" &&
	test "$(api_status)" = 400 &&
	jq -c "del(.record.result)" body >bad &&
	test_must_fail api POST /v1/steps "$(cat bad)" &&
	test "$(api_status)" = 400 &&
	jq -c ".step_name = \"bad name\"" body >bad &&
	test_must_fail api POST /v1/steps "$(cat bad)" &&
	test "$(api_status)" = 400 &&
	test "$(nsteps 42)" = 2
'

test_expect_success 'allotd unreachable: a warning, the command exit code unchanged' '
	port=$(find_free_port) &&
	STEP_URL=http://127.0.0.1:$port test_expect_code 5 step allot_alice --name down \
		--output "$OUT/down.json" -- "$PROG" --exit 5 2>err &&
	grep "step down: not recorded in allotd at http://127.0.0.1:$port" err &&
	test "$(jq -r .result.return_code "$OUT/down.json")" = 5 &&
	STEP_URL=http://127.0.0.1:$port step allot_alice --name down0 --record-timeout-ms 500 \
		--output "$OUT/down.json" -- true 2>err &&
	grep "not recorded" err
'

test_expect_success '--no-record with ALLOT_URL set sends nothing; --record without a cluster warns' '
	step allot_alice --name quiet --no-record --output "$OUT/q.json" -- true 2>err &&
	! grep "not recorded" err &&
	api GET "/v1/steps?cluster=fake&job=42" | jq -e "[.items[].step_name] | index(\"quiet\") == null" &&
	rm -f "$FAKE/srun.args" &&
	test_expect_code 4 runuser -u allot_alice -- env ALLOT_MUNGE_SOCKET="$MUNGE_SOCKET" \
		SLURM_JOB_ID=42 ALLOT_SRUN="$FAKE/srun" ALLOT_SQUEUE="$FAKE/squeue" \
		ALLOT_SSTAT="$FAKE/sstat" ALLOT_SACCT="$FAKE/sacct" FAKE_DIR="$FAKE" "$STEP" run \
		$FAST --record --url "$ALLOTD_URL" --name nocl --output "$OUT/n.json" \
		-- "$PROG" --exit 4 2>err &&
	grep "not recorded in allotd: no cluster name" err
'

test_expect_success 'outside Slurm nothing is recorded, and --record says why' '
	(unset SLURM_JOB_ID; ALLOT_URL=$ALLOTD_URL test_expect_code 2 "$STEP" run --record \
		--output "$OUT/d.json" -- "$PROG" --exit 2 2>err) &&
	grep "did not run in a Slurm job" err &&
	test "$(api GET /v1/steps | jq ".items | length")" = 3
'

test_expect_success 'allotd stopped mid-session: exit code kept, the record is still printed' '
	allotd_stop &&
	test_expect_code 0 step allot_alice --name late --output "$OUT/late.json" -- true 2>err &&
	grep "step late: not recorded" err &&
	test "$(jq -r .step_name "$OUT/late.json")" = late
'

test_expect_success 'stop munged' '
	munged_stop
'

test_done
