#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1067-dashboard-views.t - the dashboard's views in headless Chromium, each opened by its
# link (#view=) with the token of a user, a coordinator (PI) and a superuser: a user's jobs
# (running, pending with its hold, finished with charge and efficiency), refusals with the
# whole message and share of each allocation, and no other user's; a PI's project (per-user
# usage, jobs, forecast, refusals) and no other project; the operations view (allocations at
# risk, the command outbox with states and results, the policy evaluations, drift) for the
# superuser only; the burn-down of an allocation entered after the jobs it paid for drawn
# from their times; and the page in a narrow window.
test_description='dashboard views per role in a browser'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

if command -v chromium >/dev/null 2>&1; then
	test_set_prereq CHROMIUM
else
	say "chromium is not installed: skipping the browser steps (apt-get install chromium)"
fi

# browse URL OUT [WIDTH]: the DOM of URL after its scripts ran (as t1065), at a window
# WIDTH pixels wide (default 1280).
browse() {
	run_bounded 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --user-data-dir="$PWD/chromium-profile" \
		--window-size="${3:-1280},900" \
		--virtual-time-budget=15000 --dump-dom "$1" >"$2" 2>chromium.log
}
dom() { python3 "$ALLOT_SRC_DIR/tests/lib/dom_check.py" "$@"; }
# open USER VIEW: USER's dashboard at VIEW into USER.VIEW.html
open_view() {
	browse "$ALLOTD_URL/dashboard#token=$(cat $1.token)&view=$2" $1.$2.html
}
# slurm verbs as the operator
hold() {
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$3,\"user\":\"$1\",
		\"account\":\"$2\",\"partition\":\"std\",\"time_limit_s\":${5:-7200},\"billing\":$4}"
}
settle() {
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$1,
		\"elapsed_s\":$2,\"state\":\"COMPLETED\"}"
}
refuse() {
	API_USER=slurm test_expect_code 1 hold $1 $2 $3 1000 3600000 >out &&
	test "$(api_status)" = 402
}
T1=4294967311

test_expect_success 'allotd; chem (alice, bob; pi coordinates), phys (carol), geo' '
	allotd_start AuthType=none TestMode=local Operators=slurm HoldMode=submit \
		SubmitHoldTTL=3600 TimeZone=UTC &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\",
		\"billing_weights\":\"CPU=1.0\"}" &&
	for a in chem phys geo; do api POST /v1/accounts "{\"name\":\"$a\"}" || return 1; done &&
	for u in alice:chem bob:chem carol:phys pi:; do
		api POST /v1/users "{\"name\":\"${u%:*}\"}" &&
		{ test -z "${u#*:}" ||
		  api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"${u#*:}\",\"user\":\"${u%:*}\"}"; } ||
		return 1
	done &&
	api PATCH /v1/accounts/chem "{\"coordinators\":\"pi\"}" &&
	start=$(date -u -d "-60 days" +%F) && end=$(date -u -d "+300 days" +%F) &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"$start\",
		\"end\":\"$end\",\"su\":\"100h\"}" >out && json_get id <out >chem.id &&
	date +%s >chem.entered &&
	api POST /v1/allocations "{\"account\":\"phys\",\"cluster\":\"c1\",\"start\":\"$start\",
		\"end\":\"$end\",\"su\":\"10h\"}" >out && json_get id <out >phys.id &&
	api POST /v1/allocations "{\"account\":\"geo\",\"cluster\":\"c1\",\"start\":\"$start\",
		\"end\":\"$end\"}" >out && json_get id <out >geo.id
'
test_expect_success 'history: jobs backfilled into chem, run before it was entered' '
	j1s=$(date -u -d "-30 days" +%Y-%m-%dT%H:%M:%S) &&
	j1e=$(date -u -d "-30 days +1 hour" +%Y-%m-%dT%H:%M:%S) &&
	j2s=$(date -u -d "-12 days" +%Y-%m-%dT%H:%M:%S) &&
	j2e=$(date -u -d "-12 days +2 hours" +%Y-%m-%dT%H:%M:%S) &&
	api POST /v1/jobs/import "{\"cluster\":\"c1\",\"backfill\":true,
		\"header\":\"JobIDRaw|State|User|Account|Partition|Start|End|Elapsed|AllocTRES\",
		\"lines\":[\"901|COMPLETED|bob|chem|std|$j1s|$j1e|01:00:00|cpu=4\",
		\"902|COMPLETED|bob|chem|std|$j2s|$j2e|02:00:00|cpu=2\"]}" >out &&
	test "$(json_get imported <out)" = 2
