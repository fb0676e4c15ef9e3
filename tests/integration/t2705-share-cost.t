#!/bin/bash
# t2705-share-cost.t - the cost of `allot share` does not grow with the jobs stored: with
# 10^4 and then 10^6 settled jobs, GET /v1/share, /v1/tree and the CLI's share read the same
# number of rows (X-Allot-Rows-Read, which allotd in TestMode=local answers from libstore's
# test-build row counter), a count bounded by the associations, not by the jobs.  Counting
# rows, not timing, so a loaded machine cannot make it flaky.  The jobs are written by SQL
# (the accumulators are then rebuilt, as doc/fairshare.md says for rows written by hand),
# and `allot usage rebuild` gives the same share as the accumulators kept by settles.
test_description='allot share reads the same rows with 10^4 and 10^6 stored jobs'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }

allot() { "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
db_exec() {
	if [ "$ALLOT_TEST_BACKEND" = pg ]; then pg_psql "$1"
	else sqlite3 "$ALLOTD_DIR/allot.db" "$1"; fi
}

test_expect_success 'start munged and allotd (test mode: rows read per request)' '
	munged_start "$PWD/munge" &&
	allotd_start TestMode=local PriorityDecayHalfLife=0
'
test_expect_success 'a bank of 3 accounts and 30 users' '
	allot cluster add c1 &&
	for a in 1 2 3; do allot account add a$a >/dev/null || return 1; done &&
	for u in $(seq 1 30); do
		allot user add u$u >/dev/null &&
		allot assoc add cluster=c1 account=a$(( u % 3 + 1 )) user=u$u >/dev/null || return 1
	done &&
	allot partition add batch cluster=c1 resource=cpu &&
	allot alloc add root resource=cpu su=1000000h start=2020-01-01 end=2030-01-01 >/dev/null
'
# add_jobs FROM TO: settled runs FROM..TO, ending over the last 30 days, spread over the
# users (and three QOS), written by SQL as a bulk import would.
add_jobs() {
	now=$(date +%s) &&
	db_exec "WITH RECURSIVE n(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
		INSERT INTO jobs (cluster, job_id, run, user_name, account, partition_name, qos,
			start_s, end_s, billing_micro, elapsed_s, slurm_state, status, charge_sumin,
			updated_s)
		SELECT 'c1', i, 0, 'u' || (i % 30 + 1), 'a' || ((i % 30 + 1) % 3 + 1), 'batch',
			CASE (i / 30) % 3 WHEN 0 THEN 'normal' WHEN 1 THEN 'high' ELSE '' END,
			$now - 3000 - (i % 2592000), $now - (i % 2592000), 1000000, 60 + i % 3600,
			'COMPLETED', 'settled', 1 + i % 60, $now FROM n" &&
	allot --timeout 600 usage rebuild
}
# The fewest rows of three requests: a worker connection's first request may read a row of
# its own once (seen on PostgreSQL: 127 against 126), which is not the request's cost.
rows() {
	for _ in 1 2 3; do
		api GET "$1" >/dev/null && api_header X-Allot-Rows-Read || return 1
	done | sort -n | head -n 1
}
test_expect_success '10^4 jobs: the rows share, tree and priority read' '
	add_jobs 1 10000 >out && cat out &&
	grep -q "^rebuilt 90 usage accumulators" out &&
	rows "/v1/share?cluster=c1" >share.4 &&
	rows "/v1/share?cluster=c1&algo=classic" >classic.4 &&
	rows "/v1/tree?cluster=c1" >tree.4 &&
	cat share.4 classic.4 tree.4 &&
	test "$(cat share.4)" -gt 0 &&
	# accounts, associations, QOS and the 90 accumulators: far below the jobs
	test "$(cat share.4)" -lt 500 &&
	api GET "/v1/share?cluster=c1" | jq -c .sshare >sshare.4
'
test_expect_success '10^6 jobs: the same number of rows' '
	add_jobs 10001 1000000 >out && cat out &&
	grep -q "^rebuilt 90 usage accumulators" out &&
	rows "/v1/share?cluster=c1" >share.6 &&
	rows "/v1/share?cluster=c1&algo=classic" >classic.6 &&
	rows "/v1/tree?cluster=c1" >tree.6 &&
	test_cmp share.4 share.6 &&
	test_cmp classic.4 classic.6 &&
	test_cmp tree.4 tree.6
'
test_expect_success 'settles keep the accumulators: a rebuild prints the same share' '
	now=$(date +%s) &&
	for j in 1 2 3 4 5 6; do
		api POST /v1/jobs/settle "{\"cluster\": \"c1\", \"job_id\": $((2000000 + j)),
			\"user\": \"u$j\", \"account\": \"a$((j % 3 + 1))\", \"partition\": \"batch\",
			\"elapsed_s\": $((j * 700)), \"billing\": 2, \"state\": \"COMPLETED\",
			\"start\": $((now - 9000)), \"end\": $((now - 9000 + j * 700))}" >/dev/null ||
		return 1
	done &&
	allot -P share >kept &&
	allot --timeout 600 usage rebuild &&
	allot -P share >rebuilt &&
	test_cmp kept rebuilt &&
	grep -q "^  a2|u1|" kept
'
test_expect_success 'stop allotd and munged' '
	allotd_stop &&
	munged_stop
'
test_done
