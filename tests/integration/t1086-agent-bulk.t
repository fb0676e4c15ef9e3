#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1086-agent-bulk.t - allot-agent's reconciliation (doc/agent.md) settles a
# window's jobs through POST /v1/jobs/settle/bulk, 2,000 a request, against a real allotd:
# 6,000 finished jobs listed by a sacct stand-in (held, settled by the epilog, never seen, of
# an account without allocation, never started) are settled in three requests, each charged
# ceil(billing x ElapsedRaw / 60) exactly once, the held ones on their hold, the epilog's
# untouched, the ghost's reported; a replay of the window charges nothing.  (The agent on a
# real Slurm: t3110.)
test_description='allot-agent reconciles through the bulk settle'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
AGENT=$ALLOT_BUILD_DIR/src/agent/allot-agent
test -x "$ALLOTD_BIN" && test -x "$AGENT" || { skip_all="allotd or allot-agent not built"; test_done; }

agent() {
	ALLOT_TEST_USER=slurm ALLOT_SACCT=$PWD/sacct run_bounded 300 "$AGENT" --url "$ALLOTD_URL" \
		--cluster c1 --once --wait 0 --reconcile-every 1 --reconcile-lag 0 "$@"
}
debits() {
	api GET "/v1/ledger?alloc=$(cat alloc)&limit=100000" | python3 -c '
import json, sys
e = [x for x in json.load(sys.stdin)["items"] if x["kind"] == "debit"]
print(len(e), sum(x["amount_sumin"] for x in e))'
}

test_expect_success 'allotd with chem (allocation) and ghost (none); a sacct of 6000 jobs' '
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" && api POST /v1/accounts "{\"name\":\"ghost\"}" &&
	api POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"root\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"ghost\",\"user\":\"root\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"debug\",\"resource\":\"cpu\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10000000h\"}" >out &&
	json_get id <out >alloc &&
	now=$(date +%s) && echo $((now - 3600)) >from &&
	python3 - "$now" <<-\EOF
	import math, sys, time
	now = int(sys.argv[1])
	utc = lambda t: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
	rows, want, holds = [], 0, []
	for j in range(1, 6001):
	    start, el, b = now - 3000 + j % 600, 30 + j % 900, 1 + j % 4
	    acct = "ghost" if j == 77 else "chem"
	    st = "Unknown" if j == 78 else utc(start)
	    rows.append("%d|COMPLETED|root|%s|debug|normal|%s|%s|%d|00:30:00|billing=%d,cpu=%d,node=1|%d|%d"
	                % (j, acct, st, utc(start + el), el, b, b, b, j))
	    if j in (77, 78):
	        continue
	    if j % 1000 == 5:  # held: settled on its hold (billing 1 of the hold, time limit 1800)
	        holds.append((j, start))
	        want += math.ceil(1 * el / 60)
	    elif j != 9:      # job 9: the epilog settled it (charged 1 below)
	        want += math.ceil(b * el / 60)
	open("sacct.txt", "w").write("\n".join(rows) + "\n")
	open("holds", "w").write("".join("%d %d\n" % h for h in holds))
	open("want", "w").write("%d\n" % (want + 1))
	open("start9", "w").write("%d\n" % (now - 3000 + 9))
	EOF
	printf "#!/bin/sh\ncat \"%s/sacct.txt\"\n" "$PWD" >sacct && chmod +x sacct &&
	while read -r j s; do
		api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$j,\"run\":0,\"user\":\"root\",\"account\":\"chem\",\"partition\":\"debug\",\"start\":$s,\"time_limit_s\":1800,\"billing\":1}" >/dev/null || return 1
	done <holds &&
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":9,\"run\":0,\"elapsed_s\":60,\"state\":\"COMPLETED\",\"source\":\"epilog\",\"start\":$(cat start9),\"user\":\"root\",\"account\":\"chem\",\"partition\":\"debug\",\"billing\":1}" >/dev/null
'
test_expect_success 'one pass: 5998 settled in three bulk requests, the ghost reported' '
	agent --reconcile-from $(cat from) 2>agent.log; tail -n 3 agent.log &&
	grep -q "settled=5997 already=1 unknown=1 skipped=1" agent.log &&
	test "$(grep -c "msg=\"bulk settle\"" "$ALLOTD_LOG")" = 3 &&
	grep -q "msg=\"bulk settle\" .* jobs=2000 " "$ALLOTD_LOG" &&
	grep -q "job 77 unknown to allot: account=ghost" agent.log &&
	test "$(debits)" = "5998 $(cat want)" &&
	api GET /v1/jobs/c1/1005 >j && test "$(json_get runs.0.settle_source <j)" = sacct &&
	test "$(json_get runs.0.run <j)" = 0 && test "$(json_get runs.0.time_limit_s <j)" = 1800 &&
	test "$(api GET /v1/jobs/c1/9 | json_get runs.0.settle_source)" = epilog &&
	test_expect_code 1 api GET /v1/jobs/c1/77 &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
test_expect_success 'the window replayed: every job already settled, nothing charged' '
	agent --reconcile-from $(cat from) 2>again.log; tail -n 1 again.log &&
	grep -q "settled=0 already=5998 unknown=1 skipped=1" again.log &&
	test "$(debits)" = "5998 $(cat want)"
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
