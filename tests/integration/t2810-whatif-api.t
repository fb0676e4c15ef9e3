#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2810-whatif-api.t - POST /v1/whatif (doc/api.md, doc/whatif.md): the superuser gets the
# very report `allot --json whatif` prints on the same bank for the same change (compared
# member by member), a change list as a changes file gives it, a plain user is refused, a
# bad body is a 400 naming what is wrong, and the bank is the same afterwards.
test_description='POST /v1/whatif: the CLI report, operators only, bank untouched'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
HIST=$ALLOT_SRC_DIR/tests/data/whatif-history.sacct

bank_state() {
	api GET "/v1/ledger?limit=100000" >ledger && api GET "/v1/balances" >balances &&
	python3 -c '
import json
l = json.load(open("ledger"))["items"]
print("entries", len(l), "last", l[-1]["id"] if l else 0)
for b in json.load(open("balances"))["items"]:
    print(b["id"], b["granted_sumin"], b["used_sumin"], b["held_sumin"], b["available_sumin"])'
}
# same A B: the two JSON documents are equal (key order aside); prints the first difference.
same() {
	python3 - "$1" "$2" <<-\EOF
	import json, sys
	a, b = (json.load(open(f)) for f in sys.argv[1:])
	if a != b:
	    for k in sorted(set(a) | set(b)):
	        if a.get(k) != b.get(k):
	            print("differ:", k, a.get(k), b.get(k))
	    sys.exit(1)
	EOF
}

test_expect_success 'a bank with the recorded history imported' '
	munged_start "$PWD/munge" && chmod 0755 "$MUNGE_DIR" &&
	allotd_start PriorityDecayHalfLife=0 FairShareAlgorithm=classic Operators=bob \
		WhatifMaxJobs=6 &&
	allot cluster add c1 >/dev/null &&
	allot partition add batch cluster=c1 resource=cpu billing=CPU=1.0 >/dev/null &&
	allot partition add gpu cluster=c1 resource=gpu billing=CPU=1.0,GRES/gpu=4.0 >/dev/null &&
	for a in chem phys; do
		allot account add $a >/dev/null &&
		for r in cpu gpu; do
			allot alloc add $a resource=$r su=1000h start=2026-01-01 end=2027-01-01 \
				>/dev/null || return 1
		done
	done &&
	allot user add alice >/dev/null && allot user add bob >/dev/null &&
	allot assoc add cluster=c1 account=chem user=alice >/dev/null &&
	allot assoc add cluster=c1 account=phys user=bob >/dev/null &&
	allot import sacct "$HIST" cluster=c1 backfill=yes >/dev/null &&
	bank_state >state.0 && cat state.0 &&
	grep -qx "2 60000 960 0 59040" state.0
'

test_expect_success 'a billing weight: the same report as allot --json whatif' '
	allot --json whatif cluster=c1 partition=gpu weights=CPU=1.0,GRES/gpu=8.0 >cli.json &&
	api POST /v1/whatif "{\"cluster\":\"c1\",\"partition\":\"gpu\",
		\"weights\":\"CPU=1.0,GRES/gpu=8.0\"}" >api.json &&
	cat api.json && same cli.json api.json &&
	python3 -c "
