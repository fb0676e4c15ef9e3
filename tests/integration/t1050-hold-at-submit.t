#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1050-hold-at-submit.t - HoldMode=submit at the API (doc/slurm.md "Hold at submit"): an
# admit with a submit_token holds the job's credit while it is pending; the hold with the
# same token moves that credit to the real job id without needing new credit; a provisional
# hold released by hand (job cancelled while pending) frees its credit; one never bound is
# released by allotd after SubmitHoldTTL; tokens outside [2^32, 2^62] are refused.
test_description='hold at submit: provisional hold, bind, cancel, TTL sweep'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

T1=$(( (1 << 32) + 1001 ))
T2=$(( (1 << 32) + 1002 ))
T3=$(( (1 << 32) + 1003 ))
# Status of run 0 of job (or token) $1, from the job list: GET /v1/jobs/c1/<id> cannot be used
# for a token under PostgreSQL (its "$2 = 0" parameter is typed int4 there, see the report).
status_of() { api GET "/v1/jobs?cluster=c1" |
	python3 -c 'import json,sys; print(*[j["status"] for j in json.load(sys.stdin)["items"] if j["job_id"]==int(sys.argv[1]) and j["run"]==0])' "$1"; }
bal() { api GET "/v1/balances?account=chem" | json_get "items.0.$1"; }
job() { # JSON fields common to admit and hold: 10 min at billing 1 = 10 SU-minutes
	echo "\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"p\",\"time_limit_s\":600,\"billing\":1"
}

# The TTL is an hour until the sweep test lowers it (SIGHUP): the tokens of the steps before
# it must not expire however slow the machine is (15 s did not hold with another test beside).
test_expect_success 'allotd with SubmitHoldTTL=3600 and a fast clock; 25 SU-minutes' '
	allotd_start AuthType=none TestMode=local Operators=slurm HoldMode=submit SubmitHoldTTL=3600 PolicyTickInterval=1 &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":25}" >out &&
	test "$(bal available_sumin)" = 25
'
test_expect_success 'an admit with a token holds the credit while the job waits' '
	API_USER=slurm api POST /v1/jobs/admit "{$(job),\"submit_token\":$T1}" >out &&
	test "$(json_get admitted <out)" = true &&
	test "$(json_get held <out)" = true &&
	test "$(json_get submit_token <out)" = $T1 &&
	test "$(bal held_sumin)" = 10 && test "$(bal available_sumin)" = 15 &&
	API_USER=slurm api POST /v1/jobs/admit "{$(job),\"submit_token\":$T1}" >out &&
	test "$(json_get replay <out)" = true && test "$(bal held_sumin)" = 10
'
test_expect_success 'a second pending job holds too; a third finds no credit (402, nothing held)' '
	API_USER=slurm api POST /v1/jobs/admit "{$(job),\"submit_token\":$T2}" >out &&
	test "$(bal held_sumin)" = 20 &&
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/admit "{$(job),\"submit_token\":$T3}" >out &&
	test "$(api_status)" = 402 && test "$(json_get admitted <out)" = false &&
	test "$(bal held_sumin)" = 20
'
test_expect_success 'at start the hold with the token moves the credit to job 7 (no new credit needed)' '
	API_USER=slurm api POST /v1/jobs/hold "{$(job),\"job_id\":7,\"submit_token\":$T1}" >out &&
	test "$(json_get held <out)" = true &&
	test "$(bal held_sumin)" = 20 && test "$(bal available_sumin)" = 5 &&
	test "$(status_of $T1)" = released &&
	test "$(status_of 7)" = held &&
	API_USER=slurm api POST /v1/jobs/hold "{$(job),\"job_id\":7,\"submit_token\":$T1}" >out &&
	test "$(json_get replay <out)" = true && test "$(bal held_sumin)" = 20
'
test_expect_success 'job 7 settles normally' '
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":7,\"elapsed_s\":120,\"state\":\"COMPLETED\",\"source\":\"epilog\"}" >out &&
	test "$(json_get job.charge_sumin <out)" = 2 &&
	test "$(bal held_sumin)" = 10 && test "$(bal available_sumin)" = 13
'
test_expect_success 'a job cancelled while pending: its provisional hold is released' '
	API_USER=slurm api POST /v1/jobs/release "{\"cluster\":\"c1\",\"job_id\":$T2,\"comment\":\"cancelled while pending\"}" >out &&
	test "$(json_get released <out)" = true &&
	test "$(bal held_sumin)" = 0 && test "$(bal available_sumin)" = 23
'
test_expect_success 'a token never bound is released by allotd after SubmitHoldTTL' '
	API_USER=slurm api POST /v1/jobs/admit "{$(job),\"submit_token\":$T3}" >out &&
	test "$(json_get held <out)" = true && test "$(bal held_sumin)" = 10 &&
	sleep 2 && test "$(bal held_sumin)" = 10 &&
	sed -i "s/^SubmitHoldTTL=3600/SubmitHoldTTL=2/" "$ALLOTD_CONF" &&
	kill -HUP $ALLOTD_PID &&
	wait_for 30 grep -q "configuration reloaded" "$ALLOTD_LOG" &&
	for i in $(seq 1 120); do test "$(bal held_sumin)" = 0 && break; sleep 0.5; done &&
	test "$(bal held_sumin)" = 0 && test "$(bal available_sumin)" = 23 &&
	test "$(status_of $T3)" = released &&
	# The sweep logs after its commit, which the balance above may see first.
	wait_for 10 grep -q "unbound submit holds released" "$ALLOTD_LOG"
'
test_expect_success 'a job bound after the sweep is checked like any hold' '
	API_USER=slurm api POST /v1/jobs/hold "{$(job),\"job_id\":8,\"submit_token\":$T3}" >out &&
	test "$(json_get held <out)" = true && test "$(bal held_sumin)" = 10
'
test_expect_success 'tokens out of range, and a token as a job id, are refused' '
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/admit "{$(job),\"submit_token\":5}" &&
	test "$(api_status)" = 400 &&
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/hold "{$(job),\"job_id\":$T2,\"submit_token\":$T1}" &&
	test "$(api_status)" = 400
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
