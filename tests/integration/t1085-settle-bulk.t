#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1085-settle-bulk.t - POST /v1/jobs/settle/bulk (doc/api.md "Bulk settle") against a real
# allotd: 200 finished jobs (40 held, the rest never held, one requeued) settled in one
# request leave the same balances, ledger and job records as the same settles sent one by
# one; the same request again is all replays and writes nothing; a job refused (bad state,
# no allocation, another job under the same id) is its item's error while the others are
# settled; match "sacct" picks the run as the agent's reconciliation does (held run, new
# run, settled run, a run cancelled by allot before start); over 10000 jobs is 413.
test_description='bulk settle: the one-by-one ledger, replays, per-job errors, match sacct'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
# bank: cluster c1, partition batch priced CPU=1.0,Mem=0.25G, accounts a0 a1 with credit and
# ghost without, users u0..u3 (user i in a(i mod 2)) and u9 in ghost.
bank() {
	allotd_start PriorityDecayHalfLife=0 &&
	allot cluster add c1 >/dev/null &&
	allot partition add batch cluster=c1 resource=cpu billing=CPU=1.0,Mem=0.25G >/dev/null &&
	for a in a0 a1; do
		allot account add $a >/dev/null &&
		allot alloc add $a resource=cpu su=100000000h start=2020-01-01 end=2100-01-01 >/dev/null ||
			return 1
	done &&
	allot account add ghost >/dev/null && allot user add u9 >/dev/null &&
	allot assoc add cluster=c1 account=ghost user=u9 >/dev/null &&
	for u in 0 1 2 3; do
		allot user add u$u >/dev/null &&
		allot assoc add cluster=c1 account=a$((u % 2)) user=u$u >/dev/null || return 1
	done
}
fresh_bank() {
	allotd_stop &&
	if [ "${ALLOT_TEST_BACKEND:-sqlite}" = pg ]; then
		pg_psql "DROP SCHEMA public CASCADE; CREATE SCHEMA public;" >/dev/null
	else
		rm -f "$ALLOTD_DIR"/allot.db*
	fi &&
	bank
}
holds() {
	python3 -c 'import json,sys; [print(json.dumps(h)) for h in json.load(open(sys.argv[1]))]' \
		gen/holds.json >holds.lines &&
	while read -r h; do api POST /v1/jobs/hold "$h" >/dev/null || return 1; done <holds.lines
}
# books FILE: balances, ledger entries and job runs, without ids of entries and times.
books() {
	{ api GET "/v1/balances" && echo && api GET "/v1/ledger?limit=100000" && echo &&
	  api GET "/v1/jobs?cluster=c1&limit=100000"; } | python3 -c '
import json, sys
docs = [json.loads(l) for l in sys.stdin if l.strip()]
for b in docs[0]["items"]:
    print("bal", b["account"], b["used_sumin"], b["held_sumin"], b["available_sumin"])
for e in sorted(docs[1]["items"], key=lambda e: (e["job_id"] or 0, e["run"] or 0, e["kind"], e["amount_sumin"])):
    print("led", e["alloc_id"], e["kind"], e["amount_sumin"], e["job_id"], e["run"], e["comment"])
for j in sorted(docs[2]["items"], key=lambda j: (j["job_id"], j["run"])):
    print("job", j["job_id"], j["run"], j["status"], j["charge_sumin"], j["state"], j["end"], j["account"], j["settle_source"])
' >"$1"
}
ledger_rows() { api GET "/v1/ledger?limit=100000" | json_get items | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

test_expect_success 'munged; 200 finished jobs, 40 of them held' '
	munged_start "$PWD/munge" && chmod 0755 "$MUNGE_DIR" &&
	python3 "$ALLOT_SRC_DIR/tests/lib/settle_gen.py" 200 c1 gen &&
	test "$(json_get jobs <gen/bulk.json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")" = 201
'
test_expect_success 'one by one: each settle its own request' '
	bank && holds &&
	python3 -c "import json; [print(json.dumps(s)) for s in json.load(open(\"gen/settles.json\"))]" >settles.lines &&
	while read -r s; do api POST /v1/jobs/settle "$s" >/dev/null || { cat "$ALLOTD_DIR/reply"; return 1; }; done <settles.lines &&
	books one.txt && test "$(grep -c "^job .* settled " one.txt)" = 201
'
test_expect_success 'bulk: the same settles in one request leave the same books' '
	fresh_bank && holds &&
	api POST /v1/jobs/settle/bulk "$(cat gen/bulk.json)" >bulk.out &&
	test "$(json_get settled <bulk.out)" = 201 && test "$(json_get errors <bulk.out)" = 0 &&
	test "$(json_get replay <bulk.out)" = 0 &&
	test "$(json_get items.0.outcome <bulk.out)" = settled &&
	books bulk.txt && test_cmp one.txt bulk.txt &&
	python3 - <<-\EOF
	import json
	d = json.load(open("bulk.out"))
	assert d["charged_sumin"] == sum(i["charge_sumin"] for i in d["items"]), d["charged_sumin"]
	assert d["charged_sumin"] > 0
	EOF
'
test_expect_success 'the same request again: every job a replay, nothing written' '
	n=$(ledger_rows) &&
	api POST /v1/jobs/settle/bulk "$(cat gen/bulk.json)" >again.out &&
	test "$(json_get replay <again.out)" = 201 && test "$(json_get settled <again.out)" = 0 &&
	test "$(json_get charged_sumin <again.out)" = 0 &&
	test "$(ledger_rows)" = "$n" && books again.txt && test_cmp bulk.txt again.txt
