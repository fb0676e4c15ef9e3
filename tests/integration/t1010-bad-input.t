#!/bin/bash
# t1010-bad-input.t - bad requests get 400/404/409/413 with the field named, and change
# nothing: balances, ledger and accounts are compared before and after.
test_description='allotd bad input'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

test_expect_success 'setup' '
	allotd_start AuthType=none TestMode=local &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"org\",\"parent\":\"chem\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"short\",\"default_time_s\":3600,\"max_time_s\":7200}" &&
	api PUT /v1/limits "{\"scope\":\"partition\",\"owner\":\"c1:short\",\"name\":\"MaxTime\",\"value\":\"90\"}" &&
	api POST /v1/users "{\"name\":\"u\"}" &&
	api POST /v1/qos "{\"name\":\"normal\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"u\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2030-01-01\",\"su\":\"1h\"}" >out &&
	json_get id <out >alloc_id &&
	{ api GET /v1/assocs; api GET /v1/partitions; api GET /v1/limits; api GET /v1/policies; } >ref_before &&
	api_snapshot before
'
test_expect_success 'malformed JSON' '
	api_bad 400 body POST /v1/accounts "{\"name\":" &&
	api_bad 400 body POST /v1/accounts "[1,2]"
'
test_expect_success 'unknown field' '
	api_bad 400 colour POST /v1/accounts "{\"name\":\"x\",\"colour\":\"red\"}"
'
test_expect_success 'wrong types' '
	api_bad 400 shares POST /v1/accounts "{\"name\":\"x\",\"shares\":\"many\"}" &&
	api_bad 400 name POST /v1/accounts "{\"name\":5}" &&
	api_bad 400 start POST /v1/allocations "{\"account\":\"chem\",\"start\":\"tomorrow\",\"end\":\"2030-01-01\"}"
'
test_expect_success 'bad names' '
	api_bad 400 name POST /v1/accounts "{\"name\":\"a b\"}" &&
	api_bad 400 name POST /v1/accounts "{\"name\":\"-x\"}"
'
test_expect_success 'negative, zero, overflowing and double amounts' '
	id=$(cat alloc_id) &&
	api_bad 400 amount_sumin POST /v1/allocations/$id/credit "{\"amount_sumin\":-5}" &&
	api_bad 400 amount_sumin POST /v1/allocations/$id/credit "{\"amount_sumin\":0}" &&
	api_bad 400 su POST /v1/allocations/$id/credit "{\"su\":\"-3h\"}" &&
	api_bad 400 su POST /v1/allocations/$id/credit "{\"su\":\"99999999999999999999h\"}" &&
	api_bad 400 su POST /v1/allocations/$id/credit "{\"su\":\"1h\",\"amount_sumin\":60}" &&
	api_bad 400 su POST /v1/allocations/$id/credit "{}" &&
	api_bad 400 kind POST /v1/allocations/$id/credit "{\"kind\":\"debit\",\"su\":\"1h\"}"
'
test_expect_success 'unknown objects' '
	api_bad 404 "" POST /v1/allocations/999/credit "{\"su\":\"1h\"}" &&
	api_bad 404 "" GET /v1/accounts/nosuch &&
	api_bad 404 "" GET /v1/nosuch &&
	api_bad 400 parent POST /v1/accounts "{\"name\":\"x\",\"parent\":\"nosuch\"}"
'
test_expect_success 'overlapping allocation is a conflict' '
	api_bad 409 "" POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2025-01-01\",\"end\":\"2026-01-01\",\"su\":\"1h\"}"
'
test_expect_success 'account cycle is a conflict' '
	api_bad 409 "" PATCH /v1/accounts/chem "{\"parent\":\"org\"}"
'
test_expect_success 'duplicate is a conflict' '
	api_bad 409 "" POST /v1/accounts "{\"name\":\"chem\"}"
'
test_expect_success 'job verbs: missing and bad fields' '
	api_bad 400 job_id POST /v1/jobs/hold "{\"cluster\":\"c1\",\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60}" &&
	api_bad 400 time_limit_s POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":0}" &&
	api_bad 400 tres POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60}" &&
	api_bad 400 tres POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"\"}" &&
	api_bad 400 tres POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"cpu=x\"}" &&
	api_bad 400 source POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":1,\"elapsed_s\":5,\"source\":\"magic\"}" &&
	api_bad 404 "" POST /v1/jobs/release "{\"cluster\":\"c1\",\"job_id\":424242}"
