#!/bin/bash
# t2500-policy.t - periodic policies through allotd (doc/design.md §5): exactly one reset and one
# carryover per period across a month boundary with allotd killed (-9) and restarted, ticks
# replayed, the clock stepped back and jumping months ahead (agent down for months), none
# for a total policy; the outbox seen by a late agent (poll, lease, confirm, failure text),
# dry-run changes nothing, force-reset, history filtered by period; an allocation that ends
# mid-month closes its last period once (expiry with its reason, log line, no more evaluations).
# Times are given to the tick explicitly ("now"), in 2030, after the real clock, so the
# background tick (real time, before the allocations start) never rolls anything.
test_description='periodic policies, boundary exactly once, command outbox'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

JUL15=2030-07-15T12:00:00Z
AUG1=2030-08-01T00:00:05Z
AUG2=2030-08-02T00:00:00Z
NOV3=2030-11-03T00:00:00Z

tick() { api POST /v1/policies/tick "{\"now\":\"$1\"}"; }
ncmd() { api GET "/v1/commands?policy=$1&period=$2" |
	python3 -c 'import json,sys; k=sys.argv[1]; print(sum(1 for c in json.load(sys.stdin)["commands"] if c["kind"]==k))' "$3"; }
nledger() { api GET "/v1/ledger?alloc=$1" |
	python3 -c 'import json,sys; k=sys.argv[1]; print(sum(1 for e in json.load(sys.stdin)["items"] if e["kind"]==k))' "$2"; }

test_expect_success 'start allotd, bank with two allocations' '
	allotd_start AuthType=none TestMode=local Operators=slurm TimeZone=UTC &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"2030-01-01\",\"end\":\"2031-01-01\"}" >out &&
	json_get id <out >alloc_m &&
	api POST /v1/allocations "{\"account\":\"phys\",\"cluster\":\"c1\",\"start\":\"2030-01-01\",\"end\":\"2031-01-01\"}" >out &&
	json_get id <out >alloc_t
'
test_expect_success 'policies: monthly with slow QOS, and total' '
	api POST /v1/policies "{\"alloc\":$(cat alloc_m),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":1000,\"slow_qos\":\"slow\",\"normal_qos\":\"normal\",\"fairshare\":100}" >out &&
	test "$(api_status)" = 201 && json_get id <out >pol_m &&
	test "$(json_get grace_ppm <out)" = 200000 &&
	api POST /v1/policies "{\"alloc\":$(cat alloc_t),\"cluster\":\"c1\",\"period\":\"total\",\"base_sumin\":5000}" >out &&
	json_get id <out >pol_t &&
	test "$(json_get reset_raw_usage <out)" = false &&
	test_expect_code 1 api POST /v1/policies "{\"alloc\":$(cat alloc_m),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":1}" &&
	test "$(api_status)" = 409
'
test_expect_success 'first tick opens July: credit, reset, limit, fairshare' '
	tick $JUL15 >out && test "$(json_get rolled <out)" = 2 &&
	test "$(ncmd $(cat pol_m) 2030-07 reset_raw_usage)" = 1 &&
	api GET "/v1/commands?policy=$(cat pol_m)&period=2030-07" >out &&
	grep -q "GrpTRESMins=billing=1200" out && grep -q "fairshare=100" out
'
test_expect_success 'dry-run at the boundary shows the carry and changes nothing' '
	api POST /v1/policies/$(cat pol_m)/dry-run "{\"now\":\"$AUG1\"}" >out &&
	test "$(json_get boundary.rolled <out)" = true &&
	test "$(json_get boundary.new_period <out)" = 2030-08 &&
	test "$(json_get boundary.carry_sumin <out)" = 500 &&
	api GET /v1/policies/$(cat pol_m) >out &&
	test "$(json_get current_period <out)" = 2030-07
'
test_expect_success 'allotd killed -9 and restarted across the boundary; ticks replayed' '
	allotd_kill9 && allotd_start AuthType=none TestMode=local Operators=slurm TimeZone=UTC &&
	tick $AUG1 >out && test "$(json_get rolled <out)" = 1 &&
	allotd_kill9 && allotd_start AuthType=none TestMode=local Operators=slurm TimeZone=UTC &&
	tick $AUG1 >out && test "$(json_get rolled <out)" = 0 &&
	tick $AUG2 >out && test "$(json_get rolled <out)" = 0 &&
	tick $JUL15 >out && test "$(json_get rolled <out)" = 0 &&
	test "$(ncmd $(cat pol_m) 2030-08 reset_raw_usage)" = 1 &&
	test "$(nledger $(cat alloc_m) carryover)" = 1 &&
	test "$(nledger $(cat alloc_m) credit)" = 2 &&
	test "$(nledger $(cat alloc_m) expiry)" = 1
'
test_expect_success 'agent down for months: November processed once' '
	tick $NOV3 >out && test "$(json_get rolled <out)" = 1 &&
	tick $NOV3 >out && test "$(json_get rolled <out)" = 0 &&
	test "$(ncmd $(cat pol_m) 2030-11 reset_raw_usage)" = 1 &&
	test "$(ncmd $(cat pol_m) "" reset_raw_usage)" = 3 &&
	test "$(ncmd $(cat pol_t) "" reset_raw_usage)" = 0 &&
	test "$(nledger $(cat alloc_t) credit)" = 1
