#!/bin/bash
# t1000-bank-api.t - the bank API end to end: clusters, account tree, users, associations,
# partitions with billing weights, allocation with its initial credit and a later credit,
# admit (granted and denied with the explaining message), hold, settle (debit + release),
# release, NODE_FAIL costs 0, replays, balances, ledger, jobs, failures, store check.
test_description='allotd bank API end to end'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

bal() { api GET "/v1/balances?account=$1" | json_get "items.0.$2"; }

test_expect_success 'start allotd' '
	echo "scrape-0123456789abcdef" >scrape.token &&
	allotd_start AuthType=none TestMode=local Operators=slurm "MetricsTokenFile=$PWD/scrape.token"
'
test_expect_success 'reference data: cluster, account tree, users, assocs' '
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"science\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\",\"parent\":\"science\",\"shares\":100,\"description\":\"Chemistry\"}" &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api GET /v1/accounts >out &&
	test "$(json_get items.2.name <out)" = chem &&
	test "$(json_get items.2.parent <out)" = science &&
	api GET "/v1/assocs?user=alice" >out &&
	test "$(json_get items.0.account <out)" = chem
'
test_expect_success 'partition with HADM MAX_TRES weights' '
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=0.0625,Mem=0.03125G,GRES/gpu=1.0\",\"max_tres\":true}" >out &&
	api GET /v1/partitions/c1/std >out &&
	test "$(json_get max_tres <out)" = true
'
test_expect_success 'allocation on the parent with an initial credit, then a credit' '
	api POST /v1/allocations "{\"account\":\"science\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10h\"}" >out &&
	test "$(api_status)" = 201 &&
	id=$(json_get id <out) && echo $id >alloc_id &&
	test "$(json_get granted_sumin <out)" = 600 &&
	api POST /v1/allocations/$id/credit "{\"amount_sumin\":60,\"comment\":\"top-up\",\"idempotency_key\":\"k1\"}" >out &&
	test "$(json_get replay <out)" = false &&
	api POST /v1/allocations/$id/credit "{\"amount_sumin\":60,\"comment\":\"top-up\",\"idempotency_key\":\"k1\"}" >out &&
	test "$(json_get replay <out)" = true &&
	test "$(bal science granted_sumin)" = 660
'
test_expect_success 'admit: affordable job is admitted, billed from the ancestor' '
	API_USER=slurm api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":3600,\"tres\":\"cpu=32,mem=1G\"}" >out &&
	test "$(json_get admitted <out)" = true &&
	test "$(json_get payer_account <out)" = science &&
	test "$(json_get billing_micro <out)" = 2000000 &&
	test "$(json_get cost_sumin <out)" = 120
'
test_expect_success 'admit: (1 core, 64 GiB) costs the same as (32 cores, 1 GiB)' '
	API_USER=slurm api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":3600,\"tres\":\"cpu=1,mem=64G\"}" >out &&
	test "$(json_get billing_micro <out)" = 2000000
'
test_expect_success 'admit: too expensive job is denied with an explaining message' '
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":360000,\"tres\":\"cpu=64\"}" >out &&
	test "$(api_status)" = 402 &&
	test "$(json_get admitted <out)" = false &&
	json_get message <out >msg &&
	grep "account chem" msg && grep "allocation $(cat alloc_id)" msg &&
	grep "available 11h" msg && grep "time limit 6000 min" msg &&
	grep "running jobs hold" msg && grep "Lower the time limit" msg &&
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":360030,\"tres\":\"cpu=64\"}" >out &&
	json_get message <out >msg &&
	grep "time limit 6000 min 30 s" msg
'
test_expect_success 'admit: a job no account up the tree can pay for is denied naming what is missing' '
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"gpux\",\"resource\":\"gpu\",\"billing_weights\":\"CPU=1.0\"}" &&
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"gpux\",\"time_limit_s\":3600,\"tres\":\"cpu=2\"}" >out &&
	test "$(api_status)" = 402 &&
	test "$(json_get alloc_id <out)" = 0 &&
	json_get message <out >msg &&
	grep "^account chem has no gpu allocation on cluster c1 active at 20[0-9-]*T[0-9:]*Z, nor has any parent account; this job may cost up to 2h SU (billing 2 x time limit 60 min)\. Ask your PI" msg