'
test_expect_success 'a refused job is its item'"'"'s error; the others are settled' '
	n=$(ledger_rows) &&
	p="\"cluster\":\"c1\",\"partition\":\"batch\",\"start\":1767225600,\"elapsed_s\":600,\"alloc_tres\":\"cpu=2\"" &&
	body="{\"jobs\":[{$p,\"job_id\":5001,\"user\":\"u0\",\"account\":\"a0\",\"state\":\"COMPLETED\"},
		{$p,\"job_id\":5002,\"user\":\"u0\",\"account\":\"a0\",\"state\":\"DONE\"},
		{$p,\"job_id\":5003,\"user\":\"u9\",\"account\":\"ghost\"},
		{$p,\"job_id\":5004,\"user\":\"u1\",\"account\":\"a1\"},
		{$p,\"job_id\":150,\"user\":\"u0\",\"account\":\"a0\"},
		\"not a job\"]}" &&
	api POST /v1/jobs/settle/bulk "$body" >mixed.out && cat mixed.out &&
	test "$(json_get settled <mixed.out)" = 2 && test "$(json_get errors <mixed.out)" = 4 &&
	test "$(json_get items.0.outcome <mixed.out)" = settled &&
	test "$(json_get items.1.error.code <mixed.out)" = EINVAL &&
	json_get items.1.error.message <mixed.out | grep -q "^state: .DONE. is not a Slurm job state" &&
	test "$(json_get items.2.error.status <mixed.out)" = 404 &&
	test "$(json_get items.3.outcome <mixed.out)" = settled &&
	test "$(json_get items.4.error.status <mixed.out)" = 409 &&
	test "$(json_get items.5.error.code <mixed.out)" = EINVAL &&
	test "$(ledger_rows)" = $((n + 2)) &&
	test_expect_code 1 api GET /v1/jobs/c1/5003 &&
	test "$(api GET /v1/jobs/c1/150 | json_get runs.0.user)" = u2 &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
test_expect_success 'match sacct: allotd picks the run (held, new, settled, void)' '
	h="\"cluster\":\"c1\",\"user\":\"u0\",\"account\":\"a0\",\"partition\":\"batch\",\"time_limit_s\":600,\"billing\":1" &&
	api POST /v1/jobs/hold "{$h,\"job_id\":6001,\"run\":0,\"start\":1767225600}" >/dev/null &&
	api POST /v1/jobs/hold "{$h,\"job_id\":6002,\"run\":0,\"start\":1767225600}" >/dev/null &&
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":6002,\"run\":0,\"elapsed_s\":60,\"state\":\"REQUEUED\"}" >/dev/null &&
	api POST /v1/jobs/void "{\"cluster\":\"c1\",\"job_id\":6004,\"run\":0,\"user\":\"u0\",\"account\":\"a0\",\"partition\":\"batch\",\"reason\":\"allotd down\"}" >/dev/null &&
	r="\"cluster\":\"c1\",\"user\":\"u0\",\"account\":\"a0\",\"partition\":\"batch\",\"elapsed_s\":120,\"state\":\"COMPLETED\",\"alloc_tres\":\"cpu=1\",\"source\":\"sacct\"" &&
	body="{\"match\":\"sacct\",\"jobs\":[{$r,\"job_id\":6001,\"start\":1767225600},
		{$r,\"job_id\":6002,\"start\":1767229200},
		{$r,\"job_id\":6003,\"start\":1767225600},
		{$r,\"job_id\":6002,\"start\":1767229200},
		{$r,\"job_id\":6004,\"start\":1767225600},
		{$r,\"job_id\":6005},
		{$r,\"job_id\":6006,\"run\":0,\"start\":1767225600}]}" &&
	api POST /v1/jobs/settle/bulk "$body" >match.out && cat match.out &&
	test "$(json_get items.0.outcome <match.out)" = settled && test "$(json_get items.0.run <match.out)" = 0 &&
	test "$(json_get items.1.outcome <match.out)" = settled && test "$(json_get items.1.run <match.out)" = 1 &&
	test "$(json_get items.2.outcome <match.out)" = settled && test "$(json_get items.2.run <match.out)" = 0 &&
	test "$(json_get items.3.outcome <match.out)" = replay && test "$(json_get items.3.run <match.out)" = 1 &&
	test "$(json_get items.4.outcome <match.out)" = replay &&
	test "$(json_get items.4.message <match.out)" = "not charged: cancelled by allot before start" &&
	test "$(json_get items.5.outcome <match.out)" = skipped &&
	json_get items.6.error.message <match.out | grep -q "^run: not with match sacct" &&
	test "$(api GET /v1/jobs/c1/6001 | json_get runs.0.status)" = settled &&
	api GET /v1/jobs/c1/6002 >j6002 && grep -q "\"run\": *1" j6002
'
test_expect_success 'over 10000 jobs is 413; a body without jobs is 400; only operators' '
	python3 -c "print(\"{\\\"jobs\\\":[\" + \",\".join([\"{}\"] * 10001) + \"]}\")" >big.json &&
	api_bad 413 jobs POST /v1/jobs/settle/bulk "$(cat big.json)" &&
	api_bad 400 jobs POST /v1/jobs/settle/bulk "{}" &&
	api_bad 400 match POST /v1/jobs/settle/bulk "{\"match\":\"job\",\"jobs\":[]}" &&
	api POST /v1/users "{\"name\":\"plain\",\"uid\":4242}" >/dev/null &&
	API_RUNAS= API_AS=plain test_expect_code 1 api POST /v1/jobs/settle/bulk "{\"jobs\":[]}" &&
	test "$(api_status)" = 403
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
