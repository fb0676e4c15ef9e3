#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1080-import-sacct.t - `allot import sacct` (doc/adopt.md "Bring the history") against a
# real allotd: a listing of a few hundred jobs (with step rows) imports as usage; a listing
# with a bad line, or without a needed column, is refused with the line number and the
# reason and imports nothing; a second import changes nothing; the usage equals what
# settling the same jobs one by one gives (allot share's raw usage and /v1/usage, on a bank
# that settled them); backfill=yes charges each job once to its allocation, marked
# "import sacct" in the ledger, and the books stay consistent.
test_description='allot import sacct: check, import, idempotence, usage, backfill'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
# A bank for the listing: cluster c1, accounts a0 and a1 (users u0..u3, user i in a(i mod 2)),
# partition batch priced CPU=1.0,Mem=0.25G, an allocation per account.
bank() {
	allotd_start PriorityDecayHalfLife=0 &&
	allot cluster add c1 >/dev/null &&
	allot partition add batch cluster=c1 resource=cpu billing=CPU=1.0,Mem=0.25G >/dev/null &&
	for a in a0 a1; do
		allot account add $a >/dev/null &&
		allot alloc add $a resource=cpu su=100000000h start=2020-01-01 end=2100-01-01 >/dev/null ||
			return 1
	done &&
	for u in 0 1 2 3; do
		allot user add u$u >/dev/null &&
		allot assoc add cluster=c1 account=a$((u % 2)) user=u$u >/dev/null || return 1
	done
}
# fresh_bank: the bank above, empty again (the same allotd configuration).
fresh_bank() {
	allotd_stop &&
	if [ "${ALLOT_TEST_BACKEND:-sqlite}" = pg ]; then
		pg_psql "DROP SCHEMA public CASCADE; CREATE SCHEMA public;" >/dev/null
	else
		rm -f "$ALLOTD_DIR"/allot.db*
	fi &&
	bank
}
jobs_count() { api GET "/v1/jobs?cluster=c1&limit=100000" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))'; }
# share: each association's raw usage, sorted (UsageSource=charge, no decay).
share() { api GET "/v1/share?cluster=c1" | python3 -c '
import json,sys
for r in json.load(sys.stdin)["items"]:
    print(r["account"], r.get("user") or "-", r["raw_usage"])' | sort; }
usage() { api GET "/v1/usage?cluster=c1&since=2000-01-01" | python3 -c '
import json,sys
for r in json.load(sys.stdin)["items"]:
    print(r["account"], r["user"], r["jobs"], r["charge_sumin"], r["billing_s"])' | sort; }
used() { api GET "/v1/balances" | python3 -c '
import json,sys
for r in json.load(sys.stdin)["items"]:
    print(r["account"], r["used_sumin"], r["held_sumin"])' | sort; }

test_expect_success 'munged; a listing of 300 jobs with step rows' '
	munged_start "$PWD/munge" && chmod 0755 "$MUNGE_DIR" &&
	python3 "$ALLOT_SRC_DIR/tests/lib/sacct_gen.py" 300 --accounts 2 --users 4 --steps >jobs.txt &&
	test "$(grep -c "^[0-9]*|" jobs.txt)" = 300 &&
	grep -q "^[0-9]*\.batch|" jobs.txt
'
test_expect_success 'a bad line is refused with its line number and reason; nothing imported' '
	bank &&
	sed "57s/|\([0-9][0-9]\):\([0-9][0-9]\):\([0-9][0-9]\)|billing/|99:xx:00|billing/" jobs.txt >bad.txt &&
	! test_cmp jobs.txt bad.txt &&
	test_expect_code 2 allot import sacct bad.txt 2>err && cat err &&
	grep -q "bad.txt:57: Elapsed" err &&
	grep -q "nothing imported" err &&
	test "$(jobs_count)" = 0 &&
	cut -d"|" -f1-7,9- jobs.txt >nocol.txt &&
	test_expect_code 2 allot import sacct nocol.txt 2>err && cat err &&
	grep -q "nocol.txt:1: header: no Elapsed column" err &&
	head -c 2000 jobs.txt >cut.txt &&
	test_expect_code 2 allot import sacct cut.txt 2>err && grep -q "no newline" err &&
	test "$(jobs_count)" = 0
'
test_expect_success 'import: 300 jobs as usage, steps passed over; no money moves' '
	used >used.before &&
	allot import sacct jobs.txt >out && cat out &&
	grep -q "^300 jobs read: 300 imported, 0 already in the bank, 43 rows passed over" out &&
	test "$(jobs_count)" = 300 &&
	used >used.after && test_cmp used.before used.after &&
	api GET "/v1/jobs?cluster=c1&limit=1" | json_get items.0.settle_source | grep -qx import &&
	api GET /v1/check | json_get ok | grep -qx true
'
test_expect_success 'a second import changes nothing' '
	share >share.1 && usage >usage.1 &&
	allot import sacct jobs.txt >out && cat out &&
	grep -q "^300 jobs read: 0 imported, 300 already in the bank" out &&
	share >share.2 && test_cmp share.1 share.2 &&
	usage >usage.2 && test_cmp usage.1 usage.2
'
test_expect_success 'the usage equals what settling the same jobs gives' '
	fresh_bank &&
	python3 -c "
import json, sys
lines = open(\"jobs.txt\").read().splitlines()
cols = lines[0].split(\"|\")
def secs(t):
    d, _, hms = t.rpartition(\"-\")
    h, m, s = (int(x) for x in hms.split(\":\"))
    return (int(d) if d else 0) * 86400 + h * 3600 + m * 60 + s
for l in lines[1:]:
    r = dict(zip(cols, l.split(\"|\")))
    if \".\" in r[\"JobIDRaw\"]:
        continue
    print(json.dumps({\"cluster\": \"c1\", \"job_id\": int(r[\"JobIDRaw\"]), \"start\": r[\"Start\"] + \"Z\",
        \"end\": r[\"End\"] + \"Z\", \"elapsed_s\": secs(r[\"Elapsed\"]), \"state\": r[\"State\"],
        \"alloc_tres\": r[\"AllocTRES\"], \"user\": r[\"User\"], \"account\": r[\"Account\"],
        \"partition\": r[\"Partition\"], \"qos\": r[\"QOS\"], \"time_limit_s\": secs(r[\"Timelimit\"]),
        \"source\": \"sacct\"}))
" >settles.json &&
	test "$(wc -l <settles.json)" = 300 &&
	while read -r s; do api POST /v1/jobs/settle "$s" >/dev/null || return 1; done <settles.json &&
	share >share.settled && usage >usage.settled && used >used.settled &&
	cat share.settled &&
	test_cmp share.settled share.1 &&
	test_cmp usage.settled usage.1
'
test_expect_success 'backfill=yes: each job charged once, as settling charged it, marked imported' '
	fresh_bank &&
	allot import sacct jobs.txt backfill=yes >out && cat out &&
	grep -q "^300 jobs read: 300 imported" out &&
	used >used.backfill && test_cmp used.settled used.backfill &&
	total=$(awk "{s += \$2} END {print s}" used.backfill) &&
	grep -q "^backfill: $total SU-minutes charged" out &&
	allot ledger a0 >ledger.out &&
	grep -q "import sacct COMPLETED" ledger.out &&
	api GET "/v1/ledger?account=a0" | python3 -c "
import json,sys
k = [e for e in json.load(sys.stdin)[\"items\"] if e[\"kind\"] == \"debit\"]
assert k and all(e[\"comment\"].startswith(\"import sacct \") for e in k), k
assert len({(e[\"job_id\"], e[\"run\"]) for e in k}) == len(k), \"a job charged twice\"" &&
	share >share.backfill && test_cmp share.settled share.backfill &&
	allot import sacct jobs.txt backfill=yes >out && grep -q "0 imported, 300 already" out &&
	used >used.again && test_cmp used.backfill used.again &&
	api GET /v1/check | json_get ok | grep -qx true
'
test_expect_success 'backfill for an account without an allocation: refused, the batch not written' '
	printf "%s\n" "$(head -1 jobs.txt)" \
		"9000001|COMPLETED|u0|nobody|batch|2026-01-01T00:00:00|2026-01-01T01:00:00|01:00:00|billing=1,cpu=1,mem=2G,node=1|normal|02:00:00" >orphan.txt &&
	allot account add nobody >/dev/null &&
	test_expect_code 3 allot import sacct orphan.txt backfill=yes 2>err && cat err &&
	grep -q "after 0 of 1 jobs.*job 9000001 run 0: account .nobody. and its parents have no .cpu. allocation" err &&
	test_expect_code 1 api GET /v1/jobs/c1/9000001
'
# Two batches are in flight at a time (cmd_import_sacct.c): a listing of three batches and
# more reuses each connection, and every job goes in exactly once.  A batch may wait for
# the one beside it, so it has 300 s whatever a shorter --timeout says (doc/cli.md).
test_expect_success 'a listing of 70000 jobs goes in batches, two at a time: each job once' '
	fresh_bank &&
	python3 "$ALLOT_SRC_DIR/tests/lib/sacct_gen.py" 70000 --accounts 2 --users 4 >big.txt &&
	allot import sacct big.txt cluster=c1 >out && cat out &&
	grep -q "^70000 jobs read: 70000 imported, 0 already" out &&
	test "$(grep -c "msg=\"jobs imported\"" "$ALLOTD_LOG")" -ge 3 &&
	allot --timeout 1ms import sacct big.txt cluster=c1 >out && cat out &&
	grep -q "^70000 jobs read: 0 imported, 70000 already" out &&
	usage | awk "{ n += \$3 } END { exit n != 70000 }"
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
