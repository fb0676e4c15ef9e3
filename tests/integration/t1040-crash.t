#!/bin/bash
# t1040-crash.t - durability of acknowledged operations (doc/design.md §10.1).  allotd is killed
# with SIGKILL while 64 clients are mid-flight, and made to _exit at the crash points
# around the group commit (writer.before_commit, writer.after_commit); after each restart
# every operation the clients saw acknowledged is present exactly once, balances equal
# the ledger sums, nothing is overdrawn and the store check passes.
test_description='allotd crash: acknowledged operations survive'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" && test -x "$ALLOT_STORM" || { skip_all="allotd or allot_storm not built"; test_done; }

CONF="AuthType=none TestMode=local Operators=slurm"

# verify: compare the ack log with jobs, ledger and balance after a restart.
verify() {
	api GET "/v1/balances?account=chem" >bal &&
	api GET "/v1/ledger?account=chem" >ledger &&
	api GET "/v1/jobs?account=chem" >jobs &&
	api GET /v1/check >check &&
	test "$(json_get ok <check)" = true &&
	python3 - <<-\PY
	import json
	bal = json.load(open("bal"))["items"][0]
	led = json.load(open("ledger"))["items"]
	jobs = {j["job_id"]: j for j in json.load(open("jobs"))["items"]}
	s, per = {}, {}
	for e in led:
	    s[e["kind"]] = s.get(e["kind"], 0) + e["amount_sumin"]
	    k = (e["kind"], e["job_id"])
	    per[k] = per.get(k, 0) + 1
	for (kind, job), n in per.items():
	    assert job == 0 or kind not in ("hold", "debit", "release") or n == 1, (kind, job, n)
	granted, used = s.get("credit", 0), s.get("debit", 0)
	held = s.get("hold", 0) - s.get("release", 0)
	assert (bal["granted_sumin"], bal["used_sumin"], bal["held_sumin"]) == (granted, used, held), (bal, s)
	assert bal["available_sumin"] == granted - used - held >= 0, bal
	n = 0
	for line in open("ack"):
	    w = line.split()
	    job = int(w[1])
	    j = jobs.get(job)
	    assert j is not None, ("acknowledged job missing", line)
	    if w[0] == "settle":
	        assert j["status"] == "settled" and j["charge_sumin"] == int(w[2]), (line, j)
	    elif w[2] == "held":
	        assert j["status"] in ("held", "settled"), (line, j)
	    else:
	        assert j["status"] == "refused", (line, j)
	    n += 1
	print("acknowledged", n, "jobs", len(jobs), "held", held, "used", used)
	PY
}

test_expect_success 'setup' '
	allotd_start $CONF &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\"}" &&
	api POST /v1/users "{\"name\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"100000h\"}"
'
test_expect_success 'kill -9 under a 64-client storm' '
	: >ack &&
	"$ALLOT_STORM" --url "$ALLOTD_URL" --clients 64 --ops 200 --job-base 1000 \
		--billing 2 --time-limit 600 --elapsed 77 --ack-log ack >storm.out &
	storm=$! &&
	wait_for 60 sh -c "test \$(wc -l <ack) -ge 500" &&
	allotd_kill9 &&
	run_bounded 60 sh -c "while kill -0 $storm 2>/dev/null; do sleep 0.1; done" &&
	cat storm.out &&
	grep -v "errors=0" storm.out
'
test_expect_success 'after restart every acknowledged operation is there once' '
	allotd_start $CONF &&
	verify
'
for point in writer.before_commit writer.after_commit writer.after_sync; do
	test_expect_success "crash point $point under load" '
		allotd_stop &&
		: >ack &&
		ALLOT_CRASH=$point:30 allotd_start $CONF &&
		run_bounded 120 "$ALLOT_STORM" --url "$ALLOTD_URL" --clients 64 --ops 200 \
			--job-base $((RANDOM * 100 + 100000)) --billing 1 --time-limit 600 \
			--elapsed 33 --ack-log ack >storm.out &&
		cat storm.out &&
		wait_for 10 pid_gone "$ALLOTD_PID" &&
		wait $ALLOTD_PID; test $? = 99 &&
		ALLOTD_PID= &&
		allotd_start $CONF &&
		verify
	'
done
test_expect_success 'cleanup' 'allotd_stop'
test_done
