#!/bin/bash
# t1062-forecast.t - GET /v1/allocations/{id}/forecast and GET /v1/forecasts: the day the
# available balance reaches zero at the recent burn, its band and the balance at the end,
# checked against a reference computed here from the allocation's own ledger; at= (the
# forecast as made then), an idle allocation, bad window= and at= refused naming the field,
# who may read it (as GET /v1/allocations/{id}), `allot forecast`, and the /metrics gauges
# (only in a scrape that may read every account).
test_description='allocation exhaustion forecast'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }

allot() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }

# check_forecast ID FILE [WINDOW]: FILE is ID's forecast; recompute it from ID's ledger
# (entries at or before "at"): the available balance, the daily net use of the last whole
# days weighted n..1, the exhaustion instant and the end balance exactly, the band from the
# weighted standard deviation.
check_forecast() {
	api GET "/v1/ledger?alloc=$1" >"$2.ledger" &&
	python3 - "$1" "$2" "${3:-14}" <<-\EOF
	import json, math, sys, calendar, time
	aid, f, window = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
	d = json.load(open(f))
	led = json.load(open(f + ".ledger"))["items"]
	def t(s):
	    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
	def iso(x):
	    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(x))
	at, start, end, D = t(d["at"]), t(d["start"]), t(d["end"]), 86400
	sign = {"credit": (0, 1), "carryover": (0, 1), "adjustment": (0, 1), "expiry": (0, -1),
	        "debit": (1, 1), "refund": (1, -1), "hold": (2, 1), "release": (2, -1)}
	s = [0, 0, 0]
	for e in led:
	    if t(e["time"]) <= at:
	        i, k = sign[e["kind"]]
	        s[i] += k * e["amount_sumin"]
	avail = s[0] - s[1] - s[2]
	assert d["id"] == aid and d["available_sumin"] == avail, (d, avail)
	n = min(window, max(0, at - start) // D)
	assert d["history_days"] == n and d["window_days"] == window, d
	u = [0] * n
	for e in led:
	    x = t(e["time"])
	    if e["kind"] in ("debit", "refund") and at - n * D < x <= at:
	        u[(at - x) // D] += e["amount_sumin"] * (1 if e["kind"] == "debit" else -1)
	num, den = sum((n - i) * u[i] for i in range(n)), n * (n + 1) // 2
	num = max(num, 0)
	assert d["burn_sumin_per_day"] == num // den, (d, num, den)
	if avail <= 0:
	    assert d["exhausts"] == d["at"], d
	elif num == 0:
	    assert d["exhausts"] is None and d["days_left"] is None, d
	else:
	    want = at + avail * D * den // num
	    assert d["exhausts"] == iso(want), (d["exhausts"], iso(want))
	    assert abs(d["days_left"] - (want - at) / D) < 0.011, d
	    assert d["before_end"] == (want < end), d
	if at < end:
	    use = -((-num * (end - at)) // (den * D))
	    assert d["end_balance_sumin"] == avail - use, (d, avail - use)
	mean = num / den
	sd = math.sqrt(sum((n - i) * (u[i] - mean) ** 2 for i in range(n)) / den) if n else 0
	assert d["burn_high_sumin_per_day"] == math.floor(mean + sd), d
	assert d["burn_low_sumin_per_day"] == math.floor(max(mean - sd, 0)), d
	assert d["end_balance_low_sumin"] <= d["end_balance_sumin"] <= d["end_balance_high_sumin"]
	if d["exhausts"]:
	    assert d["exhausts_early"] <= d["exhausts"], d
	    assert d["exhausts_late"] is None or d["exhausts_late"] >= d["exhausts"], d
	print(d["burn_sumin_per_day"], d["exhausts"], d["end_balance_sumin"])
	EOF
}

# job ID ELAPSED_S: a job of alice on chem, billing 16, held for 2 h and settled.
job() {
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$1,
		\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":7200,
		\"billing\":16}" &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$1,
		\"elapsed_s\":$2,\"state\":\"COMPLETED\"}"
}

test_expect_success 'start allotd' '
	allotd_start AuthType=none TestMode=local Operators=slurm
'
test_expect_success 'bank: chem with a 60-day-old allocation, jobs settled, one held' '
	start=$(date -u -d "-60 days" +%F) && end=$(date -u -d "+40 days" +%F) &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/users "{\"name\":\"bob\",\"uid\":1002}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"phys\",\"user\":\"bob\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"$start\",\"end\":\"$end\",
		\"su\":\"100h\"}" >out &&
	json_get id <out >chem_id &&
	api POST /v1/allocations "{\"account\":\"phys\",\"start\":\"$start\",\"end\":\"$end\",
		\"su\":\"10h\"}" >out &&
	json_get id <out >phys_id &&
	job 101 3600 && job 102 1800 &&
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":103,
		\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":3600,
		\"billing\":16}" &&
	api GET "/v1/balances?account=chem" >out &&
	test "$(json_get items.0.used_sumin <out)" = 1440 &&
	test "$(json_get items.0.held_sumin <out)" = 960
'
test_expect_success 'the forecast now equals the one computed from the ledger' '
	api GET /v1/allocations/$(cat chem_id)/forecast >fc &&
	check_forecast $(cat chem_id) fc >got &&
	cat got &&
	test "$(json_get history_days <fc)" = 14 &&
	test "$(json_get available_sumin <fc)" = 3600 &&
	test "$(cut -d" " -f1 got)" = 192
'
test_expect_success 'at= a day and a half ahead: the same burn one day back, exactly' '
	at=$(( $(date +%s) + 129600 )) &&
	api GET "/v1/allocations/$(cat chem_id)/forecast?at=$at&window=7" >fc &&
	check_forecast $(cat chem_id) fc 7 &&
	test "$(json_get window_days <fc)" = 7 &&
	test "$(json_get history_days <fc)" = 7
'
test_expect_success 'at= before anything was written: nothing granted, exhausted then' '
	at=$(date -u -d "-10 days" +%FT%TZ) &&
	api GET "/v1/allocations/$(cat chem_id)/forecast?at=$at" >fc &&
	check_forecast $(cat chem_id) fc &&
	test "$(json_get available_sumin <fc)" = 0 &&
	test "$(json_get exhausts <fc)" = "$at"
'
test_expect_success 'an idle allocation never runs out and keeps its balance to the end' '
	api GET /v1/allocations/$(cat phys_id)/forecast >fc &&
	check_forecast $(cat phys_id) fc &&
	test "$(json_get exhausts <fc)" = None &&
	test "$(json_get days_left <fc)" = None &&
	test "$(json_get before_end <fc)" = false &&
	test "$(json_get end_balance_sumin <fc)" = 600
'
test_expect_success 'GET /v1/forecasts: a row per allocation, as the single forecast' '
	api GET "/v1/forecasts?account=chem" >list &&
	api GET /v1/allocations/$(cat chem_id)/forecast >one &&
	python3 - <<-\EOF
	import json
	rows = json.load(open("list"))["items"]
	one = json.load(open("one"))
	assert len(rows) == 1, rows
	for k in ("id", "available_sumin", "burn_sumin_per_day", "end_balance_sumin", "history_days"):
	    assert rows[0][k] == one[k], (k, rows[0], one)
	EOF
'
test_expect_success 'bad window= and at= are refused naming the field' '
	for w in 0 367 x -1; do
		test_expect_code 1 api GET "/v1/allocations/$(cat chem_id)/forecast?window=$w" >out &&
		test "$(api_status)" = 400 &&
		grep -q window out || return 1
	done &&
	test_expect_code 1 api GET "/v1/forecasts?window=400" >out &&
	test "$(api_status)" = 400 && grep -q window out &&
	test_expect_code 1 api GET "/v1/allocations/$(cat chem_id)/forecast?at=yesterday" >out &&
	test "$(api_status)" = 400 && grep -q "\"at" out &&
	test_expect_code 1 api GET "/v1/allocations/999/forecast" >out &&
	test "$(api_status)" = 404
'
test_expect_success 'who may read: the account member, not another project user' '
	API_USER=alice api GET /v1/allocations/$(cat chem_id)/forecast >out &&
	API_USER=bob test_expect_code 1 api GET /v1/allocations/$(cat chem_id)/forecast >out &&
	test "$(api_status)" = 403 &&
	API_USER=bob api GET /v1/forecasts >out &&
	python3 -c "import json,sys; r=json.load(open(\"out\"))[\"items\"]; \
		sys.exit(0 if [x[\"account\"] for x in r] == [\"phys\"] else 1)"
'
test_expect_success 'allot forecast: table, -P and one allocation' '
	allot forecast chem >out &&
	cat out &&
	grep "^Allocation.*Burn/day.*Exhausts" out &&
	allot -P -n forecast alloc=$(cat phys_id) >out &&
	cat out &&
	test "$(cut -d"|" -f2,4,5,6,9,11 out)" = "phys|10h|0h|never|never|10h" &&
	allot -P -n forecast alloc=$(cat chem_id) >out &&
	test "$(cut -d"|" -f4,5 out)" = "60h|3h12m" &&
	test_expect_code 2 allot forecast chem alloc=1 2>err &&
	grep "not both" err &&
	test_expect_code 2 allot forecast alloc=x 2>err &&
	grep alloc err
'
test_expect_success '/metrics: the forecast gauges only in a scrape that may read every account' '
	curl -s -o out "$ALLOTD_URL/metrics" &&
	! grep allot_allocation_forecast out &&
	API_USER=alice api GET /metrics >out &&
	! grep allot_allocation_forecast out &&
	API_USER=slurm api GET /metrics >out &&
	grep "^allot_allocation_forecast_days{id=\"$(cat phys_id)\",account=\"phys\",resource=\"cpu\"} +Inf$" out &&
	grep "^allot_allocation_forecast_days{id=\"$(cat chem_id)\",account=\"chem\",resource=\"cpu\"} [0-9.]*$" out &&
	grep "^allot_allocation_forecast_end_balance_sumin{id=\"$(cat phys_id)\",account=\"phys\",resource=\"cpu\"} 600$" out &&
	python3 "$ALLOT_SRC_DIR/tests/lib/prom_check.py" <out >fams &&
	grep "^allot_allocation_forecast_days gauge " fams
'
test_expect_success 'policy forecast_days: bad values are refused naming the field' '
	start=$(date -u -d "-60 days" +%F) && end=$(date -u -d "+40 days" +%F) &&
	api POST /v1/accounts "{\"name\":\"bio\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"bio\",\"user\":\"alice\"}" &&
	api POST /v1/allocations "{\"account\":\"bio\",\"start\":\"$start\",\"end\":\"$end\"}" >out &&
	json_get id <out >bio_id &&
	for d in -1 3661 "\"x\"" 1.5; do
		test_expect_code 1 api POST /v1/policies "{\"alloc\":$(cat bio_id),\"cluster\":\"c1\",
			\"period\":\"total\",\"base_sumin\":6000,\"forecast_days\":$d}" >out &&
		test "$(api_status)" = 400 && grep -q forecast_days out || return 1
	done &&
	api GET /v1/policies >out &&
	test "$(json_get policies <out)" = "[]"
'
test_expect_success 'policy forecast_days=30: a burn that runs out in 16 days notifies' '
	api POST /v1/policies "{\"alloc\":$(cat bio_id),\"cluster\":\"c1\",\"period\":\"total\",
		\"base_sumin\":6000,\"forecast_days\":30}" >out &&
	json_get id <out >pol_id &&
	test "$(json_get forecast_days <out)" = 30 &&
	api POST /v1/policies/$(cat pol_id)/evaluate "{}" >out &&
	test "$(json_get actions <out)" = "" &&
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":201,
		\"user\":\"alice\",\"account\":\"bio\",\"partition\":\"std\",\"time_limit_s\":7200,
		\"billing\":16}" &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":201,
		\"elapsed_s\":7200,\"state\":\"COMPLETED\"}" &&
	api POST /v1/policies/$(cat pol_id)/evaluate "{}" >out &&
	api GET /v1/allocations/$(cat bio_id)/forecast >fc &&
	test "$(json_get available_sumin <fc)" = 4080 &&
	test "$(json_get burn_sumin_per_day <fc)" = 256 &&
	test "$(json_get days_left <fc)" = 15.93 &&
	api GET "/v1/evaluations?policy=$(cat pol_id)" >evals &&
	python3 - <<-\EOF
	import json
	ev = json.load(open("evals"))["evaluations"][::-1]
	acts = [e["actions"] for e in ev]
	assert sum("forecast-notify" in a.split(",") for a in acts) == 1, acts
	assert ev[-1]["new_flags"] & 8, ev[-1]
	EOF
'
test_expect_success 'a top-up that lasts past the end clears it; allot policy show' '
	api POST /v1/allocations/$(cat bio_id)/credit "{\"su\":\"1000h\"}" &&
	api POST /v1/policies/$(cat pol_id)/evaluate "{}" >out &&
	api GET "/v1/evaluations?policy=$(cat pol_id)" >evals &&
	python3 - <<-\EOF &&
	import json
	ev = json.load(open("evals"))["evaluations"][::-1]
	acts = [e["actions"] for e in ev]
	assert sum("forecast-notify-clear" in a.split(",") for a in acts) == 1, acts
	assert not ev[-1]["new_flags"] & 8, ev[-1]
	EOF
	allot -P policy show >out &&
	cat out &&
	head -n 1 out | grep "|ForecastDays$" &&
	grep "^$(cat pol_id)|$(cat bio_id)|bio|.*|30$" out
'
test_expect_success 'stop allotd' '
	allotd_stop
'
test_done
