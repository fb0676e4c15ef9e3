#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t5010-allotd-valgrind-pg.t - allotd on PostgreSQL under valgrind (memcheck, full leak
# check): what only runs there -- batched holds and settles, the partition cache and its
# watch thread, the watch's connection terminated by the server and made again -- then
# SIGTERM; the test fails on any memcheck error or definite/indirect leak.  Skipped in
# sanitizer builds and without valgrind, as t5000.
test_description='allotd on PostgreSQL under valgrind'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
cleanup_all() { pg_allotd_kill9 A; pg_stop -m immediate; }
test -x "$ALLOT_BUILD_DIR/src/allotd/allotd" || { skip_all="allotd not built"; test_done; }
command -v valgrind >/dev/null || { skip_all="valgrind not installed"; test_done; }
if grep -q '^ALLOT_SANITIZE:BOOL=ON' "$ALLOT_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
	skip_all="sanitizer build (valgrind cannot run ASan binaries)"
	test_done
fi

VG_DIR=$PWD/valgrind
mkdir -p "$VG_DIR"
PGA_ALLOTD=$VG_DIR/allotd-vg
cat >"$PGA_ALLOTD" <<WRAP
#!/bin/sh
exec valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
	--num-callers=30 "--log-file=$VG_DIR/allotd.%p.log" "$ALLOT_BUILD_DIR/src/allotd/allotd" "\$@"
WRAP
chmod +x "$PGA_ALLOTD"
# Under valgrind allotd takes tens of times longer to answer its first /healthz and, with
# the leak check, to exit: 20 s was too little with four tests at a time on a slow host.
ALLOTD_WAIT=120

hold() { # JOB
	pga A POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$1,\"user\":\"u1\",\"account\":\"acct0\",\"partition\":\"batch\",\"time_limit_s\":60,\"tres\":\"cpu=2\"}" >out
}
settle() { # JOB
	pga A POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$1,\"elapsed_s\":30,\"state\":\"COMPLETED\"}" >out
}
metric() { curl -sf --max-time 5 "$(cat A/url)/metrics" | awk -v k="$1" 'index($0, k " ") == 1 { print $2 }'; }
watch_up() { test "$(metric allot_partition_watch_up)" = 1; }

test_expect_success 'PostgreSQL, and allotd on it under valgrind' '
	pg_start "$PWD/pg" &&
	pg_allotd_start A "Threads=4" &&
	pga A POST /v1/clusters "{\"name\":\"c1\"}" >out &&
	pga A POST /v1/accounts "{\"name\":\"acct0\",\"parent\":\"root\"}" >out &&
	pga A POST /v1/users "{\"name\":\"u1\"}" >out &&
	pga A POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"acct0\",\"user\":\"u1\"}" >out &&
	pga A POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"batch\",\"resource\":\"cpu\"}" >out &&
	pga A POST /v1/allocations "{\"account\":\"acct0\",\"resource\":\"cpu\",\"start\":\"2020-01-01\",\"end\":\"2099-01-01\",\"amount_sumin\":100000}" >out &&
	wait_for 30 watch_up
'
test_expect_success 'holds and settles: batched, replayed, refused' '
	for j in 1 2 3 4; do hold $j && settle $j || return 1; done &&
	hold 1 && grep -q "\"replay\":true" out &&
	test_must_fail pga A POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":99,\"elapsed_s\":1}" >out &&
	test "$(metric "allot_partition_lookups_total{result=\"hit\"}")" -ge 3
'
test_expect_success 'partition changes, and the watch connection lost and made again' '
	pga A PATCH /v1/partitions/c1/batch "{\"billing_weights\":\"CPU=2.0\"}" >out &&
	hold 5 && grep -q "\"billing_micro\":4000000" out &&
	pg_psql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '"'"'LISTEN%'"'"'" >/dev/null &&
	wait_for 30 watch_up && hold 6 && settle 6
'
test_expect_success 'SIGTERM: allotd exits with no valgrind error or leak' '
	pg_allotd_stop A &&
	ls "$VG_DIR"/allotd.*.log >/dev/null &&
	for f in "$VG_DIR"/allotd.*.log; do
		grep -q "ERROR SUMMARY: 0 errors" "$f" || { cat "$f" >&2; return 1; }
	done
'
test_expect_success 'cleanup' 'pg_stop'
test_done
