#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# t0310-storage-faults.t - allotd and storage that cannot take a write (doc/allotd.md
# "Storage faults"): a bank file it cannot write (immutable here) stops allotd at start
# with a message and a failing exit status, instead of a daemon whose every write fails;
# a full file system answers 503 (storage unavailable), changes nothing, and the same
# request succeeds without a restart once there is room again.  Needs root (chattr, mount).
test_description='storage faults: read-only bank at start, full disk'
. /usr/share/sharness/sharness.sh
for f in "$ALLOT_SRC_DIR"/tests/sharness.d/*.sh; do . "$f"; done
test -x "$ALLOTD_BIN" || { skip_all="allotd not built"; test_done; }
test "$(id -u)" = 0 || { skip_all="needs root (chattr, mount)"; test_done; }
test "${ALLOT_TEST_BACKEND:-sqlite}" = sqlite || { skip_all="SQLite's files"; test_done; }

# A small file system of the test's own for the bank (allotd_start keeps the bank in
# ALLOTD_DIR).
mkdir -p bankfs
if ! mount -t tmpfs -o size=4m tmpfs "$PWD/bankfs" 2>/dev/null; then
	skip_all="cannot mount a tmpfs here"
	test_done
fi
# Unmounted whatever happens (a mount left in a kept trash directory would stop the next
# run from clearing it): ahead of sharness's own exit trap, which still runs after.
BANKFS=$PWD/bankfs
prev_exit_trap=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
trap 'rc=$?; chattr -i "$PWD/ro/allot.db" 2>/dev/null; umount "$BANKFS" 2>/dev/null; (exit $rc); eval "$prev_exit_trap"' EXIT

# An immutable file is what root cannot write either; not every file system has the flag.
: >probe && chattr +i probe 2>/dev/null && chattr -i probe && test_set_prereq CHATTR

test_expect_success CHATTR 'a bank file allotd cannot write: it refuses to start, saying why' '
	mkdir -p ro &&
	ALLOTD_DIR=$PWD/ro allotd_start AuthType=none TestMode=local &&
	allotd_stop &&
	chattr +i ro/allot.db &&
	cat >ro.conf <<-EOF &&
	StorageLoc=$PWD/ro/allot.db
	ListenAddr=127.0.0.1:$(find_free_port)
	AuthType=none
	TestMode=local
	EOF
	test_expect_code 1 run_bounded 30 "$ALLOTD_BIN" --config ro.conf --foreground >ro.out 2>&1 ||
	{ cat ro.out; false; } &&
	cat ro.out &&
	grep "cannot be written by this process" ro.out &&
	chattr -i ro/allot.db
'
test_expect_success 'allotd on a small file system; a bank' '
	ALLOTD_DIR=$PWD/bankfs allotd_start AuthType=none TestMode=local &&
	api POST /v1/accounts "{\"name\":\"chem\"}" &&
	api POST /v1/allocations "{\"account\":\"chem\",\"start\":\"2020-01-01\",\"end\":\"2100-01-01\",\"su\":\"10h\"}" >out &&
	json_get id <out >alloc_id
'
test_expect_success 'disk full: writes answer 503 and change nothing' '
	{ dd if=/dev/zero of=bankfs/filler bs=4k 2>/dev/null || true; } &&
	desc=$(head -c 250 /dev/zero | tr "\0" x) &&
	# curl by hand: api keeps its status file in ALLOTD_DIR, on the full file system.
	got= && i=0 && while [ $i -lt 500 ]; do
		got=$(curl -s --max-time 10 -o out -w "%{http_code}" -H "X-Allot-User: root" \
			-H "Content-Type: application/json" \
			--data-binary "{\"name\":\"a$i\",\"description\":\"$desc\"}" \
			"$ALLOTD_URL/v1/accounts") &&
		test "$got" = 201 || break
		i=$((i + 1))
	done &&
	echo "refused after $i writes with $got: $(cat out)" &&
	test "$got" = 503 &&
	test "$(json_get error.code <out)" = EUNAVAIL &&
	test_expect_code 22 curl -sf --max-time 10 -o /dev/null -H "X-Allot-User: root" \
		"$ALLOTD_URL/v1/accounts/a$i"
'
test_expect_success 'room again: the same write succeeds, no restart' '
	rm -f bankfs/filler &&
	api POST /v1/accounts "{\"name\":\"late\",\"description\":\"x\"}" &&
	api POST "/v1/allocations/$(cat alloc_id)/credit" "{\"su\":\"1h\"}" &&
	api GET /v1/check >out && test "$(json_get ok <out)" = true &&
	allotd_stop
'
test_done
