#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1055-job-arrays-api.t - job arrays and het jobs at the bank (doc/api.md "Job ids",
# doc/money.md "Admission"): an admit prices a job array as tasks x one task's cost and a
# het component with what its other components need, refusing with a message that says so,
# whatever HoldMode; holds and settles carry Slurm's array and het ids, which job objects
# return; GET /v1/jobs/{cluster}/{job} and GET /v1/jobs?job= take J, J_T, J_[LIST] and J+C,
# and `allot job show` shows them as Slurm does, an array or het job summed.
test_description='job arrays and het jobs: admission of the whole, Slurm job names'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" && test -x "$ALLOT_BIN" || { skip_all="allotd or allot not built"; test_done; }
allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }

bal() { api GET "/v1/balances?account=chem" | json_get "items.0.$1"; }
job() { # 10 min at billing 1 = 10 SU-minutes
	echo "\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"p\",\"time_limit_s\":600,\"billing\":1"
}
# hold JOB IDS...: hold job JOB carrying the given id fields ("array_job_id":100,...).
hold() { local id=$1; shift; local extra; extra=$(IFS=,; echo "$*")
	api POST /v1/jobs/hold "{$(job),\"job_id\":$id${extra:+,$extra}}" >hold.out || { cat hold.out; false; }; }
ids_of() { python3 -c 'import json,sys; print(*sorted(r["job_id"] for r in json.load(sys.stdin)[sys.argv[1]]))' "$1"; }

test_expect_success 'allotd (HoldMode=start), chem with 100 SU-minutes' '
	munged_start "$PWD/munge" && chmod 0755 "$MUNGE_DIR" &&
	allotd_start &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":100}" >out
'

test_expect_success 'an array is admitted on all its tasks: 11 x 10 refused, naming tasks x cost' '
	test_expect_code 1 api POST /v1/jobs/admit "{$(job),\"tasks\":11}" >out &&
	test "$(api_status)" = 402 && test "$(json_get admitted <out)" = false &&
	test "$(json_get tasks <out)" = 11 && test "$(json_get total_sumin <out)" = 110 &&
	test "$(json_get cost_sumin <out)" = 10 &&
	json_get message <out >msg && cat msg &&
	grep "this job array may cost up to 1h50m SU (11 tasks x 10m SU, billing 1 x time limit 10 min)" msg &&
	api POST /v1/jobs/admit "{$(job),\"tasks\":10}" >out &&
	test "$(json_get admitted <out)" = true && test "$(json_get total_sumin <out)" = 100 &&
	test "$(bal held_sumin)" = 0
'

test_expect_success 'a het component is admitted with what its other components need' '
	test_expect_code 1 api POST /v1/jobs/admit "{$(job),\"extra_sumin\":91}" >out &&
	json_get message <out >msg && cat msg &&
	grep "this heterogeneous job may cost up to 1h41m SU (this component 10m SU" msg &&
	grep "its other components 1h31m SU" msg &&
	api POST /v1/jobs/admit "{$(job),\"extra_sumin\":90}" >out &&
	test "$(json_get admitted <out)" = true
'

test_expect_success 'bad tasks, extra_sumin and ids are refused (400)' '
	test_expect_code 1 api POST /v1/jobs/admit "{$(job),\"tasks\":0}" &&
	test "$(api_status)" = 400 &&
	test_expect_code 1 api POST /v1/jobs/admit "{$(job),\"tasks\":4000002}" &&
	test "$(api_status)" = 400 &&
	test_expect_code 1 api POST /v1/jobs/admit "{$(job),\"extra_sumin\":-1}" &&
	test "$(api_status)" = 400 &&
	test_expect_code 1 hold 99 "\"array_task_id\":3" && test "$(api_status)" = 400 &&
	test_expect_code 1 hold 99 "\"array_job_id\":98" && test "$(api_status)" = 400 &&
	test_expect_code 1 hold 99 "\"het_job_offset\":1" && test "$(api_status)" = 400 &&
	test_expect_code 1 hold 99 "\"array_job_id\":4294967296" "\"array_task_id\":1" &&
	test "$(api_status)" = 400 &&
	api GET "/v1/jobs?cluster=c1" >all && test "$(json_get items <all)" = "[]"
'

