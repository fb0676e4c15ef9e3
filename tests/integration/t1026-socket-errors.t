#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t1026-socket-errors.t - a unix: URL that cannot be reached: the CLI and allot-agent name
# the socket and the cause (no such file; permission denied, for a plain user outside the
# socket's directory; connection refused, when allotd was killed and left its socket),
# never libcurl's "Failed to connect to localhost port 80", and exit 5 (unavailable).
test_description='errors on an unreachable Unix socket'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
ALLOT_BIN=$ALLOT_BUILD_DIR/src/cli/allot
AGENT_BIN=$ALLOT_BUILD_DIR/src/agent/allot-agent
test -x "$ALLOTD_BIN" && test -x "$ALLOT_BIN" && test -x "$AGENT_BIN" ||
	{ skip_all="allotd, allot or allot-agent not built"; test_done; }

# A plain user (made once per machine, as t1020 makes its own).
PLAIN=allot_sock1
id -u $PLAIN >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin $PLAIN

# no_curl_words FILE: the message is allot's, not libcurl's about the dummy host.
no_curl_words() { ! grep -i "port 80" "$1" && ! grep -i "localhost" "$1"; }

test_expect_success 'a socket path with nothing there: no such file, exit 5' '
	sock=$PWD/none/allotd.sock &&
	test_expect_code 5 env ALLOT_TEST_USER=root "$ALLOT_BIN" --url "unix:$sock" whoami 2>err &&
	cat err &&
	grep "^allot: error: cannot reach allotd: connect to unix socket $sock: no such file (is allotd running, with ListenSocket set to this path?)" err &&
	no_curl_words err
'
test_expect_success 'allot-agent says the same' '
	test_expect_code 1 env ALLOT_TEST_USER=root timeout 30 "$AGENT_BIN" --url "unix:$PWD/none/allotd.sock" \
		--cluster c1 --once 2>err &&
	cat err &&
	grep "poll failed: cannot reach allotd: connect to unix socket $PWD/none/allotd.sock: no such file" err &&
	no_curl_words err
'
test_expect_success 'allotd on a socket in a directory only root may enter' '
	allotd_start AuthType=none TestMode=local &&
	chmod 0700 "$ALLOTD_DIR" &&
	ALLOT_TEST_USER=root "$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" whoami >out &&
	grep root out
'
test_expect_success 'a plain user there: permission denied, exit 5' '
	test_expect_code 5 runuser -u $PLAIN -- env ALLOT_TEST_USER=$PLAIN \
		"$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" whoami 2>err &&
	cat err &&
	grep "^allot: error: cannot reach allotd: connect to unix socket $ALLOTD_SOCKET: permission denied (this user may not write to the socket or search a directory above it" err &&
	no_curl_words err &&
	chmod 0755 "$ALLOTD_DIR" &&
	runuser -u $PLAIN -- env ALLOT_TEST_USER=$PLAIN "$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" whoami >out &&
	grep $PLAIN out
'
test_expect_success 'allotd killed, its socket left behind: connection refused, exit 5' '
	allotd_kill9 &&
	test -S "$ALLOTD_SOCKET" &&
	test_expect_code 5 env ALLOT_TEST_USER=root "$ALLOT_BIN" --url "unix:$ALLOTD_SOCKET" whoami 2>err &&
	cat err &&
	grep "^allot: error: cannot reach allotd: connect to unix socket $ALLOTD_SOCKET: connection refused (nothing listens on it" err &&
	no_curl_words err
'
test_done
