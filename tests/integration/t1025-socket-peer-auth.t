#!/bin/bash
# t1025-socket-peer-auth.t - SocketPeerAuth: on allotd's Unix socket a request without a
# credential is the peer's uid (SO_PEERCRED) with that user's role; TCP without a credential
# stays 401; a credential on the socket is judged by MUNGE alone (its uid, forged/replayed
# refused); a uid without a passwd entry is 401; SocketPeerAuth=no makes the socket need
# MUNGE again.  The CLI with ALLOT_AUTH=peer works with munged unreachable.
test_description='allotd Unix-socket peer authentication'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot

# The same plain users as t1020: alice a user, bob an admin.
for u in allot_alice allot_bob; do
	id -u $u >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $u
done
# A uid no passwd entry names (the first free one from 54321 up).
NOUID=54321
while getent passwd $NOUID >/dev/null; do NOUID=$((NOUID + 1)); done

# sock_api WHO METHOD PATH [curl args...]: the API over the Unix socket, curl run as WHO
# (root: as is; a name: runuser; a number: setpriv with that uid and no passwd entry).
# The body goes to stdout, the status to $ALLOTD_DIR/status; 0 for 2xx.
sock_api() {
	local who=$1 method=$2 path=$3 out
	shift 3
	local -a run=()
	case "$who" in
	root) ;;
	[0-9]*) run=(setpriv --reuid="$who" --regid="$who" --clear-groups --) ;;
	*) run=(runuser -u "$who" --) ;;
	esac
	out=$("${run[@]}" curl -s --max-time 10 -w '\n%{http_code}' -X "$method" \
		--unix-socket "$ALLOTD_SOCKET" "$@" "http://allotd$path") || return 2
	printf '%s\n' "$out" | sed '$d'
	printf '%s\n' "$out" | tail -n 1 >"$ALLOTD_DIR/status"
	case "$(api_status)" in 2*) return 0 ;; *) return 1 ;; esac
}

test_expect_success 'start munged and allotd (SocketPeerAuth left at its default)' '
	munged_start "$PWD/munge" &&
	chmod 0755 "$MUNGE_DIR" &&
	allotd_start Admins=allot_bob LogLevel=debug &&
	test "$(stat -c %a "$ALLOTD_SOCKET")" = 666
'
test_expect_success 'setup: two accounts, alice in chem only' '
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/accounts "{\"name\":\"phys\"}" &&
	api POST /v1/users "{\"name\":\"allot_alice\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"allot_alice\"}"
'
test_expect_success 'a root peer without a credential is root (superuser)' '
	sock_api root GET /v1/whoami >out &&
	test "$(json_get user <out)" = root &&
	test "$(json_get role <out)" = superuser &&
	grep -q "method=peer uid=0 user=root" "$ALLOTD_LOG"
'
test_expect_success 'root peer can write (superuser route)' '
	sock_api root POST /v1/accounts -H "Content-Type: application/json" \
		--data-binary "{\"name\":\"bio\"}" >out &&
	api GET /v1/accounts/bio >out
'
test_expect_success 'a non-root peer is that user with its role' '
	sock_api allot_alice GET /v1/whoami >out &&
	test "$(json_get user <out)" = allot_alice &&
	test "$(json_get role <out)" = user &&
	grep -q "method=peer uid=$(id -u allot_alice) user=allot_alice" "$ALLOTD_LOG"
'
test_expect_success 'the user peer sees only its accounts' '
	sock_api allot_alice GET /v1/accounts >out &&
	grep -q "\"chem\"" out && ! grep -q "\"phys\"" out &&
	test_expect_code 1 sock_api allot_alice GET /v1/accounts/phys >out &&
	test "$(api_status)" = 403
'
test_expect_success 'the user peer is refused an admin route (403)' '
	test_expect_code 1 sock_api allot_alice POST /v1/accounts \
		-H "Content-Type: application/json" --data-binary "{\"name\":\"evil\"}" >out &&
	test "$(api_status)" = 403 &&
	api GET /v1/accounts >out && ! grep -q evil out
