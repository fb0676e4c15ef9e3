#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1060-dashboard-token.t - the web dashboard's bearer tokens (doc/api.md "Dashboard
# tokens") against a private munged: a user authenticated by MUNGE gets a token that
# stands for them, read-only (GET only), seeing what they see and no more; an unknown,
# malformed or doubled credential is 401; a restart ends every token; `allot dashboard`
# prints a link that works, over TCP and from the Unix socket.
test_description='dashboard tokens: read-only, per user, in memory'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
test -x "$ALLOTD_BIN" && test -x "$ALLOT_BIN" || { skip_all="allotd or allot not built"; test_done; }

for u in allot_alice allot_bob; do
	id -u $u >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $u
done

# bearer TOKEN METHOD PATH [BODY]: a request with "Authorization: Bearer TOKEN" only; the
# reply on stdout, the status for api_status; 0 for a 2xx.
bearer() {
	local token=$1 method=$2 path=$3
	local -a args=(-s --max-time 30 -o "$ALLOTD_DIR/reply" -w '%{http_code}' -X "$method"
		-H "Authorization: Bearer $token")
	[ $# -lt 4 ] || args+=(-H 'Content-Type: application/json' --data-binary "$4")
	curl "${args[@]}" "$ALLOTD_URL$path" >"$ALLOTD_DIR/status"
	cat "$ALLOTD_DIR/reply"
	case "$(cat "$ALLOTD_DIR/status")" in 2*) return 0 ;; *) return 1 ;; esac
}
available() { api GET /v1/balances | json_get "items.$1.available_sumin"; }

test_expect_success 'munged, allotd; alice in chem, bob an admin; two allocations' '
	munged_start "$PWD/munge" &&
	chmod 0755 "$MUNGE_DIR" &&
	allotd_start Admins=allot_bob &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/users "{\"name\":\"allot_alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"allot_alice\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10h\"}" >out &&
	json_get id <out >chem.id &&
	api POST /v1/allocations "{\"account\":\"phys\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"20h\"}" >out &&
	json_get id <out >phys.id
'
test_expect_success 'alice (MUNGE) gets a token: 64 hex digits, hers, 8 hours by default' '
	API_RUNAS=allot_alice api POST /v1/tokens "{}" >out &&
	test "$(api_status)" = 201 &&
	json_get token <out >alice.token &&
	grep -qE "^[0-9a-f]{64}\$" alice.token &&
	test "$(json_get user <out)" = allot_alice &&
	test "$(json_get role <out)" = user &&
	test "$(json_get dashboard <out)" = "/dashboard#token=$(cat alice.token)" &&
	test "$(json_get listen <out)" = "127.0.0.1:$ALLOTD_PORT" &&
	left=$(( $(date -d "$(json_get expires <out)" +%s) - $(date +%s) )) &&
	test $left -gt 28700 && test $left -le 28800 &&
	grep "dashboard token issued" "$ALLOTD_LOG" | grep -q "user=allot_alice" &&
	! grep -q "$(cat alice.token)" "$ALLOTD_LOG"
'
test_expect_success 'the token reads as alice: her account and balance, not phys' '
	bearer $(cat alice.token) GET /v1/whoami >out &&
	test "$(json_get user <out)" = allot_alice &&
	test "$(json_get role <out)" = user &&
	bearer $(cat alice.token) GET /v1/balances >out &&
	grep -q "\"chem\"" out && ! grep -q "\"phys\"" out &&
	bearer $(cat alice.token) GET /v1/allocations/$(cat chem.id) >out &&
	test_expect_code 1 bearer $(cat alice.token) GET /v1/allocations/$(cat phys.id) >out &&
	test "$(api_status)" = 403
'
test_expect_success 'a token is read-only: a POST is 403 and changes nothing' '
	before=$(available 0) &&
	test_expect_code 1 bearer $(cat alice.token) POST /v1/allocations/$(cat chem.id)/credit \
		"{\"su\":\"1h\"}" >out &&
	test "$(api_status)" = 403 &&
	grep "read-only" out &&
	test "$(available 0)" = "$before" &&
	test_expect_code 1 bearer $(cat alice.token) POST /v1/tokens "{}" >out &&
	test "$(api_status)" = 403
