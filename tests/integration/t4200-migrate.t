#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t4200-migrate.t - moving a bank between backends with `allot db export` / `allot db import`:
# a bank built on SQLite through the API (account tree, allocations, credits with
# idempotency keys, holds, settles, a release, a refused hold, a periodic policy and its
# boundary) is exported, imported into an empty upgraded PostgreSQL database, and allotd on
# PostgreSQL answers every read (balances, ledger, jobs, failures, policies, commands,
# evaluations, accounts, allocations) exactly as allotd on SQLite did; `allot db check` is
# clean; new work continues with fresh ids.  Then back: PostgreSQL -> a new SQLite file, same
# answers.  Import refuses a non-empty target and a truncated file, writing nothing.
test_description='allot db export/import: SQLite -> PostgreSQL -> SQLite'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }
test -x "$PG_BINDIR/initdb" || { skip_all="PostgreSQL 15 not installed"; test_done; }

db() { "$ALLOT_BIN" --config "$1" "${@:2}"; }
slurm() { API_USER=slurm api "$@"; }

# snapshot DIR: every read the comparison covers, as sorted JSON files in DIR.  Each allotd
# start runs a policy tick at the real clock (PolicyTickInterval has no "off"), which
# appends an evaluation outside the 2030 allocation window; only the 2030 ones are compared.
snapshot_py='
import json, sys
d = json.load(sys.stdin)
if isinstance(d, dict) and "evaluations" in d:
    d["evaluations"] = [e for e in d["evaluations"] if e["time"].startswith("2030-")]
print(json.dumps(d, sort_keys=True, indent=1))'

snapshot() {
	mkdir -p "$1" &&
	for q in /v1/balances "/v1/ledger?limit=100000" "/v1/jobs?cluster=c1" /v1/failures \
		/v1/policies /v1/commands /v1/evaluations /v1/accounts /v1/allocations /v1/users \
		/v1/assocs /v1/partitions "/v1/jobs/c1/11" "/v1/steps"; do
		api GET "$q" >"$1/raw" || { echo "GET $q failed: $(cat "$1/raw")"; return 1; }
		python3 -c "$snapshot_py" <"$1/raw" >"$1/$(echo "$q" | tr "/?=&" "____")" || return 1
	done
	rm -f "$1/raw"
}

cleanup_all() { allotd_stop; pg_stop; }

