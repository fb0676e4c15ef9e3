#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1072-observe.t - allot.conf EnforceMode=observe at the API (doc/adopt.md): an admission
# the bank would refuse (credit, a limit) is answered admitted with "observed" and the
# message, and recorded as an observed failure; a hold it would refuse holds nothing and
# writes no job record, only an observed failure (once, also on replay); the settle of that
# run charges it as the hold would have capped it (post-paid), overdrawing the allocation
# in the open (a negative available, the debit in the ledger) rather than hiding it; the
# report lists the observed refusals per account; SIGHUP to EnforceMode=enforce refuses
# again without a restart and changes no recorded money.
test_description='EnforceMode=observe: admit, hold, settle, report, SIGHUP to enforce'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

ALLOT=$ALLOT_BUILD_DIR/src/cli/allot
bal() { api GET "/v1/balances?account=chem" | json_get "items.0.$1"; }
# job MINUTES: fields common to admit and hold, billing 1, so MINUTES SU-minutes at most.
job() {
	echo "\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"p\",\"time_limit_s\":$(( $1 * 60 )),\"billing\":1"
}
op() { api POST "/v1/jobs/$1" "$2"; }
failures() { api GET "/v1/failures?account=chem" | python3 -c '
import json,sys
for f in json.load(sys.stdin)["items"]:
    print(f["stage"], f["job_id"], int(f["observed"]), f["needed_sumin"])' | sort; }
money() { api GET "/v1/balances?account=chem" | python3 -c '
import json,sys
b=json.load(sys.stdin)["items"][0]
print(b["granted_sumin"], b["used_sumin"], b["held_sumin"], b["available_sumin"])'; }

test_expect_success 'allotd with EnforceMode=observe; chem has 25 SU-minutes' '
	munged_start "$PWD/munge" &&
	chmod 0755 "$MUNGE_DIR" &&
	allotd_start Operators=root EnforceMode=observe &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"amount_sumin\":25}" &&
	test "$(bal available_sumin)" = 25
'
test_expect_success 'an affordable admission is a plain one (no observed flag, no failure)' '
	op admit "{$(job 10)}" >out &&
	test "$(json_get admitted <out)" = true &&
	test "$(json_get observed <out 2>/dev/null)" != true &&
	test -z "$(failures)"
'
test_expect_success 'an admission beyond the credit: 200, admitted, observed, the refusal text' '
	op admit "{$(job 30)}" >out &&
	test "$(api_status)" = 200 &&
	test "$(json_get admitted <out)" = true &&
	test "$(json_get observed <out)" = true &&
	test "$(json_get error.code <out)" = EFUNDS &&
	json_get message <out >msg && cat msg &&
	grep -q "account chem" msg && grep -q "may cost up to" msg &&
	test "$(failures)" = "admit 0 1 30" &&
	test "$(bal held_sumin)" = 0
'
test_expect_success 'an admission a limit refuses: observed too, ELIMIT, the limit named' '
	api PUT /v1/limits "{\"scope\":\"assoc\",\"owner\":\"c1:chem:alice:\",\"name\":\"MaxWall\",\"value\":\"60\"}" &&
	op admit "{$(job 90)}" >out &&
	test "$(json_get admitted <out)" = true &&
	test "$(json_get error.code <out)" = ELIMIT &&
	json_get message <out | grep -q "MaxWallDurationPerJob=60 from user association" &&
	api PUT /v1/limits "{\"scope\":\"assoc\",\"owner\":\"c1:chem:alice:\",\"name\":\"MaxWall\",\"value\":\"\"}" &&
	test "$(failures | grep -c "^admit 0 1")" = 2
'
test_expect_success 'holds: two fit; the third holds nothing, no job record, an observed failure' '
	op hold "{$(job 10),\"job_id\":1}" >out && test "$(json_get held <out)" = true &&
	op hold "{$(job 10),\"job_id\":2}" >out && test "$(json_get held <out)" = true &&
	money >before && test "$(cat before)" = "25 0 20 5" &&
	op hold "{$(job 10),\"job_id\":3}" >out &&
	test "$(api_status)" = 200 &&
	test "$(json_get held <out)" = false &&
	test "$(json_get observed <out)" = true &&
	json_get message <out | grep -q "job 3 run 0" &&
	money >after && test_cmp before after &&
	test_expect_code 1 api GET /v1/jobs/c1/3 &&
	failures | grep -qx "hold 3 1 10"
'
test_expect_success 'the replayed hold answers the same and records nothing new' '
	op hold "{$(job 10),\"job_id\":3}" >out &&
	test "$(json_get replay <out)" = true &&
	test "$(json_get observed <out)" = true &&
	test "$(failures | grep -c "^hold 3 ")" = 1 &&
	money >again && test_cmp before again
'
test_expect_success 'settles: the unheld run pays what a held one pays, overdrawing in the open' '
	settle="\"cluster\":\"c1\",\"elapsed_s\":540,\"state\":\"COMPLETED\",\"billing\":1,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"p\",\"time_limit_s\":600" &&
	op settle "{$settle,\"job_id\":1}" >out1 &&
	op settle "{$settle,\"job_id\":3}" >out3 &&
	test "$(json_get job.charge_sumin <out1)" = 9 &&
	test "$(json_get job.charge_sumin <out3)" = 9 &&
	money >m && cat m &&
	test "$(cat m)" = "25 18 10 -3" &&
	api GET "/v1/ledger?cluster=c1&job=3" | python3 -c "
import json,sys
k=[(e[\"kind\"],e[\"amount_sumin\"]) for e in json.load(sys.stdin)[\"items\"]]
assert k==[(\"debit\",9)], k" &&
	api GET /v1/check >check && test "$(json_get ok <check)" = true
'
test_expect_success 'the report lists the observed refusals per account' '
	api GET "/v1/reports/observe?since=2020-01-01" >rep &&
	test "$(json_get enforce_mode <rep)" = observe &&
	test "$(json_get accounts.0.account <rep)" = chem &&
	test "$(json_get accounts.0.refusals <rep)" = 3 &&
	test "$(json_get accounts.0.jobs <rep)" = 1 &&
	test "$(json_get accounts.0.needed_sumin <rep)" = 130 &&
	test "$(json_get accounts.0.items.2.job_id <rep)" = 3 &&
	"$ALLOT" --url "$ALLOTD_URL" report observe since=2020-01-01 >cli.out &&
	cat cli.out &&
	grep -q "EnforceMode=observe" cli.out &&
	grep -q "may cost up to" cli.out &&
	"$ALLOT" --url "$ALLOTD_URL" -P -n report observe account=chem >cli.p &&
	test "$(wc -l <cli.p)" = 3 &&
	test "$(grep -c "^chem|" cli.p)" = 3
'
test_expect_success 'the report takes only its filters; a plain user may not read it' '
	test_expect_code 1 api GET "/v1/reports/observe?user=alice" &&
	test "$(api_status)" = 400 &&
	API_RUNAS=nobody test_expect_code 1 api GET "/v1/reports/observe" &&
	test "$(api_status)" = 403
'
test_expect_success 'SIGHUP to EnforceMode=enforce: refusals again, no money moved' '
	money >pre &&
	api GET "/v1/ledger?account=chem" >ledger.pre &&
	sed -i "s/^EnforceMode=observe/EnforceMode=enforce/" "$ALLOTD_CONF" &&
	kill -HUP $ALLOTD_PID &&
	wait_for 10 grep -q "reloaded\" key=EnforceMode" "$ALLOTD_LOG" &&
	wait_for 10 grep -q "configuration reloaded" "$ALLOTD_LOG" &&
	money >post && test_cmp pre post &&
	api GET "/v1/ledger?account=chem" >ledger.post && test_cmp ledger.pre ledger.post &&
	test_expect_code 1 op admit "{$(job 30)}" >out &&
	test "$(api_status)" = 402 &&
	test_expect_code 1 op hold "{$(job 10),\"job_id\":4}" >out &&
	test "$(api_status)" = 402 &&
	failures | grep -qx "hold 4 0 10" &&
	api GET "/v1/jobs/c1/4" | json_get runs.0.status | grep -qx refused &&
	api GET "/v1/reports/observe" >rep && test "$(json_get accounts.0.refusals <rep)" = 3 &&
	test "$(json_get enforce_mode <rep)" = enforce
'
test_expect_success 'stop allotd' '
	allotd_stop
'
test_done