'
test_expect_success 'settle: the state must be a Slurm job state' '
	settle="{\"cluster\":\"c1\",\"job_id\":1,\"elapsed_s\":5,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"alloc_tres\":\"cpu=1\",\"state\":" &&
	api_bad 400 state POST /v1/jobs/settle "$settle\"BOGUS\"}" &&
	grep "COMPLETED" out && grep "NODE_FAIL" out &&
	api_bad 400 state POST /v1/jobs/settle "$settle\"completed\"}" &&
	api_bad 400 state POST /v1/jobs/settle "$settle\"CANCELLED by\"}" &&
	api_bad 400 state POST /v1/jobs/settle "$settle\"CANCELLED by x1\"}" &&
	api_bad 400 state POST /v1/jobs/settle "$settle\"NODE_FAIL_AND_A_STATE_LONGER_THAN_31\"}"
'
test_expect_success 'associations: the partition must exist on the cluster' '
	api_bad 400 partition POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"u\",\"partition\":\"nosuch\"}" &&
	grep "nosuch" out &&
	api_bad 400 partition PATCH /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"u\",\"partition\":\"nosuch\",\"shares\":5}"
'
test_expect_success 'partitions: default_time_s may not exceed MaxTime' '
	api_bad 400 default_time_s POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p2\",\"default_time_s\":7200,\"max_time_s\":3600}" &&
	api_bad 400 default_time_s PATCH /v1/partitions/c1/std "{\"default_time_s\":7200,\"max_time_s\":3600}" &&
	api_bad 400 default_time_s PATCH /v1/partitions/c1/short "{\"max_time_s\":60}" &&
	api_bad 400 default_time_s PATCH /v1/partitions/c1/short "{\"default_time_s\":6000}" &&
	grep "MaxTime limit of 90 min" out &&
	api_bad 400 value PUT /v1/limits "{\"scope\":\"partition\",\"owner\":\"c1:short\",\"name\":\"MaxTime\",\"value\":\"30\"}"
'
test_expect_success 'a reference listing filtered by an unknown cluster is 404 naming it' '
	for path in /v1/assocs /v1/partitions /v1/share /v1/tree /v1/sitefactors \
		"/v1/limits/effective?user=u&cluster=nosuch"; do
		case $path in *\?*) q=$path ;; *) q="$path?cluster=nosuch" ;; esac &&
		api_bad 404 "" GET "$q" &&
		grep "cluster: .nosuch. does not exist" out || return 1
	done &&
	# a name no cluster and no record ever had is a misspelling: 404 (t1016: a cluster
	# removed since keeps its history listed)
	for path in /v1/jobs /v1/ledger /v1/usage /v1/steps /v1/commands; do
		api_bad 404 "" GET "$path?cluster=nosuch" &&
		grep "cluster: .nosuch. does not exist" out || return 1
	done
'
test_expect_success 'errors name the key the client sent' '
	id=$(cat alloc_id) &&
	api_bad 400 name PUT /v1/limits "{\"scope\":\"account\",\"owner\":\"chem\",\"name\":\"Bogus\",\"value\":\"5\"}" &&
	api_bad 400 alloc_tres POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"cpu=1\",\"alloc_tres\":\"cpu=x\"}" &&
	api_bad 400 su POST /v1/allocations/$id/credit "{\"kind\":\"refund\",\"su\":\"5h\"}" &&
	api_bad 400 amount_sumin POST /v1/allocations/$id/credit "{\"kind\":\"refund\",\"amount_sumin\":300}" &&
	api_bad 400 su POST /v1/allocations/$id/credit "{\"su\":\"100000000000000h\"}" &&
	api_bad 400 su POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2031-01-01\",\"end\":\"2032-01-01\",\"su\":\"100000000000000h\"}" &&
	policy="{\"alloc\":$id,\"cluster\":\"c1\",\"period\":\"month\"" &&
	api_bad 400 grace_ppm POST /v1/policies "$policy,\"base_su\":\"1h\",\"grace_ppm\":999999999999}" &&
	api_bad 400 carryover_factor_ppm POST /v1/policies "$policy,\"base_su\":\"1h\",\"carryover_factor_ppm\":999999999999}" &&
	api_bad 400 notify_ppm POST /v1/policies "$policy,\"base_su\":\"1h\",\"notify_ppm\":999999999999}" &&
	api_bad 400 downscale_ppm POST /v1/policies "$policy,\"base_su\":\"1h\",\"downscale_ppm\":999999999999}" &&
	api_bad 400 base_su POST /v1/policies "$policy,\"base_su\":\"100000000000000h\"}" &&
	api_bad 400 base_sumin POST /v1/policies "$policy,\"base_sumin\":9000000000000000000}"
