#!/bin/bash
# t1063-report-usage.t - GET /v1/reports/usage and `allot report usage`: on a constructed
# history (jobs ending on both sides of month and quarter boundaries, two users, two
# partitions, a GPU job, a job spanning a month boundary, a refusal, a voided job, a credit
# and a step record) the SU charged per group and period equal the ledger's debits summed
# the same way, exactly, and a few equal hand-computed constants; the job counts, CPU and
# GPU seconds, efficiency and refusals too; -P, --csv and --json shapes; a plain user's
# report holds only what it may see (its own, its accounts' jobs, the refusals of accounts it
# coordinates), even in a row that groups many users; bad input is refused naming the field.
test_description='usage report per group and period'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }

allot() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }

# settle_post ID USER ACCOUNT PARTITION START END ELAPSED_S BILLING TRES: a run never held,
# settled (post-paid) with its times given.
settle_post() {
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$1,
		\"user\":\"$2\",\"account\":\"$3\",\"partition\":\"$4\",\"time_limit_s\":86400,
		\"start\":\"$5\",\"end\":\"$6\",\"elapsed_s\":$7,\"billing\":$8,
		\"alloc_tres\":\"$9\",\"state\":\"COMPLETED\"}"
}

# check_ledger GROUP PERIOD FILE: FILE (a report as root) equals the ledger's debits of the
# settled runs summed per GROUP and PERIOD (a run counts where it ended), the jobs and
# their TRES likewise, and the refusals the failures list holds; prints the rows compared.
check_ledger() {
	api GET "/v1/ledger?limit=10000" >ledger.json &&
	api GET "/v1/jobs?limit=10000" >jobs.json &&
	api GET "/v1/allocations" >allocs.json &&
	api GET "/v1/failures?limit=10000" >failures.json &&
	python3 - "$1" "$2" "$3" <<-\EOF
	import json, sys, calendar, time
	group, period, f = sys.argv[1:4]
	rep = json.load(open(f))
	led = json.load(open("ledger.json"))["items"]
	jobs = json.load(open("jobs.json"))["items"]
	allocs = {a["id"]: a for a in json.load(open("allocs.json"))["items"]}
	fails = json.load(open("failures.json"))["items"]
	def t(s):
	    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
	def label(x, alloc_id):
	    g = time.gmtime(x)
	    return {"month": "%04d-%02d" % (g.tm_year, g.tm_mon),
	            "quarter": "%04d-Q%d" % (g.tm_year, (g.tm_mon - 1) // 3 + 1),
	            "year": "%04d" % g.tm_year, "total": "total",
	            "alloc": "alloc %d" % alloc_id if alloc_id else "none"}[period]
	def key(r, alloc_id):
	    return {"account": r["account"], "user": r["user"], "partition": r["partition"],
	            "cluster": r["cluster"],
	            "resource": allocs[alloc_id]["resource"] if alloc_id else ""}[group]
	want = {}
	def row(k, p):
	    return want.setdefault((k, p), {"charged_sumin": 0, "jobs": 0, "cpu_s": 0,
	                                    "gpu_s": 0, "refusals": 0})
	def tres(s, k):
	    for kv in s.split(","):
	        if kv.startswith(k + "="):
	            return int(kv.split("=")[1])
	    return 0
	runs = {(j["cluster"], j["job_id"], j["run"]): j for j in jobs}
	for e in led:
	    if e["kind"] == "debit" and e["job_id"]:
	        j = runs[(e["cluster"], e["job_id"], e["run"])]
	        row(key(j, e["alloc_id"]), label(t(j["end"]), e["alloc_id"]))["charged_sumin"] += \
	            e["amount_sumin"]
	for j in jobs:
	    if j["status"] == "settled":
	        w = row(key(j, j["alloc_id"]), label(t(j["end"]), j["alloc_id"]))
	        w["jobs"] += 1
	        w["cpu_s"] += tres(j["alloc_tres"], "cpu") * j["elapsed_s"]
	        w["gpu_s"] += tres(j["alloc_tres"], "gres/gpu") * j["elapsed_s"]
	for x in fails:
	    if not x.get("observed"):
	        row(key(x, x["alloc_id"]), label(t(x["time"]), x["alloc_id"]))["refusals"] += 1
	got = {}
	for r in rep["items"]:
	    got[(r[group], r["period"])] = {k: r[k] for k in
	                                    ("charged_sumin", "jobs", "cpu_s", "gpu_s", "refusals")}
	assert rep["group"] == group and rep["period"] == period, rep
	assert got == want, (sorted(got.items()), sorted(want.items()))
	assert sum(w["charged_sumin"] for w in got.values()) == \
	    sum(e["amount_sumin"] for e in led if e["kind"] == "debit"), "a debit is missing"
	for k in sorted(got):
	    print(k, got[k])
	EOF
}

test_expect_success 'start allotd' '
	allotd_start AuthType=none TestMode=local Operators=slurm
'

test_expect_success 'bank: chem (alice) and bio (bob), partitions std (cpu) and gpu (gpu)' '
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"bio\"}" &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/users "{\"name\":\"bob\",\"uid\":1002}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"bio\",\"user\":\"bob\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"gpu\",\"resource\":\"gpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"resource\":\"cpu\",
		\"start\":\"2026-06-01\",\"end\":\"2027-06-01\",\"su\":\"100h\"}" >out &&
	json_get id <out >chem_cpu &&
	api POST /v1/allocations "{\"account\":\"chem\",\"resource\":\"gpu\",
		\"start\":\"2026-06-01\",\"end\":\"2027-06-01\",\"su\":\"100h\"}" >out &&
	json_get id <out >chem_gpu &&
	api POST /v1/allocations "{\"account\":\"bio\",\"resource\":\"cpu\",
		\"start\":\"2026-06-01\",\"end\":\"2027-06-01\",\"su\":\"10h\"}" >out &&
	json_get id <out >bio_cpu
'

test_expect_success 'history: jobs across month ends, a held GPU job, a void, a refusal, a credit' '
	# 1: 4 CPUs 4 h over the July/August boundary: 960 SU-min, counted in August
	settle_post 1 alice chem std 2026-07-31T22:00:00Z 2026-08-01T02:00:00Z 14400 4 \
		"cpu=4,mem=8G,node=1" &&
	# 2: held, then 1 h on 2 CPUs and a GPU at billing 10: 600 SU-min in July
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":2,
		\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"gpu\",\"time_limit_s\":7200,
		\"start\":\"2026-07-10T00:00:00Z\",\"billing\":10}" &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":2,
		\"start\":\"2026-07-10T00:00:00Z\",\"end\":\"2026-07-10T01:00:00Z\",\"elapsed_s\":3600,
		\"alloc_tres\":\"cpu=2,gres/gpu=1,node=1\",\"state\":\"COMPLETED\"}" &&
	# 3: 8 CPUs over the September/October (Q3/Q4) boundary: 480 in October
	settle_post 3 bob bio std 2026-09-30T23:30:00Z 2026-10-01T00:30:00Z 3600 8 "cpu=8" &&
	# 4: 30 min on 1 CPU: 30 in July
	settle_post 4 bob bio std 2026-07-15T10:00:00Z 2026-07-15T10:30:00Z 1800 1 "cpu=1" &&
	# 5: cancelled by the plugins before it started: no charge, one refusal (now)
	API_USER=slurm api POST /v1/jobs/void "{\"cluster\":\"c1\",\"job_id\":5,
		\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",
		\"reason\":\"allotd unreachable\"}" &&
	# 6: a hold of 480 that bio (90 left) cannot cover: one refusal (now)
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/hold "{\"cluster\":\"c1\",
		\"job_id\":6,\"user\":\"bob\",\"account\":\"bio\",\"partition\":\"std\",
		\"time_limit_s\":3600,\"billing\":8}" &&
	test "$(api_status)" = 402 &&
	# a credit is no usage
	api POST /v1/allocations/$(cat chem_cpu)/credit "{\"kind\":\"credit\",\"su\":\"50h\"}" &&
	# job 1 measured 28800.9 CPU-seconds of its 57600 allocated: 50.0 %
	API_USER=slurm api POST /v1/steps "{\"cluster\":\"c1\",\"job_id\":1,\"step_name\":\"main\",
		\"record\":{\"step_name\":\"main\",\"result\":{\"return_code\":0,
		\"status\":\"completed\",\"exec_time_ms\":14400000},
		\"slurm_stats\":{\"total_cpu_seconds\":28800.9}}}"
'

test_expect_success 'by account and month: hand-computed SU, jobs, hours, efficiency' '
	now=$(date -u +%Y-%m) &&
	api GET "/v1/reports/usage" >rep.json &&
	python3 - "$now" <<-\EOF
	import json, sys
	now = sys.argv[1]
	r = {(x["account"], x["period"]): x for x in json.load(open("rep.json"))["items"]}
	def chk(k, **want):
	    for f, v in want.items():
	        assert r[k][f] == v, (k, f, r[k][f], v)
	chk(("chem", "2026-07"), charged_sumin=600, jobs=1, cpu_s=7200, gpu_s=3600,
	    refusals=0, cpu_efficiency=None, start="2026-07-01T00:00:00Z",
	    end="2026-08-01T00:00:00Z")
	chk(("chem", "2026-08"), charged_sumin=960, jobs=1, cpu_s=57600, gpu_s=0,
	    cpu_used_s=28800, cpu_alloc_s=57600, cpu_efficiency=50.0)
	chk(("bio", "2026-07"), charged_sumin=30, jobs=1, cpu_s=1800)
	chk(("bio", "2026-10"), charged_sumin=480, jobs=1, cpu_s=28800)
	chk(("chem", now), charged_sumin=0, jobs=0, refusals=1)
	chk(("bio", now), charged_sumin=0, jobs=0, refusals=1)
	assert ("bio", "2026-09") not in r and ("chem", "2026-06") not in r, r.keys()
	keys = [(x["account"], x["period"]) for x in json.load(open("rep.json"))["items"]]
	assert keys == sorted(keys), keys
	EOF
'

test_expect_success 'by quarter and by allocation window: hand-computed' '
	api GET "/v1/reports/usage?period=quarter" >q.json &&
	test "$(json_get items.0.account <q.json)" = bio &&
	test "$(json_get items.0.period <q.json)" = 2026-Q3 &&
	test "$(json_get items.0.charged_sumin <q.json)" = 30 &&
	test "$(json_get items.1.period <q.json)" = 2026-Q4 &&
	test "$(json_get items.1.charged_sumin <q.json)" = 480 &&
	test "$(json_get items.2.account <q.json)" = chem &&
	test "$(json_get items.2.charged_sumin <q.json)" = 1560 &&
	test "$(json_get items.2.jobs <q.json)" = 2 &&
	api GET "/v1/reports/usage?period=alloc&group=resource" >a.json &&
	python3 - $(cat chem_cpu chem_gpu bio_cpu) <<-\EOF
	import json, sys
	cc, cg, bc = sys.argv[1:4]
	r = {(x["resource"], x["period"]): x for x in json.load(open("a.json"))["items"]}
	assert r[("cpu", "alloc " + cc)]["charged_sumin"] == 960, r
	assert r[("cpu", "alloc " + bc)]["charged_sumin"] == 510, r
	assert r[("cpu", "alloc " + bc)]["refusals"] == 1, r
	assert r[("gpu", "alloc " + cg)]["charged_sumin"] == 600, r
	assert r[("gpu", "alloc " + cg)]["gpu_s"] == 3600, r
	assert r[("cpu", "alloc " + cc)]["start"] == "2026-06-01T00:00:00Z", r
	assert r[("cpu", "alloc " + cc)]["end"] == "2027-06-01T00:00:00Z", r
	assert r[("cpu", "alloc " + cc)]["alloc_id"] == int(cc), r
	EOF
'

for g in account user partition resource cluster; do
	for p in month quarter year total alloc; do
		test_expect_success "by $g and $p: equal to the ledger, to the SU-minute" "
			api GET '/v1/reports/usage?group=$g&period=$p' >r-$g-$p.json &&
			check_ledger $g $p r-$g-$p.json
		"
	done
done

test_expect_success 'start= and end= keep the runs that ended in [start, end)' '
	api GET "/v1/reports/usage?start=2026-08-01&end=2026-10-01T00:30:00Z" >b.json &&
	test "$(json_get items.0.account <b.json)" = chem &&
	test "$(json_get items.0.period <b.json)" = 2026-08 &&
	test "$(json_get items.0.charged_sumin <b.json)" = 960 &&
	test "$(json_get items <b.json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")" = 1 &&
	api GET "/v1/reports/usage?start=2026-08-01&end=2026-10-01T00:30:01Z&account=bio" >b.json &&
	test "$(json_get items.0.charged_sumin <b.json)" = 480