'
test_expect_success 'the admin as alice gets her view; his own token reads everything' '
	API_RUNAS=allot_bob API_AS=allot_alice api POST /v1/tokens "{}" >out &&
	test "$(json_get user <out)" = allot_alice &&
	test "$(json_get role <out)" = user &&
	bearer $(json_get token <out) GET /v1/balances >out &&
	grep -q "\"chem\"" out && ! grep -q "\"phys\"" out &&
	API_RUNAS=allot_bob api POST /v1/tokens "{}" >out &&
	test "$(json_get role <out)" = admin &&
	bearer $(json_get token <out) GET /v1/balances >out &&
	grep -q "\"chem\"" out && grep -q "\"phys\"" out
'
test_expect_success 'unknown, malformed or doubled credentials are 401; X-Allot-As is 403' '
	test_expect_code 1 bearer "$(tr 0-9a-f 1-9a-f0 <alice.token)" \
		GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	grep "unknown or expired" out &&
	test_expect_code 1 bearer "$(cat alice.token | tr a-f A-F)" GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	test_expect_code 1 bearer "" GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	code=$(curl -s -o out -w "%{http_code}" -H "Authorization: Basic YWxpY2U6eA==" \
		"$ALLOTD_URL/v1/whoami") &&
	test "$code" = 401 && grep "Bearer" out &&
	code=$(curl -s -o out -w "%{http_code}" -H "Authorization: Bearer $(cat alice.token)" \
		-H "X-Allot-Auth: MUNGE $(munge -s allot --socket="$MUNGE_SOCKET")" "$ALLOTD_URL/v1/whoami") &&
	test "$code" = 401 && grep "one credential" out &&
	code=$(curl -s -o out -w "%{http_code}" -H "Authorization: Bearer $(cat alice.token)" \
		-H "X-Allot-As: root" "$ALLOTD_URL/v1/whoami") &&
	test "$code" = 403 && grep "X-Allot-As" out
'
test_expect_success 'ttl_s: 60 s to a day; anything else is 400 naming it' '
	api POST /v1/tokens "{\"ttl_s\":60}" >out &&
	left=$(( $(date -d "$(json_get expires <out)" +%s) - $(date +%s) )) &&
	test $left -gt 0 && test $left -le 60 &&
	api_bad 400 ttl_s POST /v1/tokens "{\"ttl_s\":59}" &&
	api_bad 400 ttl_s POST /v1/tokens "{\"ttl_s\":86401}" &&
	api_bad 400 ttl_s POST /v1/tokens "{\"ttl_s\":\"1h\"}" &&
	api_bad 400 ttl POST /v1/tokens "{\"ttl\":60}"
'
test_expect_success 'allot dashboard prints a working link, over TCP and from the socket' '
	"$ALLOT_BIN" --url "$ALLOTD_URL" --as allot_alice dashboard ttl=1:00:00 >link 2>note &&
	grep -qE "^$ALLOTD_URL/dashboard#token=[0-9a-f]{64}\$" link &&
	grep "allot_alice" note &&
	bearer "$(sed "s/.*#token=//" link)" GET /v1/whoami >out &&
	test "$(json_get user <out)" = allot_alice &&
	ALLOT_URL=unix:$ALLOTD_SOCKET "$ALLOT_BIN" dashboard >link2 &&
	grep -qE "^http://127.0.0.1:$ALLOTD_PORT/dashboard#token=[0-9a-f]{64}\$" link2 &&
	test_expect_code 2 "$ALLOT_BIN" --url "$ALLOTD_URL" dashboard ttl=soon 2>err &&
	grep "ttl" err
'
test_expect_success 'alice gets at most 16 live tokens: her 17th ends her oldest, not bob'"'"'s' '
	API_RUNAS=allot_bob api POST /v1/tokens "{}" >out &&
	json_get token <out >bob.token &&
	i=0 && while [ $i -lt 17 ]; do
		API_RUNAS=allot_alice api POST /v1/tokens "{}" >out &&
		test "$(api_status)" = 201 &&
		json_get token <out >alice.$i.token || return 1
		i=$((i + 1))
	done &&
	test_expect_code 1 bearer $(cat alice.0.token) GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	i=1 && while [ $i -lt 17 ]; do
		bearer $(cat alice.$i.token) GET /v1/whoami >out &&
		test "$(json_get user <out)" = allot_alice || return 1
		i=$((i + 1))
	done &&
	bearer $(cat bob.token) GET /v1/whoami >out &&
	test "$(json_get user <out)" = allot_bob
'
test_expect_success 'a restart ends every token' '
	allotd_stop &&
	allotd_start Admins=allot_bob &&
	test_expect_code 1 bearer $(cat alice.token) GET /v1/whoami >out &&
	test "$(api_status)" = 401
'
test_expect_success 'stop' 'allotd_stop && munged_stop'
test_done