'
test_expect_success 'run-as on top of peer auth: refused for a user, allowed for an admin' '
	test_expect_code 1 sock_api allot_alice GET /v1/whoami -H "X-Allot-As: root" >out &&
	test "$(api_status)" = 403 &&
	sock_api allot_bob GET /v1/whoami -H "X-Allot-As: allot_alice" >out &&
	test "$(json_get user <out)" = allot_alice &&
	test "$(json_get role <out)" = user &&
	sock_api allot_bob GET /v1/whoami -H "X-Allot-As: root" >out &&
	test "$(json_get role <out)" = admin
'
test_expect_success 'a peer uid without a passwd entry is 401 with a clear message' '
	test_expect_code 1 sock_api $NOUID GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	grep "uid $NOUID has no user name" out
'
test_expect_success 'TCP without a credential is still 401' '
	API_NOAUTH=1 test_expect_code 1 api GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	grep "no credential" out
'
test_expect_success 'a credential on the socket is MUNGE-checked: its uid, not the peer'"'"'s' '
	cred=$(runuser -u allot_alice -- munge -s allot --socket="$MUNGE_SOCKET") &&
	sock_api root GET /v1/whoami -H "X-Allot-Auth: MUNGE $cred" >out &&
	test "$(json_get user <out)" = allot_alice &&
	test "$(json_get role <out)" = user &&
	grep -q "method=munge uid=$(id -u allot_alice) user=allot_alice" "$ALLOTD_LOG"
'
test_expect_success 'a replayed credential on the socket is 401 (no fallback to the peer)' '
	test_expect_code 1 sock_api root GET /v1/whoami -H "X-Allot-Auth: MUNGE $cred" >out &&
	test "$(api_status)" = 401 &&
	grep "replayed" out
'
test_expect_success 'a forged, foreign or empty credential on the socket is 401' '
	forged="MUNGE:$(head -c 96 /dev/urandom | base64 -w0):" &&
	test_expect_code 1 sock_api root GET /v1/whoami -H "X-Allot-Auth: MUNGE $forged" >out &&
	test "$(api_status)" = 401 &&
	grep "invalid credential" out &&
	test_expect_code 1 sock_api root GET /v1/whoami -H "X-Allot-Auth: Basic cm9vdDo=" >out &&
	test "$(api_status)" = 401 &&
	test_expect_code 1 sock_api root GET /v1/whoami -H "X-Allot-Auth;" >out &&
	test "$(api_status)" = 401 &&
	grep "no credential" out
'
test_expect_success 'CLI and liballot with ALLOT_AUTH=peer: no munged needed' '
	ALLOT_AUTH=peer ALLOT_MUNGE_SOCKET=/nonexistent/munge.socket \
		"$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" -P -n whoami >out &&
	test "$(cut -d"|" -f1,3 out)" = "root|superuser" &&
	runuser -u allot_alice -- env ALLOT_AUTH=peer ALLOT_MUNGE_SOCKET=/nonexistent/munge.socket \
		"$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" -P -n whoami >out &&
	test "$(cut -d"|" -f1,3 out)" = "allot_alice|user" &&
	test_expect_code 2 env ALLOT_AUTH=peer "$ALLOT_BIN" --url "$ALLOTD_URL" -P -n whoami \
		>out 2>err &&
	grep "peer credentials need a unix: URL" err
'
test_expect_success 'SocketPeerAuth=no: the socket needs MUNGE again' '
	allotd_stop &&
	allotd_start Admins=allot_bob SocketPeerAuth=no &&
	test_expect_code 1 sock_api root GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	grep "no credential" out &&
	test_expect_code 1 sock_api allot_alice GET /v1/whoami >out &&
	test "$(api_status)" = 401 &&
	cred=$(munge -s allot --socket="$MUNGE_SOCKET") &&
	sock_api root GET /v1/whoami -H "X-Allot-Auth: MUNGE $cred" >out &&
	test "$(json_get user <out)" = root &&
	test_expect_code 4 env ALLOT_AUTH=peer "$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" -P -n whoami \
		>out 2>err &&
	grep "no credential" err
'
test_expect_success 'cleanup' '
	allotd_stop && munged_stop
'
test_done
