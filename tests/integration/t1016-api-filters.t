#!/bin/bash
# t1016-api-filters.t - what a listing's filter and a job's detail promise: a cluster= of a
# history listing (jobs, ledger, usage, steps, commands) naming a cluster the bank never knew is 404
# naming it, as the reference listings answer, while a cluster removed since keeps its
# history listed; an account= or user= that matched nothing and names no account or user
# now is 404 too (a misspelling), while an account removed since keeps its jobs listed; GET /v1/jobs/{cluster}/{id} of a requeued job shows its runs with the
# ledger entries and failures of those runs only.
test_description='allotd listing filters and job detail'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

# settle CLUSTER JOB RUN ACCOUNT [STATE]: settle a run never held, as root (an operator).
settle() {
	api POST /v1/jobs/settle "{\"cluster\":\"$1\",\"job_id\":$2,\"run\":$3,\"elapsed_s\":60,\"state\":\"${5:-COMPLETED}\",\"start\":\"2026-01-01T00:00:00Z\",\"user\":\"root\",\"account\":\"$4\",\"partition\":\"p\",\"alloc_tres\":\"cpu=1\",\"time_limit_s\":600}" >/dev/null
}
# py EXPR: evaluate a Python assertion on the JSON in out (bound to d).
py() { python3 -c "import json; d=json.load(open(\"out\")); $1"; }

