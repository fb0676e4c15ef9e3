#!/bin/bash
# t1030-concurrency.t - no overdraft under concurrency (doc/design.md §3.6).  HADM's case: two
# concurrent 20 SU holds against 30 SU give exactly one hold.  Then a storm of 64 clients
# doing thousands of holds and settles on one allocation that cannot cover them all: the
# final balance equals credits - debits - holds from the ledger, never below zero, every
# acknowledged debit is in the ledger once, and the store check passes.
test_description='allotd concurrency: no overdraft'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" && test -x "$ALLOT_STORM" || { skip_all="allotd or allot_storm not built"; test_done; }

test_expect_success 'setup' '
	allotd_start AuthType=none TestMode=local Operators=slurm MaxBatch=256 &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"hadm\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\"}" &&
	api POST /v1/users "{\"name\":\"u\"}" && api POST /v1/users "{\"name\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"hadm\",\"user\":\"u\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/allocations "{\"account\":\"hadm\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"30h\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"100h\"}"
'
test_expect_success 'two concurrent 20 SU holds on 30 SU: exactly one is held' '
	pids= &&
	for j in 1 2; do
		curl -s -o hold$j -w "%{http_code}\n" -H "X-Allot-User: slurm" -H "Content-Type: application/json" -X POST \
			--data-binary "{\"cluster\":\"c1\",\"job_id\":$j,\"user\":\"u\",\"account\":\"hadm\",\"partition\":\"std\",\"time_limit_s\":1200,\"billing\":60}" \
			"$ALLOTD_URL/v1/jobs/hold" >code$j &
		pids="$pids $!"
	done &&
	wait $pids &&
	cat code1 code2 | sort | tr "\n" " " >codes &&
	printf "200 402 " >expect && test_cmp expect codes &&
	api GET "/v1/balances?account=hadm" >out &&
	test "$(json_get items.0.held_sumin <out)" = 1200 &&
	test "$(json_get items.0.available_sumin <out)" = 600
'
# 64 clients x 60 jobs: each hold is 10 SU-min (billing 1 x 600 s), each settle charges
# 5 SU-min; 6000 SU-min cannot cover all 3840 jobs, so refusals must happen.
test_expect_success 'storm of 64 clients on one allocation' '
	run_bounded 300 "$ALLOT_STORM" --url "$ALLOTD_URL" --clients 64 --ops 60 --job-base 1000 \
		--account chem --billing 1 --time-limit 600 --elapsed 300 --ack-log ack >storm.out &&
	cat storm.out &&
	grep "errors=0" storm.out &&
	! grep "refused=0 " storm.out
'
test_expect_success 'balance equals ledger sums, never below zero, acks all present' '
	api GET "/v1/balances?account=chem" >bal &&
	api GET "/v1/ledger?account=chem" >ledger &&
	api GET "/v1/jobs?account=chem" >jobs &&
	python3 - <<-\PY
	import json
	bal = json.load(open("bal"))["items"][0]
	led = json.load(open("ledger"))["items"]
	jobs = {j["job_id"]: j for j in json.load(open("jobs"))["items"]}
	s = {}
	for e in led:
	    s[e["kind"]] = s.get(e["kind"], 0) + e["amount_sumin"]
	debits = {}
	for e in led:
	    if e["kind"] == "debit":
	        debits[e["job_id"]] = debits.get(e["job_id"], 0) + 1
	granted = s.get("credit", 0)
	used = s.get("debit", 0)
	held = s.get("hold", 0) - s.get("release", 0)
	assert bal["granted_sumin"] == granted, (bal, s)
	assert bal["used_sumin"] == used, (bal, s)
	assert bal["held_sumin"] == held == 0, (bal, s)
	assert bal["available_sumin"] == granted - used - held >= 0, bal
	acked = 0
	for line in open("ack"):
	    w = line.split()
	    job = int(w[1])
	    if w[0] == "settle":
	        acked += int(w[2])
	        assert debits.get(job) == 1, ("debit count", job, debits.get(job))
	        assert jobs[job]["status"] == "settled", jobs[job]
	    elif w[2] == "refused":
	        assert jobs[job]["status"] == "refused", jobs[job]
	assert acked == used, (acked, used)
	print("granted", granted, "used", used, "available", bal["available_sumin"])
	PY
'
test_expect_success 'store check passes' '
	api GET /v1/check >out &&
	test "$(json_get ok <out)" = true
'
test_expect_success 'cleanup' 'allotd_stop'
test_done
