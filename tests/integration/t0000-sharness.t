#!/bin/bash
# t0000-sharness.t - the harness itself: free ports, bounded waits and a private munged work.
test_description='integration harness helpers'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done

test_expect_success 'find_free_port gives a port nobody listens on' '
	port=$(find_free_port) &&
	test "$port" -ge 20000 &&
	! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null
'
test_expect_success 'wait_for gives up after its limit' '
	start=$(date +%s) &&
	test_must_fail wait_for 1 false &&
	test $(( $(date +%s) - start )) -le 3
'
test_expect_success 'private munged encodes and decodes with its own key' '
	munged_start "$PWD/munge" &&
	echo hello | munge --socket="$MUNGE_SOCKET" | unmunge --socket="$MUNGE_SOCKET" >out &&
	grep -q "STATUS: *Success" out &&
	munged_stop
'
test_done
