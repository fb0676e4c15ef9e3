#!/bin/bash
# t2001-cli-db.t - `allot db version|upgrade|check` on the database itself, read through
# allot.conf: a fresh file is at schema 0, upgrade brings it to the latest and is idempotent,
# check passes on a bank allotd has used and fails (exit 5) once a cached balance disagrees
# with its ledger; configuration errors name file, line and key (exit 2).
test_description='allot db commands'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test -x "$ALLOT_BIN" || { skip_all="allot not built"; test_done; }
"$ALLOT_BIN" db --help | grep -q "not in this build" && { skip_all="allot built without db"; test_done; }

test_expect_success 'a fresh database is at schema 0 and names the latest' '
	echo "StorageLoc=$PWD/fresh.db" >fresh.conf &&
	"$ALLOT_BIN" --config fresh.conf -P -n db version >v &&
	test "$(cut -d"|" -f1,2 v)" = "sqlite|0" &&
	latest=$(cut -d"|" -f3 v) && test "$latest" -ge 1 && echo $latest >latest
'
test_expect_success 'upgrade brings it to the latest; again changes nothing' '
	"$ALLOT_BIN" --config fresh.conf -P -n db upgrade >u &&
	test "$(cut -d"|" -f2,3 u)" = "$(cat latest)|$(cat latest)" &&
	"$ALLOT_BIN" --config fresh.conf -P -n db upgrade >u2 &&
	test_cmp u u2 &&
	"$ALLOT_BIN" --config fresh.conf --json db version >vj &&
	test "$(json_get schema <vj)" = "$(cat latest)"
'
test_expect_success 'check passes on an empty bank' '
	"$ALLOT_BIN" --config fresh.conf db check >c &&
	grep "^0 problems found" c
'
test_expect_success 'check passes after a session through allotd' '
	munged_start "$PWD/munge" &&
	allotd_start &&
	A="$ALLOT_BIN --url $ALLOTD_URL" &&
	$A cluster add c1 &&
	$A account add chem &&
	$A user add alice &&
	$A assoc add cluster=c1 account=chem user=alice &&
	$A partition add p cluster=c1 resource=cpu &&
	$A alloc add chem resource=cpu su=10h start=2026-01-01 end=2099-01-01 &&
	$A job hold jobid=7 user=alice account=chem partition=p timelimit=60 tres=cpu=1 &&
	$A job settle jobid=7 elapsed=90s state=COMPLETED &&
	allotd_stop &&
	"$ALLOT_BIN" --config "$ALLOTD_CONF" --json db check >cj &&
	test "$(json_get problems <cj)" = 0
'
test_expect_success 'check reports a balance that disagrees with the ledger: exit 5' '
	corrupt="UPDATE alloc_balance SET used_sumin = used_sumin + 1" &&
	if [ "$ALLOT_TEST_BACKEND" = pg ]; then pg_psql "$corrupt"
	else sqlite3 "$ALLOTD_DIR/allot.db" "$corrupt"; fi &&
	test_expect_code 5 "$ALLOT_BIN" --config "$ALLOTD_CONF" db check >bad 2>err &&
	grep "^problem: " bad &&
	grep "^allot: error: db check: " err
'
test_expect_success 'configuration errors name file, line and key: exit 2' '
	printf "StorageLoc=$PWD/x.db\nColour=blue\n" >bad.conf &&
	test_expect_code 2 "$ALLOT_BIN" --config bad.conf db version 2>err &&
	grep "bad.conf:2: Colour" err &&
	test_expect_code 5 "$ALLOT_BIN" --config "$PWD/none.conf" db version
'
test_expect_success 'stop munged' '
	munged_stop
'
test_done
