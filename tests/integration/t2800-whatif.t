#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2800-whatif.t - `allot whatif` (doc/whatif.md) against a real allotd, on the recorded
# history tests/data/whatif-history.sacct: a partition's billing weight changed gives the
# per-account difference worked out by hand below; an allocation's amount lowered refuses a
# known job at a known time; a half-life and an algorithm change move fair-share and no money;
# the bank's own jobs (the same history imported) replay to the ledger's charges; and the
# bank is the same, ledger and balances, after every replay.  Bad changes are refused.
test_description='allot whatif: billing weight, amount, half-life; the bank untouched'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
HIST=$ALLOT_SRC_DIR/tests/data/whatif-history.sacct

# field FILE MEMBER, or field FILE LIST NAME KEY: a member of the --json report, or one of a
# row of accounts, users or allocations picked by its account, user or id.
field() {
	python3 - "$@" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
args = sys.argv[2:]
if len(args) == 3:
    key = {"accounts": "account", "users": "user", "allocations": "id"}[args[0]]
    rows = [r for r in rep[args[0]] if str(r[key]) == args[1]]
    assert len(rows) == 1, rows
    print(json.dumps(rows[0][args[2]]))
else:
    print(json.dumps(rep[args[0]]))
EOF
}
# The bank's state: every ledger entry and every balance.
bank_state() {
	api GET "/v1/ledger?limit=100000" >ledger && api GET "/v1/balances" >balances &&
	python3 -c '
import json
l = json.load(open("ledger"))["items"]
print("entries", len(l), "last", l[-1]["id"] if l else 0)
for b in json.load(open("balances"))["items"]:
    print(b["id"], b["granted_sumin"], b["used_sumin"], b["held_sumin"], b["available_sumin"])'
}

test_expect_success 'a bank: cluster c1, partitions batch (cpu) and gpu, chem and phys' '
	munged_start "$PWD/munge" && chmod 0755 "$MUNGE_DIR" &&
	allotd_start PriorityDecayHalfLife=0 FairShareAlgorithm=classic &&
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
	allot -P -n alloc show | cut -d"|" -f1-3 >allocs && cat allocs &&
	grep -qx "2|chem|gpu" allocs &&
	bank_state >state.0
'

# gpu's GRES/gpu weight 4 -> 8; charges ceil(billing x elapsed / 60) SU-minutes:
#   1 alice batch cpu=4, 1 h:                 4 x 60                    = 240 both
#   2 alice gpu cpu=8,gpu=2, 30 min:  before (8 + 2 x 4 = 16) x 30      = 480
#                                     after  (8 + 2 x 8 = 24) x 30      = 720
#   6 alice gpu, the same as 2:                                           480 -> 720
#   3 bob gpu cpu=2,gpu=1, 90 s:      before (2 + 4 = 6) x 90 / 60      = 9
#                                     after  (2 + 8 = 10) x 90 / 60     = 15
#   4 bob batch cpu=1, 61 s:          ceil(1 x 61 / 60)                 = 2 both
#   5 bob batch NODE_FAIL:                                                0
# chem 240 + 480 + 480 = 1200 -> 240 + 720 + 720 = 1680 (+480);
# phys 9 + 2 + 0 = 11 -> 15 + 2 + 0 = 17 (+6).
test_expect_success 'a billing weight changed: the per-account difference by hand' '
	allot --json whatif sacct="$HIST" partition=gpu weights=CPU=1.0,GRES/gpu=8.0 >out &&
	cat out &&
	test "$(field out jobs)" = 6 &&
	test "$(field out accounts chem charged_before_sumin)" = 1200 &&
	test "$(field out accounts chem charged_after_sumin)" = 1680 &&
	test "$(field out accounts chem change_sumin)" = 480 &&
	test "$(field out accounts phys charged_before_sumin)" = 11 &&
	test "$(field out accounts phys charged_after_sumin)" = 17 &&
	test "$(field out accounts phys change_sumin)" = 6 &&
	test "$(field out accounts phys jobs_after)" = 3 &&
	test "$(field out refusals)" = "[]" &&
	test "$(field out allocations 2 used_after_sumin)" = 1440 &&
	bank_state >state.1 && test_cmp state.0 state.1
'

test_expect_success 'the table shows the same, and -P' '
	allot whatif sacct="$HIST" partition=gpu weights=CPU=1.0,GRES/gpu=8.0 >table &&
	cat table &&
	grep -E "^chem +3 +3 +20h +28h +8h " table &&
	allot -P whatif sacct="$HIST" partition=gpu weights=CPU=1.0,GRES/gpu=8.0 >p &&
	grep -x "phys|3|3|11m|17m|6m|0|0" p
'

# chem's gpu allocation (2) lowered to 1400 SU-minutes, prices unchanged: job 2 (hold
# 16 x 60 = 960) at 10:00:10 finds 1400 and is charged 480; job 6 at 12:00:00 finds
# 1400 - 480 = 920 < 960 and is refused.  chem is charged 240 + 480 = 720.
test_expect_success 'an amount lowered: job 6 refused at 12:00:00, needing 960, 920 left' '
	allot --json whatif sacct="$HIST" alloc=2 amount=1400m >out && cat out &&
	python3 -c "