import json
r = json.load(open(\"api.json\"))
a = {x[\"account\"]: x for x in r[\"accounts\"]}
assert r[\"source\"] == \"bank\" and r[\"jobs\"] == 6, r
assert (a[\"chem\"][\"charged_before_sumin\"], a[\"chem\"][\"charged_after_sumin\"]) == (1200, 1680)
assert (a[\"phys\"][\"charged_before_sumin\"], a[\"phys\"][\"charged_after_sumin\"]) == (11, 17)
"
'

test_expect_success 'several changes, numbers and booleans: as a changes file gives them' '
	cat >changes <<-\EOF &&
	partition=gpu weights=CPU=1.0,GRES/gpu=8.0
	partition=batch max_tres=yes
	alloc=2 amount=1400m
	EOF
	allot --json whatif cluster=c1 changes=changes halflife=1:00:00 >cli.json &&
	api POST /v1/whatif "{\"cluster\":\"c1\",\"halflife\":\"1:00:00\",\"changes\":[
		{\"partition\":\"gpu\",\"weights\":\"CPU=1.0,GRES/gpu=8.0\"},
		{\"partition\":\"batch\",\"max_tres\":true},
		{\"alloc\":2,\"amount\":\"1400m\"}]}" >api.json &&
	same cli.json api.json &&
	python3 -c "
import json
r = json.load(open(\"api.json\"))
f = [x for x in r[\"refusals\"] if x[\"scenario\"] == \"after\"]
# gpu at 24 an hour: jobs 2 and 6 each hold 24 x 60 = 1440 > 1400
assert [(x[\"job_id\"], x[\"needed_sumin\"]) for x in f] == [(2, 1440), (6, 1440)], f
assert r[\"after\"][\"halflife_s\"] == 3600, r
"
'

test_expect_success 'a plain user is refused (403); an operator is answered' '
	API_AS=alice test_expect_code 1 api POST /v1/whatif "{\"cluster\":\"c1\"}" >out &&
	test "$(cat "$ALLOTD_DIR/status")" = 403 &&
	API_AS=bob api POST /v1/whatif "{\"cluster\":\"c1\"}" >out &&
	test "$(json_get jobs <out)" = 6
'

# The history's 6 jobs are WhatifMaxJobs (answered above): one more settled is too many.
test_expect_success 'more jobs than WhatifMaxJobs: 413, nothing changed' '
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":100,\"run\":0,\"user\":\"alice\",
		\"account\":\"chem\",\"partition\":\"batch\",\"end\":\"2026-01-06T13:00:00Z\",
		\"elapsed_s\":600,\"time_limit_s\":1200,\"alloc_tres\":\"cpu=2\",
		\"state\":\"COMPLETED\"}" >/dev/null &&
	bank_state >state.0 &&
	test_expect_code 1 api POST /v1/whatif "{\"cluster\":\"c1\"}" >out &&
	test "$(cat "$ALLOTD_DIR/status")" = 413 && grep -q "more than 6 settled jobs" out &&
	bank_state >state.1 && test_cmp state.0 state.1
'

# bad BODY WORDS: a 400 whose message has WORDS.
bad() {
	test_expect_code 1 api POST /v1/whatif "$1" >out &&
	test "$(cat "$ALLOTD_DIR/status")" = 400 &&
	grep -q "$2" out || { cat out; return 1; }
}

test_expect_success 'a bad body is a 400 naming what is wrong; the bank is unchanged' '
	bad "[1]" "must be a JSON object" &&
	bad "{\"cluster\":\"c1\",\"colour\":\"red\"}" "colour" &&
	bad "{\"partition\":\"gpu\",\"weights\":\"CPU=1\"}" "cluster: required" &&
	bad "{\"cluster\":\"c1\",\"partition\":\"nope\",\"weights\":\"CPU=1\"}" "nope" &&
	bad "{\"cluster\":\"c1\",\"weights\":\"CPU=1\"}" "need partition=" &&
	bad "{\"cluster\":\"c1\",\"alloc\":99,\"amount\":\"1h\"}" "alloc: 99" &&
	bad "{\"cluster\":\"c1\",\"algo\":[1]}" "algo: must be" &&
	bad "{\"cluster\":\"c1\",\"changes\":{}}" "changes: must be a list" &&
	bad "{\"cluster\":\"c1\",\"changes\":[{\"sacct\":\"/etc/passwd\"}]}" "sacct" &&
	bad "{\"cluster\":\"c1\",\"sacct\":\"/etc/passwd\"}" "sacct" &&
	bank_state >state.1 && test_cmp state.0 state.1
'

test_expect_success 'stop: allotd exits cleanly (under ASan: no leak)' '
	allotd_stop && test "$ALLOTD_EXIT" = 0
'
test_done
