#!/bin/bash
# t1061-burndown.t - GET /v1/allocations/{id}/burndown: an allocation's granted / used / held
# at N+1 instants from its start, checked against its ledger entry by entry (each at its
# job's time, the grant at the start) and its last point against GET /v1/balances; the
# series' end (now, the end, or a later entry), one point for an allocation not yet
# started, zeros without entries, an allocation entered after the jobs it paid for ran
# showing their history, bad points= refused naming the field, and who may read it exactly
# as GET /v1/allocations/{id}.
test_description='allocation burndown series'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

# check_series ID FILE: FILE is ID's burndown; its points are the running totals of ID's
# ledger (read here, summed by kind) at their instants, each entry at the time its money
# moved: the first credit at the allocation's start, a job's hold at its start, its other
# entries at its end, never later than the entry; the first point at "from", the last at
# "to", times ascending, the last point equal to GET /v1/balances and to "balance", and
# "alloc" equal to GET /v1/allocations/ID.  Prints the number of points.
check_series() {
	api GET "/v1/ledger?alloc=$1" >"$2.ledger" &&
	api GET "/v1/balances" >"$2.balances" &&
	api GET "/v1/allocations/$1" >"$2.alloc" &&
	api GET "/v1/jobs?limit=100000" >"$2.jobs" &&
	python3 - "$1" "$2" <<-\EOF
	import json, sys, calendar, time
	aid, f = int(sys.argv[1]), sys.argv[2]
	d = json.load(open(f))
	led = json.load(open(f + ".ledger"))["items"]
	bal = [b for b in json.load(open(f + ".balances"))["items"] if b["id"] == aid]
	def t(s):
	    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
	jobs = {(j["cluster"], j["job_id"], j["run"]): j for j in json.load(open(f + ".jobs"))["items"]}
	start = t(json.load(open(f + ".alloc"))["start"])
	granted = False
	for e in sorted(led, key=lambda e: e["id"]):
	    w = t(e["time"])
	    j = jobs.get((e["cluster"], e["job_id"], e["run"])) if e["job_id"] else None
	    if e["kind"] == "credit" and not e["job_id"] and not granted:
	        granted, w = True, min(w, start)
	    elif j and e["kind"] == "hold" and j["start"]:
	        w = min(w, t(j["start"]))
	    elif j and e["kind"] != "hold" and j["end"]:
	        w = min(w, t(j["end"]))
	    e["when"] = w
	sign = {"credit": (0, 1), "carryover": (0, 1), "adjustment": (0, 1), "expiry": (0, -1),
	        "debit": (1, 1), "refund": (1, -1), "hold": (2, 1), "release": (2, -1)}
	pts = d["points"]
	assert d["alloc"] == json.load(open(f + ".alloc")), d["alloc"]
	assert pts[0]["time"] == d["from"] == d["alloc"]["start"], (pts[0], d["from"])
	assert pts[-1]["time"] == d["to"], (pts[-1], d["to"])
	for a, b in zip(pts, pts[1:]):
	    assert t(a["time"]) <= t(b["time"]), (a, b)
	for p in pts:
	    s = [0, 0, 0]
	    for e in led:
	        if e["when"] <= t(p["time"]):
	            i, k = sign[e["kind"]]
	            s[i] += k * e["amount_sumin"]
	    want = [s[0], s[1], s[2], s[0] - s[1] - s[2]]
	    got = [p[k + "_sumin"] for k in ("granted", "used", "held", "available")]
	    assert got == want, (p, want)
	keys = ["granted_sumin", "used_sumin", "held_sumin", "available_sumin"]
	assert len(bal) == 1, bal
	for k in keys:
	    assert pts[-1][k] == bal[0][k] == d["balance"][k] == d["alloc"][k], (k, pts[-1], bal)
	assert d["balance"]["id"] == aid and d["alloc"]["id"] == aid
	if led:
	    assert t(d["to"]) >= max(t(e["time"]) for e in led)
	print(len(pts))
	EOF
}

