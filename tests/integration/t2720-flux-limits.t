#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2720-flux-limits.t - flux-accounting's per-association job limits through allotd:
# max_active_jobs (= MaxSubmitJobs: refused at admission once the association holds that many
# jobs, with a message naming the limit), max_running_jobs (= MaxJobs, left to Slurm),
# max_nodes / max_cores (= GrpTRES node=N / cpu=N); bad values are refused.
test_description='flux-accounting association job limits'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }

A() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
OWNER=c1:chem:alice:
admit() {
	api POST /v1/jobs/admit '{"cluster":"c1","user":"alice","account":"chem","partition":"p","time_limit_s":600,"tres":"cpu=1"}'
}

test_expect_success 'a bank with one association' '
	allotd_start AuthType=none TestMode=local &&
	A cluster add c1 &&
	A account add chem &&
	A user add alice &&
	A assoc add cluster=c1 account=chem user=alice &&
	A partition add p cluster=c1 resource=cpu &&
	A alloc add chem resource=cpu su=100h start=2020-01-01 end=2100-01-01
'
test_expect_success 'flux names resolve as the Slurm limits they stand for' '
	A limits set scope=assoc owner=$OWNER name=max_active_jobs value=2 &&
	A limits set scope=assoc owner=$OWNER name=max_running_jobs value=1 &&
	A limits set scope=assoc owner=$OWNER name=max_nodes value=4 &&
	A -P -n limits show alice account=chem partition=p cluster=c1 >eff &&
	cat eff &&
	grep -q "^MaxSubmitJobs|2|" eff &&
	grep -q "^MaxJobs|1|" eff &&
	grep -q "^GrpTRES|node=4|" eff
'
test_expect_success 'bad values and scopes are refused' '
	test_must_fail A limits set scope=assoc owner=$OWNER name=max_nodes value=two 2>err &&
	grep max_nodes err &&
	test_must_fail A limits set scope=assoc owner=$OWNER name=max_cores value=node=2 &&
	test_must_fail A limits set scope=qos owner=normal name=max_active_jobs value=2
'
test_expect_success 'max_active_jobs: admitted while fewer jobs are held' '
	admit >a1 && test "$(json_get admitted <a1)" = true &&
	for j in 1 2; do
		A job hold jobid=$j user=alice account=chem partition=p timelimit=10 tres=cpu=1 || return 1
	done
'
test_expect_success 'max_active_jobs: the third active job is refused with the limit named' '
	! admit >a2 &&
	test "$(api_status)" = 403 &&
	test "$(json_get admitted <a2)" = false &&
	json_get message <a2 >msg && cat msg &&
	grep -q MaxSubmitJobs msg
'
test_expect_success 'a job ending frees the slot' '
	A job settle jobid=1 elapsed=60s state=COMPLETED &&
	admit >a3 && test "$(json_get admitted <a3)" = true
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