'
test_expect_success 'jobs now: alice finished, running, pending; bob, carol; refusals' '
	hold alice chem 101 2 && settle 101 3600 >out &&
	test "$(json_get job.charge_sumin <out)" = 120 &&
	API_USER=slurm api POST /v1/steps "{\"cluster\":\"c1\",\"job_id\":101,\"step_name\":\"s1\",
		\"record\":{\"result\":{\"status\":\"completed\",\"return_code\":0,
		\"avg_cpu_percent\":40.0,\"exec_time_ms\":3000}}}" &&
	hold alice chem 102 1 &&
	API_USER=slurm api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",
		\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":600,\"billing\":3,
		\"submit_token\":$T1}" >out &&
	test "$(json_get held <out)" = true &&
	hold bob chem 201 3 && settle 201 3600 &&
	hold carol phys 301 10 3600 && settle 301 3420 &&
	refuse alice chem 401 && json_get message <out >alice.refusal &&
	refuse bob chem 402 && json_get message <out >bob.refusal &&
	refuse carol phys 403 && json_get message <out >carol.refusal &&
	grep "job 401 run 0: account chem" alice.refusal
'
test_expect_success 'a policy on geo: its evaluation and commands; one has a result' '
	api POST /v1/policies "{\"alloc\":$(cat geo.id),\"cluster\":\"c1\",\"period\":\"month\",
		\"base_sumin\":600}" >out && json_get id <out >pol &&
	api POST /v1/policies/tick "{}" &&
	api GET "/v1/commands?policy=$(cat pol)" >out &&
	python3 -c "import json; c=json.load(open(\"out\"))[\"commands\"]; assert c; print(c[0][\"id\"])" >cmd &&
	API_USER=slurm api POST /v1/commands/$(cat cmd)/result \
		"{\"state\":\"failed\",\"result\":\"sacctmgr: error: no such association\"}" &&
	api GET /v1/evaluations >out &&
	python3 -c "import json; assert json.load(open(\"out\"))[\"evaluations\"]"
'
test_expect_success 'tokens for alice, bob, pi and root' '
	for u in alice bob pi root; do
		API_USER=$u api POST /v1/tokens "{}" >out && json_get token <out >$u.token || return 1
	done
'
# bearer TOKEN_OF PATH [BODY]: GET PATH (POST BODY) with USER's dashboard token; the reply
# on stdout.
bearer() {
	curl -s --max-time 30 -o "$ALLOTD_DIR/reply" -w "%{http_code}" \
		${3:+-H "Content-Type: application/json" --data-binary "$3"} \
		-H "Authorization: Bearer $(cat $1.token)" "$ALLOTD_URL$2" >"$ALLOTD_DIR/status"
	cat "$ALLOTD_DIR/reply"
}
test_expect_success 'the API behind the views refuses what a token may not read' '
	bearer alice /v1/commands >out && test "$(api_status)" = 403 &&
	bearer alice /v1/evaluations >out && test "$(api_status)" = 403 &&
	bearer alice /v1/sync >out && test "$(api_status)" = 403 &&
	bearer alice "/v1/failures?account=chem&user=bob" >out && test "$(api_status)" = 403 &&
	bearer pi "/v1/failures?account=phys" >out && test "$(api_status)" = 404 &&
	bearer pi "/v1/failures?account=chem" >out && test "$(api_status)" = 200 &&
	bearer root /v1/commands >out && test "$(api_status)" = 200 &&
	bearer alice /v1/whatif "{\"cluster\":\"c1\"}" >out && test "$(api_status)" = 403 &&
	bearer root /v1/whatif "{\"cluster\":\"c1\",\"partition\":\"std\",
		\"weights\":\"CPU=2.0\"}" >whatif.json && test "$(api_status)" = 200 &&
	cat whatif.json
