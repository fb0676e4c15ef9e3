#!/bin/bash
# t1010-bad-input.t - bad requests get 400/404/409/413 with the field named, and change
# nothing: balances, ledger and accounts are compared before and after.
test_description='allotd bad input'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

snapshot() {
	{ api GET /v1/accounts; api GET /v1/balances; api GET /v1/ledger; api GET /v1/jobs; } >"$1"
}
# bad STATUS FIELD METHOD PATH BODY: the call fails with STATUS and names FIELD.
bad() {
	local status=$1 field=$2; shift 2
	API_USER=root test_expect_code 1 api "$@" >out &&
	test "$(api_status)" = "$status" &&
	{ [ -z "$field" ] || test "$(json_get error.field <out)" = "$field"; }
}

test_expect_success 'setup' '
	allotd_start AuthType=none TestMode=local &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"org\",\"parent\":\"chem\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2030-01-01\",\"su\":\"1h\"}" >out &&
	json_get id <out >alloc_id &&
	snapshot before
'
test_expect_success 'malformed JSON' '
	bad 400 body POST /v1/accounts "{\"name\":" &&
	bad 400 body POST /v1/accounts "[1,2]"
'
test_expect_success 'unknown field' '
	bad 400 colour POST /v1/accounts "{\"name\":\"x\",\"colour\":\"red\"}"
'
test_expect_success 'wrong types' '
	bad 400 shares POST /v1/accounts "{\"name\":\"x\",\"shares\":\"many\"}" &&
	bad 400 name POST /v1/accounts "{\"name\":5}" &&
	bad 400 start POST /v1/allocations "{\"account\":\"chem\",\"start\":\"tomorrow\",\"end\":\"2030-01-01\"}"
'
test_expect_success 'bad names' '
	bad 400 name POST /v1/accounts "{\"name\":\"a b\"}" &&
	bad 400 name POST /v1/accounts "{\"name\":\"-x\"}"
'
test_expect_success 'negative, zero, overflowing and double amounts' '
	id=$(cat alloc_id) &&
	bad 400 amount_sumin POST /v1/allocations/$id/credit "{\"amount_sumin\":-5}" &&
	bad 400 amount_sumin POST /v1/allocations/$id/credit "{\"amount_sumin\":0}" &&
	bad 400 su POST /v1/allocations/$id/credit "{\"su\":\"-3h\"}" &&
	bad 400 su POST /v1/allocations/$id/credit "{\"su\":\"99999999999999999999h\"}" &&
	bad 400 su POST /v1/allocations/$id/credit "{\"su\":\"1h\",\"amount_sumin\":60}" &&
	bad 400 su POST /v1/allocations/$id/credit "{}" &&
	bad 400 kind POST /v1/allocations/$id/credit "{\"kind\":\"debit\",\"su\":\"1h\"}"
'
test_expect_success 'unknown objects' '
	bad 404 "" POST /v1/allocations/999/credit "{\"su\":\"1h\"}" &&
	bad 404 "" GET /v1/accounts/nosuch &&
	bad 404 "" GET /v1/nosuch &&
	bad 400 parent POST /v1/accounts "{\"name\":\"x\",\"parent\":\"nosuch\"}"
'
test_expect_success 'overlapping allocation is a conflict' '
	bad 409 "" POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2025-01-01\",\"end\":\"2026-01-01\",\"su\":\"1h\"}"
'
test_expect_success 'account cycle is a conflict' '
	bad 409 "" PATCH /v1/accounts/chem "{\"parent\":\"org\"}"
'
test_expect_success 'duplicate is a conflict' '
	bad 409 "" POST /v1/accounts "{\"name\":\"chem\"}"
'
test_expect_success 'job verbs: missing and bad fields' '
	bad 400 job_id POST /v1/jobs/hold "{\"cluster\":\"c1\",\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60}" &&
	bad 400 time_limit_s POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":0}" &&
	bad 400 tres POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60}" &&
	bad 400 tres POST /v1/jobs/admit "{\"cluster\":\"c1\",\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"\"}" &&
	bad 400 tres POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":1,\"user\":\"u\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"tres\":\"cpu=x\"}" &&
	bad 400 source POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":1,\"elapsed_s\":5,\"source\":\"magic\"}" &&
	bad 404 "" POST /v1/jobs/release "{\"cluster\":\"c1\",\"job_id\":424242}"
'
test_expect_success 'method not allowed is 405' '
	bad 405 "" PUT /v1/accounts "{}"
'
test_expect_success 'a body over 64 KiB is 413' '
	python3 -c "print(\"{\\\"name\\\":\\\"\" + \"a\"*70000 + \"\\\"}\")" >big &&
	API_USER=root test_expect_code 1 api POST /v1/accounts "$(cat big)" >out &&
	test "$(api_status)" = 413
'
test_expect_success 'nothing changed' '
	snapshot after &&
	test_cmp before after &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true
'
test_expect_success 'cleanup' 'allotd_stop'
test_done