'

test_expect_success 'a plain user sees its own rows only, also grouped by partition' '
	API_USER=alice api GET "/v1/reports/usage?group=user&period=total" >u.json &&
	test "$(json_get items <u.json | python3 -c "import json,sys; print([(r[\"user\"], r[\"charged_sumin\"]) for r in json.load(sys.stdin)])")" = "[('"'"'alice'"'"', 1560)]" &&
	API_USER=alice api GET "/v1/reports/usage?group=partition&period=total" >p.json &&
	test "$(json_get items <p.json | python3 -c "import json,sys; print([(r[\"partition\"], r[\"charged_sumin\"], r[\"refusals\"]) for r in json.load(sys.stdin)])")" = "[('"'"'gpu'"'"', 600, 0), ('"'"'std'"'"', 960, 1)]" &&
	API_USER=alice api GET "/v1/reports/usage?account=bio" >x.json &&
	test "$(json_get items <x.json)" = "[]" &&
	API_USER=bob api GET "/v1/reports/usage?group=cluster&period=total" >c.json &&
	test "$(json_get items.0.charged_sumin <c.json)" = 510 &&
	api GET "/v1/reports/usage?group=cluster&period=total" >c.json &&
	test "$(json_get items.0.charged_sumin <c.json)" = 2070
'

test_expect_success 'a member reads its account'"'"'s jobs, not another member'"'"'s refusals' '
	api POST /v1/users "{\"name\":\"dave\",\"uid\":1004}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"dave\"}" &&
	API_USER=dave api GET "/v1/reports/usage?period=total" >m.json &&
	test "$(json_get items.0.account <m.json)" = chem &&
	test "$(json_get items.0.charged_sumin <m.json)" = 1560 &&
	test "$(json_get items.0.refusals <m.json)" = 0 &&
	test "$(json_get items <m.json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")" = 1
'

test_expect_success 'a coordinator reads its account'"'"'s jobs and every user'"'"'s refusals' '
	api PATCH /v1/accounts/bio "{\"coordinators\":\"alice\"}" &&
	API_USER=alice api GET "/v1/reports/usage?account=bio&period=total" >k.json &&
	test "$(json_get items.0.charged_sumin <k.json)" = 510 &&
	test "$(json_get items.0.refusals <k.json)" = 1 &&
	api PATCH /v1/accounts/bio "{\"coordinators\":\"\"}" &&
	API_USER=alice api GET "/v1/reports/usage?account=bio&period=total" >k.json &&
	test "$(json_get items <k.json)" = "[]"
'

test_expect_success 'allot report usage: table, -P, --csv and --json' '
	allot report usage end=2026-11-01 >t.out &&
	cat t.out &&
	head -n 1 t.out | grep -E "^Account +Period +Start +End +Jobs +Charged +CPUHours +GPUHours +CPUEff% +Refusals$" &&
	allot -P report usage end=2026-11-01 >p.out &&
	cat >p.want <<-\EOF &&
	Account|Period|Start|End|Jobs|Charged|CPUHours|GPUHours|CPUEff%|Refusals
	bio|2026-07|2026-07-01T00:00:00Z|2026-08-01T00:00:00Z|1|30m|0.50|0.00||0
	bio|2026-10|2026-10-01T00:00:00Z|2026-11-01T00:00:00Z|1|8h|8.00|0.00||0
	chem|2026-07|2026-07-01T00:00:00Z|2026-08-01T00:00:00Z|1|10h|2.00|1.00||0
	chem|2026-08|2026-08-01T00:00:00Z|2026-09-01T00:00:00Z|1|16h|16.00|0.00|50.0|0
	EOF
	test_cmp p.want p.out &&
	allot --csv report usage end=2026-11-01 group=partition period=year >c.out &&
	cat >c.want <<-\EOF &&
	Partition,Period,Start,End,Jobs,Charged,CPUHours,GPUHours,CPUEff%,Refusals
	gpu,2026,2026-01-01T00:00:00Z,2027-01-01T00:00:00Z,1,10h,2.00,1.00,,0
	std,2026,2026-01-01T00:00:00Z,2027-01-01T00:00:00Z,3,24h30m,24.50,0.00,50.0,0
	EOF
	test_cmp c.want c.out &&
	allot --json report usage end=2026-11-01 group=partition period=year >j.out &&
	api GET "/v1/reports/usage?end=2026-11-01&group=partition&period=year" >j.want &&
	python3 -c "import json,sys; assert json.load(open(\"j.out\")) == json.load(open(\"j.want\"))"
'

test_expect_success 'bad input is refused naming the field' '
	api_bad 400 "" GET "/v1/reports/usage?group=qos" &&
	grep -q "group" out &&
	api_bad 400 "" GET "/v1/reports/usage?period=week" &&
	grep -q "period" out &&
	api_bad 400 "" GET "/v1/reports/usage?start=2026-09-01&end=2026-08-01" &&
	grep -q "end" out &&
	api_bad 400 "" GET "/v1/reports/usage?start=yesterday" &&
	grep -q "start" out &&
	api_bad 400 "" GET "/v1/reports/usage?since=2026-01-01" &&
	test_expect_code 2 allot report usage group=qos 2>err &&
	grep -q "group" err &&
	test_expect_code 2 allot report usage colour=red 2>err &&
	grep -q "colour" err
'

test_expect_success 'stop allotd' '
	allotd_stop
'

test_done