'
test_expect_success CHROMIUM 'alice, My jobs: hers, by state, with charge and efficiency' '
	open_view alice mine &&
	test "$(dom alice.mine.html --buttons views)" = "$(printf "Balances\nMy jobs")" &&
	! dom alice.mine.html view-mine --hidden &&
	dom alice.mine.html view-balances --hidden &&
	dom alice.mine.html jobs-finished --rows >rows &&
	cat rows &&
	grep "^101|chem|.*|COMPLETED|2h|50%|40%\$" rows &&
	test $(wc -l <rows) = 1 &&
	dom alice.mine.html jobs-running --rows >rows &&
	grep "^102|chem|std|.*|2h\$" rows && test $(wc -l <rows) = 1 &&
	dom alice.mine.html jobs-pending --rows >rows &&
	grep "^$T1|chem|std|30m|10 min\$" rows && test $(wc -l <rows) = 1 &&
	dom alice.mine.html refusals-mine --rows >rows &&
	test $(wc -l <rows) = 1 &&
	grep -F "|401|chem|$(cat alice.refusal)" rows &&
	dom alice.mine.html share-mine --rows >rows &&
	grep "^#$(cat chem.id)|chem|2h|" rows &&
	dom alice.mine.html view-mine >text &&
	! grep -E "\\b(201|402|301|403|901|bob|carol)\\b" text &&
	! grep -F "$(cat bob.refusal)" text
'
test_expect_success CHROMIUM 'alice may not open Project or Operations: the balances instead' '
	open_view alice ops &&
	! dom alice.ops.html view-balances --hidden &&
	dom alice.ops.html view-ops --hidden &&
	! dom alice.ops.html outbox && ! dom alice.ops.html whatif-form &&
	open_view alice project &&
	! dom alice.project.html view-balances --hidden &&
	! dom alice.project.html project-chem
'
test_expect_success CHROMIUM 'pi, Project: chem per user, jobs, forecast, refusals; not phys' '
	open_view pi project &&
	test "$(dom pi.project.html --buttons views)" = "$(printf "Balances\nMy jobs\nProject")" &&
	! dom pi.project.html view-project --hidden &&
	dom pi.project.html usage-chem --rows >rows && cat rows &&
	test "$(cut -d"|" -f1 rows | sort | tr "\n" " ")" = "alice bob " &&
	grep "^bob|c1|3|11h\$" rows && grep "^alice|c1|1|2h\$" rows &&
	dom pi.project.html refusals-chem --rows >rows &&
	grep -F "|alice|401|$(cat alice.refusal)" rows &&
	grep -F "|bob|402|$(cat bob.refusal)" rows &&
	test $(wc -l <rows) = 2 &&
	dom pi.project.html jobs-chem --rows >rows &&
	grep "^101|alice|settled|" rows && grep "^201|bob|settled|" rows &&
	dom pi.project.html forecast-chem --rows >rows &&
	grep "^#$(cat chem.id)|" rows &&
	! dom pi.project.html project-phys &&
	dom pi.project.html view-project >text &&
	! grep -E "\\b(carol|301|403|phys)\\b" text
'
test_expect_success CHROMIUM 'bob, no coordinator: no Project' '
	open_view bob project &&
	test "$(dom bob.project.html --buttons views)" = "$(printf "Balances\nMy jobs")" &&
	! dom bob.project.html project-chem
'
test_expect_success CHROMIUM 'root, Operations: at risk, outbox with states and results, log' '
	open_view root ops &&
	test "$(dom root.ops.html --buttons views)" = "$(printf "Balances\nMy jobs\nOperations")" &&
	! dom root.ops.html view-ops --hidden &&
	dom root.ops.html at-risk --rows >rows && cat rows &&
	grep "^#$(cat phys.id)|phys|30m|.*95% used or held" rows &&
	! grep "^#$(cat geo.id)|" rows &&
	dom root.ops.html outbox --rows >rows && cat rows &&
	grep "^$(cat cmd)|c1|.*|failed|[0-9]*|sacctmgr: error: no such association|" rows &&
	grep "|pending|" rows &&
	dom root.ops.html evaluations --rows >rows &&
	grep "|#$(cat pol)|" rows &&
	dom root.ops.html view-ops >text &&
	grep "No cluster is synced with Slurm" text &&
	dom root.ops.html whatif-form
