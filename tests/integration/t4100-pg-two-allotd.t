#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t4100-pg-two-allotd.t - two allotd on one PostgreSQL (doc/design.md §3.6, §9.1):
# 64 concurrent clients split between them hold and settle against ONE allocation until it
# runs dry: zero overdraft, the ledger invariant exact, no job held twice.  Then a crash
# run: bash clients with idempotent retries while one allotd is killed with -9 and
# PostgreSQL is stopped immediately and restarted: every acknowledged operation is present,
# none is applied twice, and service resumes by itself; while PostgreSQL is down requests
# fail cleanly with 503 and a reason.
test_description='allotd x2 on PostgreSQL: atomic holds, kill -9, database restart'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
cleanup_all() { pg_allotd_kill9 A; pg_allotd_kill9 B; pg_stop -m immediate; }

LOADGEN=$ALLOT_BUILD_DIR/bench/bank_loadgen
GRANT=3000

# ledger_ok: the books of allocation 1 agree with its ledger, nothing is held twice, and
# no debit exceeded the grant.  Prints the first problem.
ledger_ok() {
    local q
    q=$(pg_psql "
        SELECT CASE
          WHEN b.granted_sumin <> (SELECT COALESCE(SUM(amount_sumin),0) FROM ledger
                                   WHERE alloc_id = 1 AND kind = 'credit') THEN 'granted'
          WHEN b.used_sumin <> (SELECT COALESCE(SUM(amount_sumin),0) FROM ledger
                                WHERE alloc_id = 1 AND kind = 'debit') THEN 'used'
          WHEN b.held_sumin <> (SELECT COALESCE(SUM(CASE kind WHEN 'hold' THEN amount_sumin
                                    WHEN 'release' THEN -amount_sumin END),0) FROM ledger
                                WHERE alloc_id = 1) THEN 'held'
          WHEN b.granted_sumin - b.used_sumin - b.held_sumin < 0 THEN 'overdraft'
          WHEN EXISTS (SELECT 1 FROM ledger WHERE kind IN ('hold','debit','release')
                       GROUP BY kind, cluster, job_id, run HAVING COUNT(*) > 1) THEN 'twice'
          ELSE 'ok' END
        FROM alloc_balance b WHERE b.alloc_id = 1") || return 1
    echo "ledger: $q"
    test "$q" = ok
}

test_expect_success 'PostgreSQL and two allotd on it' '
	pg_start "$PWD/pg" &&
	pg_allotd_start A "MaxBatch=256" "Threads=32" &&
	pg_allotd_start B "MaxBatch=256" "Threads=32" &&
	pga A GET /healthz | grep -q "\"backend\":\"pg\"" &&
	pga B GET /healthz | grep -q "\"backend\":\"pg\""
'

test_expect_success 'bank set up through A is visible through B' '
	pga A POST /v1/clusters "{\"name\":\"c1\"}" &&
	pga A POST /v1/accounts "{\"name\":\"acct0\",\"parent\":\"root\"}" &&
	pga A POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	pga A POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"acct0\",\"user\":\"root\"}" &&
	pga A POST /v1/partitions \
		"{\"cluster\":\"c1\",\"name\":\"batch\",\"resource\":\"cpu\"}" &&
	pga A POST /v1/allocations "{\"account\":\"acct0\",\"resource\":\"cpu\",\"start\":\"2020-01-01\",\"end\":\"2099-01-01\",\"amount_sumin\":$GRANT}" &&
	pga B GET /v1/allocations/1 >alloc.json &&
	test "$(json_get granted_sumin <alloc.json)" = $GRANT
'

# Two load generators, 32 clients each, one per allotd, run at once; waits for both.
two_loadgens() {
	"$LOADGEN" --tcp "${PGA_URL_A#http://}" --clients 32 --pairs 2000 --accounts 1 \
		--cluster c1 --partition batch --job-base 1 >lg.A 2>&1 &
	local pa=$!
	"$LOADGEN" --tcp "${PGA_URL_B#http://}" --clients 32 --pairs 2000 --accounts 1 \
		--cluster c1 --partition batch --job-base 50000 >lg.B 2>&1 &
	local pb=$!
	wait "$pa" && wait "$pb"
}

test_expect_success '64 clients on two allotd drain one allocation: no overdraft, exact ledger' '
	two_loadgens &&
	cat lg.A lg.B &&
	pga A GET /v1/allocations/1 >alloc.json &&
	used=$(json_get used_sumin <alloc.json) && held=$(json_get held_sumin <alloc.json) &&
	avail=$(json_get available_sumin <alloc.json) &&
	echo "used=$used held=$held available=$avail" &&
	test "$held" -eq 0 && test "$avail" -ge 0 && test "$used" -le $GRANT &&
	test "$used" -gt $(( GRANT - 64 * 10 )) &&
	refused=$(( $(sed -n "s/.* refused=\([0-9]*\).*/\1/p" lg.A) + $(sed -n "s/.* refused=\([0-9]*\).*/\1/p" lg.B) )) &&
	test "$refused" -gt 0 &&
	errors=$(( $(sed -n "s/.* errors=\([0-9]*\).*/\1/p" lg.A) + $(sed -n "s/.* errors=\([0-9]*\).*/\1/p" lg.B) )) &&
	test "$errors" -eq 0 &&
	test "$(pg_psql "SELECT COUNT(*) FROM ledger WHERE kind = '\''debit'\''")" -eq "$used" &&
	ledger_ok &&
	pga B GET /v1/check >check.json && cat check.json
'

# One job through whichever instance is named in $1, retrying (idempotent) until both the
# hold and the settle are acknowledged; appends "job hold" / "job settle" to acks.$1.$2 when
# acknowledged.  Bounded: 300 attempts of 0.1 s per step.
crash_client() {
	local inst=$1 w=$2 first=$3 n=$4 j t body url code
	for j in $(seq "$first" $(( first + n - 1 ))); do
		body="{\"cluster\":\"c1\",\"job_id\":$j,\"run\":0,\"user\":\"root\",\"account\":\"acct1\",\"partition\":\"batch\",\"start\":$(date +%s),\"time_limit_s\":600,\"alloc_tres\":\"cpu=1\",\"billing\":1}"
		for t in $(seq 300); do
			url=$(cat "$inst/url")
			code=$(curl -s -o /dev/null -w "%{http_code}" --max-time 10 -H "X-Allot-User: root" \
				-H "Content-Type: application/json" --data-binary "$body" "$url/v1/jobs/hold")
			[ "$code" = 200 ] && { echo "$j hold" >>"acks.$inst.$w"; break; }
			sleep 0.1
		done
		body="{\"cluster\":\"c1\",\"job_id\":$j,\"run\":0,\"elapsed_s\":55,\"state\":\"COMPLETED\"}"
		for t in $(seq 300); do
			url=$(cat "$inst/url")
			code=$(curl -s -o /dev/null -w "%{http_code}" --max-time 10 -H "X-Allot-User: root" \
				-H "Content-Type: application/json" --data-binary "$body" "$url/v1/jobs/settle")
			[ "$code" = 200 ] && { echo "$j settle" >>"acks.$inst.$w"; break; }
			sleep 0.1
		done
	done
}

test_expect_success 'kill -9 one allotd and restart PostgreSQL mid-load: nothing lost or doubled' '
	pga A POST /v1/accounts "{\"name\":\"acct1\",\"parent\":\"root\"}" &&
	pga A POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"acct1\",\"user\":\"root\"}" &&
	pga A POST /v1/allocations "{\"account\":\"acct1\",\"resource\":\"cpu\",\"start\":\"2020-01-01\",\"end\":\"2099-01-01\",\"amount_sumin\":1000000}" &&
	rm -f acks.* &&
	pids= &&
	for w in 1 2 3 4; do
		crash_client A $w $(( 1000000 + w * 1000 )) 40 & pids="$pids $!"
		crash_client B $w $(( 2000000 + w * 1000 )) 40 & pids="$pids $!"
	done &&
	sleep 2 && pg_allotd_kill9 A && sleep 0.5 && pg_allotd_start A "MaxBatch=256" "Threads=32" &&
	sleep 2 && pg_stop -m immediate && sleep 1 && pg_start "$PWD/pg" &&
	wait $pids &&
	cat acks.* | sort -u >acked && wc -l <acked &&
	test "$(grep -c " hold$" acked)" -eq 320 && test "$(grep -c " settle$" acked)" -eq 320 &&
	pg_psql "SELECT job_id || '\'' settle'\'' FROM jobs WHERE cluster = '\''c1'\'' AND job_id BETWEEN 1000000 AND 9999999 AND status = '\''settled'\'' ORDER BY 1" | sort >settled &&
	grep " settle$" acked | sort >acked.settle &&
	test_cmp acked.settle settled &&
	test "$(pg_psql "SELECT COUNT(*) FROM ledger WHERE job_id BETWEEN 1000000 AND 9999999 AND kind = '\''hold'\''")" -eq 320 &&
	test "$(pg_psql "SELECT COUNT(*) FROM ledger WHERE job_id BETWEEN 1000000 AND 9999999 AND kind = '\''debit'\''")" -eq 320 &&
	ledger_ok &&
	test "$(pg_psql "SELECT used_sumin FROM alloc_balance WHERE alloc_id = 2")" -eq 320 &&
	test "$(pg_psql "SELECT held_sumin FROM alloc_balance WHERE alloc_id = 2")" -eq 0
'

test_expect_success 'while PostgreSQL is down: 503 with a reason; then service resumes by itself' '
	pg_stop -m immediate &&
	body="{\"cluster\":\"c1\",\"job_id\":3000001,\"run\":0,\"user\":\"root\",\"account\":\"acct1\",\"partition\":\"batch\",\"start\":$(date +%s),\"time_limit_s\":600,\"alloc_tres\":\"cpu=1\",\"billing\":1}" &&
	test_must_fail pga B POST /v1/jobs/hold "$body" >down.json &&
	cat down.json && grep -qi "unavail\|database\|pg" down.json &&
	code=$(curl -s -o /dev/null -w "%{http_code}" -H "X-Allot-User: root" \
		-H "Content-Type: application/json" --data-binary "$body" "$PGA_URL_B/v1/jobs/hold") &&
	test "$code" = 503 &&
	pg_start "$PWD/pg" &&
	wait_for 20 pga B POST /v1/jobs/hold "$body" &&
	pga A GET /v1/jobs/c1/3000001 >job.json && grep -q held job.json
'

test_expect_success 'stop everything' '
	pg_allotd_stop A; pg_allotd_stop B; pg_stop
'
# Whatever failed above, leave no daemon behind.
cleanup_all
test_done