'
test_expect_success 'a user may not call job verbs' '
	API_USER=alice test_expect_code 1 api POST /v1/jobs/hold "{}" &&
	test "$(api_status)" = 403
'
test_expect_success 'hold takes the maximum cost; replay returns the same outcome' '
	body="{\"cluster\":\"c1\",\"job_id\":101,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":3600,\"tres\":\"cpu=32,mem=1G\"}" &&
	API_USER=slurm api POST /v1/jobs/hold "$body" >out &&
	test "$(json_get held <out)" = true &&
	test "$(json_get replay <out)" = false &&
	test "$(json_get job.hold_sumin <out)" = 120 &&
	API_USER=slurm api POST /v1/jobs/hold "$body" >out &&
	test "$(json_get replay <out)" = true &&
	test "$(bal science held_sumin)" = 120 &&
	test "$(bal science available_sumin)" = 540
'
test_expect_success 'settle debits the real use (round-up) and releases the hold' '
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":101,\"elapsed_s\":55,\"state\":\"COMPLETED\",\"source\":\"epilog\"}" >out &&
	test "$(json_get settled <out)" = true &&
	test "$(json_get job.charge_sumin <out)" = 2 &&
	test "$(bal science held_sumin)" = 0 &&
	test "$(bal science used_sumin)" = 2 &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":101,\"elapsed_s\":55,\"state\":\"COMPLETED\"}" >out &&
	test "$(json_get replay <out)" = true &&
	test "$(bal science used_sumin)" = 2
'
test_expect_success 'NODE_FAIL costs 0' '
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":102,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":600,\"billing\":4}" &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":102,\"elapsed_s\":300,\"state\":\"NODE_FAIL\"}" >out &&
	test "$(json_get job.charge_sumin <out)" = 0 &&
	test "$(bal science used_sumin)" = 2
'
test_expect_success 'release frees a hold without charge' '
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":103,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":600,\"billing\":1}" &&
	test "$(bal science held_sumin)" = 10 &&
	API_USER=slurm api POST /v1/jobs/release "{\"cluster\":\"c1\",\"job_id\":103,\"comment\":\"cancelled\"}" >out &&
	test "$(json_get released <out)" = true &&
	test "$(bal science held_sumin)" = 0
'
test_expect_success 'a hold the balance cannot cover is refused (402) with a failure' '
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":104,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":36000,\"billing\":64}" >out &&
	test "$(api_status)" = 402 &&
	test "$(json_get held <out)" = false &&
	api GET "/v1/failures?account=chem" >out &&
	test "$(json_get items.0.job_id <out)" = 104 &&
	test "$(bal science held_sumin)" = 0
