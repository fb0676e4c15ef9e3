#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t4130-pg-commit-lost.t - the answer to a COMMIT lost with the connection (PostgreSQL):
# the change may have been made, so allotd finds out before it answers (writer.h).  The test
# build's lost-answer fault (store_fault.h, $ALLOT_TEST_COMMIT_LOST) commits for real, then
# cuts the writer's connection and reports the answer lost.  A hold, a settle and a keyed
# credit answer what was committed, as a replay does, and the ledger has them once; with the
# database gone while allotd looks, the answer is 503 EINDOUBT, and the same request once
# it is back answers the committed outcome with nothing charged twice.
test_description='allotd on PostgreSQL: a lost COMMIT answer is looked into, never an error for a committed change'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
cleanup_all() { pg_allotd_kill9 A; pg_stop -m immediate; }

LOST=$PWD/lost

# post PATH BODY: POST as root to A; the body goes to out, the status to status.
post() {
	curl -s --max-time 30 -o out -w '%{http_code}' -X POST -H 'X-Allot-User: root' \
		-H 'Content-Type: application/json' --data-binary "$2" "$(cat A/url)$1" >status
	echo "status $(cat status): $(cat out)"
}

# rows KIND JOB: ledger entries of that kind for job JOB of cluster c1.
rows() {
	pg_psql "SELECT COUNT(*) FROM ledger WHERE kind = '$1' AND cluster = 'c1' AND job_id = $2"
}

# lose WHAT: the next COMMIT of that kind ("batch": holds and settles in one round trip,
# "commit": a transaction's COMMIT) commits and loses its answer.
lose() { echo "$1" >"$LOST"; }

hold_body() {
	echo "{\"cluster\":\"c1\",\"job_id\":$1,\"user\":\"root\",\"account\":\"$2\",\"partition\":\"batch\",\"time_limit_s\":600,\"tres\":\"cpu=1\"}"
}
settle_body() {
	echo "{\"cluster\":\"c1\",\"job_id\":$1,\"elapsed_s\":300,\"state\":\"COMPLETED\",\"source\":\"epilog\"}"
}

test_expect_success 'PostgreSQL, allotd with lost COMMIT answers armed, a bank' '
	pg_start "$PWD/pg" &&
	ALLOT_TEST_COMMIT_LOST=$LOST pg_allotd_start A &&
	grep -q "lost COMMIT answers armed" A/allotd.log &&
	pga A POST /v1/clusters "{\"name\":\"c1\"}" &&
	pga A POST /v1/accounts "{\"name\":\"acct0\",\"parent\":\"root\"}" &&
	pga A POST /v1/accounts "{\"name\":\"sub\",\"parent\":\"acct0\"}" &&
	pga A POST /v1/users "{\"name\":\"root\",\"uid\":0}" &&
	pga A POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"acct0\",\"user\":\"root\"}" &&
	pga A POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"sub\",\"user\":\"root\"}" &&
	pga A POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"batch\",\"resource\":\"cpu\"}" &&
	pga A POST /v1/allocations "{\"account\":\"acct0\",\"resource\":\"cpu\",\"start\":\"2020-01-01\",\"end\":\"2099-01-01\",\"amount_sumin\":100000}"
'

test_expect_success 'a hold whose batched COMMIT answer is lost answers the committed hold' '
	lose batch &&
	post /v1/jobs/hold "$(hold_body 1 acct0)" &&
	test ! -e "$LOST" &&
	test "$(cat status)" = 200 &&
	test "$(json_get held <out)" = true &&
	test "$(json_get replay <out)" = true &&
	test "$(rows hold 1)" = 1
'

test_expect_success 'a hold committed by a transaction whose COMMIT answer is lost: the same' '
	lose commit &&
	post /v1/jobs/hold "$(hold_body 2 sub)" &&
	test ! -e "$LOST" &&
	test "$(cat status)" = 200 &&
	test "$(json_get held <out)" = true &&
	test "$(json_get replay <out)" = true &&
	test "$(rows hold 2)" = 1
'

test_expect_success 'a settle whose COMMIT answer is lost answers the committed settle, one debit' '
	lose batch &&
	post /v1/jobs/settle "$(settle_body 1)" &&
	test ! -e "$LOST" &&
	test "$(cat status)" = 200 &&
	test "$(json_get settled <out)" = true &&
	test "$(json_get replay <out)" = true &&
	test "$(json_get job.charge_sumin <out)" = 5 &&
	test "$(rows debit 1)" = 1
'

test_expect_success 'a keyed credit whose COMMIT answer is lost answers the committed entry' '
	lose commit &&
	post /v1/allocations/1/credit "{\"amount_sumin\":70,\"idempotency_key\":\"k1\"}" &&
	test ! -e "$LOST" &&
	test "$(cat status)" = 200 &&
	test "$(json_get replay <out)" = true &&
	test "$(pg_psql "SELECT COUNT(*) FROM ledger WHERE idem_key = '\''k1'\''")" = 1