test_expect_success 'holds and settles carry array and het ids; job objects return them' '
	hold 101 "\"array_job_id\":100" "\"array_task_id\":1" &&
	hold 102 "\"array_job_id\":100" "\"array_task_id\":2" &&
	hold 100 "\"array_job_id\":100" "\"array_task_id\":3" &&
	hold 200 "\"het_job_id\":200" "\"het_job_offset\":0" &&
	hold 201 "\"het_job_id\":200" "\"het_job_offset\":1" &&
	hold 300 &&
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":101,\"elapsed_s\":120,\"state\":\"COMPLETED\",\"array_job_id\":100,\"array_task_id\":1}" >out &&
	test "$(json_get settled <out)" = true &&
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":201,\"elapsed_s\":60,\"state\":\"COMPLETED\"}" >out &&
	api GET /v1/jobs/c1/102 >j &&
	test "$(json_get runs.0.array_job_id <j)" = 100 &&
	test "$(json_get runs.0.array_task_id <j)" = 2 &&
	test "$(json_get runs.0.slurm_job_id <j)" = 100_2 &&
	api GET /v1/jobs/c1/300 >j && ! grep -q slurm_job_id j &&
	api GET "/v1/jobs?cluster=c1&status=settled" >s &&
	test "$(ids_of items <s)" = "101 201"
'

test_expect_success 'GET /v1/jobs/{cluster}/{job}: J_T, J_[LIST], J+C, and J (all, with a total)' '
	api GET /v1/jobs/c1/100_2 >j && test "$(ids_of runs <j)" = 102 &&
	api GET /v1/jobs/c1/100_3 >j && test "$(ids_of runs <j)" = 100 &&
	api GET "/v1/jobs/c1/100_%5B1,3%5D" >j && test "$(ids_of runs <j)" = "100 101" &&
	api GET "/v1/jobs/c1/200%2B1" >j && test "$(ids_of runs <j)" = 201 &&
	! grep -q total j &&
	api GET /v1/jobs/c1/100 >j && test "$(ids_of runs <j)" = "100 101 102" &&
	test "$(json_get total.jobs <j)" = 3 &&
	test "$(json_get total.hold_sumin <j)" = 20 &&
	test "$(json_get total.charge_sumin <j)" = 2 &&
	test "$(ids_of ledger <j | wc -w)" = 5 &&
	api GET /v1/jobs/c1/200 >j && test "$(ids_of runs <j)" = "200 201" &&
	test "$(json_get total.charge_sumin <j)" = 1 &&
	api GET /v1/jobs/c1/300 >j && test "$(ids_of runs <j)" = 300 && ! grep -q total j &&
	test_expect_code 1 api GET /v1/jobs/c1/100_9 && test "$(api_status)" = 404 &&
	test_expect_code 1 api GET /v1/jobs/c1/100.batch && test "$(api_status)" = 400 &&
	test_expect_code 1 api GET "/v1/jobs/c1/100_%5B3-1%5D" && test "$(api_status)" = 400
'

test_expect_success 'GET /v1/jobs?job= lists the runs a name stands for (cluster= needed)' '
	api GET "/v1/jobs?cluster=c1&job=100_%5B1-2%5D" >l && test "$(ids_of items <l)" = "101 102" &&
	api GET "/v1/jobs?cluster=c1&job=200&status=held" >l && test "$(ids_of items <l)" = 200 &&
	test_expect_code 1 api GET "/v1/jobs?job=100_1" && test "$(api_status)" = 400
'

test_expect_success 'allot job show J_T, J_[LIST], J+C, J: Slurm names, and the total' '
	allot job show 100_2 >o && cat o && grep "^Runs:" o && grep " 100_2\$" o &&
	allot -P -n job show c1:100_2 >o && test "$(head -1 o | cut -d"|" -f2,17)" = "102|100_2" &&
	allot job show "100_[1-2]" >o && cat o && grep -c " 100_[12]\$" o | grep -x 2 &&
	allot job show 200+1 >o && cat o && grep " 200+1\$" o &&
	allot job show 100 >o && cat o && grep "^Total:" o &&
	grep "^Jobs  *Hold  *Charge" o && grep "^ *3  *20m  *2m$" o &&
	test_expect_code 2 allot job show 100.batch 2>err && grep "100.batch. is not a job" err &&
	test_expect_code 2 allot job show "100_[x]" 2>err && grep "is not a job" err
'

test_expect_success 'stop' '
	allotd_stop
'
test_done