# alloc_add ACCOUNT START END [SU]: add an allocation (times as text), print its id.
alloc_add() {
	local su=${4:+,\"su\":\"$4\"}
	api POST /v1/allocations "{\"account\":\"$1\",\"start\":\"$2\",\"end\":\"$3\"$su}" \
		>"$ALLOTD_DIR/added" &&
	json_get id <"$ALLOTD_DIR/added"
}
# hold JOB_ID, settle JOB_ID ELAPSED_S: as the operator, a job of alice on proj, billing 4
# for at most 600 s (a hold of 40 SU-minutes).
hold() {
	local who="\"user\":\"alice\",\"account\":\"proj\",\"partition\":\"std\""
	API_USER=slurm api POST /v1/jobs/hold \
		"{\"cluster\":\"c1\",\"job_id\":$1,$who,\"time_limit_s\":600,\"billing\":4}"
}
settle() {
	API_USER=slurm api POST /v1/jobs/settle \
		"{\"cluster\":\"c1\",\"job_id\":$1,\"elapsed_s\":$2,\"state\":\"COMPLETED\"}"
}

test_expect_success 'start allotd' '
	allotd_start AuthType=none TestMode=local Operators=slurm
'
test_expect_success 'reference data: cluster, partition, accounts, users, one assoc' '
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\"}" &&
	for a in proj later ended empty; do
		api POST /v1/accounts "{\"name\":\"$a\"}" || return 1
	done &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/users "{\"name\":\"bob\",\"uid\":1002}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"proj\",\"user\":\"alice\"}"
'
test_expect_success 'an allocation started a minute ago: credits, then a settled and a held job' '
	start=$(date -u -d @$(( $(date +%s) - 60 )) +%Y-%m-%dT%H:%M:%SZ) &&
	alloc_add proj $start 2100-01-01 10h >alloc_id &&
	api POST /v1/allocations/$(cat alloc_id)/credit "{\"amount_sumin\":60}" &&
	sleep 2 &&
	hold 1 && settle 1 300 >out &&
	test "$(json_get job.charge_sumin <out)" = 20 &&
	hold 2 &&
	api GET "/v1/balances?account=proj" >out &&
	test "$(json_get items.0.granted_sumin <out)" = 660 &&
	test "$(json_get items.0.used_sumin <out)" = 20 &&
	test "$(json_get items.0.held_sumin <out)" = 40
'
test_expect_success 'default: 51 points from the start to now, the ledger summed at each' '
	id=$(cat alloc_id) &&
	before=$(date +%s) &&
	api GET /v1/allocations/$id/burndown >bd &&
	after=$(date +%s) &&
	test "$(check_series $id bd)" = 51 &&
	test "$(json_get points.50.available_sumin <bd)" = 600 &&
	test "$(json_get points.0.granted_sumin <bd)" = 600 &&
	python3 -c "
import calendar, json, time
d = json.load(open(\"bd\"))
to = calendar.timegm(time.strptime(d[\"to\"], \"%Y-%m-%dT%H:%M:%SZ\"))
assert $before <= to <= $after, (to, $before, $after)
"
'
test_expect_success 'points=N: N+1 points; the credits seen before the jobs' '
	id=$(cat alloc_id) &&
	for n in 1 2 7 124 500; do
		api GET "/v1/allocations/$id/burndown?points=$n" >bd.$n &&
		test "$(check_series $id bd.$n)" = $((n + 1)) || return 1
	done &&
	python3 -c "
import json
pts = json.load(open(\"bd.124\"))[\"points\"]
assert any(p[\"granted_sumin\"] == 660 and p[\"used_sumin\"] == 0 and p[\"held_sumin\"] == 0
           for p in pts), pts
"
'
test_expect_success 'not started yet: one point at its start, with the credit written before' '
	id=$(alloc_add later 2099-01-01 2100-01-01 1h) &&
	api GET "/v1/allocations/$id/burndown?points=10" >bd &&
	test "$(check_series $id bd)" = 1 &&
	test "$(json_get from <bd)" = 2099-01-01T00:00:00Z &&
	test "$(json_get to <bd)" = 2099-01-01T00:00:00Z &&
	test "$(json_get points.0.granted_sumin <bd)" = 60
'
test_expect_success 'ended: the series runs on to its newest entry, written after the end' '
	id=$(alloc_add ended 2020-01-01 2021-01-01 2h) &&
	api GET "/v1/allocations/$id/burndown?points=4" >bd &&
	test "$(check_series $id bd)" = 5 &&
	api GET "/v1/ledger?alloc=$id" >led &&
	test "$(json_get to <bd)" = "$(json_get items.0.time <led)" &&
	test "$(json_get points.0.granted_sumin <bd)" = 120 &&
	test "$(json_get points.4.granted_sumin <bd)" = 120
'
test_expect_success 'entered after the jobs it paid for ran: their history, before its entry' '
	api POST /v1/accounts "{\"name\":\"late\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"late\",\"user\":\"bob\"}" &&
	s0=$(date -u -d "-40 days" +%F) && e0=$(date -u -d "+40 days" +%F) &&
	id=$(alloc_add late $s0 $e0 100h) &&
	entered=$(date +%s) &&
	j1s=$(date -u -d "-30 days" +%Y-%m-%dT%H:%M:%S) && j1e=$(date -u -d "-30 days +1 hour" +%Y-%m-%dT%H:%M:%S) &&
	j2s=$(date -u -d "-10 days" +%Y-%m-%dT%H:%M:%S) && j2e=$(date -u -d "-10 days +2 hours" +%Y-%m-%dT%H:%M:%S) &&
	api POST /v1/jobs/import "{\"cluster\":\"c1\",\"backfill\":true,
		\"header\":\"JobIDRaw|State|User|Account|Partition|Start|End|Elapsed|AllocTRES\",
		\"lines\":[\"901|COMPLETED|bob|late|std|$j1s|$j1e|01:00:00|cpu=2\",
		\"902|COMPLETED|bob|late|std|$j2s|$j2e|02:00:00|cpu=3\"]}" >out &&
	test "$(json_get imported <out)" = 2 &&
	api GET "/v1/allocations/$id/burndown?points=80" >bd &&
	test "$(check_series $id bd)" = 81 &&
	api GET "/v1/ledger?alloc=$id" >led &&
	python3 - $entered <<-\EOF
	import calendar, json, sys, time
	entered = int(sys.argv[1])
	t = lambda s: calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
	led = json.load(open("led"))["items"]
	assert all(t(e["time"]) >= entered - 5 for e in led), led
	pts = json.load(open("bd"))["points"]
	before = [p for p in pts if t(p["time"]) < entered - 5]
	assert len(before) > 40, len(before)
	assert all(p["granted_sumin"] == 6000 for p in pts), pts[0]
	steps = sorted({p["used_sumin"] for p in before})
	assert steps == [0, 120, 480], steps
	EOF
'
test_expect_success 'no entries: zeros, up to now' '
	id=$(alloc_add empty 2020-01-01 2100-01-01) &&
	api GET "/v1/allocations/$id/burndown?points=3" >bd &&
	test "$(check_series $id bd)" = 4 &&
	python3 -c "
import json
for p in json.load(open(\"bd\"))[\"points\"]:
    assert [p[k] for k in p if k != \"time\"] == [0, 0, 0, 0], p
"
'
test_expect_success 'points= not an integer from 1 to 500: 400 naming points' '
	id=$(cat alloc_id) &&
	for p in 0 501 -1 1x "" 99999999999999999999 1.5; do
		api_bad 400 points GET "/v1/allocations/$id/burndown?points=$p" || return 1
	done
'
test_expect_success 'an unknown allocation is 404, as for GET /v1/allocations/{id}' '
	api_bad 404 "" GET /v1/allocations/999999/burndown &&
	api_bad 404 "" GET /v1/allocations/999999
'
test_expect_success 'a user reads the burndown of its accounts only, as the allocation' '
	id=$(cat alloc_id) &&
	API_USER=alice api GET "/v1/allocations/$id/burndown?points=3" >out &&
	test "$(json_get points.3.used_sumin <out)" = 20 &&
	API_USER=bob test_expect_code 1 api GET /v1/allocations/$id >out &&
	alloc_status=$(api_status) &&
	API_USER=bob test_expect_code 1 api GET /v1/allocations/$id/burndown >out &&
	test "$(api_status)" = "$alloc_status" &&
	test "$alloc_status" = 403 &&
	test "$(json_get error.code <out)" = EPERM &&
	API_USER=bob test_expect_code 1 api GET /v1/allocations/999999/burndown >out &&
	test "$(api_status)" = 404
'
test_expect_success 'store check passes' '
	api GET /v1/check >out &&
	test "$(json_get ok <out)" = true
'
test_expect_success 'stop allotd' '
	allotd_stop
'
test_done
