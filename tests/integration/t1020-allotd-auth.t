#!/bin/bash
# t1020-allotd-auth.t - MUNGE authentication and roles against a private munged: no
# credential, forged credential, replayed credential -> 401; a user reading another
# account -> 403; X-Allot-As only for superusers and admins.
test_description='allotd authentication and roles'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

# Two plain Unix users for the role tests (created once, kept: useradd is idempotent-ish).
for u in allot_alice allot_bob allot_op; do
	id -u $u >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $u
done

test_expect_success 'start munged and allotd (AuthType=munge)' '
	munged_start "$PWD/munge" &&
	chmod 0755 "$MUNGE_DIR" &&
	allotd_start Admins=allot_bob Operators=allot_op
'
test_expect_success 'healthz needs no credential' '
	API_NOAUTH=1 api GET /healthz >out &&
	test "$(json_get status <out)" = ok
'
test_expect_success 'no credential is 401 with a clear message' '
	API_NOAUTH=1 test_expect_code 1 api GET /v1/accounts >out &&
	test "$(api_status)" = 401 &&
	grep "no credential" out
'
test_expect_success 'forged credential (random bytes) is 401' '
	forged="MUNGE:$(head -c 96 /dev/urandom | base64 -w0):" &&
	API_CRED=$forged test_expect_code 1 api GET /v1/accounts >out &&
	test "$(api_status)" = 401 &&
	grep "invalid credential" out
'
test_expect_success 'a valid credential works once; replaying it is 401' '
	cred=$(munge -s allot --socket="$MUNGE_SOCKET") &&
	API_CRED=$cred api GET /v1/whoami >out &&
	test "$(json_get user <out)" = root &&
	test "$(json_get role <out)" = superuser &&
	API_CRED=$cred test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	grep "replayed" out
'
test_expect_success 'a credential without allot'"'"'s payload, or another service'"'"'s, is 401' '
	API_CRED=$(munge -n --socket="$MUNGE_SOCKET") test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	grep "credential not minted for allot: its payload must be" out &&
	API_CRED=$(munge -s slurm --socket="$MUNGE_SOCKET") test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	API_CRED=$(munge -s allotx --socket="$MUNGE_SOCKET") test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	API_CRED=$(runuser -u allot_alice -- munge -s other --socket="$MUNGE_SOCKET") \
		test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 401
'
test_expect_success 'setup: two accounts, alice in chem only' '
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/users "{\"name\":\"allot_alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"allot_alice\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10h\"}" &&
	api POST /v1/allocations "{\"account\":\"phys\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"20h\"}"
'
test_expect_success 'a user sees its own account and balance only' '
	API_RUNAS=allot_alice api GET /v1/whoami >out &&
	test "$(json_get role <out)" = user &&
	API_RUNAS=allot_alice api GET /v1/accounts >out &&
	grep -q "\"chem\"" out && ! grep -q "\"phys\"" out &&
	API_RUNAS=allot_alice api GET /v1/balances >out &&
	grep -q "\"chem\"" out && ! grep -q "\"phys\"" out
'
test_expect_success 'a user reading another account is refused (403)' '
	API_RUNAS=allot_alice test_expect_code 1 api GET /v1/accounts/phys >out &&
	test "$(api_status)" = 403 &&
	API_RUNAS=allot_alice test_expect_code 1 api GET "/v1/ledger?account=phys" >out &&
	test "$(api_status)" = 403
'
test_expect_success 'usage and priority show a user only its accounts and its own jobs' '
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"p\",\"resource\":\"cpu\"}" &&
	for j in 1:chem 2:phys; do
		api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":${j%%:*},\"elapsed_s\":60,\"state\":\"COMPLETED\",\"start\":\"2026-01-01T00:00:00Z\",\"user\":\"root\",\"account\":\"${j#*:}\",\"partition\":\"p\",\"alloc_tres\":\"cpu=1\"}" >/dev/null || return 1
	done &&
	api GET "/v1/usage?since=2025-01-01" >out && grep -q "\"phys\"" out &&
	API_RUNAS=allot_alice api GET "/v1/usage?since=2025-01-01" >out &&
	grep -q "\"chem\"" out && ! grep -q "\"phys\"" out &&
	api GET /v1/priority/c1/2 >out &&
	API_RUNAS=allot_alice test_expect_code 1 api GET /v1/priority/c1/2 >out &&
	test "$(api_status)" = 404
