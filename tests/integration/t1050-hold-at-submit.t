#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1050-hold-at-submit.t - HoldMode=submit at the API (doc/slurm.md "Hold at submit"): an
# admit with a submit_token holds the job's credit while it is pending; the hold with the
# same token moves that credit to the real job id without needing new credit; a provisional
# hold released by hand (job cancelled while pending) frees its credit; one never bound is
# released by allotd after SubmitHoldTTL; tokens outside [2^32, 2^62] are refused; admits
# racing for the last credit hold once, and those the hold refuses read as admission denials.
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
# 32 admits with tokens BASE+1..BASE+32 for account $1 at once (threads released together):
# one line each, "STATUS held|refused MESSAGE".
race_admits() {
	python3 - "$ALLOTD_PORT" "$1" "$2" <<-\PY
	import http.client, json, sys, threading
	port, account, base = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
	go = threading.Barrier(32)
	out = [None] * 32
	def admit(i):
	    body = json.dumps({"cluster": "c1", "user": "alice", "account": account,
	                       "partition": "p", "time_limit_s": 600, "billing": 1,
	                       "submit_token": (1 << 32) + base + i})
	    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
	    c.connect()
	    go.wait()
	    c.request("POST", "/v1/jobs/admit", body,
	              {"Content-Type": "application/json", "X-Allot-User": "slurm"})
	    r = c.getresponse()
	    a = json.loads(r.read())
	    out[i] = "%d %s %s" % (r.status, "held" if a.get("held") else "refused", a.get("message", ""))
	ts = [threading.Thread(target=admit, args=(i,)) for i in range(32)]
	for t in ts: t.start()
	for t in ts: t.join()
	print("\n".join(out))
	PY
}
hold_stage_failures() { api GET "/v1/failures?account=$1" |
	python3 -c 'import json,sys; print(sum(f["stage"] == "hold" for f in json.load(sys.stdin)["items"]))'; }
# The read-only check of an admit runs beside the others; the hold is then the writer's
# atomic check, so most of 32 racing admits are refused there, after their read said yes.
# Those refusals must read as admission denials (the sbatch user sees them), not as the
# failure record's "job <token> run 0: ...".  Rounds until one refusal came from the hold.
test_expect_success 'admits racing for the last credit: one holds, every refusal reads as an admission denial' '
	raced=0 &&
	for round in 1 2 3 4 5; do
		acct=race$round &&
		api POST /v1/accounts "{\"name\":\"$acct\"}" >/dev/null &&
		api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"$acct\",\"user\":\"alice\"}" >/dev/null &&
		api POST /v1/allocations "{\"account\":\"$acct\",\"cluster\":\"c1\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":10}" >/dev/null &&
		race_admits $acct $((round * 100)) >race.$round &&
		test "$(grep -c "^200 held " race.$round)" = 1 &&
		test "$(grep -c "^402 refused account $acct, allocation [0-9]* (cpu of account $acct): available 0h SU, but this job may cost up to 10m SU (billing 1 x time limit 10 min); pending jobs hold 10m SU (held at submit)\. " race.$round)" = 31 &&
		test "$(api GET "/v1/balances?account=$acct" | json_get items.0.held_sumin)" = 10 &&
		n=$(hold_stage_failures $acct) &&
		echo "round $round: $n of 31 refused by the hold" &&
		if test "$n" -gt 0; then raced=1; break; fi
	done &&
	test $raced = 1
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