'
test_expect_success 'jobs, job detail and ledger tell the same story' '
	api GET "/v1/jobs?cluster=c1" >out &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); assert len(d[\"items\"])==4, d" &&
	api GET /v1/jobs/c1/101 >out &&
	test "$(json_get runs.0.status <out)" = settled &&
	api GET "/v1/ledger?alloc=$(cat alloc_id)" >out &&
	python3 -c "
import json
d=json.load(open(\"out\"))[\"items\"]
s={}
for e in d: s[e[\"kind\"]]=s.get(e[\"kind\"],0)+e[\"amount_sumin\"]
assert s[\"credit\"]==660 and s[\"debit\"]==2 and s[\"hold\"]==s[\"release\"], s
"
'
test_expect_success 'a user sees the jobs of its accounts' '
	API_USER=alice api GET /v1/jobs >out &&
	test "$(json_get items.0.account <out)" = chem
'
test_expect_success 'store check passes; metrics count requests and commits' '
	api GET /v1/check >out &&
	test "$(json_get ok <out)" = true &&
	API_NOAUTH=1 api GET /metrics >out &&
	grep "allot_requests_total{route=\"POST /v1/jobs/hold\",status=\"200\"}" out &&
	grep "allot_commit_batch_ops_count" out &&
	grep "^allot_writer_seconds_total{phase=\"commit\"} [0-9]" out &&
	api GET /metrics >out &&
	grep "allot_allocation_available_sumin{id=\"$(cat alloc_id)\"" out
'
test_expect_success '/metrics: per-account balances only for admins, operators, the scrape token' '
	curl -s -o out "$ALLOTD_URL/metrics" &&
	grep -q "^allot_requests_total" out &&
	! grep "available_sumin\|account=" out &&
	API_USER=alice api GET /metrics >out &&
	grep -q "^allot_requests_total" out &&
	! grep "available_sumin" out &&
	API_USER=slurm api GET /metrics >out &&
	grep -q "allot_allocation_available_sumin{id=\"$(cat alloc_id)\",account=\"science\"" out &&
	curl -s -o out -H "Authorization: Bearer $(cat scrape.token)" "$ALLOTD_URL/metrics" &&
	grep -q "allot_allocation_available_sumin{id=\"$(cat alloc_id)\",account=\"science\"" out &&
	curl -s -o out -w "%{http_code}" -H "Authorization: Bearer scrape-0123456789abcdeX" \
		"$ALLOTD_URL/metrics" >code &&
	test "$(cat code)" = 401 &&
	! grep "available_sumin" out &&
	! grep -q "scrape-0123456789abcdef" "$ALLOTD_LOG"
'
test_expect_success '/metrics is Prometheus text format, as its own client library parses it' '
	curl -s -D headers -o out -H "Authorization: Bearer $(cat scrape.token)" "$ALLOTD_URL/metrics" &&
	grep -i "^Content-Type: text/plain; version=0.0.4" headers &&
	python3 "$ALLOT_SRC_DIR/tests/lib/prom_check.py" <out >fams &&
	cat fams &&
	grep "^allot_requests counter " fams &&
	grep "^allot_job_latency_seconds histogram " fams &&
	grep "^allot_commit_batch_ops histogram " fams &&
	grep "^allot_writer_seconds counter 4$" fams &&
	grep "^allot_allocation_available_sumin gauge " fams
'
test_expect_success 'QOS add and PATCH (factors as decimal strings)' '
	api POST /v1/qos "{\"name\":\"normal\",\"priority\":10,\"usage_factor\":\"1.5\"}" >out &&
	test "$(json_get usage_factor <out)" = 1.5 &&
	api PATCH /v1/qos/normal "{\"priority\":20}" >out &&
	test "$(json_get priority <out)" = 20 &&
	test "$(json_get usage_factor <out)" = 1.5
'
test_expect_success 'PATCH changes only the given fields' '
	api PATCH /v1/accounts/chem "{\"shares\":7}" >out &&
	test "$(json_get shares <out)" = 7 &&
	test "$(json_get description <out)" = Chemistry &&
	api PATCH /v1/users/alice "{\"default_account\":\"chem\"}" >out &&
	test "$(json_get uid <out)" = 1001 &&
	api PATCH /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\",\"default_qos\":\"normal\"}" >out &&
	test "$(json_get default_qos <out)" = normal &&
	api PATCH /v1/partitions/c1/std "{\"max_time_s\":86400}" >out &&
	test "$(json_get max_tres <out)" = true &&
	api PATCH /v1/allocations/$(cat alloc_id) "{\"comment\":\"year 1\"}" >out &&
	test "$(json_get comment <out)" = "year 1" &&
	test "$(json_get granted_sumin <out)" = 660
'
test_expect_success 'limits: set, list, effective with provenance' '
	api PUT /v1/limits "{\"scope\":\"account\",\"owner\":\"science\",\"name\":\"MaxSubmitJobs\",\"value\":\"1\"}" &&
	api PUT /v1/limits "{\"scope\":\"qos\",\"owner\":\"normal\",\"name\":\"MaxTRESPerJob\",\"value\":\"cpu=16\"}" &&
	api GET "/v1/limits?scope=account" >out &&
	test "$(json_get items.0.owner <out)" = science &&
	api GET "/v1/limits/effective?cluster=c1&user=alice&partition=std" >out &&
	python3 -c "
import json
rows = {(r[\"name\"], r[\"value\"]): (r[\"source_scope\"], r[\"source_owner\"]) for r in json.load(open(\"out\"))[\"items\"]}
assert rows[(\"MaxSubmitJobs\", \"1\")] == (\"account association\", \"science\"), rows
assert rows[(\"MaxTRESPerJob\", \"cpu=16\")][1] == \"normal\", rows
assert any(k[0] == \"MaxWallDurationPerJob\" and v[0] == \"partition\" for k, v in rows.items()), rows
"
'
test_expect_success 'over a QOS limit without DenyOnLimit: admitted, will pend' '
	API_USER=slurm api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"cpu=32\"}" >out &&
	test "$(json_get admitted <out)" = true &&
	json_get pending_reason <out | grep MaxTRESPerJob
'
test_expect_success 'with DenyOnLimit the job is refused at admission (403)' '
	api PATCH /v1/qos/normal "{\"flags\":\"DenyOnLimit\"}" &&
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"cpu=32\"}" >out &&
	test "$(api_status)" = 403 &&
	test "$(json_get error.code <out)" = ELIMIT &&
	grep MaxTRESPerJob out &&
	API_USER=slurm api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"cpu=8\"}" >out &&
	test "$(json_get admitted <out)" = true
'
test_expect_success 'admission counts held runs against MaxSubmitJobs' '
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":201,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"billing\":1}" &&
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"cpu=1\"}" >out &&
	test "$(api_status)" = 403 &&
	grep MaxSubmitJobs out
'
test_expect_success 'admission without an association is 404 naming it' '
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"mallory\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"cpu=1\"}" >out &&
	test "$(api_status)" = 404 &&
	grep "mallory has no association" out
'
test_expect_success 'POST /v1/users answers the stored record, created included' '
	api POST /v1/users "{\"name\":\"carol\",\"uid\":1003}" >out &&
	test "$(api_status)" = 201 &&
	json_get created <out >created &&
	grep -E "^[0-9]{4}-[0-9]{2}-[0-9]{2}T" created &&
	api GET /v1/users/carol >out &&
	test "$(json_get created <out)" = "$(cat created)" &&
	test "$(json_get uid <out)" = 1003
'
test_expect_success 'settle takes every Slurm state the agent and prep/allot send' '
	# allot-agent: sacct final states (CA,CD,DL,F,NF,OOM,PR,TO,BF) by their names, and
	# REVOKED; prep/allot: job_state_string() of the base state; sacct: "CANCELLED by <uid>".
	id=300 &&
	for state in COMPLETED FAILED TIMEOUT CANCELLED NODE_FAIL OUT_OF_MEMORY PREEMPTED \
		BOOT_FAIL DEADLINE REVOKED PENDING RUNNING SUSPENDED REQUEUED RESIZING \
		"CANCELLED by 0" "CANCELLED by 4294967295" ""; do
		id=$((id + 1)) &&
		API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$id,\"elapsed_s\":60,\"state\":\"$state\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"alloc_tres\":\"cpu=1\"}" >out &&
		test "$(json_get job.state <out)" = "$state" || return 1
	done
'
test_expect_success 'an association on a partition of its cluster; DefaultTime within MaxTime' '
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\",\"partition\":\"std\"}" &&
	api PATCH /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\",\"partition\":\"std\",\"shares\":3}" >out &&
	test "$(json_get shares <out)" = 3 &&
	api PATCH /v1/partitions/c1/std "{\"default_time_s\":3600,\"max_time_s\":3600}" &&
	api PUT /v1/limits "{\"scope\":\"partition\",\"owner\":\"c1:std\",\"name\":\"MaxTime\",\"value\":\"60\"}" &&
	api GET "/v1/assocs?cluster=c1" >out &&
	grep "\"std\"" out
'
test_expect_success 'cleanup' 'allotd_stop'
test_done
