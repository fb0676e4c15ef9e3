#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1066-coordinator.t - an account's coordinators (its PIs): set by superusers only (API and
# CLI) to known users, each once; a coordinator reads the account's per-user usage, jobs,
# refusals and forecast, and no other account's, and writes nothing; a plain member still
# reads only its own refusals; a coordinator cannot be removed as a user while it coordinates;
# `allot import slurm` makes coordinators of a dump's Coordinator=, and `allot export slurm`
# writes them back.
test_description='account coordinators: who sets them and what they read'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" && test -x "$ALLOT_BIN" || { skip_all="allotd or allot not built"; test_done; }

allot() { ALLOT_TEST_USER=root "$ALLOT_BIN" --url "$ALLOTD_URL" "$@"; }
# as USER METHOD PATH [BODY]: api as that user
as() { local u=$1; shift; API_USER=$u api "$@"; }
# job USER ACCOUNT ID BILLING: a settled job of an hour
job() {
	API_USER=slurm api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$3,\"user\":\"$1\",
		\"account\":\"$2\",\"partition\":\"std\",\"time_limit_s\":3600,\"billing\":$4}" &&
	API_USER=slurm api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":$3,
		\"elapsed_s\":3600,\"state\":\"COMPLETED\"}"
}
# refuse USER ACCOUNT ID: a hold the allocation cannot cover (a failure)
refuse() {
	API_USER=slurm test_expect_code 1 api POST /v1/jobs/hold "{\"cluster\":\"c1\",\"job_id\":$3,
		\"user\":\"$1\",\"account\":\"$2\",\"partition\":\"std\",\"time_limit_s\":360000,
		\"billing\":1000}" >/dev/null
}
users_of() { python3 -c 'import json,sys
print(" ".join(sorted({i["user"] for i in json.load(sys.stdin)["items"]})))'; }

test_expect_success 'bank: chem (alice, bob) and phys (carol); pi in no account' '
	allotd_start AuthType=none TestMode=local Operators=slurm &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\",\"resource\":\"cpu\",
		\"billing_weights\":\"CPU=1.0\"}" &&
	for a in chem phys; do
		api POST /v1/accounts "{\"name\":\"$a\"}" &&
		api POST /v1/allocations "{\"account\":\"$a\",\"cluster\":\"c1\",\"start\":\"2020-01-01\",
			\"end\":\"2100-01-01\",\"su\":\"100h\"}" >out &&
		json_get id <out >$a.id || return 1
	done &&
	for u in alice:chem bob:chem carol:phys pi: other:; do
		api POST /v1/users "{\"name\":\"${u%:*}\"}" &&
		{ test -z "${u#*:}" ||
		  api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"${u#*:}\",\"user\":\"${u%:*}\"}"; } ||
		return 1
	done &&
	job alice chem 101 2 && job bob chem 102 3 && job carol phys 103 4 &&
	refuse bob chem 201 && refuse carol phys 202 && refuse alice chem 203 &&
	api GET /v1/failures >out && test "$(users_of <out)" = "alice bob carol"
'
test_expect_success 'before: pi reads nothing of chem' '
	test_expect_code 1 as pi GET "/v1/failures?account=chem&user=bob" >out &&
	test "$(api_status)" = 403 &&
	test_expect_code 1 as pi GET "/v1/failures?account=chem" >out &&
	test "$(api_status)" = 404 &&
	test_expect_code 1 as pi GET /v1/allocations/$(cat chem.id)/forecast >out &&
	test "$(api_status)" = 403 &&
	as pi GET /v1/jobs >out && test "$(users_of <out)" = ""
'
test_expect_success 'only a superuser sets coordinators, to known users, each once' '
	test_expect_code 1 as alice PATCH /v1/accounts/chem "{\"coordinators\":\"alice\"}" >out &&
	test "$(api_status)" = 403 &&
	test_expect_code 1 as slurm PATCH /v1/accounts/chem "{\"coordinators\":\"slurm\"}" >out &&
	test "$(api_status)" = 403 &&
	api_bad 400 "" PATCH /v1/accounts/chem "{\"coordinators\":\"nosuch\"}" &&
	grep "coordinators: user .nosuch. does not exist" out &&
	api_bad 400 "" PATCH /v1/accounts/chem "{\"coordinators\":\"pi,pi\"}" &&
	grep "coordinators: .pi. is named twice" out &&
	api_bad 400 "" PATCH /v1/accounts/chem "{\"coordinators\":\"pi,,bob\"}" &&
	api_bad 400 "" PATCH /v1/accounts/chem "{\"coordinators\":\"p i\"}" &&
	api GET /v1/accounts/chem >out && test "$(json_get coordinators <out)" = "" &&
	api PATCH /v1/accounts/chem "{\"coordinators\":\"pi\"}" >out &&
	test "$(json_get coordinators <out)" = pi &&
	api GET /v1/accounts/chem >out && test "$(json_get coordinators <out)" = pi
'
test_expect_success 'the coordinator reads chem: usage, jobs, refusals, forecast' '
	as pi GET /v1/accounts >out &&
	grep -q "\"chem\"" out && ! grep -q "\"phys\"" out &&
	as pi GET "/v1/usage?account=chem" >out && test "$(users_of <out)" = "alice bob" &&
	as pi GET /v1/usage >out && test "$(users_of <out)" = "alice bob" &&
	as pi GET /v1/jobs >out && test "$(users_of <out)" = "alice bob" &&
	as pi GET "/v1/failures?account=chem" >out && test "$(users_of <out)" = "alice bob" &&
	as pi GET "/v1/failures?account=chem&user=bob" >out && test "$(users_of <out)" = bob &&
	grep -q "\"message\"" out &&
	as pi GET /v1/allocations/$(cat chem.id)/forecast >out &&
	as pi GET /v1/balances >out && grep -q "\"chem\"" out && ! grep -q "\"phys\"" out
'
test_expect_success 'and not phys' '
	test_expect_code 1 as pi GET "/v1/failures?account=phys&user=carol" >out &&
	test "$(api_status)" = 403 &&
	test_expect_code 1 as pi GET "/v1/failures?account=phys" >out &&
	test "$(api_status)" = 404 &&
	test_expect_code 1 as pi GET /v1/allocations/$(cat phys.id)/forecast >out &&
	test "$(api_status)" = 403 &&
	as pi GET "/v1/usage?account=phys" >out && test "$(users_of <out)" = ""
'
test_expect_success 'a coordinator writes nothing' '
	api_snapshot before &&
	test_expect_code 1 as pi PATCH /v1/accounts/chem "{\"coordinators\":\"pi,alice\"}" >out &&
	test "$(api_status)" = 403 &&
	test_expect_code 1 as pi POST /v1/allocations/$(cat chem.id)/credit "{\"su\":\"1h\"}" >out &&
	test "$(api_status)" = 403 &&
	api_snapshot after && test_cmp before after
'
test_expect_success 'a member who does not coordinate reads only its own refusals' '
	as alice GET "/v1/failures?account=chem" >out && test "$(users_of <out)" = alice &&
	test_expect_code 1 as alice GET "/v1/failures?account=chem&user=bob" >out &&
	test "$(api_status)" = 403
'
test_expect_success 'a coordinator is not removed as a user while it coordinates' '
	api_bad 409 "" DELETE /v1/users/pi &&
	grep "coordinates account .chem." out &&
	api GET /v1/users/pi
'
test_expect_success 'CLI: allot account modify NAME coordinators=, shown by account show' '
	allot account modify phys coordinators=pi,other &&
	allot account show phys >out && grep "pi,other" out &&
	allot --json account show phys >out && test "$(json_get coordinators <out)" = pi,other &&
	as pi GET "/v1/failures?account=phys" >out && test "$(users_of <out)" = carol &&
	allot account modify phys coordinators= &&
	allot --json account show phys >out && test "$(json_get coordinators <out)" = "" &&
	test_expect_code 1 as pi GET "/v1/failures?account=phys" >out &&
	test "$(api_status)" = 404 &&
	test_expect_code 4 env ALLOT_TEST_USER=alice "$ALLOT_BIN" --url "$ALLOTD_URL" \
		account modify phys coordinators=alice 2>err &&
	grep "may not call PATCH /v1/accounts/phys" err
'
test_expect_success 'import slurm: Coordinator= adds the user to the accounts named' '
	q="'"'"'" &&
	cat >dump.txt <<-EOD &&
	Cluster - ${q}c1${q}
	Parent - ${q}root${q}
	User - ${q}root${q}:DefaultAccount=${q}root${q}
	Account - ${q}chem${q}
	Parent - ${q}chem${q}
	User - ${q}other${q}:DefaultAccount=${q}chem${q}:Coordinator=${q}chem,geo${q}
	Parent - ${q}root${q}
	Account - ${q}geo${q}
	EOD
	allot import slurm file=dump.txt --dry-run >dry.out &&
	grep "^~ account chem: coordinators .pi. -> .pi,other.\$" dry.out &&
	grep "^~ account geo: coordinators .. -> .other.\$" dry.out &&
	api GET /v1/accounts/chem >out && test "$(json_get coordinators <out)" = pi &&
	allot import slurm file=dump.txt >imp.out &&
	api GET /v1/accounts/chem >out && test "$(json_get coordinators <out)" = pi,other &&
	api GET /v1/accounts/geo >out && test "$(json_get coordinators <out)" = other &&
	allot import slurm file=dump.txt >again.out &&
	! grep coordinators again.out &&
	allot export slurm cluster=c1 >export.txt &&
	grep "^User - .other.:.*:Coordinator=.chem,geo." export.txt &&
	! grep "^User - .alice.*Coordinator" export.txt
'
test_expect_success 'import slurm: Coordinator= of an account neither dumped nor banked' '
	q="'"'"'" &&
	cat >bad.txt <<-EOD &&
	Cluster - ${q}c1${q}
	Parent - ${q}root${q}
	Account - ${q}chem${q}
	Parent - ${q}chem${q}
	User - ${q}other${q}:DefaultAccount=${q}chem${q}:Coordinator=${q}nosuch${q}
	EOD
	api_snapshot before &&
	test_expect_code 2 allot import slurm file=bad.txt 2>err &&
	grep "Coordinator: account .nosuch. does not exist" err &&
	api_snapshot after && test_cmp before after
'
test_expect_success 'stop allotd' '
	allotd_stop
'
test_done