test_expect_success 'bank on SQLite through the API' '
	ALLOTD_DIR=$PWD/sq && ALLOT_TEST_BACKEND=sqlite &&
	allotd_start AuthType=none TestMode=local Operators=slurm TimeZone=UTC &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"science\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\",\"parent\":\"science\",\"shares\":100,\"description\":\"Chemistry \\\"lab\\\" ünï\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/users "{\"name\":\"alice\",\"uid\":1001}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"phys\",\"user\":\"alice\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\",\"billing_weights\":\"CPU=1.0\"}" &&
	api POST /v1/allocations "{\"account\":\"science\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10h\"}" >out &&
	json_get id <out >alloc_sci &&
	api POST /v1/allocations/$(cat alloc_sci)/credit "{\"amount_sumin\":60,\"comment\":\"top-up\",\"idempotency_key\":\"k1\"}" &&
	api POST /v1/allocations "{\"account\":\"phys\",\"cluster\":\"c1\",\"start\":\"2030-01-01\",\"end\":\"2031-01-01\"}" >out &&
	json_get id <out >alloc_phys &&
	api POST /v1/policies "{\"alloc\":$(cat alloc_phys),\"cluster\":\"c1\",\"period\":\"month\",\"base_sumin\":1000,\"slow_qos\":\"slow\",\"normal_qos\":\"normal\"}" >out &&
	api POST /v1/policies/tick "{\"now\":\"2030-07-15T12:00:00Z\"}" &&
	for j in 11 12 13 14; do
		slurm POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$j,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":600,\"tres\":\"cpu=2\"}" || return 1
	done &&
	slurm POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":11,\"elapsed_s\":55,\"state\":\"COMPLETED\",\"source\":\"epilog\"}" &&
	slurm POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":12,\"elapsed_s\":300,\"state\":\"NODE_FAIL\"}" &&
	slurm POST /v1/jobs/release "{\"cluster\":\"c1\",\"job_id\":13,\"comment\":\"cancelled\"}" &&
	test_expect_code 1 slurm POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":15,\"user\":\"alice\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":360000,\"tres\":\"cpu=64\"}" &&
	test "$(api_status)" = 402 &&
	snapshot before &&
	grep -q "\"kind\": \"hold\"" before/_v1_ledger_limit_100000 &&
	grep -q "\"job_id\": 15" before/_v1_failures &&
	allotd_stop
'

test_expect_success 'export from SQLite' '
	db "$ALLOTD_CONF" db export bank.jsonl >out &&
	grep "^exported " out &&
	head -1 bank.jsonl | grep "\"backend\":\"sqlite\"" &&
	tail -1 bank.jsonl | grep "\"end\":true" &&
	grep -c "\"table\":\"ledger\"" bank.jsonl >nledger &&
	test "$(cat nledger)" -ge 8
'

test_expect_success 'import into a fresh PostgreSQL, upgraded first' '
	pg_start "$PWD/pg" &&
	printf "StorageType=pg\nStorageLoc=%s\n" "$ALLOT_TEST_PG" >pg.conf &&
	test_expect_code 5 db pg.conf db import bank.jsonl 2>err &&
	grep "allot db upgrade" err &&
	db pg.conf db upgrade &&
	db pg.conf --json db import bank.jsonl >out &&
	test "$(json_get rows <out)" -gt 20 &&
	db pg.conf db check
'

test_expect_success 'allotd on PostgreSQL answers exactly as on SQLite' '
	ALLOTD_DIR=$PWD/pgd && ALLOT_TEST_BACKEND=pg &&
	allotd_start AuthType=none TestMode=local Operators=slurm TimeZone=UTC &&
	api GET /healthz | grep -q "\"backend\":\"pg\"" &&
	snapshot after_pg &&
	diff -r before after_pg
'

test_expect_success 'new work on PostgreSQL gets fresh ids and keeps the books' '
	maxid=$(pg_psql "SELECT MAX(id) FROM ledger") &&
	slurm POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":14,\"elapsed_s\":60,\"state\":\"COMPLETED\"}" >out &&
	test "$(json_get settled <out)" = true &&
	api POST /v1/allocations/$(cat alloc_sci)/credit "{\"amount_sumin\":60,\"comment\":\"again\",\"idempotency_key\":\"k1\"}" >out &&
	test "$(json_get replay <out)" = true &&
	api POST /v1/accounts "{\"name\":\"bio\"}" &&
	test "$(pg_psql "SELECT MIN(id) FROM ledger WHERE id > $maxid")" -gt "$maxid" &&
	test "$(pg_psql "SELECT id FROM accounts WHERE name = '"'"'bio'"'"'")" = 5 &&
	snapshot after_work &&
	allotd_stop &&
	db pg.conf db check
'

test_expect_success 'import refuses a non-empty database and a truncated file' '
	test_expect_code 3 db pg.conf db import bank.jsonl 2>err &&
	grep "not empty" err &&
	head -n 10 bank.jsonl >cut.jsonl &&
	echo "StorageLoc=$PWD/cut.db" >cut.conf &&
	db cut.conf db upgrade &&
	test_expect_code 2 db cut.conf db import cut.jsonl 2>err &&
	grep "trailer" err &&
	db cut.conf -P -n db export | grep -c "\"table\"" >n &&
	test "$(cat n)" = 1
'

test_expect_success 'PostgreSQL -> SQLite: the same bank again' '
	db pg.conf db export back.jsonl &&
	head -1 back.jsonl | grep "\"backend\":\"pg\"" &&
	mkdir -p back &&
	echo "StorageLoc=$PWD/back/allot.db" >back.conf &&
	db back.conf db upgrade &&
	db back.conf db import back.jsonl &&
	db back.conf db check &&
	db back.conf db export back2.jsonl &&
	tail -n +2 back.jsonl >b1 && tail -n +2 back2.jsonl >b2 && test_cmp b1 b2 &&
	ALLOTD_DIR=$PWD/back && ALLOT_TEST_BACKEND=sqlite &&
	allotd_start AuthType=none TestMode=local Operators=slurm TimeZone=UTC &&
	api GET /healthz | grep -q "\"backend\":\"sqlite\"" &&
	snapshot after_back &&
	diff -r after_work after_back &&
	api GET /v1/jobs/c1/14 >j14 && test "$(json_get runs.0.status <j14)" = settled &&
	api GET "/v1/accounts" | grep -q "\"bio\"" &&
	allotd_stop
'

test_expect_success 'the first SQLite dump equals the PostgreSQL one for the unchanged rows' '
	grep "\"table\":\"ledger\"" bank.jsonl >l1 &&
	grep "\"table\":\"ledger\"" back.jsonl | head -n $(wc -l <l1) >l2 &&
	test_cmp l1 l2
'

test_expect_success 'cleanup' '
	cleanup_all
'
test_done