'
test_expect_success 'a user reads the ledger of its allocations and its jobs' '
	api POST /v1/jobs/settle "{\"cluster\":\"c1\",\"job_id\":3,\"elapsed_s\":60,\"state\":\"COMPLETED\",\"start\":\"2026-01-01T00:00:00Z\",\"user\":\"allot_alice\",\"account\":\"phys\",\"partition\":\"p\",\"alloc_tres\":\"cpu=1\"}" >/dev/null &&
	# allocation 1 is chem (alice has an association), 2 is phys (she has none)
	API_RUNAS=allot_alice api GET "/v1/ledger?alloc=1" >out &&
	grep -q "\"alloc_id\":1" out && ! grep -q "\"alloc_id\":2" out &&
	API_RUNAS=allot_alice test_expect_code 1 api GET "/v1/ledger?alloc=2" >out &&
	test "$(api_status)" = 403 && grep "allocation 2 is of account phys" out &&
	API_RUNAS=allot_alice test_expect_code 1 api GET "/v1/ledger?alloc=99" >out &&
	test "$(api_status)" = 404 &&
	# a job of her account, her own job (on phys), another user job on phys
	API_RUNAS=allot_alice api GET "/v1/ledger?cluster=c1&job=1" >out &&
	test "$(json_get items.0.job_id <out)" = 1 &&
	API_RUNAS=allot_alice api GET "/v1/ledger?cluster=c1&job=3" >out &&
	test "$(json_get items.0.job_id <out)" = 3 &&
	API_RUNAS=allot_alice test_expect_code 1 api GET "/v1/ledger?cluster=c1&job=2" >out &&
	test "$(api_status)" = 403 &&
	# a job id names a job only with its cluster; no filter at all is everyone ledger
	API_RUNAS=allot_alice test_expect_code 1 api GET "/v1/ledger?job=1" >out &&
	test "$(api_status)" = 403 &&
	API_RUNAS=allot_alice test_expect_code 1 api GET "/v1/ledger?since=2020-01-01" >out &&
	test "$(api_status)" = 403 &&
	API_RUNAS=allot_alice test_expect_code 1 api GET /v1/ledger >out &&
	test "$(api_status)" = 403
'
test_expect_success 'limits and fair-share show a user only its accounts' '
	api PUT /v1/limits "{\"scope\":\"account\",\"owner\":\"chem\",\"name\":\"GrpJobs\",\"value\":\"5\"}" &&
	api PUT /v1/limits "{\"scope\":\"account\",\"owner\":\"phys\",\"name\":\"GrpJobs\",\"value\":\"7\"}" &&
	api PUT /v1/limits "{\"scope\":\"assoc\",\"owner\":\"c1:chem:allot_alice:\",\"name\":\"MaxJobs\",\"value\":\"2\"}" &&
	API_RUNAS=allot_bob api GET /v1/limits >out && grep -q "\"phys\"" out &&
	API_RUNAS=allot_alice api GET /v1/limits >out &&
	grep -q "\"chem\"" out && grep -q "c1:chem:allot_alice:" out && ! grep -q phys out &&
	API_RUNAS=allot_alice api GET "/v1/limits?scope=account&owner=chem" >out &&
	grep -q GrpJobs out &&
	API_RUNAS=allot_alice test_expect_code 1 api GET "/v1/limits?scope=account&owner=phys" >out &&
	test "$(api_status)" = 403 &&
	API_RUNAS=allot_bob api GET /v1/share >out && grep -q "\"phys\"" out &&
	API_RUNAS=allot_alice api GET /v1/share >out &&
	grep -q "\"chem\"" out && ! grep -q phys out &&
	API_RUNAS=allot_alice api GET /v1/tree >out &&
	grep -q "\"chem\"" out && ! grep -q phys out
'
test_expect_success 'a user cannot change the bank (403)' '
	API_RUNAS=allot_alice test_expect_code 1 api POST /v1/accounts "{\"name\":\"evil\"}" >out &&
	test "$(api_status)" = 403 &&
	api GET /v1/accounts >out && ! grep -q evil out &&
	# the refusal names the path the user called, not the route template
	API_RUNAS=allot_alice test_expect_code 1 api POST /v1/allocations/1/credit "{\"su\":\"1h\"}" >out &&
	test "$(api_status)" = 403 &&
	test "$(json_get error.message <out)" = "allot_alice may not call POST /v1/allocations/1/credit (role user)"
'
test_expect_success 'run-as: refused for a user, allowed for admin and superuser' '
	API_RUNAS=allot_alice API_AS=root test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 403 &&
	API_RUNAS=allot_bob API_AS=allot_alice api GET /v1/whoami >out &&
	test "$(json_get user <out)" = allot_alice &&
	test "$(json_get role <out)" = user &&
	API_AS=allot_alice api GET /v1/accounts >out &&
	! grep -q "\"phys\"" out
'
test_expect_success 'an admin acting as root stays an admin' '
	API_RUNAS=allot_bob API_AS=root api GET /v1/whoami >out &&
	test "$(json_get role <out)" = admin &&
	API_RUNAS=allot_bob API_AS=root test_expect_code 1 api POST /v1/accounts "{\"name\":\"x\"}" >out &&
	test "$(api_status)" = 403 &&
	test "$(json_get error.message <out)" = "allot_bob, acting as root, may not call POST /v1/accounts (role admin)"
'
test_expect_success 'an admin cannot act as an operator (no job verbs by the back door)' '
	API_RUNAS=allot_bob API_AS=allot_op test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 403 &&
	grep "only a superuser may act as" out &&
	API_RUNAS=allot_bob API_AS=allot_op test_expect_code 1 api POST /v1/jobs/hold \
		"{\"cluster\":\"c1\",\"job_id\":601,\"user\":\"allot_alice\",\"account\":\"chem\",\"partition\":\"cpu\",\"time_limit_s\":60}" >out &&
	test "$(api_status)" = 403 &&
	API_AS=allot_op api GET /v1/whoami >out &&
	test "$(json_get role <out)" = operator
'
test_expect_success 'munged down: 503, not 401' '
	munged_stop &&
	API_CRED="MUNGE:AAAA:" test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 503
'
test_expect_success 'cleanup' '
	allotd_stop && munged_stop
'
test_done
