#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1070-sitefactor-ties.t - GET /v1/sitefactors when allocations tie on their end date: they
# get one factor, and not 0 (f_temporal was 1 - dt/max dt, 0 for every allocation ending
# last, so three allocations sharing one end date all had site factor 0).  The rule
# (doc/slurm.md "Site factor"): f_temporal = 1 - (dt - min dt)/max dt, checked here
# independently, at its extremes: one allocation, all equal, one with no credit left.
test_description='site factor of allocations that tie'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

# check_sf FILE: every allocation's numbers as the rule gives them, from the reply alone.
check_sf() {
	python3 - "$1" <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["enabled"] and d["rule"] == "power" and d["max"] == 1000, d
	now = d["time"]
	dts = [a["end"] - now for a in d["allocations"]]
	lo, hi = min(dts), max(dts)
	for a in d["allocations"]:
	    fc = max(0.0, min(1.0, 1 - (a["used_sumin"] + a["held_sumin"]) / a["granted_sumin"])) if a["granted_sumin"] > 0 else 0.0
	    ft = max(0.0, min(1.0, 1 - ((a["end"] - now) - lo) / hi))
	    assert abs(a["f_credit"] - fc) < 1e-9 and abs(a["f_temporal"] - ft) < 1e-9, (a, fc, ft)
	    assert a["site_factor"] == round(fc * ft * 1000), a
	PY
}
sf() { api GET "/v1/sitefactors?cluster=c1" >"$1" && cat "$1" && check_sf "$1"; }
# field FILE ACCOUNT KEY: one allocation's value.
field() {
	python3 -c 'import json,sys; print([a for a in json.load(open(sys.argv[1]))["allocations"] if a["account"]==sys.argv[2]][0][sys.argv[3]])' "$@"
}
settle() {
	now=$(date +%s) &&
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$1,\"run\":0,\"start\":$((now-$3)),\"end\":$now,\"elapsed_s\":$3,\"state\":\"COMPLETED\",\"billing\":1,\"user\":\"root\",\"account\":\"$2\",\"partition\":\"debug\",\"qos\":\"normal\",\"time_limit_s\":$3}" >/dev/null
}

test_expect_success 'allotd with SiteFactorMax=1000 and one allocation' '
	allotd_start AuthType=none TestMode=local SiteFactorMax=1000 SiteFactorRule=power &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"debug\",\"resource\":\"cpu\"}" &&
	api POST /v1/users "{\"name\":\"root\"}" &&
	for a in chem phys bio geo; do
		api POST /v1/accounts "{\"name\":\"$a\"}" &&
		api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"$a\",\"user\":\"root\"}" ||
		return 1
	done &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"100h\"}"
'
test_expect_success 'one allocation alone: f_temporal 1, full credit: 1000' '
	sf one.json &&
	test "$(field one.json chem f_temporal)" = 1.0 &&
	test "$(field one.json chem site_factor)" = 1000
'
test_expect_success 'three sharing one end date get one factor, not 0' '
	api POST /v1/allocations "{\"account\":\"phys\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"100h\"}" &&
	api POST /v1/allocations "{\"account\":\"bio\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"100h\"}" &&
	sf tie.json &&
	for a in chem phys bio; do
		test "$(field tie.json $a f_temporal)" = 1.0 &&
		test "$(field tie.json $a site_factor)" = 1000 || return 1
	done &&
	python3 -c "import json; j=json.load(open(\"tie.json\"))[\"jobs\"]; assert sorted(x[\"site_factor\"] for x in j)==[1000]*3, j"
'
test_expect_success 'tied on time, the credit left orders them: 1000, 500, 0' '
	settle 1 phys 180000 &&
	settle 2 bio 360000 &&
	sf used.json &&
	test "$(field used.json chem site_factor)" = 1000 &&
	test "$(field used.json phys site_factor)" = 500 &&
	test "$(field used.json bio site_factor)" = 0
'
test_expect_success 'one ending sooner gets 1; the three that tie after it share min/max > 0' '
	end_soon=$(date -u -d "+30 days" +%Y-%m-%d) &&
	api POST /v1/allocations "{\"account\":\"geo\",\"start\":\"2020-01-01\",\"end\":\"$end_soon\",\"su\":\"100h\"}" &&
	sf soon.json &&
	test "$(field soon.json geo site_factor)" = 1000 &&
	ft=$(field soon.json chem f_temporal) &&
	test "$(field soon.json phys f_temporal)" = "$ft" &&
	test "$(field soon.json bio f_temporal)" = "$ft" &&
	python3 -c "import sys; assert 0 < float(sys.argv[1]) < 1, sys.argv[1]" "$ft" &&
	test "$(field soon.json chem site_factor)" -gt 0
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