'

test_expect_success 'a credit without a key cannot be looked up: 503 EINDOUBT, and it was made' '
	lose commit &&
	post /v1/allocations/1/credit "{\"amount_sumin\":71}" &&
	test ! -e "$LOST" &&
	test "$(cat status)" = 503 &&
	test "$(json_get error.code <out)" = EINDOUBT &&
	json_get error.message <out | grep "look before sending it again" &&
	test "$(pg_psql "SELECT COUNT(*) FROM ledger WHERE kind = '\''credit'\'' AND amount_sumin = 71")" = 1
'

# lost_while_down PATH BODY: send the request with the fault set to wait; when its answer is
# lost, stop PostgreSQL, then let allotd look: it cannot reach the database.
lost_while_down() {
	rm -f "$LOST.lost" "$LOST.go" &&
	post "$1" "$2" >post.log &
	local pid=$!
	wait_for 20 test -e "$LOST.lost" && pg_stop && touch "$LOST.go" && wait "$pid" &&
	cat post.log
}

test_expect_success 'a settle whose answer is lost while the database is gone: 503 EINDOUBT' '
	pga A POST /v1/jobs/hold "$(hold_body 3 acct0)" &&
	lose "batch wait" &&
	lost_while_down /v1/jobs/settle "$(settle_body 3)" &&
	test "$(cat status)" = 503 &&
	test "$(json_get error.code <out)" = EINDOUBT &&
	json_get error.message <out | grep "sending the same request again is safe"
'

test_expect_success 'the same settle once the database is back: the committed one, one debit' '
	pg_start "$PWD/pg" &&
	wait_for 20 pga A GET /readyz &&
	post /v1/jobs/settle "$(settle_body 3)" &&
	test "$(cat status)" = 200 &&
	test "$(json_get replay <out)" = true &&
	test "$(json_get job.charge_sumin <out)" = 5 &&
	test "$(rows debit 3)" = 1
'

test_expect_success 'a keyed credit lost while the database is gone, then sent again: one entry' '
	lose "commit wait" &&
	lost_while_down /v1/allocations/1/credit "{\"amount_sumin\":90,\"idempotency_key\":\"k2\"}" &&
	test "$(cat status)" = 503 &&
	test "$(json_get error.code <out)" = EINDOUBT &&
	pg_start "$PWD/pg" &&
	wait_for 20 pga A GET /readyz &&
	post /v1/allocations/1/credit "{\"amount_sumin\":90,\"idempotency_key\":\"k2\"}" &&
	test "$(cat status)" = 200 &&
	test "$(json_get replay <out)" = true &&
	test "$(pg_psql "SELECT COUNT(*) FROM ledger WHERE idem_key = '\''k2'\''")" = 1
'

# pg_up: PostgreSQL running (a step above that failed may have left it stopped).
pg_up() {
	[ -f "$PG_DIR/data/postmaster.pid" ] || pg_start "$PG_DIR"
}

# admin_sql SQL: run SQL in the server's postgres database (not the bank's).
admin_sql() {
	"$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -tA -h 127.0.0.1 -p "$PG_PORT" -U postgres \
		-d postgres -c "$1"
}

# The CLI (liballot's allot_request) sends a request again when allotd answers EINDOUBT
# marked retry_safe.  The bank refuses new connections while allotd looks into the lost
# answer, so it answers EINDOUBT; once that answer is logged, connections are allowed
# again and the CLI's next try gets the committed settle.
test_expect_success 'the CLI sends an in-doubt settle again and gets the committed one: one debit' '
	pg_up && wait_for 20 pga A GET /readyz &&
	pga A POST /v1/jobs/hold "$(hold_body 4 acct0)" &&
	lose "batch wait" &&
	rm -f "$LOST.lost" "$LOST.go" &&
	{ ALLOT_TEST_USER=root "$ALLOT_BUILD_DIR/src/cli/allot" --url "$(cat A/url)" \
		job settle jobid=4 elapsed=300s state=COMPLETED cluster=c1 >cli.out 2>cli.err;
		echo $? >cli.rc; } &
	pid=$! &&
	wait_for 20 test -e "$LOST.lost" &&
	admin_sql "ALTER DATABASE allot WITH ALLOW_CONNECTIONS false" &&
	touch "$LOST.go" &&
	wait_for 20 grep -q "jobs/settle.*status=503.*sending the same request again" A/allotd.log &&
	admin_sql "ALTER DATABASE allot WITH ALLOW_CONNECTIONS true" &&
	wait "$pid" &&
	cat cli.out cli.err &&
	test "$(cat cli.rc)" = 0 &&
	test "$(rows debit 4)" = 1
'

test_expect_success 'allotd stopped, the books agree with the ledger (allot db check)' '
	pg_allotd_stop A && pg_up &&
	"$ALLOT_BUILD_DIR/src/cli/allot" --config A/allot.conf db check &&
	pg_stop
'
# Whatever failed above, leave no daemon behind.
cleanup_all
test_done