'
test_expect_success 'a bad TRES string is named once, by the key the client sent' '
	job="\"cluster\":\"c1\",\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60" &&
	api_bad 400 tres POST /v1/jobs/admit "{$job,\"tres\":\"cpu=abc\"}" &&
	test "$(json_get error.message <out)" = "tres: cpu: '"'"'abc'"'"' is not a non-negative count" &&
	api_bad 400 tres POST /v1/jobs/hold "{$job,\"job_id\":1,\"tres\":\"cpu=abc\"}" &&
	test "$(json_get error.message <out)" = "tres: cpu: '"'"'abc'"'"' is not a non-negative count" &&
	api_bad 400 alloc_tres POST /v1/jobs/hold "{$job,\"job_id\":1,\"alloc_tres\":\"cpu=abc\"}" &&
	test "$(json_get error.message <out)" = "alloc_tres: cpu: '"'"'abc'"'"' is not a non-negative count" &&
	api_bad 400 alloc_tres POST /v1/jobs/settle "{$job,\"job_id\":1,\"elapsed_s\":5,\"alloc_tres\":\"gpu\"}" &&
	test "$(json_get error.message <out)" = "alloc_tres: item '"'"'gpu'"'"' is not name=count"
'
test_expect_success 'agent status of an unknown cluster is 404 naming it' '
	api_bad 404 "" GET /v1/agents/nosuch &&
	grep "cluster: .nosuch. does not exist" out &&
	# a known cluster whose agent never reported: zero counts
	api GET /v1/agents/c1 >out &&
	test "$(json_get waiting <out)" = 0 &&
	test "$(json_get last_seen <out)" = None
'
test_expect_success 'QOS priority is a uint32 (Slurm), on add and modify' '
	api_bad 400 priority POST /v1/qos "{\"name\":\"big\",\"priority\":4294967296}" &&
	api_bad 400 priority PATCH /v1/qos/normal "{\"priority\":99999999999}" &&
	api_bad 400 priority PATCH /v1/qos/normal "{\"priority\":-1}" &&
	api GET /v1/qos/normal >out && test "$(json_get priority <out)" = 0
'
test_expect_success 'durations in messages read as time, not only seconds' '
	api_bad 400 default_time_s POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p3\",\"default_time_s\":1800,\"max_time_s\":600}" &&
	grep "default_time_s: 1800 s (30 min) is more than max_time_s 600 s (10 min)" out &&
	api_bad 400 default_time_s PATCH /v1/partitions/c1/short "{\"default_time_s\":6000}" &&
	grep "6000 s (1 h 40 min) is more than the partition.s MaxTime limit of 90 min (1 h 30 min)" out &&
	api_bad 400 value PUT /v1/limits "{\"scope\":\"partition\",\"owner\":\"c1:short\",\"name\":\"MaxTime\",\"value\":\"30\"}" &&
	grep "MaxTime 30 min is less than the default_time_s 3600 s (1 h) of partition c1:short" out
'
test_expect_success 'method not allowed is 405' '
	api_bad 405 "" PUT /v1/accounts "{}"
'
test_expect_success 'a body over 64 KiB is 413' '
	python3 -c "print(\"{\\\"name\\\":\\\"\" + \"a\"*70000 + \"\\\"}\")" >big &&
	API_USER=root test_expect_code 1 api POST /v1/accounts "$(cat big)" >out &&
	test "$(api_status)" = 413