test_expect_success 'start allotd; two clusters, alice in chem only' '
	allotd_start AuthType=none TestMode=local &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/clusters "{\"name\":\"old\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/users "{\"name\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	api POST /v1/partitions "{\"cluster\":\"old\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10h\"}" &&
	api POST /v1/allocations "{\"account\":\"phys\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10h\"}"
'
test_expect_success 'a history listing filtered by a never-known cluster is 404 naming it' '
	for path in /v1/jobs /v1/ledger /v1/usage /v1/steps /v1/commands; do
		api_bad 404 "" GET "$path?cluster=nosuch" &&
		grep "cluster: .nosuch. does not exist" out || return 1
	done
'
test_expect_success 'a known cluster without history is an empty list, not 404' '
	api GET "/v1/jobs?cluster=old" >out && py "assert d[\"items\"] == [], d" &&
	api GET "/v1/ledger?cluster=old" >out && py "assert d[\"items\"] == [], d" &&
	api GET "/v1/steps?cluster=old" >out && py "assert d[\"items\"] == [], d" &&
	api GET "/v1/commands?cluster=old" >out && py "assert d[\"commands\"] == [], d" &&
	api GET "/v1/usage?cluster=old" >out && py "assert d[\"items\"] == [], d"
'
test_expect_success 'a cluster removed since keeps its jobs, ledger and usage listed' '
	settle old 7 0 chem &&
	api DELETE /v1/partitions/old/p &&
	api DELETE /v1/clusters/old &&
	api GET /v1/clusters >out && ! grep -q "\"old\"" out &&
	api GET "/v1/jobs?cluster=old" >out &&
	py "assert [j[\"job_id\"] for j in d[\"items\"]] == [7], d" &&
	api GET "/v1/usage?cluster=old&since=2025-01-01" >out &&
	py "assert [u[\"jobs\"] for u in d[\"items\"]] == [1], d" &&
	api GET "/v1/ledger?cluster=old" >out &&
	py "assert [(e[\"kind\"], e[\"job_id\"]) for e in d[\"items\"]] == [(\"debit\", 7)], d" &&
	api GET /v1/jobs/old/7 >out &&
	py "assert d[\"runs\"][0][\"cluster\"] == \"old\", d" &&
	# the removed cluster has no step or command: those listings do not know the name
	api_bad 404 "" GET "/v1/steps?cluster=old" &&
	grep "cluster: .old. does not exist, and no step names it" out
'
test_expect_success 'steps recorded on a cluster the bank never knew are listed by it' '
	api POST /v1/steps "{\"cluster\":\"elsewhere\",\"job_id\":5,\"step_name\":\"s\",\"record\":{\"result\":{\"status\":\"completed\",\"return_code\":0}}}" &&
	api GET "/v1/steps?cluster=elsewhere" >out &&
	py "assert [s[\"job_id\"] for s in d[\"items\"]] == [5], d" &&
	api_bad 404 "" GET "/v1/jobs?cluster=elsewhere" &&
	grep "cluster: .elsewhere. does not exist, and no job names it" out &&
	api_bad 404 "" GET "/v1/ledger?cluster=elsewhere" &&
	grep "cluster: .elsewhere. does not exist, and no ledger entry names it" out
'
test_expect_success 'a bad cluster name is still 400 naming cluster' '
	api_bad 400 cluster GET "/v1/jobs?cluster=a%20b" &&
	api_bad 400 cluster GET "/v1/steps?cluster=a%20b"
'
test_expect_success 'an account= or user= naming no account or user is 404 when nothing matched' '
	for q in "/v1/jobs?account=chme" "/v1/failures?account=chme" "/v1/ledger?account=chme"; do
		api_bad 404 "" GET "$q" &&
		grep "account: .chme. is not an account, and no .* in this listing names it" out ||
		return 1
	done &&
	for q in "/v1/jobs?user=alcie" "/v1/failures?user=alcie" "/v1/steps?user=alcie"; do
		api_bad 404 "" GET "$q" &&
		grep "user: .alcie. is not a user, and no .* in this listing names it" out || return 1
	done
'
test_expect_success 'a plain user gets the same 404 for an account not its own and for none' '
	API_USER=alice test_expect_code 1 api GET "/v1/jobs?account=phys" >out &&
	test "$(api_status)" = 404 &&
	grep "account: .phys. is not an account of yours, and no job in this listing names it" out &&
	API_USER=alice test_expect_code 1 api GET "/v1/jobs?account=nosuch" >out &&
	test "$(api_status)" = 404 &&
	grep "account: .nosuch. is not an account of yours, and no job in this listing names it" out &&
	API_USER=alice api GET "/v1/jobs?account=chem&status=held" >out && py "assert d[\"items\"] == [], d" &&
	API_USER=alice api GET "/v1/jobs?user=nosuch" >out && py "assert d[\"items\"] == [], d"
'
test_expect_success 'a known account or user without history is an empty list, not 404' '
	api GET "/v1/jobs?account=phys" >out && py "assert d[\"items\"] == [], d" &&
	api GET "/v1/ledger?account=phys&since=2099-01-01" >out && py "assert d[\"items\"] == [], d" &&
	api GET "/v1/failures?user=alice" >out && py "assert d[\"items\"] == [], d" &&
	api GET "/v1/steps?user=alice" >out && py "assert d[\"items\"] == [], d"
'
test_expect_success 'an account removed since keeps its jobs listed' '
	api POST /v1/accounts "{\"name\":\"gone\",\"parent\":\"chem\"}" &&
	settle c1 41 0 gone &&
	api DELETE /v1/accounts/gone &&
	api GET "/v1/jobs?account=gone" >out &&
	py "assert [(j[\"job_id\"], j[\"payer_account\"]) for j in d[\"items\"]] == [(41, \"chem\")], d" &&
	api_bad 404 "" GET "/v1/jobs?account=gone&status=held" &&
	grep "account: .gone. is not an account, and no job in this listing names it" out
'
test_expect_success 'job detail: every run with the ledger entries of its runs' '
	settle c1 20 0 chem REQUEUED &&
	settle c1 20 1 phys &&
	api GET /v1/jobs/c1/20 >out &&
	py "
runs = sorted(r[\"run\"] for r in d[\"runs\"])
assert runs == [0, 1], d
seen = sorted(set(e[\"run\"] for e in d[\"ledger\"]))
assert seen == [0, 1], d
assert d[\"failures\"] == [], d
"
'
test_expect_success 'job detail: a user sees its runs, and only their money' '
	# run 0 is on chem (alice has an association), run 1 on phys (she has none)
	API_USER=alice api GET /v1/jobs/c1/20 >out &&
	py "
assert [r[\"run\"] for r in d[\"runs\"]] == [0], d
assert d[\"ledger\"] and all(e[\"run\"] == 0 for e in d[\"ledger\"]), d
assert all(e[\"alloc_id\"] == 1 for e in d[\"ledger\"]), d
"
'
test_expect_success 'job detail: a refused run brings its failure, and no other job'"'"'s' '
	body="\"user\":\"root\",\"account\":\"chem\",\"partition\":\"p\",\"time_limit_s\":36000000,\"billing\":64" &&
	test_expect_code 1 api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":30,\"run\":0,$body}" >out &&
	test "$(api_status)" = 402 &&
	test_expect_code 1 api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":31,\"run\":0,$body}" >out &&
	test "$(api_status)" = 402 &&
	api GET /v1/jobs/c1/30 >out &&
	py "
assert [r[\"status\"] for r in d[\"runs\"]] == [\"refused\"], d
assert [(f[\"job_id\"], f[\"run\"]) for f in d[\"failures\"]] == [(30, 0)], d
assert d[\"failures\"][0][\"message\"], d
" &&
	API_USER=alice api GET /v1/jobs/c1/30 >out &&
	py "assert [f[\"job_id\"] for f in d[\"failures\"]] == [30], d"
'
test_expect_success 'job detail of an unknown job is 404' '
	api_bad 404 "" GET /v1/jobs/c1/99 &&
	api_bad 404 "" GET /v1/jobs/nosuch/20
'
test_done