import json
r = json.load(open(\"out\"))
f = [x for x in r[\"refusals\"] if x[\"scenario\"] == \"after\"]
assert len(f) == 1, f
f = f[0]
assert (f[\"job_id\"], f[\"time\"], f[\"alloc_id\"], f[\"needed_sumin\"], f[\"available_sumin\"]) == \
    (6, \"2026-01-05T12:00:00Z\", 2, 960, 920), f
" &&
	test "$(field out accounts chem charged_after_sumin)" = 720 &&
	test "$(field out accounts chem refused_after)" = 1 &&
	test "$(field out allocations 2 exhausted_after)" = "\"2026-01-05T12:00:00Z\"" &&
	test "$(field out allocations 2 exhausted_before)" = null &&
	test "$(field out allocations 2 granted_after_sumin)" = 1400 &&
	bank_state >state.2 && test_cmp state.0 state.2
'

# Fair-share at the last end (12:30).  No decay, classic: alice's usage 1200 and bob's 11
# against equal shares.  A half-life of one hour changes no charge but moves both factors.
test_expect_success 'a half-life change moves fair-share, and no money' '
	allot --json whatif sacct="$HIST" halflife=1:00:00 >out && cat out &&
	test "$(field out after)" = "{\"algo\": \"classic\", \"halflife_s\": 3600}" &&
	test "$(field out before)" = "{\"algo\": \"classic\", \"halflife_s\": 0}" &&
	test "$(field out accounts chem change_sumin)" = 0 &&
	python3 -c "
import json
u = {r[\"user\"]: r for r in json.load(open(\"out\"))[\"users\"]}
a, b = u[\"alice\"], u[\"bob\"]
# before: U = 1200/1211 and 11/1211, S = 1/2: F = 2^-(2U)
assert abs(a[\"fairshare_before\"] - 2 ** (-2 * 1200 / 1211)) < 1e-9, a
assert abs(b[\"fairshare_before\"] - 2 ** (-2 * 11 / 1211)) < 1e-9, b
# after: alice 240 at 11:00, 480 at 10:30:10, 480 at 12:30; bob 9 at 10:01:50, 2 at 10:01:31
h = 3600.0
ua = 240 * 2 ** (-5400 / h) + 480 * 2 ** (-7190 / h) + 480
ub = 9 * 2 ** (-(9000 - 110) / h) + 2 * 2 ** (-(9000 - 91) / h)
assert abs(a[\"fairshare_after\"] - 2 ** (-2 * ua / (ua + ub))) < 1e-9, (a, ua, ub)
assert abs(b[\"fairshare_after\"] - 2 ** (-2 * ub / (ua + ub))) < 1e-9, (b, ua, ub)
" &&
	allot --json whatif sacct="$HIST" algo=fair_tree >out &&
	test "$(field out users alice rank_after)" = 1 &&
	test "$(field out users bob rank_after)" = 2
'

test_expect_success 'the bank replays its own jobs: before = the ledger; bank unchanged' '
	allot import sacct "$HIST" cluster=c1 backfill=yes >import && cat import &&
	bank_state >state.3 && cat state.3 &&
	grep -qx "2 60000 960 0 59040" state.3 &&
	allot --json whatif partition=gpu weights=CPU=1.0,GRES/gpu=8.0 >out && cat out &&
	test "$(field out source)" = "\"bank\"" &&
	test "$(field out jobs)" = 6 &&
	test "$(field out accounts chem charged_before_sumin)" = 1200 &&
	test "$(field out accounts chem charged_after_sumin)" = 1680 &&
	test "$(field out accounts phys charged_after_sumin)" = 17 &&
	test "$(field out allocations 2 used_before_sumin)" = 960 &&
	allot whatif alloc=2 amount=1400m halflife=1:00:00 >/dev/null &&
	: >empty && allot whatif changes=empty >/dev/null &&
	bank_state >state.4 && test_cmp state.3 state.4
'

# Jobs 1, 5 and 6 end at or after 11:00; the bank recorded all six just now, after it.
test_expect_success 'since= keeps the bank jobs that ended since, as for a listing' '
	allot --json whatif since=2026-01-05T11:00:00 >out && cat out &&
	test "$(field out jobs)" = 3 &&
	allot --json whatif sacct="$HIST" since=2026-01-05T11:00:00 >out &&
	test "$(field out jobs)" = 3
'

test_expect_success 'a changes file: several partitions, comments; its errors name the line' '
	cat >changes <<-\EOF &&
	# double the GPUs, price memory on batch
	partition=gpu weights=CPU=1.0,GRES/gpu=8.0
	partition=batch weights=CPU=1.0,Mem=1G max_tres=yes
	EOF
	allot --json whatif sacct="$HIST" changes=changes >out &&
	test "$(field out accounts chem charged_after_sumin)" = 1680 &&
	printf "partition=gpu weights=CPU=x\n" >bad &&
	test_expect_code 2 allot whatif sacct="$HIST" changes=bad 2>err && cat err &&
	grep -q "bad:1" err
'

test_expect_success 'bad changes are refused, naming what is wrong' '
	test_expect_code 2 allot whatif partition=nope weights=CPU=1 2>err &&
	grep -q "partition: .nope. is not one of cluster c1" err &&
	test_expect_code 2 allot whatif weights=CPU=1 2>err && grep -q "need partition=" err &&
	test_expect_code 2 allot whatif alloc=99 amount=1h 2>err && grep -q "alloc: 99" err &&
	test_expect_code 2 allot whatif alloc=2 2>err && grep -q "goes with amount= or policy=" err &&
	test_expect_code 2 allot whatif algo=fast 2>err && grep -q "algo: .fast." err &&
	test_expect_code 2 allot whatif colour=red 2>err && grep -q "colour" err &&
	sed "s/|chem|batch|/|nochem|batch|/" "$HIST" >unknown &&
	test_expect_code 2 allot whatif sacct=unknown 2>err && cat err &&
	grep -q "account .nochem. is not in the bank" err &&
	bank_state >state.5 && test_cmp state.3 state.5
'

# A monthly policy on chem's gpu allocation (2), base 1000 SU-minutes, notify at 40 %:
# January's total is 1000; job 2 (hold 960) fits and is charged 480, 48 % of it, so notify
# at its end, 10:30:10; job 6 at 12:00 finds 1000 - 480 = 520 < 960 and is refused.
test_expect_success 'a policy: a monthly base, its notify threshold, a refusal' '
	allot --json whatif sacct="$HIST" alloc=2 policy=month base=1000m notify=0.4 >out &&
	cat out &&
	test "$(field out allocations 2 periods_before)" = 0 &&
	test "$(field out allocations 2 periods_after)" = 1 &&
	test "$(field out allocations 2 granted_after_sumin)" = 1000 &&
	test "$(field out allocations 2 used_after_sumin)" = 480 &&
	test "$(field out allocations 2 notify_after)" = "\"2026-01-05T10:30:10Z\"" &&
	test "$(field out allocations 2 pause_after)" = null &&
	test "$(field out accounts chem refused_after)" = 1 &&
	test_expect_code 2 allot whatif alloc=2 policy=week base=1h 2>err &&
	grep -q "policy: .week." err &&
	test_expect_code 2 allot whatif alloc=2 policy=month 2>err && grep -q "needs base=" err &&
	test_expect_code 2 allot whatif alloc=2 policy=month base=1h carryover=2 2>err &&
	grep -q "carryover: at most 1" err &&
	bank_state >state.6 && test_cmp state.3 state.6
'

# The bank's own policy is the before: phys's gpu allocation (4) with a monthly 10 h base
# (initial=expire leaves it granted the 9 SU-minutes job 3 used).  Before: January's 600,
# job 3 charged 9.  policy=none: the allocation's own amount, 9, cannot hold job 3's 60.
test_expect_success 'a policy in the bank is the before; policy=none drops it' '
	allot policy add alloc=4 cluster=c1 period=month base=10h initial=expire >/dev/null &&
	allot --json whatif sacct="$HIST" alloc=4 policy=none >out && cat out &&
	test "$(field out allocations 4 periods_before)" = 1 &&
	test "$(field out allocations 4 granted_before_sumin)" = 600 &&
	test "$(field out allocations 4 used_before_sumin)" = 9 &&
	test "$(field out allocations 4 periods_after)" = 0 &&
	test "$(field out allocations 4 granted_after_sumin)" = 9 &&
	test "$(field out allocations 4 refused_after)" = 1
'

# The jobs run in QOS normal; with UsageFactor 2 their usage for fair-share doubles (no
# decay: chem 2 x 1200 = 2400, phys 2 x 11 = 22) and their charges do not move.
test_expect_success 'a QOS UsageFactor weighs the usage as in the bank' '
	{ allot qos add normal usagefactor=2 >/dev/null 2>&1 ||
		allot qos modify normal usagefactor=2 >/dev/null; } &&
	allot --json whatif sacct="$HIST" >out &&
	test "$(field out accounts chem usage_before)" = 2400.0 &&
	test "$(field out accounts phys usage_after)" = 22.0 &&
	test "$(field out accounts chem charged_after_sumin)" = 1200
'

# A run settled without a start (post-paid, never held): it started elapsed before its end,
# 12:50, and chem's cpu allocation pays its 2 x 10 = 20 SU-minutes.
test_expect_success 'a bank job settled without a start is replayed from its end' '
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":100,\"run\":0,\"user\":\"alice\",
		\"account\":\"chem\",\"partition\":\"batch\",\"end\":\"2026-01-05T13:00:00Z\",
		\"elapsed_s\":600,\"time_limit_s\":1200,\"alloc_tres\":\"cpu=2\",
		\"state\":\"COMPLETED\"}" >settled && cat settled &&
	allot --json whatif >out &&
	test "$(field out accounts chem charged_before_sumin)" = 1220 &&
	test "$(field out accounts chem refused_before)" = 0
'

test_expect_success 'stop' '
	allotd_stop
'
test_done
