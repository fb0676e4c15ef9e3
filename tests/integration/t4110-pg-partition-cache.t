#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t4110-pg-partition-cache.t - allotd on PostgreSQL prices holds from its partition cache
# (src/allotd/partcache.h): /metrics shows the watch up and holds answered by the cache; a
# partition changed through the same allotd prices its next hold the new way at once, one
# changed through another allotd or by hand in psql within a bounded time (its
# notification); with PostgreSQL restarted, the watch comes back by itself.
test_description='allotd on PostgreSQL: partition cache and its watch'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
cleanup_all() { pg_allotd_kill9 A; pg_allotd_kill9 B; pg_stop -m immediate; }

# hold_billing NAME: hold a new 4-CPU, 1-minute job through allotd NAME; print its billing.
# (Called in $(...): the job counter lives in a file.)
hold_billing() {
	local job=$(( $(cat job.n 2>/dev/null || echo 0) + 1 ))
	echo $job >job.n &&
	pga "$1" POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$job,\"user\":\"u1\",\"account\":\"acct0\",\"partition\":\"batch\",\"time_limit_s\":60,\"tres\":\"cpu=4\"}" >hold.json &&
	python3 -c "import json,sys; r=json.load(sys.stdin); assert not r[\"replay\"]; print(r[\"job\"][\"billing_micro\"])" <hold.json
}
metric() { # NAME METRIC-LINE-PREFIX: its value
	curl -sf --max-time 5 "$(cat "$PWD/$1/url")/metrics" | awk -v k="$2" 'index($0, k " ") == 1 { print $2 }'
}
watch_up() { test "$(metric "$1" allot_partition_watch_up)" = 1; }

test_expect_success 'PostgreSQL, two allotd and a bank' '
	pg_start "$PWD/pg" &&
	pg_allotd_start A && pg_allotd_start B &&
	pga A POST /v1/clusters "{\"name\":\"c1\"}" &&
	pga A POST /v1/accounts "{\"name\":\"acct0\",\"parent\":\"root\"}" &&
	pga A POST /v1/users "{\"name\":\"u1\"}" &&
	pga A POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"acct0\",\"user\":\"u1\"}" &&
	pga A POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"batch\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0\"}" &&
	pga A POST /v1/allocations "{\"account\":\"acct0\",\"resource\":\"cpu\",\"start\":\"2020-01-01\",\"end\":\"2099-01-01\",\"amount_sumin\":100000}" &&
	wait_for 20 grep -q "partition watch listening" A/allotd.log &&
	wait_for 20 grep -q "partition watch listening" B/allotd.log
'

test_expect_success 'holds are priced from the cache while the watch listens' '
	watch_up A && watch_up B &&
	test "$(hold_billing A)" = 4000000 &&
	hits=$(metric A "allot_partition_lookups_total{result=\"hit\"}") &&
	test "$(hold_billing A)" = 4000000 &&
	test "$(hold_billing A)" = 4000000 &&
	test "$(metric A "allot_partition_lookups_total{result=\"hit\"}")" -ge $((hits + 2))
'

test_expect_success 'a change through the same allotd prices its next hold at once' '
	for w in 2.0 3.0 1.5; do
		pga A PATCH /v1/partitions/c1/batch "{\"billing_weights\":\"CPU=$w\"}" >/dev/null &&
		test "$(hold_billing A)" = "$(awk -v w=$w "BEGIN { printf \"%d\", w * 4000000 }")" ||
		return 1
	done
'

# Polls allotd NAME until a hold is billed WANT, for at most 5 s.
billed_soon() {
	local i
	for i in $(seq 50); do
		test "$(hold_billing "$1")" = "$2" && return 0
		sleep 0.1
	done
	return 1
}

test_expect_success 'a change through the other allotd, or in psql, is seen soon' '
	test "$(hold_billing B)" = 6000000 &&
	pga A PATCH /v1/partitions/c1/batch "{\"billing_weights\":\"CPU=0.5\"}" >/dev/null &&
	billed_soon B 2000000 &&
	pg_psql "UPDATE partitions SET billing_weights = '"'"'CPU=0.25'"'"'" >/dev/null &&
	billed_soon A 1000000 && billed_soon B 1000000
'

test_expect_success 'after a PostgreSQL restart the watch listens again and sees changes' '
	drops=$(metric A allot_partition_cache_drops_total) &&
	pg_stop -m immediate && pg_start "$PWD/pg" &&
	wait_for 30 watch_up A &&
	test "$(metric A allot_partition_cache_drops_total)" -gt "$drops" &&
	test "$(grep -c "partition watch listening" A/allotd.log)" -ge 2 &&
	wait_for 30 pga A GET /healthz &&
	pg_psql "UPDATE partitions SET billing_weights = '"'"'CPU=2.0'"'"'" >/dev/null &&
	billed_soon A 8000000
'

test_expect_success 'cleanup' '
	pg_allotd_stop A && pg_allotd_stop B && pg_stop
'
test_done