'
test_expect_success 'job times after now (+300 s skew), start after end, elapsed over end - start' '
	now=$(date +%s) &&
	year=$((now + 366 * 86400)) &&
	s="\"cluster\":\"c1\",\"job_id\":77,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"billing\":1,\"state\":\"COMPLETED\"" &&
	api_bad 400 end POST /v1/jobs/settle "{$s,\"elapsed_s\":60,\"start\":$((now - 60)),\"end\":$year}" &&
	grep -q "after allotd.s clock" out &&
	api_bad 400 end POST /v1/jobs/settle "{$s,\"elapsed_s\":60,\"end\":9223372036854775807}" &&
	api_bad 400 start POST /v1/jobs/settle "{$s,\"elapsed_s\":0,\"start\":$year}" &&
	api_bad 400 start POST /v1/jobs/settle "{$s,\"elapsed_s\":0,\"start\":$((now - 10)),\"end\":$((now - 20))}" &&
	api_bad 400 elapsed_s POST /v1/jobs/settle "{$s,\"elapsed_s\":61,\"start\":$((now - 60)),\"end\":$now}" &&
	api_bad 400 elapsed_s POST /v1/jobs/settle "{$s,\"elapsed_s\":-5}" &&
	api_bad 400 start POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":78,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"billing\":1,\"start\":$year}" &&
	api_bad 400 submit POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":78,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"billing\":1,\"submit\":$year}"
'
test_expect_success 'times outside 1970-01-01T00:00:01Z .. 9999-12-31T23:59:59Z are 400' '
	api_bad 400 start POST /v1/allocations "{\"account\":\"chem\",\"start\":99999999999999,\"end\":\"2032-01-01\",\"su\":\"1h\"}" &&
	api_bad 400 start POST /v1/allocations "{\"account\":\"chem\",\"start\":0,\"end\":\"2032-01-01\",\"su\":\"1h\"}" &&
	api_bad 400 end PATCH "/v1/allocations/$(cat alloc_id)" "{\"end\":253402300800}"
'
test_expect_success 'nothing changed' '
	api_snapshot after &&
	test_cmp before after &&
	{ api GET /v1/assocs; api GET /v1/partitions; api GET /v1/limits; api GET /v1/policies; } >ref_after &&
	test_cmp ref_before ref_after &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
test_expect_success 'ClusterNames=c1: job verbs for another cluster are 403 naming both' '
	allotd_stop &&
	allotd_start AuthType=none TestMode=local ClusterNames=c1 &&
	api POST /v1/clusters "{\"name\":\"c2\"}" &&
	j="\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"billing\":1" &&
	before=$(api GET /v1/balances | json_get items.0.available_sumin) &&
	for b in "admit {\"cluster\":\"c2\",$j}" "hold {\"cluster\":\"c2\",\"job_id\":5,$j}" \
		"settle {\"cluster\":\"c2\",\"job_id\":5,\"elapsed_s\":60,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"billing\":1}" \
		"release {\"cluster\":\"c2\",\"job_id\":5}" \
		"adjust {\"cluster\":\"c2\",\"job_id\":5,\"time_limit_s\":120}" \
		"void {\"cluster\":\"c2\",\"job_id\":5,\"user\":\"u\",\"account\":\"chem\"}"; do
		api_bad 403 "" POST /v1/jobs/${b%% *} "${b#* }" &&
		grep -q "serves cluster(s) c1 (ClusterNames), not c2" out || return 1
	done &&
	test "$(api GET /v1/jobs?cluster=c2 | json_get items)" = "[]" &&
	test "$(api GET /v1/balances | json_get items.0.available_sumin)" = "$before" &&
	api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":5,$j}" &&
	api POST /v1/jobs/release "{\"cluster\":\"c1\",\"job_id\":5}" &&
	api DELETE /v1/clusters/c2
'
test_expect_success 'at LogLevel=debug a request path cannot forge a log line or field' '
	allotd_stop &&
	allotd_start AuthType=none TestMode=local LogLevel=debug &&
	curl -s -o /dev/null "$ALLOTD_URL/v1/zz%0Ats=2026-01-01T00:00:00.000Z%20level=error%20msg=%22FORGED%22" &&
	curl -s -o /dev/null "$ALLOTD_URL/v1/zz%22%20level=error%20x=%22y" &&
	grep "request failed" "$ALLOTD_LOG" >failed &&
	test "$(wc -l <failed)" = 2 &&
	! grep -E "^ts=[^ ]* level=error msg=\"FORGED\"" "$ALLOTD_LOG" &&
	grep -F "route=\"GET /v1/zz\\nts=2026-01-01T00:00:00.000Z level=error msg=\\\"FORGED\\\"\"" failed &&
	grep -F "route=\"GET /v1/zz\\\" level=error x=\\\"y\"" failed
'
test_expect_success 'cleanup' 'allotd_stop'
test_done
