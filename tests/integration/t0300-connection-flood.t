#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t0300-connection-flood.t - one local user holding 10,000 idle connections to allotd's
# public Unix socket locks nobody out (doc/allotd.md "Connections"): the flooder keeps at
# most ConnectionsPerPeer of them, another plain user on the same socket is still answered,
# and the Slurm plugins' verbs (hold and settle, as root on OperatorSocket, mode 0660) keep
# answering; the latency they saw is printed.  Without the per-peer cap the flood filled the
# listener's 4,096 connections and every other caller waited for its timeout.
test_description='connection flood: per-peer caps and the operator socket'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }

for u in allot_flood allot_other; do
	id -u $u >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $u
done
FLOOD_N=10000

# A flooder's file descriptors: raised here (root), inherited through setpriv (runuser
# goes through PAM, whose limits would set them back to 1024).
ulimit -n 20000 || { skip_all="cannot raise the open-file limit"; test_done; }

# sock GET|POST SOCKET PATH [curl args...] as root; body to stdout, status to ./status.
sock() {
	local method=$1 socket=$2 path=$3 out
	shift 3
	out=$(curl -s --max-time 10 -w '\n%{http_code} %{time_total}' -X "$method" \
		--unix-socket "$socket" "$@" "http://allotd$path") || return 2
	printf '%s\n' "$out" | sed '$d'
	printf '%s\n' "$out" | tail -n 1 >status
	case "$(cut -d" " -f1 status)" in 2*) return 0 ;; *) return 1 ;; esac
}

test_expect_success 'munged, allotd with OperatorSocket and ConnectionsPerPeer=64; a bank' '
	munged_start "$PWD/munge" &&
	chmod 0755 "$MUNGE_DIR" &&
	allotd_start "OperatorSocket=$PWD/allotd/op.sock" ConnectionsPerPeer=64 Operators=root &&
	test "$(stat -c %a allotd/op.sock)" = 660 &&
	test "$(stat -c %a "$ALLOTD_SOCKET")" = 666 &&
	api POST /v1/clusters "{\"name\":\"c1\"}" &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/users "{\"name\":\"allot_other\"}" &&
	api POST /v1/assocs "{\"cluster\":\"c1\",\"account\":\"chem\",\"user\":\"allot_other\"}" &&
	api POST /v1/partitions "{\"cluster\":\"c1\",\"name\":\"std\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"100000h\"}"
'
test_expect_success 'a plain user cannot connect to the operator socket' '
	test_must_fail runuser -u allot_other -- curl -s --max-time 5 \
		--unix-socket allotd/op.sock http://allotd/v1/whoami
'
test_expect_success "allot_flood opens $FLOOD_N idle connections to the public socket" '
	cat >flood.py <<-\EOF &&
	import socket, sys, time
	path, n, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
	held, failed = [], 0
	for _ in range(n):
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    s.settimeout(5)
	    try:
	        s.connect(path)
	        held.append(s)
	    except OSError:
	        failed += 1
	        s.close()
	with open(ready, "w") as f:
	    f.write("%d %d\n" % (len(held), failed))
	time.sleep(300)  # the test kills it long before
	EOF
	chmod 0644 flood.py && mkdir -p fl && chmod 0777 fl &&
	{ setpriv --reuid=allot_flood --regid=allot_flood --clear-groups -- /usr/bin/python3 "$PWD/flood.py" "$ALLOTD_SOCKET" $FLOOD_N \
		"$PWD/fl/ready" & } &&
	echo $! >flood.pid &&
	wait_for 120 test -s fl/ready &&
	cat fl/ready
'
test_expect_success 'allotd keeps at most 64 of them, and says so once a second at most' '
	grep "connection refused: the peer uid holds ConnectionsPerPeer" "$ALLOTD_LOG" >refused &&
	grep -q "uid=$(id -u allot_flood)" refused &&
	pid=$(cat "$ALLOTD_DIR/allotd.pid") &&
	conns=$(ls -l /proc/$pid/fd | grep -c socket) &&
	echo "allotd holds $conns sockets" &&
	test "$conns" -lt 200
'
test_expect_success 'another plain user on the same public socket is answered' '
	runuser -u allot_other -- curl -s --max-time 5 --unix-socket "$ALLOTD_SOCKET" \
		http://allotd/v1/whoami >out &&
	test "$(json_get user <out)" = allot_other
'
test_expect_success 'the plugins'"'"' verbs on the operator socket keep answering (200 hold+settle)' '
	: >lat &&
	i=1 && while [ $i -le 200 ]; do
		sock POST allotd/op.sock /v1/jobs/hold -H "Content-Type: application/json" \
			--data-binary "{\"cluster\":\"c1\",\"job_id\":$i,\"user\":\"allot_other\",\"account\":\"chem\",\"partition\":\"std\",\"time_limit_s\":60,\"billing\":1}" >out &&
		cut -d" " -f2 status >>lat &&
		sock POST allotd/op.sock /v1/jobs/settle -H "Content-Type: application/json" \
			--data-binary "{\"cluster\":\"c1\",\"job_id\":$i,\"elapsed_s\":30,\"state\":\"COMPLETED\"}" >out &&
		cut -d" " -f2 status >>lat || return 1
		i=$((i + 1))
	done &&
	test "$(wc -l <lat)" = 400 &&
	sort -n lat | awk "{ v[NR] = \$1 } END { printf \"hold+settle on OperatorSocket during the flood: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d requests)\\n\", 1000 * v[int(NR * 0.5)], 1000 * v[int(NR * 0.99)], 1000 * v[NR], NR }" &&
	api GET "/v1/jobs?cluster=c1&limit=1000" >jobs &&
	test "$(python3 -c "import json; print(sum(1 for j in json.load(open(\"jobs\"))[\"items\"] if j[\"status\"] == \"settled\"))")" = 200
'
test_expect_success 'the flood ends; the flooder'"'"'s slots are free again' '
	kill $(cat flood.pid) 2>/dev/null; pkill -u allot_flood -f flood.py
	wait_for 10 sh -c "! pgrep -u allot_flood -f flood.py" &&
	# allotd counts a connection free once it has read the peer'"'"'s close: wait for that.
	wait_for 10 sh -c "runuser -u allot_flood -- curl -s --max-time 5 \
		--unix-socket \"$ALLOTD_SOCKET\" http://allotd/healthz | grep -q ok"
'
test_expect_success 'stop' 'allotd_stop && munged_stop'
test_done