'
test_expect_success 'status shows since when commands wait for the agent' '
	api GET /v1/agents/c1 >out &&
	test "$(json_get last_seen <out)" = None &&
	test "$(json_get waiting <out)" -ge 9 &&
	api GET /v1/policies/$(cat pol_m) >out &&
	test "$(json_get periods.0.period <out)" = 2030-07 &&
	test "$(json_get periods.1.carry_sumin <out)" = 500
'
test_expect_success 'late agent: poll hands out everything once, lease, results' '
	API_USER=slurm api POST /v1/agents/c1/poll "{\"max\":50,\"lease_s\":300}" >out &&
	python3 -c "import json,sys; c=json.load(open(\"out\"))[\"commands\"]; print(len(c)); print(c[0][\"id\"]); print(c[1][\"id\"])" >got &&
	test "$(sed -n 1p got)" -ge 9 &&
	API_USER=slurm api POST /v1/agents/c1/poll "{\"max\":50}" >out &&
	test "$(json_get commands <out)" = "[]" &&
	API_USER=slurm api POST /v1/commands/$(sed -n 2p got)/result "{\"state\":\"confirmed\",\"result\":\"verified\"}" >out &&
	test "$(json_get state <out)" = confirmed &&
	API_USER=slurm api POST /v1/commands/$(sed -n 2p got)/result "{\"state\":\"confirmed\"}" >out &&
	test "$(json_get replay <out)" = true && test "$(json_get result <out)" = verified &&
	API_USER=slurm test_expect_code 1 api POST /v1/commands/$(sed -n 2p got)/result "{\"state\":\"failed\"}" >out &&
	test "$(api_status)" = 409 && grep "already confirmed" out &&
	api GET /v1/commands/$(sed -n 2p got) >out &&
	test "$(json_get state <out)" = confirmed && test "$(json_get result <out)" = verified &&
	API_USER=slurm api POST /v1/commands/$(sed -n 3p got)/result "{\"state\":\"failed\",\"result\":\" Unknown option: x\"}" >out &&
	api GET /v1/commands/$(sed -n 3p got) >out &&
	test "$(json_get state <out)" = failed && test "$(json_get result <out)" = " Unknown option: x" &&
	api GET /v1/agents/c1 >out && test "$(json_get last_seen <out)" != None
'
test_expect_success 'a user may not post results' '
	API_USER=alice test_expect_code 1 api POST /v1/commands/1/result "{\"state\":\"confirmed\"}"
'
test_expect_success 'force-reset enqueues one more reset for the current period' '
	api POST /v1/policies/$(cat pol_m)/force-reset "{\"now\":\"2030-11-04T00:00:00Z\"}" >out &&
	test "$(json_get kind <out)" = reset_raw_usage &&
	test "$(ncmd $(cat pol_m) 2030-11 reset_raw_usage)" = 2
'
test_expect_success 'evaluation history filtered by period' '
	api GET "/v1/evaluations?policy=$(cat pol_m)&period=2030-08" >out &&
	python3 -c "import json; e=json.load(open(\"out\"))[\"evaluations\"]; assert e and all(x[\"period\"]==\"2030-08\" for x in e)"
'
test_expect_success 'an allocation ending mid-month: its period closes once, the ledger says why' '
	api POST /v1/accounts "{\"name\":\"bio\"}" &&
	api POST /v1/allocations "{\"account\":\"bio\",\"cluster\":\"c1\",\"start\":\"2030-01-01\",\"end\":\"2030-12-10\"}" >out &&
	json_get id <out >alloc_e &&
	api POST /v1/policies "{\"alloc\":$(cat alloc_e),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":1000}" >out &&
	json_get id <out >pol_e &&
	tick 2030-12-05T00:00:00Z &&
	tick 2030-12-10T00:00:01Z && tick 2030-12-11T00:00:00Z && tick 2030-12-12T00:00:00Z &&
	test "$(nledger $(cat alloc_e) expiry)" = 1 &&
	api GET "/v1/ledger?alloc=$(cat alloc_e)" >out &&
	python3 -c "import json; e=[x for x in json.load(open(\"out\"))[\"items\"] if x[\"kind\"]==\"expiry\"][0]; assert e[\"amount_sumin\"]==1000, e; assert \"closed at the allocation\x27s end\" in e[\"comment\"], e" &&
	api GET /v1/policies/$(cat pol_e) >out &&
	test "$(json_get periods.0.expired_sumin <out)" = 1000 &&
	test "$(json_get periods.0.closed <out)" = 2030-12-10T00:00:01Z &&
	grep "msg=\"allocation ended\" policy=$(cat pol_e) period=\"2030-12\" expired_sumin=1000" "$ALLOTD_LOG" &&
	api GET "/v1/evaluations?policy=$(cat pol_e)" >out &&
	test "$(python3 -c "import json; print(len(json.load(open(\"out\"))[\"evaluations\"]))")" = 1
'
test_expect_success 'stop allotd' '
	allotd_stop && test "$ALLOTD_EXIT" = 0
'
test_done
