#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t2530-policy-faketime.t - the month boundary crossed by allotd's own clock (doc/design.md §5):
# allotd runs under libfaketime on 2030-07-31 UTC with PolicyTickInterval=1, so its tick
# thread (not a test call) opens July; once July is set up, its clock is moved to two
# seconds before midnight and the tick crosses into August by itself; it is killed -9 and
# restarted at 00:00:20 and again at 00:10 (both after the boundary, like a redeploy or a
# crash).  Exactly one reset, one carryover, one expiry and one August credit exist
# afterwards, and the evaluation log shows the tick did it.  A job held before the next
# midnight and settled after it: its hold expires with August (no SU appear on its
# release) and its cost is September's use.  A settle that is the first to cross a boundary
# (slow clock) logs the boundary with by=settle.
# The faked clock is an offset from the real one, read from a file on every call
# (FAKETIME_TIMESTAMP_FILE): a test sets up what must happen before a midnight an hour
# ahead of it, however slow the host, then moves the clock forward (fake_at) instead of
# waiting for it.
test_description='month boundary by the daemon clock under faketime, restarts'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
REAL_ALLOTD=$ALLOTD_BIN
test -x "$REAL_ALLOTD" || { skip_all="allotd not built"; test_done; }
FAKELIB=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
test -n "$FAKELIB" || { skip_all="libfaketime not installed"; test_done; }

# allotd behind a wrapper that preloads libfaketime (only allotd is faked).  fake_at TIME
# makes the faked clock read TIME now: the offset goes to the file in one rename, since
# libfaketime reads it on every call and a half-written one would be the real clock.
cat >fake-allotd <<EOS
#!/bin/sh
exec env LD_PRELOAD="$FAKELIB" FAKETIME_TIMESTAMP_FILE="$PWD/fake.offset" FAKETIME_NO_CACHE=1 "$REAL_ALLOTD" "\$@"
EOS
chmod +x fake-allotd
ALLOTD_BIN=$PWD/fake-allotd
fake_at() {
	local t
	t=$(date -u -d "$1" +%s) || return 1
	echo "+$((t - $(date +%s)))" >fake.offset.new && mv -f fake.offset.new fake.offset
}
start() { fake_at "$1" && allotd_start AuthType=none TestMode=local \
	Operators=slurm TimeZone=UTC PolicyTickInterval=1; }
ncmd() { api GET "/v1/commands?policy=1&period=$1" |
	python3 -c 'import json,sys; k=sys.argv[1]; print(sum(1 for c in json.load(sys.stdin)["commands"] if c["kind"]==k))' "$2"; }
nledger() { api GET "/v1/ledger?alloc=$(cat alloc)" |
	python3 -c 'import json,sys; k=sys.argv[1]; print(sum(1 for e in json.load(sys.stdin)["items"] if e["kind"]==k))' "$1"; }
current() { api GET /v1/policies/1 | json_get current_period; }
in_july() { test "$(current)" = 2030-07; }
in_august() { test "$(current)" = 2030-08; }

test_expect_success 'allotd at 2030-07-31 23:00 (faked); monthly policy; its tick opens July' '
	start "2030-07-31 23:00:00" &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"cluster\":\"c1\",\"start\":\"2030-01-01\",\"end\":\"2031-01-01\"}" >out &&
	json_get id <out >alloc &&
	api POST /v1/policies "{\"alloc\":$(cat alloc),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":1000}" &&
	wait_for 4 in_july &&
	api GET /v1/evaluations?policy=1 >ev &&
	python3 -c "import json; e=json.load(open(\"ev\"))[\"evaluations\"]; assert any(x[\"period\"]==\"2030-07\" for x in e), e"
'
test_expect_success 'two seconds before midnight, the tick crosses it by itself' '
	in_july && fake_at "2030-07-31 23:59:58" &&
	wait_for 45 in_august &&
	# The tick logs the boundary after its commit, which in_august may see first.
	wait_for 10 grep -q "msg=\"period boundary\"" "$ALLOTD_LOG" &&
	grep "msg=\"period boundary\"" "$ALLOTD_LOG"
'
test_expect_success 'killed -9 and restarted twice after the boundary: nothing repeats' '
	allotd_kill9 && start "2030-08-01 00:00:20" && sleep 3 &&
	allotd_kill9 && start "2030-08-01 00:10:00" && sleep 3 &&
	test "$(current)" = 2030-08 &&
	test "$(ncmd 2030-08 reset_raw_usage)" = 1 &&
	test "$(ncmd 2030-08 set_limit)" = 1 &&
	test "$(nledger credit)" = 2 &&
	test "$(nledger carryover)" = 1 &&
	test "$(nledger expiry)" = 1 &&
	api GET /v1/policies/1 >out &&
	test "$(json_get periods.1.period <out)" = 2030-08 &&
	test "$(json_get periods.1.carry_sumin <out)" = 500 &&
	test "$(json_get periods.1.total_sumin <out)" = 1500 &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
in_september() { test "$(current)" = 2030-09; }
in_october() { test "$(current)" = 2030-10; }
avail() { api GET /v1/allocations/$(cat alloc) | json_get available_sumin; }

test_expect_success 'a job running across midnight: its hold expires with August, its cost is September use' '
	allotd_kill9 && start "2030-08-31 23:00:00" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"p\",\"time_limit_s\":30000,\"billing\":1}" >out &&
	test "$(json_get held <out)" = true && in_august &&
	fake_at "2030-08-31 23:59:58" &&
	wait_for 45 in_september &&
	api GET /v1/policies/1 >out &&
	test "$(json_get periods.2.total_sumin <out)" = 1500 &&
	test "$(json_get periods.1.expired_sumin <out)" = 1500 &&
	test "$(avail)" = 1000 &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":1,\"elapsed_s\":6000,\"state\":\"COMPLETED\",\"source\":\"epilog\"}" >out &&
	test "$(json_get job.charge_sumin <out)" = 100 &&
	test "$(avail)" = 1400 &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
test_expect_success 'a settle just after midnight crosses the boundary first; the log says so' '
	allotd_kill9 && fake_at "2030-09-30 23:59:00" &&
	allotd_start AuthType=none TestMode=local Operators=slurm TimeZone=UTC PolicyTickInterval=3600 &&
	in_september && fake_at "2030-10-01 00:00:02" && in_september &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":2,\"elapsed_s\":60,\"state\":\"COMPLETED\",\"source\":\"epilog\",\"start\":\"2030-09-30T23:58:00Z\",\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"p\",\"billing\":10}" >out &&
	in_october &&
	grep "msg=\"period boundary\" policy=1 from=\"2030-09\" to=\"2030-10\".*by=settle" "$ALLOTD_LOG"
'
test_expect_success 'stop' '
	allotd_stop
'
test_done