'
# std's CPU weight doubled: every account's charge after is twice its charge before, as the
# same POST /v1/whatif answered above.
test_expect_success CHROMIUM 'root, Operations: the what-if of a link, before and after' '
	change="wi_cluster=c1&wi_partition=std&wi_weights=CPU%3D2.0" &&
	browse "$ALLOTD_URL/dashboard#token=$(cat root.token)&view=ops&$change" root.whatif.html &&
	dom root.whatif.html whatif --rows >rows && cat rows &&
	python3 - <<-\EOF
	import json
	rep = json.load(open("whatif.json"))
	rows = [l.split("|") for l in open("rows").read().split("\n") if l]
	assert rows and rep["jobs"] > 0, (rows, rep)
	assert [r[0] for r in rows] == [a["account"] for a in rep["accounts"]], rows
	for r, a in zip(rows, rep["accounts"]):
	    assert int(r[1]) == a["jobs_before"], (r, a)
	    assert a["charged_after_sumin"] == 2 * a["charged_before_sumin"] > 0, a
	EOF
	dom root.whatif.html whatif-summary >text && cat text &&
	grep "jobs replayed" text
'
test_expect_success CHROMIUM 'root, no user of the bank: My jobs is empty, not an error' '
	open_view root mine &&
	dom root.mine.html view-mine >text &&
	grep "No finished job." text && grep "Nothing of yours was refused." text &&
	! grep "Could not load" text
'
test_expect_success CHROMIUM 'burn-down of chem: history from the jobs, before it was entered' '
	browse "$ALLOTD_URL/dashboard#token=$(cat root.token)" root.bal.html &&
	python3 - $(cat chem.id) <<-\EOF
	import re, sys
	dom = open("root.bal.html").read()
	chart = re.search(r"<figure[^>]*id=\"chart-" + sys.argv[1] + r"\".*?</figure>", dom, re.S)
	assert chart, "no chart"
	line = re.search(r"<polyline points=\"([^\"]*)\" class=\"c-remaining\"", chart.group(0))
	assert line, "no remaining line: " + chart.group(0)[:2000]
	pts = [tuple(map(float, p.split(","))) for p in line.group(1).split()]
	ys = sorted({y for _, y in pts})
	# 100h granted from the start, then down by bob 4h (30 days ago), 4h (12 days ago), and
	# today 2h + 3h: at least four levels, the first at the grant, left of "now"
	assert len(ys) >= 4, pts
	now = re.search(r"<line x1=\"([0-9.]+)\"[^>]*class=\"c-now\"", chart.group(0))
	assert now and pts[0][0] < float(now.group(1)) / 2, (pts[0], now and now.group(1))
	EOF
'
# Headless Chromium's narrowest window is 500 pixels (asked for less, it gives 500): below
# the page's 640-pixel breakpoint, as a phone held sideways.
test_expect_success CHROMIUM 'a narrow window: the charts fit it, the views still work' '
	browse "$ALLOTD_URL/dashboard#token=$(cat alice.token)" alice.narrow.html 500 &&
	w=$(dom alice.narrow.html "chart-$(cat chem.id)" >/dev/null &&
		python3 - <<-\EOF
	import re
	dom = open("alice.narrow.html").read()
	print(max(int(w) for w in re.findall(r"<div class=\"chart\" data-width=\"(\d+)\"", dom)))
	EOF
	) &&
	test -n "$w" && test "$w" -le 476 &&
	browse "$ALLOTD_URL/dashboard#token=$(cat alice.token)&view=mine" alice.narrow.mine.html 500 &&
	dom alice.narrow.mine.html jobs-finished --rows | grep "^101|"
'
test_expect_success 'stop allotd' '
	allotd_stop
'
test_done
